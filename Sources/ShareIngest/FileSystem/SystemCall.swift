import CShims
import Glibc

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
    /// `strerror(code)`.
    public var message: String { String(cString: strerror(code)) }
    /// `<call> <path>: <strerror>`.
    public var description: String { "\(call) \(path): \(message)" }
}

/// Runs a system call again while it fails with EINTR (a signal arrived).
@inline(__always)
func retryingInterrupts<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

/// Owns an open file descriptor and closes it once.
final class FileDescriptor {
    let raw: Int32
    private var closed = false

    init(_ raw: Int32) { self.raw = raw }
    deinit { if !closed { Glibc.close(raw) } }

    /// Opens `path`; throws with the call and path on failure.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> FileDescriptor {
        let fd = retryingInterrupts { Glibc.open(path, flags | O_CLOEXEC, mode) }
        guard fd >= 0 else { throw SystemError("open", path: path) }
        return FileDescriptor(fd)
    }

    func status(path: String) throws(SystemError) -> stat {
        var st = stat()
        guard fstat(raw, &st) == 0 else { throw SystemError("fstat", path: path) }
        return st
    }

    func sync(path: String) throws(SystemError) {
        guard retryingInterrupts({ fsync(raw) }) == 0 else { throw SystemError("fsync", path: path) }
    }

    /// Closes now, reporting the error (a delayed write error can surface here).
    func close(path: String) throws(SystemError) {
        closed = true
        guard Glibc.close(raw) == 0 else { throw SystemError("close", path: path) }
    }

    /// Writes all of `bytes`.
    func writeAll(_ bytes: UnsafeRawBufferPointer, path: String) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = retryingInterrupts { Glibc.write(raw, bytes.baseAddress! + offset, bytes.count - offset) }
            guard n > 0 else { throw SystemError("write", path: path) }
            offset += n
        }
    }
}

/// File-system facts and operations the pipeline needs, in one place.
enum FileSystem {
    /// fsyncs a directory, making renames and creations inside it durable.
    static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
        try fd.sync(path: path)
    }

    /// Creates `path` (and parents) with mode 0755 less the umask, if missing.
    static func makeDirectory(_ path: String) throws(SystemError) {
        var st = stat()
        if stat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFDIR else { throw SystemError("mkdir", path: path, code: ENOTDIR) }
            return
        }
        let parent = path.parentPath
        if !parent.isEmpty, parent != path { try makeDirectory(parent) }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw SystemError("mkdir", path: path) }
    }

    /// A temporary name beside `path`, unique across processes and machines sharing
    /// the directory: `.<name>.<host>-<pid>-<random>.partial`.
    static func temporaryName(for path: String) -> String {
        let dir = path.parentPath
        let name = path.lastPathComponentOfPath
        return "\(dir)/.\(name).\(hostTag)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).partial"
    }

    static let hostTag: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count)
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(name.map { $0.isLetter || $0.isNumber ? $0 : "_" }.prefix(32))
    }()

    /// Renames without replacing an existing file (`renameat2(RENAME_NOREPLACE)`),
    /// so nothing in the container is ever overwritten.
    static func renameNoReplace(_ from: String, _ to: String) throws(SystemError) {
        let result = shim_rename_noreplace(from, to)
        if result == 0 { return }
        if errno == EINVAL || errno == ENOSYS {
            // File systems without RENAME_NOREPLACE: link + unlink is equally safe.
            guard link(from, to) == 0 else { throw SystemError("link", path: to) }
            unlink(from)
            return
        }
        throw SystemError("rename", path: to)
    }

    static func remove(_ path: String) { unlink(path) }
}

extension String {
    /// The last `/`-separated component of a path string.
    var lastPathComponentOfPath: String {
        guard let slash = lastIndex(of: "/") else { return self }
        return String(self[index(after: slash)...])
    }

    /// The path string without its last component ("/" for a top-level entry).
    var parentPath: String {
        guard let slash = lastIndex(of: "/") else { return "" }
        if slash == startIndex { return "/" }
        return String(self[..<slash])
    }
}
