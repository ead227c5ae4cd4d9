// openat2(2) has no glibc wrapper (2.36 here) and its `struct open_how` comes
// from <linux/openat2.h>: a raw syscall() with the structure built here.
#ifdef __linux__  // Linux calls only: on other systems this file is empty
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CSystem.h"

#ifndef SYS_openat2
#define SYS_openat2 437  // the same number on every architecture (the unified syscall table)
#endif

int shim_o_path(void) { return O_PATH; }

int shim_openat2_beneath(int dirfd, const char *path, int flags) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(unsigned int)(flags | O_CLOEXEC | O_NOFOLLOW);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}
#endif
