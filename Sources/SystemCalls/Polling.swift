#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Waiting on descriptors this process does not own (a database library's socket, a pipe's end).
package enum Polling {
    /// What to wait for.
    package enum Readiness: Sendable {
        case readable, writable, readableOrWritable

        var events: Int16 {
            switch self {
            case .readable: Int16(POLLIN)
            case .writable: Int16(POLLOUT)
            case .readableOrWritable: Int16(POLLIN | POLLOUT)
            }
        }
    }

    /// Waits up to `milliseconds` for any of `descriptors` (negative ones are
    /// ignored) to be ready for `readiness`, or hung up (`poll`, retried on
    /// EINTR). Returns, per descriptor, whether it is; throws when `poll` fails.
    package static func wait(
        for readiness: Readiness = .readable, _ descriptors: [Int32], milliseconds: Int32
    ) throws(SystemError) -> [Bool] {
        try wait(descriptors.map { ($0, readiness) }, milliseconds: milliseconds)
    }

    /// Waits up to `milliseconds` for any descriptor to be ready for what it is
    /// paired with, or hung up or in error (`poll`, retried on EINTR).
    /// Returns, per descriptor, whether it is; throws when `poll` fails.
    package static func wait(_ descriptors: [(descriptor: Int32, readiness: Readiness)], milliseconds: Int32)
        throws(SystemError) -> [Bool]
    {
        var set = descriptors.map { pollfd(fd: $0.descriptor, events: $0.readiness.events, revents: 0) }
        let ready = retryingInterrupts { poll(&set, nfds_t(set.count), milliseconds) }
        guard ready >= 0 else { throw SystemError("poll", path: "") }
        return set.map { $0.revents != 0 }
    }
}
