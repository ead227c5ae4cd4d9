#ifndef C_TIME_ZONE_GRID_H
#define C_TIME_ZONE_GRID_H

#include <stddef.h>

/// The time-zone grid (scripts/build-time-zone-grid.py's format), linked into
/// the binary: `*length` bytes at the returned address. It exists because
/// Swift has no way to embed a file's bytes, and a 4 MB array literal would
/// take the Swift compiler minutes.
const unsigned char *share_time_zone_grid(size_t *length);

#endif
