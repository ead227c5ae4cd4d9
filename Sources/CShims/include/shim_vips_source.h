// libvips reading from a VipsSource (an open descriptor) or from memory:
// fixed-arity wrappers of the varargs calls, and the loaders only a sandboxed
// helper may use.
#ifndef SHIM_VIPS_SOURCE_H
#define SHIM_VIPS_SOURCE_H

#include <stddef.h>
#include <vips/vips.h>

/// vips_thumbnail_source(source, out, width, "height", height, "size",
/// VIPS_SIZE_DOWN, "fail_on", fail_on, "option_string", "fail_on=…", NULL): the
/// shrink-on-load thumbnail of shim_vips_thumbnail, from a source (the option
/// string carries fail_on to the loader, which 8.14 does not do by itself).
int shim_vips_thumbnail_source(VipsSource *source, VipsImage **out, int width, int height, VipsFailOn fail_on);

/// vips_jpegload_source(source, &scaled, "shrink", shrink, "fail_on", fail_on,
/// "access", VIPS_ACCESS_SEQUENTIAL, NULL), then vips_thumbnail_image(scaled, out,
/// size, "height", size, "size", VIPS_SIZE_DOWN, NULL): a JPEG decoded by libjpeg
/// at 1/shrink of its size (DCT scaling), then fitted to size x size as
/// shim_vips_thumbnail_source would (EXIF orientation, colour management).
int shim_vips_jpeg_thumbnail_source(VipsSource *source, VipsImage **out, int size, int shrink, VipsFailOn fail_on);

/// vips_image_new_from_source(source, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL):
/// the header only.
VipsImage *shim_vips_image_header_source(VipsSource *source);

/// vips_thumbnail_buffer(buf, len, out, width, "height", height, "size",
/// VIPS_SIZE_DOWN, "fail_on", fail_on, "option_string", "fail_on=…", NULL), for loaders without a source
/// variant (ImageMagick in libvips 8.14). `buf` must outlive `*out`.
int shim_vips_thumbnail_from_memory(const void *buf, size_t len, VipsImage **out, int width, int height,
                                    VipsFailOn fail_on);

/// vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL,
/// NULL): the header only. `buf` must outlive the image.
VipsImage *shim_vips_image_header_buffer(const void *buf, size_t len);

/// vips_operation_block_set for the loaders a sandboxed helper may enable and
/// an unsandboxed process must not: ImageMagick (it reads almost anything, and
/// has a long history of memory-safety bugs) and SVG through librsvg.
void shim_vips_block_sandbox_only_loaders(int blocked);

#endif
