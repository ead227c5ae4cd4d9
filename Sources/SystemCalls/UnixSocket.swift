#if os(Linux)
    import CSystem
    import Glibc

    /// One end of a connected Unix stream socket that carries bytes and, with them,
    /// at most one open descriptor (SCM_RIGHTS): how the decoder helpers and their
    /// parent talk. Owns its descriptor and closes it once (``close()``, or when
    /// released). Used by one thread at a time; the owner serialises access.
    package final class UnixSocket: @unchecked Sendable {
        /// The descriptor number (for handing this end to a child).
        package let raw: Int32
        private var closed = false

        /// Takes ownership of `raw`, an open, connected Unix stream socket (a helper's descriptor 3).
        package init(adopting raw: Int32) { self.raw = raw }

        deinit { close() }

        /// A connected pair (`socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC)`).
        package static func pair() throws(SystemError) -> (UnixSocket, UnixSocket) {
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                throw SystemError("socketpair", path: "")
            }
            return (UnixSocket(adopting: ends[0]), UnixSocket(adopting: ends[1]))
        }

        /// Gives up ownership (the descriptor is handed to a call that closes it).
        package func release() -> Int32 {
            closed = true
            return raw
        }

        /// Closes this end now (the peer reads the end of the stream); idempotent.
        package func close() {
            guard !closed else { return }
            closed = true
            _ = Glibc.close(raw)
        }

        /// Sends all of `bytes`, the first chunk carrying `descriptor` (when >= 0)
        /// (`sendmsg` with `MSG_NOSIGNAL`, retried on EINTR and after short sends:
        /// see `shim_send_with_fd`). False when the peer is gone or the send failed.
        package func send(_ bytes: [UInt8], attaching descriptor: Int32 = -1) -> Bool {
            var sent = 0
            var passing = descriptor
            while sent < bytes.count {
                let count = bytes.withUnsafeBytes { buffer in
                    shim_send_with_fd(raw, buffer.baseAddress! + sent, buffer.count - sent, passing)
                }
                guard count > 0 else { return false }
                sent += count
                passing = -1
            }
            return true
        }

        /// Receives up to `buffer.count` bytes (`recvmsg` with `MSG_CMSG_CLOEXEC`,
        /// retried on EINTR): how many (0 at the end of the stream, also when the
        /// peer reset the connection), and the descriptor that came with them, owned
        /// by the caller (extra ones are closed: see `shim_recv_with_fd`).
        package func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> (
            count: Int, descriptor: FileDescriptor?
        ) {
            var passed: Int32 = -1
            let count = retryingInterrupts { shim_recv_with_fd(raw, buffer.baseAddress, buffer.count, &passed) }
            let descriptor = passed >= 0 ? FileDescriptor(passed) : nil
            if count < 0 {
                if errno == ECONNRESET { return (0, descriptor) }
                throw SystemError("recvmsg", path: "")
            }
            return (count, descriptor)
        }

        /// Waits up to `milliseconds` for something to read (or the peer's end):
        /// true when there is (`poll`, retried on EINTR).
        package func waitReadable(milliseconds: Int32) -> Bool {
            var descriptor = pollfd(fd: raw, events: Int16(POLLIN), revents: 0)
            return retryingInterrupts { poll(&descriptor, 1, milliseconds) } > 0
        }
    }
#endif
