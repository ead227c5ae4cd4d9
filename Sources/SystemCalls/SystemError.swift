#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The system-call funnel: every raw system call of the package goes through
// this target (C calls Swift cannot import, through CSystem), so EINTR is
// retried in one place, failures become a typed `SystemError` naming the call,
// the path and `errno`, descriptors are owned by types that close them once,
// and file types are read from one `FileStatus`. The files without a
// `#if os(Linux)` use only portable POSIX: a host app on an Apple platform links
// them through ShareManifest.

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

    /// What kind of failure `errno` says this is: the one place it is classified.
    public enum Kind: Sendable, Hashable {
        /// `ENOSPC`, `EDQUOT`: the disk or quota is full, not the file broken.
        case diskFull
        /// `EFBIG`: larger than the file system or the process (`RLIMIT_FSIZE`)
        /// may write: room elsewhere does not help this file.
        case tooLarge
        /// `ENOENT`, `ENOTDIR`: the path does not exist (any more).
        case notFound
        /// `EACCES`, `EPERM`, `EROFS`: not allowed (a mode, a read-only file system).
        case permission
        /// Anything else: an input/output error the message names.
        case io
    }

    /// The kind of failure `code` is.
    public var kind: Kind {
        switch code {
        case ENOSPC, EDQUOT: .diskFull
        case EFBIG: .tooLarge
        case ENOENT, ENOTDIR: .notFound
        case EACCES, EPERM, EROFS: .permission
        default: .io
        }
    }

    /// True when the disk or quota is full (``Kind/diskFull``).
    public var isDiskFull: Bool { kind == .diskFull }
    /// True when the path does not exist (``Kind/notFound``).
    public var isMissing: Bool { kind == .notFound }
    /// `strerror(code)`.
    public var message: String { Self.message(for: code) }
    /// `<call> <path>: <strerror>`.
    public var description: String { "\(call) \(path): \(message)" }

    /// `strerror(code)`: the one place it is called.
    package static func message(for code: Int32) -> String { String(cString: strerror(code)) }
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
