// File calls glibc declares only under _GNU_SOURCE (see CSystem.h).
#ifdef __linux__  // Linux calls only: on other systems this file is empty
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/socket.h>
#include <stdio.h>
#include <unistd.h>
#include "CSystem.h"

long shim_copy_file_range(int in_fd, int out_fd, size_t length) {
    return (long)copy_file_range(in_fd, NULL, out_fd, NULL, length, 0);
}

int shim_syncfs(int fd) {
    return syncfs(fd);
}

long shim_copy_file_range_from(int in_fd, long long *in_offset, int out_fd, size_t length) {
    loff_t offset = (loff_t)*in_offset;
    long n = (long)copy_file_range(in_fd, &offset, out_fd, NULL, length, 0);
    *in_offset = (long long)offset;
    return n;
}

int shim_accept_nonblocking(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int shim_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
#endif
