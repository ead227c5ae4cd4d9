#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// File-system facts and operations the package needs, in one place.
package enum FileSystem {
    /// fsyncs a directory, making renames and creations inside it durable.
    package static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
        try fd.sync(path: path)
    }

    #if os(Linux)
        /// Makes every file written on the file system that holds `path` durable,
        /// with their folders (`syncfs`): one call for many small files, each
        /// written without an fsync of its own.
        package static func syncFileSystem(containing path: String) throws(SystemError) {
            let fd = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
            try fd.syncFileSystem(path: path)
        }
    #endif

    /// Creates `path` (and parents) owner-only (mode 0700 less the umask), if
    /// missing: a decoder helper running as another user reads nothing of it.
    package static func makeDirectory(_ path: String) throws(SystemError) {
        if let existing = try? FileStatus.of(path) {
            guard existing.type == .directory else { throw SystemError("mkdir", path: path, code: ENOTDIR) }
            return
        }
        let parent = path.parentPath
        if !parent.isEmpty, parent != path { try makeDirectory(parent) }
        #if os(Linux)
            if let (folder, name) = try AnchoredFolders.entry(path) {
                guard withCPath(name, { mkdirat(folder.raw, $0, 0o700) }) == 0 || errno == EEXIST else {
                    throw SystemError("mkdirat", path: path)
                }
                return
            }
        #endif
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw SystemError("mkdir", path: path) }
    }

    #if os(Linux)
        /// The space of the file system that holds `path` (a folder or a file).
        package static func space(of path: String) throws(SystemError) -> DiskSpace {
            try FileDescriptor.open(path, O_RDONLY | O_PATH).space(path: path)
        }
    #endif

    /// True if `path` exists (without following a final symbolic link).
    package static func exists(_ path: String) -> Bool { (try? FileStatus.ofLink(path)) != nil }

    /// True if this process may write into the directory `path`.
    package static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }

    /// A temporary name beside `path`, unique across processes and machines sharing
    /// the directory: `.<name>.<host>-<pid>-<random>.partial`.
    package static func temporaryName(for path: String) -> String {
        "\(path.parentPath)/.\(path.lastPathComponentOfPath).\(hostTag)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).partial"
    }

    /// This host's name, reduced to letters and digits (it names temporary files).
    package static let hostTag: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count)
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(name.map { $0.isLetter || $0.isNumber ? $0 : "_" }.prefix(32))
    }()

    /// Gives `from` the name `to` without ever replacing an existing file: a hard
    /// link (which fails with EEXIST) and the removal of the old name. Portable
    /// POSIX, atomic for readers of `to`. On a file system without hard links a
    /// rename after a check is the fallback (a race there can only replace a file
    /// of the same UUID name, i.e. the same item's).
    package static func renameNoReplace(_ from: String, _ to: String) throws(SystemError) {
        #if os(Linux)
            if let (a, b) = try anchoredPair(from, to) {
                if withCPath(
                    a.name, { old in withCPath(b.name) { new in linkat(a.folder.raw, old, b.folder.raw, new, 0) } })
                    == 0
                {
                    _ = withCPath(a.name) { unlinkat(a.folder.raw, $0, 0) }
                    return
                }
                let code = errno
                guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == ENOSYS else {
                    throw SystemError("linkat", path: to, code: code)
                }
                guard (try? b.folder.status(ofEntry: b.name, display: to)) == nil else {
                    throw SystemError("renameat", path: to, code: EEXIST)
                }
                try renameAt(a, b, display: from)
                return
            }
        #endif
        if link(from, to) == 0 {
            unlink(from)
            return
        }
        let code = errno
        guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == ENOSYS else {
            throw SystemError("link", path: to, code: code)
        }
        guard !exists(to) else { throw SystemError("rename", path: to, code: EEXIST) }
        try renameOrThrow(from, to)
    }

    /// Gives the file `from` a second name `to` (a hard link, never replacing);
    /// false if it cannot (`to` exists, or the file system has no hard links).
    package static func hardLink(_ from: String, _ to: String) -> Bool {
        #if os(Linux)
            do {
                if let (a, b) = try anchoredPair(from, to) {
                    return withCPath(
                        a.name, { old in withCPath(b.name) { new in linkat(a.folder.raw, old, b.folder.raw, new, 0) } })
                        == 0
                }
            } catch {
                return false
            }
        #endif
        return link(from, to) == 0
    }

    /// Renames, replacing nothing but what `to` may already be (`rename`).
    package static func rename(_ from: String, _ to: String) throws(SystemError) {
        #if os(Linux)
            if let (a, b) = try anchoredPair(from, to) { return try renameAt(a, b, display: from) }
        #endif
        guard renameFile(from, to) == 0 else { throw SystemError("rename", path: from) }
    }

    #if os(Linux)
        /// Both paths' folders and names, when both lie beneath held folders
        /// (``AnchoredFolders``); nil when neither does. One beneath a held folder
        /// and the other not is refused: a name inside the container is never
        /// given by a path looked up again.
        private static func anchoredPair(_ from: String, _ to: String) throws(SystemError)
            -> ((folder: FileDescriptor, name: [UInt8]), (folder: FileDescriptor, name: [UInt8]))?
        {
            let a = try AnchoredFolders.entry(from)
            let b = try AnchoredFolders.entry(to)
            if let a, let b { return (a, b) }
            if a == nil, b == nil { return nil }
            throw SystemError("renameat", path: a == nil ? from : to, code: EXDEV)
        }

        /// `renameat` between two held folders' entries.
        private static func renameAt(
            _ a: (folder: FileDescriptor, name: [UInt8]), _ b: (folder: FileDescriptor, name: [UInt8]), display: String
        ) throws(SystemError) {
            let result = withCPath(a.name) { old in
                withCPath(b.name) { new in renameat(a.folder.raw, old, b.folder.raw, new) }
            }
            guard result == 0 else { throw SystemError("renameat", path: display) }
        }
    #endif

    /// Renames within the no-replace fallback (the method above shadows the C call).
    private static func renameOrThrow(_ from: String, _ to: String) throws(SystemError) { try rename(from, to) }

    /// Removes a file; a missing one is not an error.
    package static func remove(_ path: String) {
        #if os(Linux)
            do {
                if let (folder, name) = try AnchoredFolders.entry(path) {
                    _ = withCPath(name) { unlinkat(folder.raw, $0, 0) }
                    return
                }
            } catch {
                return  // beneath a held folder, but not reachable beneath it: left
            }
        #endif
        unlink(path)
    }

    /// Removes an empty folder; a missing or non-empty one is left as it is.
    package static func removeEmptyDirectory(_ path: String) {
        #if os(Linux)
            do {
                if let (folder, name) = try AnchoredFolders.entry(path) {
                    _ = withCPath(name) { unlinkat(folder.raw, $0, AT_REMOVEDIR) }
                    return
                }
            } catch {
                return  // beneath a held folder, but not reachable beneath it: left
            }
        #endif
        rmdir(path)
    }

    /// Creates a new folder from a `mkdtemp` template ending in `XXXXXX`; returns its path.
    package static func makeTemporaryDirectory(_ template: String) throws(SystemError) -> String {
        var bytes = Array(template.utf8CString)
        guard let created = bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemError("mkdtemp", path: template)
        }
        return String(cString: created)
    }

    /// True while a process with this id exists (see ``Processes/exists(_:)``).
    package static func processExists(_ pid: pid_t) -> Bool { Processes.exists(pid) }

    /// The canonical absolute path (`realpath`), nil if it cannot be resolved.
    package static func resolved(_ path: String) -> String? {
        resolved(pathBytes: Array(path.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The canonical absolute path of a path given as raw bytes, as raw bytes.
    package static func resolved(pathBytes: [UInt8]) -> [UInt8]? {
        withCPath(pathBytes) { path in
            guard let real = realpath(path, nil) else { return nil }
            defer { free(real) }
            return Array(
                UnsafeBufferPointer(
                    start: UnsafeRawPointer(real).assumingMemoryBound(to: UInt8.self), count: strlen(real)))
        }
    }

    /// The current directory's path as raw bytes (`getcwd`).
    package static func currentDirectory() -> [UInt8] {
        guard let cwd = getcwd(nil, 0) else { return Array("/".utf8) }
        defer { free(cwd) }
        return Array(
            UnsafeBufferPointer(start: UnsafeRawPointer(cwd).assumingMemoryBound(to: UInt8.self), count: strlen(cwd)))
    }

    /// The names in a folder (hidden ones included, without `.` and `..`),
    /// sorted; an unreadable or missing folder has none.
    package static func names(in path: String) -> [String] {
        guard let entries = try? DirectoryEntries(pathBytes: Array(path.utf8), display: path) else { return [] }
        return entries.map { String(decoding: $0, as: UTF8.self) }.sorted()
    }

    /// The names in a folder that end with `suffix` (hidden ones included),
    /// sorted: the folder is read in constant memory, whatever else it holds.
    package static func names(in path: String, endingWith suffix: String) -> [String] {
        let tail = Array(suffix.utf8)
        var found: [String] = []
        try? DirectoryEntries.forEach(pathBytes: Array(path.utf8), display: path) { name in
            if name.count >= tail.count, name.suffix(tail.count).elementsEqual(tail) {
                found.append(String(decoding: name, as: UTF8.self))
            }
        }
        return found.sorted()
    }

    /// Removes `path` and, if it is a folder, everything in it, never following
    /// a symbolic link: each folder is opened (`O_NOFOLLOW`) relative to the
    /// one holding it and its entries removed relative to it (`unlinkat`), so
    /// no path is resolved below `path`. A folder swapped for a link to another
    /// place while the tree is removed (by someone who may still write in it: a
    /// dropper whose shell's working directory is in their drop) loses only the
    /// link, never what it points at. Folders deeper than 4096 levels are left.
    /// A missing path is not an error. `listed` hears each folder's place
    /// (relative to `path`, `""` for itself) once it is listed, before its
    /// entries go (a debug build's tests pause there).
    package static func removeTree(_ path: String, listed: (String) -> Void = { _ in }) {
        guard let status = try? FileStatus.ofLink(path) else { return }
        guard status.type == .directory else {
            unlink(path)
            return
        }
        let folder = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else {
            // No longer a folder (swapped for a link or a file): the name goes, nothing it points at.
            if errno == ELOOP || errno == ENOTDIR { unlink(path) }
            return
        }
        removeEntries(of: folder, at: "", depth: 0, listed: listed)
        close(folder)
        rmdir(path)
    }

    /// Removes every entry of the open folder `folder` (closed by its caller).
    private static func removeEntries(of folder: Int32, at relative: String, depth: Int, listed: (String) -> Void) {
        guard depth < 4096 else { return }
        // A few passes: what was renamed in the folder while it was emptied is
        // found by the next listing (each listing is taken whole first: entries
        // removed while readdir goes on could be skipped).
        for pass in 0..<3 {
            let listing = dup(folder)
            guard listing >= 0, let stream = fdopendir(listing) else {
                if listing >= 0 { close(listing) }
                return
            }
            // A duplicate shares the folder's read position: from the start again.
            rewinddir(stream)
            var names: [[CChar]] = []
            while let entry = readdir(stream) {
                let cName = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!)
                    .assumingMemoryBound(to: CChar.self)
                let count = strlen(cName)
                if (count == 1 && cName[0] == 0x2E) || (count == 2 && cName[0] == 0x2E && cName[1] == 0x2E) { continue }
                names.append(Array(UnsafeBufferPointer(start: cName, count: count + 1)))
            }
            closedir(stream)
            if names.isEmpty { return }
            if pass == 0 { listed(relative) }
            for name in names {
                name.withUnsafeBufferPointer { cName in
                    // A file, a link, a device: the name goes. A folder: emptied, then it goes.
                    if unlinkat(folder, cName.baseAddress!, 0) == 0 || (errno != EISDIR && errno != EPERM) { return }
                    let child = openat(folder, cName.baseAddress!, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    guard child >= 0 else { return }
                    let name = String(decoding: cName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    removeEntries(
                        of: child, at: relative.isEmpty ? name : relative + "/" + name, depth: depth + 1, listed: listed
                    )
                    close(child)
                    // Swapped for a link or a file meanwhile: that name goes instead.
                    if unlinkat(folder, cName.baseAddress!, AT_REMOVEDIR) != 0 && errno == ENOTDIR {
                        unlinkat(folder, cName.baseAddress!, 0)
                    }
                }
            }
        }
    }

    /// Copies a small file's bytes to a new file (`AtomicFile`); false if it cannot.
    package static func copySmallFile(_ from: String, to: String) -> Bool {
        guard let bytes = try? readWholeFile(from) else { return false }
        return (try? AtomicFile.create(to, bytes: bytes, syncDirectory: false)) != nil
    }

    /// The whole content of a (small) file.
    package static func readWholeFile(_ path: String) throws(SystemError) -> [UInt8] {
        let fd = try FileDescriptor.open(path, O_RDONLY)
        var content: [UInt8] = []
        var offset: Int64 = 0
        while true {
            let chunk = try fd.read(count: 1 << 16, at: offset, path: path)
            content += chunk
            if chunk.count < 1 << 16 { return content }
            offset += Int64(chunk.count)
        }
    }
}

private func renameFile(_ from: String, _ to: String) -> Int32 { rename(from, to) }

extension String {
    /// The last `/`-separated component of a path string.
    package var lastPathComponentOfPath: String {
        // Searched as bytes: "/" is ASCII, and a search by Character walks grapheme clusters.
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return self }
        return String(self[index(after: slash)...])
    }

    /// The path string without its last component ("/" for a top-level entry).
    package var parentPath: String {
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        if slash == startIndex { return "/" }
        return String(self[..<slash])
    }
}
