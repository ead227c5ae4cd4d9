// What converting a thumbnail from its photo's ICC profile to sRGB costs
// (issue 62; BENCHMARKS.md, "Thumbnails in sRGB's colours from the photo's ICC
// profile"): best of 30 of a LittleCMS transform built (once per helper in
// share), that transform on a 270 x 360 thumbnail, libvips' icc_transform of
// the same thumbnail (a transform built every time), and, for scale,
// vips_thumbnail of PHOTO at 360 px.
//
//   exiftool -b -ICC_Profile PHOTO > /tmp/p3.icc
//   cc -O2 bench/icc-cost.c -o /tmp/icc-cost $(pkg-config --cflags --libs vips lcms2)
//   /tmp/icc-cost PHOTO /tmp/p3.icc
#include <vips/vips.h>
#include <lcms2.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
    VIPS_INIT(argv[0]);
    gsize len; gchar *icc; if (argc < 3 || !g_file_get_contents(argv[2], &icc, &len, NULL)) { fprintf(stderr, "usage: icc-cost PHOTO PROFILE.icc\n"); return 2; }
    VipsImage *photo = vips_image_new_from_file(argv[1], NULL);
    double best[4] = {1e9, 1e9, 1e9, 1e9};
    int w = 270, h = 360; size_t n = (size_t)w * h;
    unsigned char *in = malloc(n * 3), *out = malloc(n * 3);
    for (size_t i = 0; i < n * 3; i++) in[i] = (i * 7919) & 255;
    for (int r = 0; r < 30; r++) {
        double t0 = now();
        cmsHPROFILE s = cmsOpenProfileFromMem(icc, len), d = cmsCreate_sRGBProfile();
        cmsHTRANSFORM x = cmsCreateTransform(s, TYPE_RGB_8, d, TYPE_RGB_8, INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOCACHE);
        double t1 = now();
        cmsDoTransform(x, in, out, n);
        double t2 = now();
        cmsDeleteTransform(x); cmsCloseProfile(s); cmsCloseProfile(d);
        VipsImage *m = vips_image_new_from_memory_copy(in, n * 3, w, h, 3, VIPS_FORMAT_UCHAR), *o = NULL;
        vips_image_set_blob_copy(m, "icc-profile-data", icc, len);
        double t3 = now();
        vips_icc_transform(m, &o, "srgb", "embedded", TRUE, "intent", VIPS_INTENT_RELATIVE, NULL);
        size_t sz; void *mem = vips_image_write_to_memory(o, &sz); g_free(mem);
        double t4 = now();
        g_object_unref(o); g_object_unref(m);
        VipsImage *th = NULL;
        double t5 = now();
        vips_thumbnail(argv[1], &th, 360, NULL);
        mem = vips_image_write_to_memory(th, &sz); g_free(mem); g_object_unref(th);
        double t6 = now();
        double v[4] = {t1 - t0, t2 - t1, t4 - t3, t6 - t5};
        for (int k = 0; k < 4; k++) if (v[k] < best[k]) best[k] = v[k];
    }
    printf("lcms build %.3f ms, lcms convert 270x360 %.3f ms, vips icc_transform 270x360 %.3f ms, vips_thumbnail of the photo %.1f ms\n",
           best[0] * 1e3, best[1] * 1e3, best[2] * 1e3, best[3] * 1e3);
    return 0;
}
