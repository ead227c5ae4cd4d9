// libvips from a source or from memory (see shim_vips_source.h).
#include <stdio.h>
#include "shim_vips_source.h"

// libvips 8.14's thumbnail_source and thumbnail_buffer do not pass their
// "fail_on" on to the loader (thumbnail from a file does): it goes in the
// loader's option string instead.
static void fail_on_option(VipsFailOn fail_on, char *option, size_t size) {
    const char *nick = vips_enum_nick(VIPS_TYPE_FAIL_ON, (int)fail_on);
    snprintf(option, size, "fail_on=%s", nick ? nick : "none");
}

int shim_vips_thumbnail_source(VipsSource *source, VipsImage **out, int width, int height, VipsFailOn fail_on) {
    char option[64];
    fail_on_option(fail_on, option, sizeof option);
    return vips_thumbnail_source(source, out, width, "height", height, "size", VIPS_SIZE_DOWN, "fail_on", fail_on,
                                 "option_string", option, NULL);
}

int shim_vips_jpeg_thumbnail_source(VipsSource *source, VipsImage **out, int size, int shrink, VipsFailOn fail_on) {
    VipsImage *scaled = NULL;
    if (vips_jpegload_source(source, &scaled, "shrink", shrink, "fail_on", fail_on, "access", VIPS_ACCESS_SEQUENTIAL,
                             NULL))
        return -1;
    int result = vips_thumbnail_image(scaled, out, size, "height", size, "size", VIPS_SIZE_DOWN, NULL);
    g_object_unref(scaled);
    return result;
}

VipsImage *shim_vips_image_header_source(VipsSource *source) {
    return vips_image_new_from_source(source, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
}

int shim_vips_thumbnail_from_memory(const void *buf, size_t len, VipsImage **out, int width, int height,
                               VipsFailOn fail_on) {
    char option[64];
    fail_on_option(fail_on, option, sizeof option);
    return vips_thumbnail_buffer((void *)buf, len, out, width, "height", height, "size", VIPS_SIZE_DOWN, "fail_on",
                                 fail_on, "option_string", option, NULL);
}

VipsImage *shim_vips_image_header_buffer(const void *buf, size_t len) {
    return vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
}

void shim_vips_block_sandbox_only_loaders(int blocked) {
    vips_operation_block_set("VipsForeignLoadMagick", blocked ? TRUE : FALSE);
    vips_operation_block_set("VipsForeignLoadSvg", blocked ? TRUE : FALSE);
}
