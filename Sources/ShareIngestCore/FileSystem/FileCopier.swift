import ContentHash
import Glibc
import ShareManifest
import SystemCalls

/// Identity and version of a source file: if any of these change between two
/// looks, the file changed under us.
struct FileVersion: Sendable, Hashable, Codable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modifiedSeconds: Int
    let modifiedNanoseconds: Int

    init(device: UInt64, inode: UInt64, size: Int64, modifiedSeconds: Int, modifiedNanoseconds: Int) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedSeconds = modifiedSeconds
        self.modifiedNanoseconds = modifiedNanoseconds
    }

    init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
        size = status.size
        modifiedSeconds = status.modifiedSeconds
        modifiedNanoseconds = status.modifiedNanoseconds
    }
}

extension FileVersion {
    /// Recorded as one array, `[device, inode, size, seconds, nanoseconds]`,
    /// not an object with five keys: every item records the version its walk
    /// saw, and its records are written and read at every step (a record made
    /// before reads as the object it was).
    private enum CodingKeys: String, CodingKey { case device, inode, size, modifiedSeconds, modifiedNanoseconds }

    init(from decoder: any Decoder) throws {
        if var c = try? decoder.unkeyedContainer() {
            let device = try c.decode(Int64.self)
            let inode = try c.decode(Int64.self)
            let size = try c.decode(Int64.self)
            let seconds = try c.decode(Int64.self)
            let nanoseconds = try c.decode(Int64.self)
            self.init(
                device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode), size: size,
                modifiedSeconds: Int(seconds),
                modifiedNanoseconds: Int(nanoseconds))
            return
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            device: try c.decode(UInt64.self, forKey: .device), inode: try c.decode(UInt64.self, forKey: .inode),
            size: try c.decode(Int64.self, forKey: .size),
            modifiedSeconds: try c.decode(Int.self, forKey: .modifiedSeconds),
            modifiedNanoseconds: try c.decode(Int.self, forKey: .modifiedNanoseconds))
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(Int64(bitPattern: device))
        try c.encode(Int64(bitPattern: inode))
        try c.encode(size)
        try c.encode(Int64(modifiedSeconds))
        try c.encode(Int64(modifiedNanoseconds))
    }
}

/// Why a copy failed.
enum CopyError: Error {
    /// Reading the source failed (it vanished, a permission, an I/O error).
    case reading(SystemError)
    /// Writing into the container failed (a full disk, an I/O error).
    case writing(SystemError)
    /// The source is a FIFO, a socket, a device, a directory or a symbolic link.
    case notRegularFile(FileType)
    case changed(String)
    /// The copy would not fit, or would leave its file system less than the
    /// reserve (``CopyGuards/reserve``): `size` bytes on disk, `reserve` kept
    /// free, `available` free in the folder `path`. Nothing was written.
    case wouldNotFit(size: Int64, reserve: Int64, available: Int64, path: String)
    /// A stop was asked while it copied (``CopyGuards/stop``): the partial copy is removed.
    case stopped
}

/// What a copy checks as it goes: the room its file system must keep, and a
/// stop asked meanwhile (between chunks, so a long copy ends within a second).
struct CopyGuards: Sendable {
    /// Bytes the container's file system must keep free after the copy,
    /// given its size (``PipelineDefinition/CopySettings/reserve``); nil: none.
    var reserve: (@Sendable (DiskSpace) -> Int64)?
    /// Set when the copy is to stop.
    var stop: CancellationFlag?

    /// Neither.
    static let none = CopyGuards()
}

/// What a copy produced.
struct Copied: Sendable {
    /// Bytes copied.
    let size: Int64
    /// The SHA-256 of those bytes (hexadecimal): the item's content identity.
    let sha256: String
}

/// Copies source files into the container: read, hashed (SHA-256, in the same
/// pass over the bytes) and written to a unique temporary name; fsync; renamed
/// into place without replacing. The source is checked before and after, so a
/// file that changes or vanishes during the copy is reported, never half-delivered.
enum FileCopier {
    /// The largest read: a buffer of at most this, or of the file's size if smaller.
    static let chunk = 1 << 20

    /// Opens a source for reading: beneath its root (``DropRoots``; no
    /// symbolic link anywhere on its way inside the root, nothing outside it),
    /// without blocking on a FIFO that took a file's place, and only when it
    /// is the file the plan saw (``SourceFile/expected``, or `expected`: an
    /// item's recorded ``ItemState/sourceVersion``). Returns it with its version.
    static func openSource(_ file: SourceFile, in roots: DropRoots, expected: FileVersion? = nil) throws(CopyError) -> (
        FileDescriptor, FileVersion
    ) {
        let fd: FileDescriptor
        do {
            fd = try roots.root(of: file).openFile(file.relative)
        } catch {
            switch error.code {
            case ELOOP, EXDEV:
                throw .changed(
                    "a symbolic link took its place, or a folder's on its way, after the drop was listed (not followed)"
                )
            case ENOTDIR: throw .changed("a folder on its way is no longer a folder")
            default: throw .reading(error)
            }
        }
        let status: FileStatus
        do { status = try fd.status(path: file.path.display) } catch { throw .reading(error) }
        guard status.type == .regular else { throw .notRegularFile(status.type) }
        let version = FileVersion(status)
        if let seen = expected ?? file.expected, seen != version {
            throw .changed(
                seen.inode != version.inode || seen.device != version.device
                    ? "another file took its place after the drop was listed (not read)"
                    : "changed after the drop was listed")
        }
        // Back to blocking reads now that it is known to be a regular file.
        fd.setBlocking(true)
        return (fd, version)
    }

    /// Copies `source` (whose version was seen as `expected`) to `destination`,
    /// which must not exist. Returns its size and hash.
    static func copy(
        from source: SourceFile, in roots: DropRoots, expected: FileVersion?, to destination: String, sync: Bool,
        guards: CopyGuards = .none
    ) throws(CopyError) -> Copied {
        let (input, before) = try openSource(source, in: roots, expected: expected)
        return try copy(input, version: before, of: source.path, to: destination, sync: sync, guards: guards)
    }

    /// Copies the source already open as `input` (``openSource(_:in:expected:)``, whose
    /// version it was then) from its start to `destination`, which must not
    /// exist; without `sync`, the copy is made durable later (a file system's
    /// sync), not here. Holes stay holes. Returns its size and hash.
    static func copy(
        _ input: FileDescriptor, version before: FileVersion, of source: SourcePath, to destination: String, sync: Bool,
        guards: CopyGuards = .none
    ) throws(CopyError) -> Copied {
        let temporary = FileSystem.temporaryName(for: destination)
        do {
            let output = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
            if let reserve = guards.reserve {
                try checkRoom(for: input, size: before.size, in: output, destination: destination, reserve: reserve)
            }
            let copied = try transfer(
                from: input, to: output, size: before.size, source: source.display, destination: destination,
                stop: guards.stop)
            try checkUnchanged(input, since: before, copied: copied, source: source)
            if sync { try output.sync(path: destination) }
            try output.close(path: destination)
            try FileSystem.renameNoReplace(temporary, destination)
            return copied
        } catch {
            FileSystem.remove(temporary)
            throw failure(error, source: source, destination: destination)
        }
    }

    /// Copies the source already open as `input` (``openSource(_:in:expected:)``, whose
    /// version it was then, and whose first bytes are `head`) straight to
    /// `destination`, replacing what an earlier attempt left there, with no
    /// temporary name and no fsync: for the copies a caller makes durable all
    /// at once (a file system's sync) before anything names them, and writes
    /// again whole after a crash instead of trusting. A sidecar's bytes are
    /// often all in `head`: then they are written from it. Returns the copy's
    /// size and hash.
    static func copyUnsynced(
        _ input: FileDescriptor, version before: FileVersion, head: [UInt8], of source: SourcePath,
        to destination: String
    ) throws(CopyError) -> Copied {
        do {
            let output = try FileDescriptor.open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o600)
            let copied: Copied
            if Int64(head.count) == before.size {
                let digest = SHA256()
                var writeError: SystemError?
                head.withUnsafeBytes { raw in
                    digest.update(raw)
                    do throws(SystemError) { try output.writeAll(raw, path: destination) } catch { writeError = error }
                }
                if let writeError { throw writeError }
                copied = Copied(size: before.size, sha256: digest.finish())
            } else {
                // `head` was read at an offset: the descriptor is still at the start.
                copied = try transfer(
                    from: input, to: output, size: before.size, source: source.display, destination: destination,
                    stop: nil)
            }
            try checkUnchanged(input, since: before, copied: copied, source: source)
            try output.close(path: destination)
            return copied
        } catch {
            FileSystem.remove(destination)
            throw failure(error, source: source, destination: destination)
        }
    }

    /// Throws ``CopyError/wouldNotFit(size:reserve:available:path:)`` unless the file
    /// system of `output` has room for `input` (its size, or what it takes on
    /// its disk when it has holes, which the copy keeps) and the reserve.
    private static func checkRoom(
        for input: FileDescriptor, size: Int64, in output: FileDescriptor, destination: String,
        reserve: (DiskSpace) -> Int64
    ) throws(CopyError) {
        let space: DiskSpace
        do { space = try output.space(path: destination) } catch { throw .writing(error) }
        let kept = reserve(space)
        guard size + kept > space.available else { return }
        // Only a sparse source may still fit: its holes take no room.
        let onDisk = (try? input.status(path: destination)).map { min($0.size, $0.allocatedBytes) } ?? size
        guard onDisk + kept > space.available else { return }
        throw .wouldNotFit(size: onDisk, reserve: kept, available: space.available, path: destination.parentPath)
    }

    /// Throws unless the source open as `input` is still the version it was
    /// when the copy began (`before`), and the copy holds all of it.
    private static func checkUnchanged(
        _ input: FileDescriptor, since before: FileVersion, copied: Copied, source: SourcePath
    ) throws(CopyError) {
        let after: FileStatus
        do { after = try input.status(path: source.display) } catch { throw .reading(error) }
        guard FileVersion(after) == before, copied.size == before.size else {
            throw .changed("changed while being copied (size \(before.size) → \(after.size) bytes)")
        }
    }

    /// What a copy's `error` is to its caller: reads name the source; writes,
    /// syncs and the rename name the destination.
    private static func failure(_ error: any Error, source: SourcePath, destination: String) -> CopyError {
        switch error {
        case let error as CopyError: error
        case let error as SystemError: error.path == source.display ? .reading(error) : .writing(error)
        default: .writing(SystemError("copy", path: destination, code: EIO))
        }
    }

    /// Copies `range` of `source` (a file in the container: a motion photo's
    /// copy) to `destination`, which must not exist: inside the kernel
    /// (`copy_file_range` from an offset, one copy of the bytes and none through
    /// this process; read and write where the file system refuses it), to a
    /// unique temporary name, fsynced (`sync`), renamed into place without
    /// replacing. The bytes are not looked at.
    static func copyRange(of source: String, _ range: Range<Int>, to destination: String, sync: Bool)
        throws(SystemError)
    {
        let input = try FileDescriptor.openForReading(source)
        let temporary = FileSystem.temporaryName(for: destination)
        do throws(SystemError) {
            let output = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
            var offset = Int64(range.lowerBound)
            var remaining = range.count
            var inKernel = true
            while remaining > 0 {
                var n = 0
                if inKernel {
                    do {
                        n = try input.copyRange(to: output, from: offset, count: remaining, path: destination)
                    } catch  where [EXDEV, EINVAL, ENOSYS, EOPNOTSUPP].contains(error.code) {
                        inKernel = false
                        continue
                    }
                } else {
                    let bytes = try input.read(count: min(chunk, remaining), at: offset, path: source)
                    var writeError: SystemError?
                    bytes.withUnsafeBytes { raw in
                        do throws(SystemError) { try output.writeAll(raw, path: destination) } catch {
                            writeError = error
                        }
                    }
                    if let writeError { throw writeError }
                    n = bytes.count
                }
                // The source is shorter than the range said (it changed): refuse.
                guard n > 0 else { throw SystemError("copy_file_range", path: source, code: EIO) }
                offset += Int64(n)
                remaining -= n
            }
            if sync { try output.sync(path: destination) }
            try output.close(path: destination)
            try FileSystem.renameNoReplace(temporary, destination)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }
    }

    /// The SHA-256 of a file already in the container (a copy a crash left
    /// complete under its name).
    static func hash(of path: String) throws(SystemError) -> String {
        let input = try FileDescriptor.openForReading(path)
        let digest = SHA256()
        let size = try input.status(path: path).size
        var buffer = [UInt8](repeating: 0, count: Int(min(Int64(chunk), max(size, 1))))
        var offset: Int64 = 0
        while true {
            var readError: SystemError?
            let n = buffer.withUnsafeMutableBytes { raw in
                do throws(SystemError) { return try input.read(into: raw, at: offset, path: path) } catch {
                    readError = error
                    return 0
                }
            }
            if let readError { throw readError }
            if n == 0 { return digest.finish() }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            offset += Int64(n)
        }
    }

    /// Reads, hashes and writes until the end of `input`. Read errors name the
    /// source; write errors (disk full) name the destination. A source with
    /// holes (``FileStatus/isSparse``) is copied with them, as `cp
    /// --sparse=auto` does: only its data is written, so a sparse file costs
    /// the container what it costs its dropper. `stop` is looked at between
    /// chunks.
    private static func transfer(
        from input: FileDescriptor, to output: FileDescriptor, size: Int64, source: String, destination: String,
        stop: CancellationFlag?
    ) throws(CopyError) -> Copied {
        do {
            if size > Int64(chunk), try input.status(path: source).isSparse {
                return try transferKeepingHoles(
                    from: input, to: output, size: size, source: source, destination: destination, stop: stop)
            }
            return try transferAll(
                from: input, to: output, size: size, source: source, destination: destination, stop: stop)
        } catch let error as CopyError {
            throw error
        } catch let error as SystemError {
            throw error.path == source ? .reading(error) : .writing(error)
        } catch {
            throw .writing(SystemError("copy", path: destination, code: EIO))
        }
    }

    /// A sparse source's data, region by region (`SEEK_DATA`, `SEEK_HOLE`),
    /// each hole skipped in the copy and hashed as the zeros it reads as;
    /// the copy's size set last, for a hole at the end. Reads past `size`
    /// (it grew) are left to ``checkUnchanged(_:since:copied:source:)``.
    private static func transferKeepingHoles(
        from input: FileDescriptor, to output: FileDescriptor, size: Int64, source: String, destination: String,
        stop: CancellationFlag?
    ) throws -> Copied {
        let digest = SHA256()
        var buffer = [UInt8](repeating: 0, count: chunk)
        let zeros = [UInt8](repeating: 0, count: chunk)
        var offset: Int64 = 0
        func hashZeros(upTo end: Int64) throws {
            while offset < end {
                if stop?.isCancelled == true { throw CopyError.stopped }
                let n = Int(min(Int64(chunk), end - offset))
                zeros.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                offset += Int64(n)
            }
        }
        while offset < size {
            let data = try input.nextData(from: offset, path: source) ?? size
            try hashZeros(upTo: min(data, size))
            guard offset < size else { break }
            let hole = min(try input.nextHole(from: offset, path: source), size)
            while offset < hole {
                if stop?.isCancelled == true { throw CopyError.stopped }
                let want = Int(min(Int64(chunk), hole - offset))
                let n = try buffer.withUnsafeMutableBytes { raw in
                    try input.read(
                        into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<want]), at: offset, path: source)
                }
                guard n > 0 else { return Copied(size: offset, sha256: digest.finish()) }  // it shrank
                try buffer.withUnsafeBytes { raw in
                    let piece = UnsafeRawBufferPointer(rebasing: raw[0..<n])
                    digest.update(piece)
                    try output.write(piece, at: offset, path: destination)
                }
                offset += Int64(n)
            }
        }
        try output.truncate(to: offset, path: destination)
        return Copied(size: offset, sha256: digest.finish())
    }

    private static func transferAll(
        from input: FileDescriptor, to output: FileDescriptor, size: Int64, source: String, destination: String,
        stop: CancellationFlag?
    ) throws -> Copied {
        let digest = SHA256()
        // A one-line file needs no megabyte of buffer; one more byte sees the end.
        var buffer = [UInt8](repeating: 0, count: Int(min(Int64(chunk), size + 1)))
        var total: Int64 = 0
        while true {
            if stop?.isCancelled == true { throw CopyError.stopped }
            var readError: SystemError?
            let n = buffer.withUnsafeMutableBytes { raw in
                do throws(SystemError) { return try input.readAvailable(into: raw, path: source) } catch {
                    readError = error
                    return 0
                }
            }
            if let readError { throw readError }
            if n == 0 { return Copied(size: total, sha256: digest.finish()) }
            var writeError: SystemError?
            buffer.withUnsafeBytes { raw in
                let piece = UnsafeRawBufferPointer(rebasing: raw[0..<n])
                digest.update(piece)
                do throws(SystemError) { try output.writeAll(piece, path: destination) } catch { writeError = error }
            }
            if let writeError { throw writeError }
            total += Int64(n)
        }
    }
}
