#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The system-call funnel: every raw POSIX call of the package goes through the
// types in this folder (and, for Linux-only calls, ShareIngest's FileSystem/),
// so EINTR is retried in one place, failures become a typed `SystemError`
// naming the call and the path, and file types are read from one `FileStatus`.
// Only portable POSIX is used here: a host app on an Apple platform links this.

/// A failed system call: which call, on which path, and `errno` (named by its C
/// constant in `description`, e.g. `ENOSPC`).
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system call that failed, e.g. `open`, `fsync`, `rename`.
    public let call: String
    /// The path it was called on.
    public let path: String
    /// `errno` as the call left it.
    public let code: Int32

    /// Records a failed `call` on `path`; `code` defaults to the current `errno`.
    public init(_ call: String, path: String, code: Int32 = errno) {
        self.call = call
        self.path = path
        self.code = code
    }

    /// True for `ENOSPC`, `EDQUOT` and `EFBIG`: the disk or quota is full, not the file broken.
    public var isDiskFull: Bool { code == ENOSPC || code == EDQUOT || code == EFBIG }
    /// True for `ENOENT`: the path does not exist (any more).
    public var isMissing: Bool { code == ENOENT }
    /// `strerror(code)`.
    public var message: String { Self.message(for: code) }
    /// `<call> <path>: <strerror>`.
    public var description: String { "\(call) \(path): \(message)" }

    /// `strerror(code)`: the one place it is called.
    package static func message(for code: Int32) -> String { String(cString: strerror(code)) }
}

/// Runs a system call again while it fails with EINTR (a signal arrived).
@inline(__always)
package func retryingInterrupts<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

/// What kind of file a path names.
package enum FileType: Sendable, Equatable {
    case regular, directory, symbolicLink, fifo, socket, characterDevice, blockDevice, unknown

    package init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symbolicLink
        case S_IFIFO: self = .fifo
        case S_IFSOCK: self = .socket
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        default: self = .unknown
        }
    }

    /// For reports: "is a FIFO (named pipe)".
    package var phrase: String {
        switch self {
        case .directory: "is a directory"
        case .fifo: "is a FIFO (named pipe)"
        case .socket: "is a socket"
        case .characterDevice: "is a character device"
        case .blockDevice: "is a block device"
        case .symbolicLink: "is a symbolic link"
        case .regular, .unknown: "is not a regular file"
        }
    }
}

/// The facts of `stat`/`lstat`/`fstat` the package uses, with the file type decoded once.
package struct FileStatus: Sendable, Equatable {
    package let type: FileType
    package let size: Int64
    package let device: UInt64
    package let inode: UInt64
    package let modifiedSeconds: Int
    package let modifiedNanoseconds: Int
    package let mode: UInt32

    package init(_ st: stat) {
        type = FileType(mode: st.st_mode)
        size = Int64(st.st_size)
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        mode = UInt32(st.st_mode)
        #if canImport(Darwin)
        modifiedSeconds = Int(st.st_mtimespec.tv_sec)
        modifiedNanoseconds = Int(st.st_mtimespec.tv_nsec)
        #else
        modifiedSeconds = Int(st.st_mtim.tv_sec)
        modifiedNanoseconds = Int(st.st_mtim.tv_nsec)
        #endif
    }

    /// `stat(path)` (following a final symbolic link).
    package static func of(_ path: String) throws(SystemError) -> FileStatus {
        var st = stat()
        guard stat(path, &st) == 0 else { throw SystemError("stat", path: path) }
        return FileStatus(st)
    }

    /// `lstat(path)` (a symbolic link is reported as one).
    package static func ofLink(_ path: String) throws(SystemError) -> FileStatus {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw SystemError("lstat", path: path) }
        return FileStatus(st)
    }
}

/// Owns an open file descriptor and closes it once.
package final class FileDescriptor {
    package let raw: Int32
    private var closed = false

    package init(_ raw: Int32) { self.raw = raw }
    deinit { if !closed { _ = closeFile(raw) } }

    /// Opens `path` (always close-on-exec); throws with the call and path on failure.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> FileDescriptor {
        let fd = retryingInterrupts { openFile(path, flags | O_CLOEXEC, mode) }
        guard fd >= 0 else { throw SystemError("open", path: path) }
        return FileDescriptor(fd)
    }

    package func status(path: String) throws(SystemError) -> FileStatus {
        var st = stat()
        guard fstat(raw, &st) == 0 else { throw SystemError("fstat", path: path) }
        return FileStatus(st)
    }

    package func sync(path: String) throws(SystemError) {
        guard retryingInterrupts({ fsync(raw) }) == 0 else { throw SystemError("fsync", path: path) }
    }

    /// Closes now, reporting the error (a delayed write error can surface here).
    package func close(path: String) throws(SystemError) {
        closed = true
        guard closeFile(raw) == 0 else { throw SystemError("close", path: path) }
    }

    /// Writes all of `bytes`.
    package func writeAll(_ bytes: UnsafeRawBufferPointer, path: String) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = retryingInterrupts { write(raw, bytes.baseAddress! + offset, bytes.count - offset) }
            guard n > 0 else { throw SystemError("write", path: path) }
            offset += n
        }
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the file).
    package func read(count: Int, at offset: Int64, path: String) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                retryingInterrupts { pread(self.raw, raw.baseAddress! + filled, raw.count - filled, off_t(offset) + off_t(filled)) }
            }
            if n < 0 { throw SystemError("read", path: path) }
            if n == 0 { break }
            filled += n
        }
        return Array(buffer.prefix(filled))
    }
}

// `open` and `close` are shadowed by the methods above inside the class.
private func openFile(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func closeFile(_ fd: Int32) -> Int32 { close(fd) }

/// File-system facts and operations the package needs, in one place.
package enum FileSystem {
    /// fsyncs a directory, making renames and creations inside it durable.
    package static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
        try fd.sync(path: path)
    }

    /// Creates `path` (and parents) with mode 0755 less the umask, if missing.
    package static func makeDirectory(_ path: String) throws(SystemError) {
        if let existing = try? FileStatus.of(path) {
            guard existing.type == .directory else { throw SystemError("mkdir", path: path, code: ENOTDIR) }
            return
        }
        let parent = path.parentPath
        if !parent.isEmpty, parent != path { try makeDirectory(parent) }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw SystemError("mkdir", path: path) }
    }

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
        if link(from, to) == 0 {
            unlink(from)
            return
        }
        let code = errno
        guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == ENOSYS else { throw SystemError("link", path: to, code: code) }
        guard !exists(to) else { throw SystemError("rename", path: to, code: EEXIST) }
        try renameOrThrow(from, to)
    }

    /// Renames, replacing nothing but what `to` may already be (`rename`).
    package static func rename(_ from: String, _ to: String) throws(SystemError) {
        guard renameFile(from, to) == 0 else { throw SystemError("rename", path: from) }
    }

    /// Renames within the no-replace fallback (the method above shadows the C call).
    private static func renameOrThrow(_ from: String, _ to: String) throws(SystemError) { try rename(from, to) }

    /// Removes a file; a missing one is not an error.
    package static func remove(_ path: String) { unlink(path) }

    /// Removes an empty folder; a missing or non-empty one is left as it is.
    package static func removeEmptyDirectory(_ path: String) { rmdir(path) }

    /// Creates a new folder from a `mkdtemp` template ending in `XXXXXX`; returns its path.
    package static func makeTemporaryDirectory(_ template: String) throws(SystemError) -> String {
        var bytes = Array(template.utf8CString)
        guard let created = bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemError("mkdtemp", path: template)
        }
        return String(cString: created)
    }

    /// True while a process with this id exists (`kill(pid, 0)`; EPERM: it exists,
    /// owned by someone else).
    package static func processExists(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 || errno == EPERM }

    /// The canonical absolute path (`realpath`), nil if it cannot be resolved.
    package static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }
}

private func renameFile(_ from: String, _ to: String) -> Int32 { rename(from, to) }

extension String {
    /// The last `/`-separated component of a path string.
    package var lastPathComponentOfPath: String {
        guard let slash = lastIndex(of: "/") else { return self }
        return String(self[index(after: slash)...])
    }

    /// The path string without its last component ("/" for a top-level entry).
    package var parentPath: String {
        guard let slash = lastIndex(of: "/") else { return "" }
        if slash == startIndex { return "/" }
        return String(self[..<slash])
    }
}
