#if os(Linux)
    import CSystem
    import Glibc
    import Synchronization

    // Opening files inside a directory held open, and nowhere else: what a tree
    // that others may write into (a dropped folder) needs, as container runtimes
    // do. A path string checked earlier proves nothing about what it names later
    // (a folder on it may have become a symbolic link meanwhile); a descriptor of
    // the directory, and a resolution that may not leave it nor follow any link,
    // does.

    /// `O_PATH` (``shim_o_path``: glibc defines it only under _GNU_SOURCE).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // (the C name, as the other open flags are spelled)
    package let O_PATH = shim_o_path()

    extension FileDescriptor {
        /// A handle on the directory at `pathBytes` (`open(O_PATH | O_DIRECTORY)`):
        /// it names that directory from now on, whatever later happens to the path.
        /// With `followingFinalLink` false, a symbolic link as the last component is
        /// refused (`ELOOP`: `O_NOFOLLOW`); links earlier on the path are followed.
        package static func openDirectoryHandle(pathBytes: [UInt8], followingFinalLink: Bool, display: String)
            throws(SystemError) -> FileDescriptor
        {
            try open(
                pathBytes: pathBytes, O_PATH | O_DIRECTORY | (followingFinalLink ? 0 : O_NOFOLLOW), display: display)
        }

        /// Opens `relative` (a path inside this directory, `/`-separated, without
        /// `..`) with `flags` (close-on-exec always), resolved beneath this
        /// directory only: `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
        /// RESOLVE_NO_MAGICLINKS)` with `O_NOFOLLOW`, so a symbolic link anywhere
        /// on the way (folder or file) fails with `ELOOP` and a way out with
        /// `EXDEV`. Where the kernel has no `openat2` (`ENOSYS`, before Linux 5.6;
        /// or a filter that refuses it with `EPERM`) the path is walked one
        /// component at a time, each opened with `O_NOFOLLOW` relative to the one
        /// before: the same refusals. An empty `relative` opens this directory itself.
        /// `display` names the file in the error.
        package func open(beneath relative: [UInt8], _ flags: Int32, display: String) throws(SystemError)
            -> FileDescriptor
        {
            guard !relative.isEmpty else { return try open(component: Array(".".utf8), flags, display: display) }
            if !BeneathResolution.useComponentWalk {
                var again = 0
                while true {
                    let fd = withCPath(relative) { path in retryingInterrupts { shim_openat2_beneath(raw, path, flags) }
                    }
                    if fd >= 0 { return FileDescriptor(fd) }
                    let code = errno
                    // A rename or mount elsewhere on the system while `..` was checked: try again.
                    if code == EAGAIN, again < 16 {
                        again += 1
                        continue
                    }
                    if code == ENOSYS { BeneathResolution.noteMissing() }
                    // `O_DIRECTORY` on a final link says ENOTDIR: it is a link.
                    if code == ENOTDIR, flags & O_DIRECTORY != 0, finalComponentIsLink(relative, display: display) {
                        throw SystemError("openat2", path: display, code: ELOOP)
                    }
                    guard code == ENOSYS || code == EPERM else {
                        throw SystemError("openat2", path: display, code: code)
                    }
                    break
                }
            }
            return try openByComponents(relative, flags, display: display)
        }

        /// True when the last component of `relative` (beneath this directory) is a symbolic link.
        private func finalComponentIsLink(_ relative: [UInt8], display: String) -> Bool {
            let slash = UInt8(ascii: "/")
            let trimmed = Array(relative.reversed().drop { $0 == slash }.reversed())
            let cut = trimmed.lastIndex(of: slash)
            let name = cut.map { Array(trimmed[($0 + 1)...]) } ?? trimmed
            let parent = cut.map { Array(trimmed[..<$0]) } ?? []
            guard
                let folder = parent.isEmpty ? self : try? open(beneath: parent, O_PATH | O_DIRECTORY, display: display)
            else { return false }
            return (try? folder.status(ofEntry: name, display: display))?.type == .symbolicLink
        }

        /// ``open(beneath:_:display:)`` without `openat2`: each folder on the way
        /// opened with `O_PATH | O_DIRECTORY | O_NOFOLLOW` relative to the one
        /// before, the last component with `O_NOFOLLOW`; a component that is a
        /// symbolic link gives `ELOOP`, `..` gives `EXDEV`.
        private func openByComponents(_ relative: [UInt8], _ flags: Int32, display: String) throws(SystemError)
            -> FileDescriptor
        {
            let components = relative.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map(
                Array.init
            ).filter { $0 != [UInt8(ascii: ".")] }
            if components.contains([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                throw SystemError("openat", path: display, code: EXDEV)
            }
            guard let last = components.last else {
                return try open(component: Array(".".utf8), flags, display: display)
            }
            var folder: FileDescriptor?
            for component in components.dropLast() {
                let parent = folder ?? self
                folder = try parent.open(component: component, O_PATH | O_DIRECTORY, display: display)
            }
            return try (folder ?? self).open(component: last, flags, display: display)
        }

        /// `openat(self, component, flags | O_NOFOLLOW | O_CLOEXEC)` of one name
        /// (no `/`): a symbolic link gives `ELOOP`, also where `O_PATH` would
        /// otherwise open the link itself.
        private func open(component: [UInt8], _ flags: Int32, display: String) throws(SystemError) -> FileDescriptor {
            let fd = withCPath(component) { name in
                retryingInterrupts { openat(raw, name, flags | O_NOFOLLOW | O_CLOEXEC) }
            }
            guard fd >= 0 else {
                let code = errno
                // `O_DIRECTORY | O_NOFOLLOW` on a link says ENOTDIR: it is a link.
                if code == ENOTDIR, (try? status(ofEntry: component, display: display))?.type == .symbolicLink {
                    throw SystemError("openat", path: display, code: ELOOP)
                }
                throw SystemError("openat", path: display, code: code)
            }
            let opened = FileDescriptor(fd)
            // `O_PATH | O_NOFOLLOW` opens a link as itself: refused like any other.
            if flags & O_PATH != 0, try opened.status(path: display).type == .symbolicLink {
                throw SystemError("openat", path: display, code: ELOOP)
            }
            return opened
        }

        /// The status of the entry `name` (one component) of this directory, not
        /// following a symbolic link (`fstatat(AT_SYMLINK_NOFOLLOW)`).
        package func status(ofEntry name: [UInt8], display: String) throws(SystemError) -> FileStatus {
            var st = stat()
            guard withCPath(name, { fstatat(raw, $0, &st, AT_SYMLINK_NOFOLLOW) }) == 0 else {
                throw SystemError("fstatat", path: display)
            }
            return FileStatus(st)
        }

        /// What the symbolic link `name` (one component) of this directory points
        /// at, as raw bytes (`readlinkat`).
        package func linkTarget(ofEntry name: [UInt8], display: String) throws(SystemError) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
            let n = withCPath(name) { path in
                buffer.withUnsafeMutableBytes {
                    readlinkat(raw, path, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count)
                }
            }
            guard n >= 0 else { throw SystemError("readlinkat", path: display) }
            return Array(buffer.prefix(n))
        }
    }

    /// How ``FileDescriptor/open(beneath:_:display:)`` resolves: with `openat2`,
    /// or one component at a time where the kernel has none.
    package enum BeneathResolution {
        private static let missing = Atomic<Bool>(false)

        #if DEBUG
            /// Test-only (debug builds): `SHARE_TEST_OPENAT2=missing` makes every
            /// open take the component walk, as on a kernel without `openat2`.
            private static let forcedMissing = ProcessEnvironment.value("SHARE_TEST_OPENAT2") == "missing"
        #endif

        /// True once `openat2` answered `ENOSYS` (or a test says it would).
        package static var useComponentWalk: Bool {
            #if DEBUG
                if forcedMissing { return true }
            #endif
            return missing.load(ordering: .relaxed)
        }

        static func noteMissing() { missing.store(true, ordering: .relaxed) }
    }
#endif
