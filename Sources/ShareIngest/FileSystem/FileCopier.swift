import Glibc
import ShareManifest
import SystemCalls

/// Identity and version of a source file: if any of these change between two
/// looks, the file changed under us.
struct FileVersion: Sendable, Hashable {
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

/// Why a copy failed.
enum CopyError: Error {
    case system(SystemError)
    /// The source is a FIFO, a socket, a device, a directory or a symbolic link.
    case notRegularFile(FileType)
    case changed(String)
}

/// Copies source files into the container: `copy_file_range` (the kernel copies,
/// or reflinks where the file system can), falling back to read/write; fsync;
/// rename into place. The source is checked before and after, so a file that
/// changes or vanishes during the copy is reported, never half-delivered.
enum FileCopier {
    static let chunk = 1 << 30

    /// Opens a source for reading without following a final symbolic link and
    /// without blocking on a FIFO that took a file's place.
    static func openSource(_ path: SourcePath) throws(CopyError) -> (FileDescriptor, FileVersion) {
        let fd: FileDescriptor
        do {
            fd = try path.open(O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        } catch {
            if error.code == ELOOP { throw .notRegularFile(.symbolicLink) }
            throw .system(error)
        }
        let status: FileStatus
        do { status = try fd.status(path: path.display) } catch { throw .system(error) }
        guard status.type == .regular else { throw .notRegularFile(status.type) }
        // Back to blocking reads now that it is known to be a regular file.
        fd.setBlocking(true)
        return (fd, FileVersion(status))
    }

    /// Copies `source` (whose version was seen as `expected`) to `destination`,
    /// which must not exist. Returns the number of bytes copied.
    static func copy(from source: SourcePath, expected: FileVersion?, to destination: String, sync: Bool) throws(CopyError) -> Int64 {
        let (input, before) = try openSource(source)
        if let expected, expected != before { throw .changed("changed after it was inspected") }
        let temporary = FileSystem.temporaryName(for: destination)
        do {
            let output = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
            let copied = try transfer(from: input, to: output, source: source.display, destination: destination)
            let after: FileStatus
            do { after = try input.status(path: source.display) } catch { throw CopyError.system(error) }
            guard FileVersion(after) == before, copied == before.size else {
                throw CopyError.changed("changed while being copied (size \(before.size) → \(after.size) bytes)")
            }
            if sync { try output.sync(path: destination) }
            try output.close(path: destination)
            try FileSystem.renameNoReplace(temporary, destination)
            return copied
        } catch let error as CopyError {
            FileSystem.remove(temporary)
            throw error
        } catch let error as SystemError {
            FileSystem.remove(temporary)
            throw .system(error)
        } catch {
            FileSystem.remove(temporary)
            throw .system(SystemError("copy", path: destination, code: EIO))
        }
    }

    /// Read errors name the source; write errors (disk full) name the destination.
    private static func transfer(from input: FileDescriptor, to output: FileDescriptor, source: String, destination: String) throws(SystemError) -> Int64 {
        var total: Int64 = 0
        var useCopyRange = true
        while true {
            if useCopyRange {
                do {
                    let n = try input.copyRange(to: output, count: chunk, path: source)
                    if n == 0 { return total }
                    total += Int64(n)
                    continue
                } catch {
                    // Cross-device on old kernels, or a file system without support.
                    if [EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, EBADF].contains(error.code) && total == 0 {
                        useCopyRange = false
                        continue
                    }
                    if error.isDiskFull { throw SystemError("write", path: destination, code: error.code) }
                    throw error
                }
            }
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var readError: SystemError?
            let n = buffer.withUnsafeMutableBytes { raw in
                do throws(SystemError) { return try input.readAvailable(into: raw, path: source) } catch { readError = error; return 0 }
            }
            if let readError { throw readError }
            if n == 0 { return total }
            var writeError: SystemError?
            buffer.withUnsafeBytes { raw in
                do throws(SystemError) { try output.writeAll(UnsafeRawBufferPointer(rebasing: raw[0..<n]), path: destination) } catch { writeError = error }
            }
            if let writeError { throw writeError }
            total += Int64(n)
        }
    }
}
