// CSystem: the Linux calls Swift's Glibc module does not import (declared only
// under _GNU_SOURCE, or function-like macros such as CMSG_*), as fixed-arity C
// functions with the prefix `shim_`. Only SystemCalls (the package's system-call
// funnel) and DecoderIsolation's helper set-up (the sandbox, made in C between
// fork and the helper's first input) and its test-only attacker call them.
#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __linux__  // Linux calls only: on other systems (a host app's) nothing is declared

/// copy_file_range(in, NULL, out, NULL, length, 0): an in-kernel copy (or reflink);
/// glibc declares it only under _GNU_SOURCE, which Swift's Glibc module lacks.
long shim_copy_file_range(int in_fd, int out_fd, size_t length);
/// copy_file_range(in, &offset, out, NULL, length, 0): the same, reading from
/// `*in_offset` (advanced by what was copied) without moving `in`'s position.
long shim_copy_file_range_from(int in_fd, long long *in_offset, int out_fd, size_t length);

/// syncfs(fd): writes everything cached for the file system holding `fd`
/// (data and metadata) to its disk, and reports a write-back error since the
/// descriptor was opened (Linux 5.8 and later).
int shim_syncfs(int fd);

/// renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE): a rename that fails
/// with EEXIST instead of replacing the destination.
int shim_rename_noreplace(const char *from, const char *to);

/// openat2(dirfd, path, {flags | O_CLOEXEC | O_NOFOLLOW, resolve:
/// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS}): opens `path`
/// (relative) inside the directory `dirfd` and nowhere else: no `..` above it,
/// no absolute path, no symbolic link anywhere on the way, no /proc magic link.
/// A link gives ELOOP, an escape EXDEV; a kernel older than 5.6 ENOSYS; a
/// rename or mount elsewhere meanwhile may give EAGAIN (try again). glibc has
/// no wrapper and Swift cannot build `struct open_how` from the kernel header.
int shim_openat2_beneath(int dirfd, const char *path, int flags);

/// O_PATH, which glibc defines only under _GNU_SOURCE: a descriptor that
/// names a file or folder (for *at calls) without opening it for reading.
int shim_o_path(void);

/// accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC): a waiting connection,
/// non-blocking and close-on-exec from the start (no helper forked meanwhile inherits it).
int shim_accept_nonblocking(int fd);

/// malloc_trim(0): gives the pages of memory freed in every malloc arena back to
/// the kernel (glibc keeps them for reuse, one arena per thread that allocated);
/// 1 when some were given back. In <malloc.h>, which Swift's Glibc module does not import.
int shim_release_free_memory(void);

/// mallopt(M_MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD): allocations below
/// `mmap_threshold` bytes come from the arenas, and an arena gives the pages at
/// its top back to the kernel only past `trim_threshold` bytes (both fixed:
/// glibc no longer adjusts them); 1 when both were set. In <malloc.h>.
int shim_keep_freed_memory(size_t mmap_threshold, size_t trim_threshold);
// mallopt(M_ARENA_MAX, count): at most `count` malloc arenas. Returns 1 on success.
int shim_limit_arenas(int count);

#include "shim_fd_passing.h"
#include "shim_spawn.h"
#include "shim_sandbox.h"
#include "shim_attacker.h"

#endif  // __linux__
#endif
