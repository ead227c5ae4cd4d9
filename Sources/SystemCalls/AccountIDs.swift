#if os(Linux)
    import Glibc

    /// Which user and group ids this machine uses: its databases, the subordinate
    /// ranges handed out for user namespaces, and its running processes. What
    /// picks a uid that no one else has for the decoder helpers of a root `share`.
    package enum AccountIDs {
        /// Whether the user database has an entry for `uid` (`getpwuid_r`).
        package static func userExists(_ uid: uid_t) -> Bool {
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: 16384)
            return getpwuid_r(uid, &entry, &buffer, buffer.count, &found) == 0 && found != nil
        }

        /// Whether the group database has an entry for `gid` (`getgrgid_r`).
        package static func groupExists(_ gid: gid_t) -> Bool {
            var entry = group()
            var found: UnsafeMutablePointer<group>?
            var buffer = [CChar](repeating: 0, count: 16384)
            return getgrgid_r(gid, &entry, &buffer, buffer.count, &found) == 0 && found != nil
        }

        /// The subordinate ranges of /etc/subuid and /etc/subgid (`NAME:FIRST:COUNT`
        /// lines), as closed ranges; empty where the files are missing.
        package static func subordinateRanges() -> [ClosedRange<UInt64>] {
            var ranges: [ClosedRange<UInt64>] = []
            for path in ["/etc/subuid", "/etc/subgid"] {
                guard let bytes = try? FileSystem.readWholeFile(path) else { continue }
                for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                    let fields = line.split(separator: ":")
                    guard fields.count == 3, let first = UInt64(fields[1]), let count = UInt64(fields[2]), count > 0
                    else { continue }
                    ranges.append(first...(first + count - 1))
                }
            }
            return ranges
        }

        /// Every user and group id a running process holds (real, effective, saved
        /// and file-system: the `Uid:` and `Gid:` lines of each /proc/PID/status).
        package static func inUseByProcesses() -> Set<UInt32> {
            var ids: Set<UInt32> = []
            for name in FileSystem.names(in: "/proc") where name.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                guard let bytes = try? FileSystem.readWholeFile("/proc/\(name)/status") else { continue }
                for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n")
                where line.hasPrefix("Uid:") || line.hasPrefix("Gid:") {
                    for field in line.dropFirst(4).split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                        if let id = UInt32(field) { ids.insert(id) }
                    }
                }
            }
            return ids
        }
    }

    /// A name in the abstract Unix socket namespace, bound for as long as this
    /// process lives: a lock that the kernel lets go when the process ends, however
    /// it ends, and that no file system needs to be writable for. Two processes
    /// cannot hold the same name (in one network namespace).
    package enum AbstractNameLock {
        /// Binds `name` (without the leading NUL); true when this process now holds
        /// it, false when another does (or sockets are refused). The descriptor is
        /// kept open (close-on-exec) for the life of the process.
        package static func hold(_ name: String) -> Bool {
            let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return false }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(name.utf8.prefix(MemoryLayout.size(ofValue: address.sun_path) - 1))
            withUnsafeMutableBytes(of: &address.sun_path) { path in
                path[0] = 0
                for (index, byte) in bytes.enumerated() { path[index + 1] = byte }
            }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + bytes.count)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            guard bound == 0 else {
                close(fd)
                return false
            }
            return true
        }
    }
#endif
