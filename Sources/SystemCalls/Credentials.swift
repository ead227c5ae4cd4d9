#if os(Linux)
    import Glibc

    /// Who this process runs as, and the users and groups the system knows (to
    /// pick the unprivileged account decoder helpers switch to).
    package enum Credentials {
        /// The effective user id (`geteuid`): 0 for root.
        package static var effectiveUserID: uid_t { geteuid() }

        /// The effective group id (`getegid`).
        package static var effectiveGroupID: gid_t { getegid() }

        /// The user `name` from the user database (`getpwnam_r`): its id and its
        /// primary group's; nil when there is no such user.
        package static func user(named name: String) -> (uid: uid_t, gid: gid_t)? {
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: 16384)
            let status = getpwnam_r(name, &entry, &buffer, buffer.count, &found)
            guard status == 0, found != nil else { return nil }
            return (entry.pw_uid, entry.pw_gid)
        }

        /// The group `name` from the group database (`getgrnam_r`); nil when there is none.
        package static func group(named name: String) -> gid_t? {
            var entry = Glibc.group()
            var found: UnsafeMutablePointer<Glibc.group>?
            var buffer = [CChar](repeating: 0, count: 16384)
            let status = getgrnam_r(name, &entry, &buffer, buffer.count, &found)
            guard status == 0, found != nil else { return nil }
            return entry.gr_gid
        }

        /// This process's effective capabilities (the `CapEff` mask of
        /// /proc/self/status), 0 when it cannot be read.
        package static var effectiveCapabilities: UInt64 {
            guard let status = try? FileSystem.readWholeFile("/proc/self/status") else { return 0 }
            let text = String(decoding: status, as: UTF8.self)
            let line = text.split(separator: "\n").first { $0.hasPrefix("CapEff:") }
            return line.flatMap { UInt64($0.dropFirst("CapEff:".count).trimmingCharacters(in: " \t"), radix: 16) } ?? 0
        }
    }

    extension Substring {
        fileprivate func trimmingCharacters(in set: String) -> Substring {
            var result = self
            while let first = result.first, set.contains(first) { result = result.dropFirst() }
            while let last = result.last, set.contains(last) { result = result.dropLast() }
            return result
        }
    }
#endif
