// libheif's C API (Debian libheif-dev 1.15): HEIF/AVIF decoding with the
// transforms (irot, imir, clap) applied, for what libavcodec's path here does not take.
#include <libheif/heif.h>
