// Memory calls Swift's Glibc module does not import (<malloc.h>; see CSystem.h).
#ifdef __linux__  // Linux calls only: on other systems this file is empty
#include <malloc.h>
#include "CSystem.h"

int shim_release_free_memory(void) {
    return malloc_trim(0);
}

int shim_keep_freed_memory(size_t mmap_threshold, size_t trim_threshold) {
    int mapped = mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold);
    int trimmed = mallopt(M_TRIM_THRESHOLD, (int)trim_threshold);
    return mapped == 1 && trimmed == 1;
}

int shim_limit_arenas(int count) {
    return mallopt(M_ARENA_MAX, count);
}

#endif  // __linux__
