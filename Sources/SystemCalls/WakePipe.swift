#if os(Linux)
    import Glibc

    /// A self-pipe: threads ``signal()`` it to wake one that polls ``readEnd``
    /// (a worker's coordinator, sleeping on its database socket and this).
    package final class WakePipe: Sendable {
        /// The end to poll for readability (-1 if the pipe could not be made).
        package let readEnd: Int32
        private let writeEnd: Int32

        package init() {
            var fds: [Int32] = [-1, -1]
            if pipe(&fds) == 0 {
                for fd in fds {
                    _ = fcntl(fd, F_SETFL, O_NONBLOCK)
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                }
            }
            (readEnd, writeEnd) = (fds[0], fds[1])
        }

        deinit {
            if readEnd >= 0 { close(readEnd) }
            if writeEnd >= 0 { close(writeEnd) }
        }

        /// Wakes the poller (never blocks: a full pipe is awake already).
        package func signal() {
            guard writeEnd >= 0 else { return }
            var byte: UInt8 = 1
            _ = retryingInterrupts { write(writeEnd, &byte, 1) }
        }

        /// Consumes the wake-ups so far.
        package func drain() {
            guard readEnd >= 0 else { return }
            var sink = [UInt8](repeating: 0, count: 64)
            while retryingInterrupts({ read(readEnd, &sink, sink.count) }) > 0 {}
        }
    }
#endif
