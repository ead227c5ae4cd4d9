#if os(Linux)
    import Glibc

    /// An exclusive advisory lock on a file (`flock`), held while the object lives
    /// and released by the kernel if the process dies. Locks belong to the open
    /// file: a second lock of the same file, even in this process, is refused.
    package final class FileLock {
        private let descriptor: FileDescriptor

        /// Takes the lock on `path` (created if missing), or returns nil if someone holds it.
        package init?(_ path: String) {
            guard let descriptor = try? FileDescriptor.open(path, O_RDWR | O_CREAT, mode: 0o600) else { return nil }
            guard retryingInterrupts({ flock(descriptor.raw, LOCK_EX | LOCK_NB) }) == 0 else { return nil }
            self.descriptor = descriptor
        }

        /// Released, the file's modification time says when (the last holder's
        /// end: how long a batch has been left, for `share gc`).
        deinit {
            futimens(descriptor.raw, nil)
            flock(descriptor.raw, LOCK_UN)
        }

        /// When the lock was last released (or its file made), in seconds since
        /// 1970; nil when there is no such file.
        package static func lastReleased(_ path: String) -> Double? {
            guard let status = try? FileStatus.of(path) else { return nil }
            return Double(status.modifiedSeconds) + Double(status.modifiedNanoseconds) / 1e9
        }

        /// True when some process holds a `flock` on the file at `path`, read from
        /// `/proc/locks` (the file's device and inode), so nothing is locked,
        /// even for an instant, to find out. False when the file does not exist.
        package static func isHeld(_ path: String) -> Bool {
            guard let status = try? FileStatus.of(path), let table = try? FileSystem.readWholeFile("/proc/locks") else {
                return false
            }
            // The kernel writes `MAJOR:MINOR:INODE` as %02x:%02x:%lu (fs/locks.c, lock_get_status).
            let major = (status.device >> 8) & 0xfff | (status.device >> 32) & ~0xfff
            let minor = status.device & 0xff | (status.device >> 12) & ~0xff
            let identity =
                String(major, radix: 16).leftPadded(2) + ":" + String(minor, radix: 16).leftPadded(2) + ":"
                + String(status.inode)
            return String(decoding: table, as: UTF8.self).split(separator: "\n").contains { line in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                return fields.count > 5 && fields[1] == "FLOCK" && fields[5] == identity
            }
        }
    }

    extension String {
        fileprivate func leftPadded(_ width: Int) -> String {
            count >= width ? self : String(repeating: "0", count: width - count) + self
        }
    }
#endif
