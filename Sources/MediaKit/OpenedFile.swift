import SystemCalls

/// A file opened read-only by path (`O_RDONLY | O_CLOEXEC`), closed when
/// released: how the path-taking conveniences and the in-process decoder reach
/// the one code path that decodes from a descriptor.
public final class OpenedFile: @unchecked Sendable {
    private let file: FileDescriptor
    /// The open descriptor.
    public var descriptor: Int32 { file.raw }
    /// The path it was opened from.
    public let path: String

    /// Opens `path` for reading; a failure carries `strerror`'s text.
    public init(path: String) throws(OpenError) {
        do throws(SystemError) { file = try FileDescriptor.openForReading(path) } catch {
            throw OpenError(path: path, code: error.code)
        }
        self.path = path
    }

    /// Why a file could not be opened.
    public struct OpenError: Error, Sendable, CustomStringConvertible {
        /// The path.
        public let path: String
        /// The `errno` value.
        public let code: Int32
        /// "`path`: No such file or directory".
        public var description: String { "\(path): \(SystemError("open", path: path, code: code).message)" }
    }
}

extension OpenedFile {
    /// Opens `path`, failing as libvips would (a ``VipsError``).
    static func forVips(_ path: String) throws(VipsError) -> OpenedFile {
        do throws(OpenError) {
            return try OpenedFile(path: path)
        } catch {
            throw VipsError("open", message: error.description)
        }
    }

    /// Opens `path`, failing as libav would (an ``AVError`` with the errno's AVERROR code).
    static func forAV(_ path: String) throws(AVError) -> OpenedFile {
        do throws(OpenError) {
            return try OpenedFile(path: path)
        } catch {
            throw AVError("open", code: -error.code)
        }
    }
}
