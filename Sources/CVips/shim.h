// libvips' public API, imported whole; varargs calls go through CShims.
#include <vips/vips.h>
