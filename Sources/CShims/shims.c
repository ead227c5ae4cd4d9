#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include "CShims.h"

#include <libavutil/log.h>
#include <dlfcn.h>
#include <glib-object.h>
#include <gmodule.h>

int shim_vips_thumbnail(const char *filename, VipsImage **out, int width, int height,
                        VipsFailOn fail_on) {
    return vips_thumbnail(filename, out, width, "height", height, "size", VIPS_SIZE_DOWN,
                          "fail_on", fail_on, NULL);
}

VipsImage *shim_vips_image_header(const char *filename) {
    return vips_image_new_from_file(filename, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
}

int shim_vips_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "strip", TRUE,
                                "optimize_coding", TRUE, NULL);
}

int shim_vips_webpsave_buffer(VipsImage *in, void **buf, size_t *len, int quality) {
    /* libvips 8.14's webpsave writes the image's EXIF and XMP even with
       "strip": they are removed from a copy first, so a preview carries
       nothing of the source's metadata (no GPS). */
    VipsImage *bare;
    if (vips_copy(in, &bare, NULL)) return -1;
    gchar **fields = vips_image_get_fields(bare);
    for (gchar **field = fields; *field; field++) vips_image_remove(bare, *field);
    g_strfreev(fields);
    int result = vips_webpsave_buffer(bare, buf, len, "Q", quality, "strip", TRUE, NULL);
    g_object_unref(bare);
    return result;
}

static VipsArrayDouble *rgb(double r, double g, double b) {
    double v[3] = {r, g, b};
    return vips_array_double_new(v, 3);
}

int shim_vips_flatten(VipsImage *in, VipsImage **out, double r, double g, double b) {
    VipsArrayDouble *bg = rgb(r, g, b);
    int result = vips_flatten(in, out, "background", bg, NULL);
    vips_area_unref(VIPS_AREA(bg));
    return result;
}

int shim_vips_to_srgb(VipsImage *in, VipsImage **out) {
    return vips_colourspace(in, out, VIPS_INTERPRETATION_sRGB, NULL);
}

int shim_vips_icc_to_srgb(VipsImage *in, VipsImage **out) {
    return vips_icc_transform(in, out, "srgb", "embedded", TRUE, "intent", VIPS_INTENT_RELATIVE, "depth", 8, NULL);
}

int shim_vips_cast_uchar(VipsImage *in, VipsImage **out) {
    return vips_cast(in, out, VIPS_FORMAT_UCHAR, "shift", TRUE, NULL);
}

int shim_vips_rot(VipsImage *in, VipsImage **out, VipsAngle angle) {
    return vips_rot(in, out, angle, NULL);
}

int shim_vips_flip_horizontal(VipsImage *in, VipsImage **out) {
    return vips_flip(in, out, VIPS_DIRECTION_HORIZONTAL, NULL);
}

int shim_vips_resize(VipsImage *in, VipsImage **out, double scale) {
    return vips_resize(in, out, scale, NULL);
}

int shim_vips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int shim_vips_flip(VipsImage *in, VipsImage **out, VipsDirection direction) {
    return vips_flip(in, out, direction, NULL);
}

int shim_vips_thumbnail_buffer(const void *buf, size_t len, VipsImage **out, int width, int height,
                               VipsFailOn fail_on) {
    return vips_thumbnail_buffer((void *)buf, len, out, width, "height", height, "size", VIPS_SIZE_DOWN,
                                 "no_rotate", TRUE, "fail_on", fail_on, NULL);
}

int shim_vips_thumbnail_buffer_exact(const void *buf, size_t len, VipsImage **out, int width, int height,
                                     VipsFailOn fail_on) {
    return vips_thumbnail_buffer((void *)buf, len, out, width, "height", height, "size", VIPS_SIZE_FORCE,
                                 "no_rotate", TRUE, "fail_on", fail_on, NULL);
}

int shim_vips_embed(VipsImage *in, VipsImage **out, int x, int y, int width, int height,
                    double r, double g, double b) {
    VipsArrayDouble *bg = rgb(r, g, b);
    int result = vips_embed(in, out, x, y, width, height, "extend", VIPS_EXTEND_BACKGROUND,
                            "background", bg, NULL);
    vips_area_unref(VIPS_AREA(bg));
    return result;
}

int shim_vips_arrayjoin(VipsImage **in, VipsImage **out, int n, int across, int spacing,
                        double r, double g, double b) {
    VipsArrayDouble *bg = rgb(r, g, b);
    int result = vips_arrayjoin(in, out, n, "across", across, "shim", spacing,
                                "background", bg, NULL);
    vips_area_unref(VIPS_AREA(bg));
    return result;
}

int shim_vips_join(VipsImage *a, VipsImage *b, VipsImage **out, VipsDirection direction,
                   double background) {
    double v[1] = {background};
    VipsArrayDouble *bg = vips_array_double_new(v, 1);
    int result = vips_join(a, b, out, direction, "expand", TRUE, "background", bg, NULL);
    vips_area_unref(VIPS_AREA(bg));
    return result;
}

static void on_eval(VipsImage *image, VipsProgress *progress, gpointer user) {
    (void)progress;
    gint64 deadline = *(gint64 *)user;
    if (g_get_monotonic_time() > deadline) vips_image_set_kill(image, TRUE);
}

static void free_deadline(gpointer data, GClosure *closure) {
    (void)closure;
    g_free(data);
}

void shim_vips_set_deadline(VipsImage *image, int64_t deadline_us) {
    gint64 *deadline = g_new(gint64, 1);
    *deadline = deadline_us;
    vips_image_set_progress(image, TRUE);
    g_signal_connect_data(image, "eval", G_CALLBACK(on_eval), deadline, free_deadline, 0);
}

static void drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user) {
    (void)domain; (void)level; (void)message; (void)user;
}

int shim_vips_setup(const char *argv0, int concurrency, int load_modules) {
    if (!load_modules && setenv("VIPSHOME", "/nonexistent/share-ingest: modules are loaded on demand", 1)) return -1;
    if (vips_init(argv0)) return -1;
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, drop_log, NULL);
    vips_cache_set_max(0);
    if (concurrency > 0) vips_concurrency_set(concurrency);
    vips_operation_block_set("VipsForeignLoadMagick", TRUE);
    return 0;
}

int shim_averror_eagain(void) { return AVERROR(EAGAIN); }
int shim_averror_eof(void) { return AVERROR_EOF; }
int shim_averror_exit(void) { return AVERROR_EXIT; }
int shim_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
int shim_averror_patchwelcome(void) { return AVERROR_PATCHWELCOME; }
void shim_av_quiet(void) { av_log_set_level(AV_LOG_QUIET); }

int shim_vips_ink_on_background(VipsImage *mask, VipsImage **out, double ink_r, double ink_g,
                                double ink_b, double bg_r, double bg_g, double bg_b) {
    double a[3] = {(ink_r - bg_r) / 255.0, (ink_g - bg_g) / 255.0, (ink_b - bg_b) / 255.0};
    double c[3] = {bg_r, bg_g, bg_b};
    VipsImage *bands[3] = {mask, mask, mask};
    VipsImage *joined = NULL;
    if (vips_bandjoin(bands, &joined, 3, NULL)) return -1;
    VipsImage *lin = NULL;
    int result = vips_linear(joined, &lin, a, c, 3, "uchar", TRUE, NULL);
    g_object_unref(joined);
    if (result) return -1;
    VipsImage *srgb = NULL;
    result = vips_copy(lin, &srgb, "interpretation", VIPS_INTERPRETATION_sRGB, NULL);
    g_object_unref(lin);
    if (result) return -1;
    *out = srgb;
    return 0;
}

int shim_vips_text_aligned(VipsImage **out, const char *text, int width, int dpi, const char *font,
                           VipsAlign align) {
    return vips_text(out, text, "width", width, "dpi", dpi, "font", font, "align", align, NULL);
}

static int tiff_error(TIFF *tiff, void *user, const char *module, const char *format, va_list ap) {
    (void)tiff;
    shim_tiff *handle = user;
    if (handle->error[0] == 0) {
        int n = module ? snprintf(handle->error, sizeof handle->error, "%s: ", module) : 0;
        if (n < 0 || (size_t)n >= sizeof handle->error) n = 0;
        vsnprintf(handle->error + n, sizeof handle->error - (size_t)n, format, ap);
    }
    return 1;  // handled: the process-wide handler is not called
}

static int tiff_warning(TIFF *tiff, void *user, const char *module, const char *format, va_list ap) {
    (void)tiff; (void)user; (void)module; (void)format; (void)ap;
    return 1;
}

shim_tiff *shim_tiff_open(const char *path) {
    shim_tiff *handle = calloc(1, sizeof *handle);
    if (!handle) return NULL;
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (!options) { free(handle); return NULL; }
    TIFFOpenOptionsSetErrorHandlerExtR(options, tiff_error, handle);
    TIFFOpenOptionsSetWarningHandlerExtR(options, tiff_warning, handle);
    handle->tiff = TIFFOpenExt(path, "r", options);
    TIFFOpenOptionsFree(options);
    return handle;
}

shim_tiff *shim_tiff_open_descriptor(int fd, const char *name) {
    // TIFFClose closes the descriptor libtiff was given: it gets a duplicate,
    // rewound (the duplicate shares the file position).
    int own = dup(fd);
    if (own < 0) return NULL;
    if (lseek(own, 0, SEEK_SET) < 0) {
        close(own);
        return NULL;
    }
    shim_tiff *handle = calloc(1, sizeof *handle);
    if (!handle) { close(own); return NULL; }
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (!options) { free(handle); close(own); return NULL; }
    TIFFOpenOptionsSetErrorHandlerExtR(options, tiff_error, handle);
    TIFFOpenOptionsSetWarningHandlerExtR(options, tiff_warning, handle);
    handle->tiff = TIFFFdOpenExt(own, name, "r", options);
    TIFFOpenOptionsFree(options);
    if (!handle->tiff) close(own);
    return handle;
}

void shim_tiff_close(shim_tiff *handle) {
    if (!handle) return;
    if (handle->tiff) TIFFClose(handle->tiff);
    free(handle);
}

int shim_tiff_get_u16(TIFF *tiff, uint32_t tag, uint16_t *value) {
    return TIFFGetFieldDefaulted(tiff, tag, value);
}

int shim_tiff_get_u32(TIFF *tiff, uint32_t tag, uint32_t *value) {
    return TIFFGetField(tiff, tag, value);
}

int shim_vips_load_module(const char *name) {
    Dl_info library;
    if (!dladdr((void *)vips_init, &library) || !library.dli_fname) return -1;
    char *directory = g_path_get_dirname(library.dli_fname);
    char *path = g_strdup_printf("%s/vips-modules-%d.%d/vips-%s.so", directory, vips_version(0), vips_version(1), name);
    g_free(directory);
    GModule *module = g_module_open(path, G_MODULE_BIND_LAZY);
    g_free(path);
    return module ? 0 : -1;
}

int shim_vips_resize_xy(VipsImage *in, VipsImage **out, double hscale, double vscale) {
    return vips_resize(in, out, hscale, "vscale", vscale, NULL);
}
