// Passing an open file descriptor to another process over a Unix socket
// (SCM_RIGHTS). The cmsg macros (CMSG_FIRSTHDR, CMSG_DATA, CMSG_SPACE, …) are
// function-like macros over byte offsets, which Swift does not import.
#ifndef SHIM_FD_PASSING_H
#define SHIM_FD_PASSING_H

#include <stddef.h>
#include <sys/types.h>

/// sendmsg(socket, [bytes], SCM_RIGHTS [fd], MSG_NOSIGNAL): sends `length` bytes
/// with `fd` attached (none when fd < 0), retrying on EINTR. Returns the bytes
/// sent (possibly fewer than `length`: send the rest with send()) or -1 (errno).
/// MSG_NOSIGNAL: a peer that died gives EPIPE, not a SIGPIPE that kills us.
ssize_t shim_send_with_fd(int socket, const void *bytes, size_t length, int fd);

/// recvmsg(socket, [bytes], MSG_CMSG_CLOEXEC): receives up to `length` bytes and
/// at most one descriptor, stored in *fd (-1 when none came). Any extra
/// descriptors in the message are closed, and a truncated control message
/// (MSG_CTRUNC) closes what arrived and fails with EMSGSIZE, so a peer cannot
/// leak descriptors into us. Returns the bytes received, 0 at end of stream, -1 (errno).
ssize_t shim_recv_with_fd(int socket, void *bytes, size_t length, int *fd);

#endif
