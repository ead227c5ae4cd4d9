// A picture's ICC profile to sRGB, with LittleCMS directly (issue 62): libvips'
// icc_transform builds a new transform for every picture, and its sRGB profile's
// tabulated curves make that slow (cmsReverseToneCurveEx): 6.4 ms for a 270 x 360
// thumbnail, against 1.1 ms with a kept transform (bench/icc-cost.c). Here sRGB
// is LittleCMS's own (parametric curves, inverted exactly), and the transforms of
// the first four profiles a process meets are kept: a helper thumbnails many
// photos with one profile (every iPhone's Display P3), so it is built once.
#include <lcms2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "CShims.h"

enum { KEPT = 4, LARGEST_KEPT = 64 << 10 };

struct kept {
    unsigned char *profile;  // a copy of the profile's bytes, NULL when the slot is empty
    size_t length;
    int alpha;
    cmsHTRANSFORM transform;
};

static struct kept kept[KEPT];
static unsigned next_slot;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void quiet(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)context;
    (void)code;
    (void)text;
}

static cmsHTRANSFORM build(const void *profile, size_t length, int alpha) {
    cmsSetLogErrorHandler(quiet);
    cmsHPROFILE source = cmsOpenProfileFromMem(profile, (cmsUInt32Number)length);
    if (source == NULL) return NULL;
    cmsHTRANSFORM transform = NULL;
    if (cmsGetColorSpace(source) == cmsSigRgbData) {
        cmsHPROFILE srgb = cmsCreate_sRGBProfile();
        if (srgb != NULL) {
            cmsUInt32Number format = alpha ? TYPE_RGBA_8 : TYPE_RGB_8;
            // No per-transform cache: the transform is shared by the helper's threads.
            cmsUInt32Number flags = cmsFLAGS_NOCACHE | (alpha ? cmsFLAGS_COPY_ALPHA : 0);
            transform = cmsCreateTransform(source, format, srgb, format, INTENT_RELATIVE_COLORIMETRIC, flags);
            cmsCloseProfile(srgb);
        }
    }
    cmsCloseProfile(source);
    return transform;
}

// The transform for `profile`: kept, or built and kept while a slot is free
// (*owned 0); else built for this call alone (*owned 1: the caller deletes it).
// NULL when LittleCMS refuses the profile. A kept transform is never replaced,
// so one in use on another thread is never deleted under it.
static cmsHTRANSFORM transform_for(const void *profile, size_t length, int alpha, int *owned) {
    *owned = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < KEPT; i++) {
        if (kept[i].profile != NULL && kept[i].length == length && kept[i].alpha == alpha &&
            memcmp(kept[i].profile, profile, length) == 0) {
            cmsHTRANSFORM found = kept[i].transform;
            pthread_mutex_unlock(&lock);
            return found;
        }
    }
    pthread_mutex_unlock(&lock);
    cmsHTRANSFORM made = build(profile, length, alpha);
    if (made == NULL) return NULL;
    unsigned char *copy = length <= LARGEST_KEPT ? malloc(length) : NULL;
    pthread_mutex_lock(&lock);
    if (copy != NULL && next_slot < KEPT) {
        memcpy(copy, profile, length);
        kept[next_slot++] = (struct kept){copy, length, alpha, made};
        pthread_mutex_unlock(&lock);
        return made;
    }
    pthread_mutex_unlock(&lock);
    free(copy);
    *owned = 1;
    return made;
}

int shim_icc_to_srgb_rgb8(const void *profile, size_t length, const unsigned char *in, unsigned char *out,
                          size_t pixels, int bands) {
    if (profile == NULL || length == 0 || (bands != 3 && bands != 4) || pixels > (size_t)UINT32_MAX) return -1;
    int owned = 0;
    cmsHTRANSFORM transform = transform_for(profile, length, bands == 4, &owned);
    if (transform == NULL) return -1;
    cmsDoTransform(transform, in, out, (cmsUInt32Number)pixels);
    if (owned) cmsDeleteTransform(transform);
    return 0;
}
