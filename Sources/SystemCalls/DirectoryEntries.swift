#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The names in a folder, as raw bytes (`opendir`/`readdir`), without `.` and
/// `..`. Each name is copied by its length (`strlen(d_name)`): `readdir`'s
/// entry holds only the name and its NUL, so reading the whole 256-byte
/// `d_name` array reads past short entries, and past glibc's buffer for an
/// entry at its end.
package struct DirectoryEntries: Sequence {
    package let names: [[UInt8]]

    /// Lists the folder at `pathBytes` (all entries, hidden ones included);
    /// `display` names it in the error.
    package init(pathBytes: [UInt8], display: String) throws(SystemError) {
        var names: [[UInt8]] = []
        try Self.forEach(pathBytes: pathBytes, display: display) { names.append(Array($0)) }
        self.names = names
    }

    /// Calls `body` with each name in the folder, one at a time, holding none:
    /// a folder of a million files is read in constant memory. The buffer is
    /// valid only during the call.
    package static func forEach(pathBytes: [UInt8], display: String, _ body: (UnsafeRawBufferPointer) -> Void)
        throws(SystemError)
    {
        try scan(
            pathBytes: pathBytes, display: display,
            while: { name in
                body(name)
                return true
            })
    }

    /// The same, stopping once `body` returns false (the rest of the folder is not read).
    package static func scan(pathBytes: [UInt8], display: String, while body: (UnsafeRawBufferPointer) -> Bool)
        throws(SystemError)
    {
        guard let stream = withCPath(pathBytes, { opendir($0) }) else { throw SystemError("opendir", path: display) }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            // The name's address, without loading the entry (`pointee` would copy
            // the whole struct, 256-byte `d_name` included).
            let cName = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!)
                .assumingMemoryBound(to: CChar.self)
            let name = UnsafeRawBufferPointer(start: cName, count: strlen(cName))
            if name.elementsEqual([UInt8(ascii: ".")]) || name.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                continue
            }
            if !body(name) { return }
        }
    }

    #if os(Linux)
        /// ``forEach(pathBytes:display:_:)`` over the folder open as `directory`
        /// (opened for reading, `O_RDONLY | O_DIRECTORY`; it stays open and its
        /// position is not moved: the listing reads a duplicate, `fdopendir`), so
        /// the folder listed is the one held, whatever its path names now.
        package static func forEach(
            directory: FileDescriptor, display: String, _ body: (UnsafeRawBufferPointer) -> Void
        ) throws(SystemError) {
            let listed = retryingInterrupts { openat(directory.raw, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
            guard listed >= 0 else { throw SystemError("openat", path: display) }
            guard let stream = fdopendir(listed) else {
                let error = SystemError("fdopendir", path: display)
                Glibc.close(listed)
                throw error
            }
            defer { closedir(stream) }
            while let entry = readdir(stream) {
                let cName = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!)
                    .assumingMemoryBound(to: CChar.self)
                let name = UnsafeRawBufferPointer(start: cName, count: strlen(cName))
                if name.elementsEqual([UInt8(ascii: ".")])
                    || name.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")])
                {
                    continue
                }
                body(name)
            }
        }
    #endif

    package func makeIterator() -> IndexingIterator<[[UInt8]]> { names.makeIterator() }

    /// Goes through the folder at `pathBytes` once and removes the regular
    /// files whose names `select` accepts: each is `lstat`ed and unlinked
    /// relative to the open folder (`fstatat` without following a link,
    /// `unlinkat`), so no path is resolved per file and nothing outside the
    /// folder can be reached (a name never holds `/`; a symbolic link, folder
    /// or device is left). The names are taken up to `chunk` at a time and
    /// removed in inode order, as `rm -r` does for a large folder: the inode
    /// table is then written in order, not at random (ext4 lists a folder in
    /// hash order). `removed` hears each file's name and size before it goes;
    /// with `dryRun` nothing is unlinked. Memory is bounded by `chunk` names,
    /// whatever the folder holds; unlinking names already read while `readdir`
    /// goes on leaves the others listed once.
    package static func removeRegularFiles(
        in pathBytes: [UInt8], display: String, dryRun: Bool, chunk: Int = 131_072,
        where select: (UnsafeRawBufferPointer) -> Bool, removed: (UnsafeRawBufferPointer, Int64) -> Void
    ) throws(SystemError) {
        guard let stream = withCPath(pathBytes, { opendir($0) }) else { throw SystemError("opendir", path: display) }
        defer { closedir(stream) }
        let folder = dirfd(stream)
        // The names taken, each followed by its NUL, and where each starts, with its inode.
        var names: [CChar] = []
        var taken: [(inode: UInt64, start: Int32)] = []
        func removeTaken() {
            taken.sort { $0.inode < $1.inode }
            names.withUnsafeBufferPointer { buffer in
                for entry in taken {
                    let cName = buffer.baseAddress! + Int(entry.start)
                    var st = stat()
                    guard fstatat(folder, cName, &st, AT_SYMLINK_NOFOLLOW) == 0, FileType(mode: st.st_mode) == .regular
                    else { continue }
                    removed(UnsafeRawBufferPointer(start: cName, count: strlen(cName)), Int64(st.st_size))
                    if !dryRun { unlinkat(folder, cName, 0) }
                }
            }
            names.removeAll(keepingCapacity: true)
            taken.removeAll(keepingCapacity: true)
        }
        while let entry = readdir(stream) {
            let cName = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!)
                .assumingMemoryBound(to: CChar.self)
            let name = UnsafeRawBufferPointer(start: cName, count: strlen(cName))
            if name.elementsEqual([UInt8(ascii: ".")]) || name.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                continue
            }
            guard select(name) else { continue }
            let inode = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_ino)!).loadUnaligned(
                as: ino_t.self)
            taken.append((UInt64(inode), Int32(names.count)))
            names.append(contentsOf: UnsafeBufferPointer(start: cName, count: name.count + 1))
            if taken.count >= chunk { removeTaken() }
        }
        removeTaken()
    }
}

/// A folder's names, sorted bytewise, kept in one buffer: a folder of a million
/// files costs about 20 bytes a name, not an array each.
package struct SortedNames: RandomAccessCollection, Sendable {
    private let bytes: [UInt8]
    /// Where each name starts in `bytes`, in sorted order; a name ends where the
    /// next one in `bytes` starts (`ends`).
    private let order: [Int32]
    private let starts: [Int32]

    /// The names in the folder at `pathBytes` that `keep` accepts, sorted.
    package init(pathBytes: [UInt8], display: String, keep: (UnsafeRawBufferPointer) -> Bool = { _ in true })
        throws(SystemError)
    {
        var bytes: [UInt8] = []
        var starts: [Int32] = []
        try DirectoryEntries.forEach(pathBytes: pathBytes, display: display) { name in
            guard keep(name) else { return }
            starts.append(Int32(bytes.count))
            bytes.append(contentsOf: name)
        }
        self.init(bytes: bytes, starts: starts)
    }

    #if os(Linux)
        /// The names in the folder open as `directory` (for reading) that `keep` accepts, sorted.
        package init(directory: FileDescriptor, display: String, keep: (UnsafeRawBufferPointer) -> Bool = { _ in true })
            throws(SystemError)
        {
            var bytes: [UInt8] = []
            var starts: [Int32] = []
            try DirectoryEntries.forEach(directory: directory, display: display) { name in
                guard keep(name) else { return }
                starts.append(Int32(bytes.count))
                bytes.append(contentsOf: name)
            }
            self.init(bytes: bytes, starts: starts)
        }
    #endif

    private init(bytes: [UInt8], starts: [Int32]) {
        var starts = starts
        starts.append(Int32(bytes.count))
        let count = starts.count - 1
        let order = bytes.withUnsafeBufferPointer { buffer in
            (0..<count).sorted { a, b in
                buffer[Int(starts[a])..<Int(starts[a + 1])].lexicographicallyPrecedes(
                    buffer[Int(starts[b])..<Int(starts[b + 1])])
            }.map { Int32($0) }
        }
        self.bytes = bytes
        self.starts = starts
        self.order = order
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { order.count }

    /// The `position`-th name in sorted order.
    package subscript(position: Int) -> [UInt8] {
        let index = Int(order[position])
        return Array(bytes[Int(starts[index])..<Int(starts[index + 1])])
    }
}
