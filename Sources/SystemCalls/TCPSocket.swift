#if os(Linux)
    import CSystem
    import Glibc

    /// A listening TCP socket on an IPv4 or IPv6 literal address (the metrics and
    /// health listener): non-blocking and close-on-exec; ``accept()`` never waits.
    /// Owns its descriptor and closes it once.
    package final class TCPListener: @unchecked Sendable {
        /// The descriptor number (to poll for readability: a connection is waiting).
        package let raw: Int32
        /// The port it is bound to (the one the system chose when asked for port 0).
        package let port: Int

        /// Binds `host` (an IPv4 or IPv6 literal, or `localhost`) at `port` (0: any
        /// free port) and listens with room for `backlog` waiting connections.
        package init(host: String, port: Int, backlog: Int32 = 16) throws(SystemError) {
            let name = "\(host):\(port)"
            let literal = host == "localhost" ? "127.0.0.1" : host
            var v4 = sockaddr_in()
            var v6 = sockaddr_in6()
            let family: Int32
            if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
                family = AF_INET
            } else if inet_pton(AF_INET6, literal, &v6.sin6_addr) == 1 {
                family = AF_INET6
            } else {
                throw SystemError("inet_pton", path: name, code: EINVAL)
            }
            let fd = socket(
                family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { throw SystemError("socket", path: name) }
            var on: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            let bound: Int32
            if family == AF_INET {
                v4.sin_family = sa_family_t(AF_INET)
                v4.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
                bound = withUnsafePointer(to: &v4) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            } else {
                v6.sin6_family = sa_family_t(AF_INET6)
                v6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
                bound = withUnsafePointer(to: &v6) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            }
            guard bound == 0 else {
                let error = SystemError("bind", path: name)
                _ = close(fd)
                throw error
            }
            guard listen(fd, backlog) == 0 else {
                let error = SystemError("listen", path: name)
                _ = close(fd)
                throw error
            }
            var storage = sockaddr_in6()
            var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            _ = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            // sin_port and sin6_port sit at the same offset.
            self.port = Int(UInt16(bigEndian: storage.sin6_port))
            self.raw = fd
        }

        deinit { _ = close(raw) }

        /// A waiting connection (non-blocking, close-on-exec), or nil when none is.
        package func accept() -> TCPConnection? {
            let fd = retryingInterrupts { shim_accept_nonblocking(raw) }
            return fd >= 0 ? TCPConnection(adopting: fd) : nil
        }
    }

    /// One accepted TCP connection, non-blocking. Owns its descriptor.
    package final class TCPConnection: @unchecked Sendable {
        package let raw: Int32

        init(adopting raw: Int32) { self.raw = raw }

        deinit { _ = close(raw) }

        /// What a non-blocking read or write did.
        package enum Transfer: Equatable {
            /// This many bytes moved.
            case bytes(Int)
            /// Nothing now: try again when poll says so.
            case wouldBlock
            /// The peer closed (a read), or the connection is broken.
            case closed
        }

        /// Reads what is there into `buffer`.
        package func read(into buffer: UnsafeMutableRawBufferPointer) -> Transfer {
            let n = retryingInterrupts { recv(raw, buffer.baseAddress, buffer.count, 0) }
            if n > 0 { return .bytes(n) }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .wouldBlock }
            return .closed
        }

        /// Writes what fits of `bytes` (never raising SIGPIPE).
        package func write(_ bytes: ArraySlice<UInt8>) -> Transfer {
            let n = bytes.withUnsafeBytes { buffer in
                retryingInterrupts { send(raw, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
            }
            if n >= 0 { return .bytes(n) }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .wouldBlock }
            return .closed
        }
    }

    /// Sends datagrams to a Unix datagram socket by path (`NOTIFY_SOCKET`, the
    /// service manager's: a path, or `@name` in the abstract namespace).
    package final class UnixDatagramSender: @unchecked Sendable {
        private let raw: Int32
        private var address = sockaddr_un()
        private let length: socklen_t

        /// A socket aimed at `path`; throws when the path is too long or no socket can be made.
        package init(path: String) throws(SystemError) {
            var bytes = Array(path.utf8)
            let capacity = MemoryLayout.size(ofValue: address.sun_path)
            guard !bytes.isEmpty, bytes.count < capacity else {
                throw SystemError("socket", path: path, code: ENAMETOOLONG)
            }
            if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }  // the abstract namespace
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { target in
                for (index, byte) in bytes.enumerated() { target[index] = byte }
            }
            length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes[0] == 0 ? 0 : 1))
            raw = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard raw >= 0 else { throw SystemError("socket", path: path) }
        }

        deinit { _ = close(raw) }

        /// Sends `message` as one datagram; false when it could not be sent.
        @discardableResult
        package func send(_ message: String) -> Bool {
            let bytes = Array(message.utf8)
            let sent = bytes.withUnsafeBytes { buffer in
                withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                        retryingInterrupts {
                            sendto(raw, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), target, length)
                        }
                    }
                }
            }
            return sent == bytes.count
        }
    }
#endif
