// libtiff (the library libvips' own TIFF loader uses): read directly for the
// TIFF layouts tiff2vips rejects; TIFFGetField is variadic and goes through CShims.
#include <tiffio.h>
