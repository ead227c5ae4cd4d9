import CFFmpeg
import CShims
import Glibc

/// An error reported by libav, formatted with `av_strerror` at the point of failure.
public struct AVError: Error, Sendable, CustomStringConvertible {
    /// The libav call that failed, e.g. `avformat_open_input`.
    public let operation: String
    /// The libav error code (a negative AVERROR value), 0 when the failure has no code.
    public let code: Int32
    public let message: String

    init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buffer, buffer.count)
        self.message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    init(_ operation: String, message: String) {
        self.operation = operation
        self.code = 0
        self.message = message
    }

    /// True when the call was interrupted by the time budget (AVERROR_EXIT).
    public var isTimeout: Bool { code == shim_averror_exit() }

    /// True when libav could not allocate memory (AVERROR(ENOMEM)): in a helper,
    /// its address-space limit.
    public var isOutOfMemory: Bool { code == -ENOMEM }

    public var description: String { isTimeout ? "time limit exceeded in \(operation)" : "\(message) (\(operation))" }
}

/// Process-wide libav set-up: silences libav's logging, which would otherwise
/// write to our stderr.
public enum LibAV {
    private static let setUp: Void = shim_av_quiet()
    /// Called before any other libav use; idempotent.
    public static func start() { _ = setUp }
}
