// Memory calls Swift's Glibc module does not import (<malloc.h>; see CSystem.h).
#ifdef __linux__  // Linux calls only: on other systems this file is empty
#include <malloc.h>
#include "CSystem.h"

int shim_release_free_memory(void) {
    return malloc_trim(0);
}

#endif  // __linux__
