// CShims: fixed-arity C wrappers for the parts of libvips and libav that Swift
// cannot import: variadic functions (libvips' NULL-terminated option lists) and
// function-like macros (libav's AVERROR, AVERROR_EOF; GLib's g_signal_connect).
// Every function has the prefix `shim_` and a comment naming what it wraps.
#ifndef CSHIMS_H
#define CSHIMS_H

#include <stdint.h>
#include <stddef.h>
#include <vips/vips.h>
#include <libavutil/error.h>
#include <tiffio.h>

// ---- libvips ---------------------------------------------------------------

/// vips_thumbnail(filename, out, width, "height", height, "size", VIPS_SIZE_DOWN,
/// "fail_on", fail_on, NULL): shrink-on-load thumbnail that never upscales and
/// applies EXIF orientation.
int shim_vips_thumbnail(const char *filename, VipsImage **out, int width, int height,
                        VipsFailOn fail_on);

/// vips_image_new_from_file(filename, "access", VIPS_ACCESS_SEQUENTIAL, NULL):
/// reads the header only; pixels are decoded later, if ever.
VipsImage *shim_vips_image_header(const char *filename);

/// vips_jpegsave_buffer(in, buf, len, "Q", quality, "strip", TRUE,
/// "optimize_coding", TRUE, NULL). Free *buf with g_free.
int shim_vips_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality);

/// vips_webpsave_buffer(in, buf, len, "Q", quality, "strip", TRUE, NULL) of a copy of `in` without its
/// EXIF, XMP, IPTC and ICC fields (8.14 writes EXIF and XMP despite "strip"). Free *buf with g_free.
int shim_vips_webpsave_buffer(VipsImage *in, void **buf, size_t *len, int quality);

/// vips_flatten(in, out, "background", [r, g, b], NULL): composites alpha over a colour.
int shim_vips_flatten(VipsImage *in, VipsImage **out, double r, double g, double b);

/// vips_colourspace(in, out, VIPS_INTERPRETATION_sRGB, NULL).
int shim_vips_to_srgb(VipsImage *in, VipsImage **out);

/// vips_icc_transform(in, out, "srgb", "embedded", TRUE, "intent", VIPS_INTENT_RELATIVE, "depth", 8,
/// NULL): the picture from its embedded ICC profile ("icc-profile-data") to libvips' built-in sRGB
/// profile, 8 bits a sample, alpha kept (LittleCMS; no file is read).
int shim_vips_icc_to_srgb(VipsImage *in, VipsImage **out);

/// `pixels` 8-bit RGB (`bands` 3) or RGBA (4, alpha copied) pixels from `in` to `out` (as many),
/// converted from the RGB ICC profile `profile` to sRGB by LittleCMS (relative colorimetric; sRGB
/// LittleCMS's own). The transforms of the first four profiles (up to 64 KiB each) a process
/// converts from are kept (icc_srgb.c). 0, or -1 when LittleCMS refuses the profile or it is not an RGB one.
int shim_icc_to_srgb_rgb8(const void *profile, size_t length, const unsigned char *in, unsigned char *out,
                          size_t pixels, int bands);

/// vips_cast(in, out, VIPS_FORMAT_UCHAR, "shift", TRUE, NULL): 16-bit to 8-bit.
int shim_vips_cast_uchar(VipsImage *in, VipsImage **out);

/// vips_rot(in, out, angle, NULL).
int shim_vips_rot(VipsImage *in, VipsImage **out, VipsAngle angle);

/// vips_flip(in, out, VIPS_DIRECTION_HORIZONTAL, NULL): mirrors left to right.
int shim_vips_flip_horizontal(VipsImage *in, VipsImage **out);

/// vips_resize(in, out, scale, NULL).
int shim_vips_resize(VipsImage *in, VipsImage **out, double scale);

/// vips_resize(in, out, hscale, "vscale", vscale, NULL): each axis by its own
/// factor (a gain map scaled to its picture's exact size).
int shim_vips_resize_xy(VipsImage *in, VipsImage **out, double hscale, double vscale);

/// vips_extract_area(in, out, left, top, width, height, NULL): a crop.
int shim_vips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height);

/// vips_flip(in, out, direction, NULL): a mirror.
int shim_vips_flip(VipsImage *in, VipsImage **out, VipsDirection direction);

/// vips_thumbnail_buffer(buf, len, out, width, "height", height, "size", VIPS_SIZE_DOWN,
/// "no_rotate", TRUE, "fail_on", fail_on, NULL): a thumbnail of an in-memory image
/// (an embedded EXIF thumbnail), its orientation left to the caller.
int shim_vips_thumbnail_buffer(const void *buf, size_t len, VipsImage **out, int width, int height,
                               VipsFailOn fail_on);

/// vips_thumbnail_buffer(buf, len, out, width, "height", height, "size", VIPS_SIZE_FORCE,
/// "no_rotate", TRUE, "fail_on", fail_on, NULL): an in-memory image (a gain map)
/// decoded to exactly width x height, each axis scaled on its own, in one resampling
/// after shrink-on-load (a second resize to fix a pixel that shrink-on-load's
/// rounding lost would move the picture by half a pixel).
int shim_vips_thumbnail_buffer_exact(const void *buf, size_t len, VipsImage **out, int width, int height,
                                     VipsFailOn fail_on);

/// vips_embed(in, out, x, y, width, height, "extend", VIPS_EXTEND_BACKGROUND,
/// "background", [r, g, b], NULL): places an image on a larger canvas.
int shim_vips_embed(VipsImage *in, VipsImage **out, int x, int y, int width, int height,
                    double r, double g, double b);

/// vips_arrayjoin(in, out, n, "across", across, "shim", spacing,
/// "background", [r, g, b], NULL): a grid of images.
int shim_vips_arrayjoin(VipsImage **in, VipsImage **out, int n, int across, int spacing,
                        double r, double g, double b);

/// vips_join(a, b, out, direction, "expand", TRUE, "background", [v], NULL).
int shim_vips_join(VipsImage *a, VipsImage *b, VipsImage **out, VipsDirection direction,
                   double background);

/// g_signal_connect_data(image, "eval", ...): kills the evaluation of `image` once
/// g_get_monotonic_time() passes `deadline_us`, so one file cannot stall a worker.
void shim_vips_set_deadline(VipsImage *image, int64_t deadline_us);

/// VIPS_INIT-equivalent set-up for a long-running pipeline process: vips_init,
/// operation cache off, libvips' own thread count, the ImageMagick loader
/// blocked (it would open almost anything, e.g. an AVI as a 903-page image), and
/// libvips' GLib warnings kept off our stderr (failures come back as errors).
/// With `load_modules` 0, vips_init loads none of libvips' modules (poppler,
/// libjxl, ImageMagick, ...: each `vips-modules-X.Y/vips-NAME.so` it would load
/// from its libdir; it looks for them under $VIPSHOME/lib when VIPSHOME is set,
/// so this sets VIPSHOME to a place that has none: call it before any thread
/// starts); shim_vips_load_module then loads one when it is first needed.
/// 1 when this process's definition of vips_semaphore_down_timeout (which
/// never times out: vips_threadset.c says why) is the one the dynamic linker
/// resolves, so libvips' idle workers never leave; 0 otherwise.
int shim_vips_idle_workers_never_leave(void);
int shim_vips_setup(const char *argv0, int concurrency, int load_modules);

/// Loads libvips' module `name` ("poppler", "jxl", "magick", ...) from libvips'
/// own module directory, next to the libvips library in use; its loaders are
/// registered as it loads. Loading a loaded module again does nothing. Returns
/// 0, or -1 when it cannot be loaded.
int shim_vips_load_module(const char *name);

// ---- libav -----------------------------------------------------------------

/// AVERROR(EAGAIN): the "send more input / read more output" status.
int shim_averror_eagain(void);

/// AVERROR_EOF.
int shim_averror_eof(void);

/// AVERROR(ETIMEDOUT)-style check: the value an interrupted call returns (AVERROR_EXIT).
int shim_averror_exit(void);

/// AVERROR_DECODER_NOT_FOUND and AVERROR_PATCHWELCOME: a codec or a feature this
/// libav build lacks (see MediaKit's LibraryMessages).
int shim_averror_decoder_not_found(void);
int shim_averror_patchwelcome(void);

/// av_log_set_level(AV_LOG_QUIET): libav must not write to our stderr.
void shim_av_quiet(void);

// ---- libvips (contact sheets) -----------------------------------------------

/// vips_bandjoin + vips_linear (both varargs), over
/// any background: turns a one-band text mask into an sRGB image where 0 is the
/// background colour and 255 the ink: out = bg + mask * (ink - bg) / 255.
int shim_vips_ink_on_background(VipsImage *mask, VipsImage **out, double ink_r, double ink_g,
                                double ink_b, double bg_r, double bg_g, double bg_b);

/// vips_text(out, text, "width", width, "dpi", dpi, "font", font, "align", align, NULL):
/// renders (Pango-markup) text as a one-band mask, its lines aligned to each other
/// (VIPS_ALIGN_CENTRE for captions).
int shim_vips_text_aligned(VipsImage **out, const char *text, int width, int dpi, const char *font,
                           VipsAlign align);

// ---- libtiff ----------------------------------------------------------------

/// A TIFF opened with its own error handler (TIFFOpenOptionsSetErrorHandlerExtR,
/// libtiff 4.5): libtiff's messages for this file go into `error`, never to
/// stderr and never through the process-wide handlers libvips installs.
typedef struct shim_tiff {
    TIFF *tiff;
    char error[512];
} shim_tiff;

/// TIFFOpenExt(path, "r", options with the handler above). NULL when out of
/// memory; otherwise check `->tiff` (NULL when libtiff refused the file, with
/// the reason in `->error`). Release with shim_tiff_close.
shim_tiff *shim_tiff_open(const char *path);

/// TIFFFdOpenExt on a duplicate of `fd`, rewound (libtiff closes what it is
/// given; `fd` stays open), `name` for messages only; as shim_tiff_open
/// otherwise. How a sandboxed helper, which may not open the file by path, reads it.
shim_tiff *shim_tiff_open_descriptor(int fd, const char *name);

/// TIFFClose and free.
void shim_tiff_close(shim_tiff *handle);

/// TIFFGetFieldDefaulted(tiff, tag, &value) for a uint16 tag; 1 when it has a value.
int shim_tiff_get_u16(TIFF *tiff, uint32_t tag, uint16_t *value);

/// TIFFGetField(tiff, tag, &value) for a uint32 tag (ImageWidth, ImageLength); 1 when present.
int shim_tiff_get_u32(TIFF *tiff, uint32_t tag, uint32_t *value);

// ---- Decoding from a descriptor (one header and one .c file per concern) -----

#include "shim_avio_descriptor.h"
#include "shim_vips_source.h"

// ---- Sandboxed decoder helpers ------------------------------------------------
// (descriptor passing, spawning and the sandbox are Linux calls: CSystem)

#include "shim_crash.h"

#endif
