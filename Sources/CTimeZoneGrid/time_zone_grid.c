// Links time_zone_grid.c.bin (beside this file; its name is this file's with
// `.bin` added, so the assembler finds it from __FILE__ alone) into the
// binary's read-only data. Rebuilt by scripts/build-time-zone-grid.py.
// data: 36350713 bytes, sha256 085a23a6fb990f8225da349c01e1ac90d3afa809436ff6725ef34e7941c4eebc
#include "CTimeZoneGrid.h"

__asm__(
    ".section .rodata\n"
    ".balign 16\n"
    "share_time_zone_grid_start:\n"
    ".incbin \"" __FILE__ ".bin\"\n"
    "share_time_zone_grid_end:\n"
    ".previous\n");

extern const unsigned char share_time_zone_grid_start[] __asm__("share_time_zone_grid_start");
extern const unsigned char share_time_zone_grid_end[] __asm__("share_time_zone_grid_end");

const unsigned char *share_time_zone_grid(size_t *length) {
    *length = (size_t)(share_time_zone_grid_end - share_time_zone_grid_start);
    return share_time_zone_grid_start;
}
