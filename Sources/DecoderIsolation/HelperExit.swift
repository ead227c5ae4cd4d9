import Foundation
import Glibc
import MediaFormats
import SystemCalls

/// How a decoder helper process ended, and what that means for the item it was
/// decoding: a crash (a signal), its memory limit, its CPU-time limit, or an exit.
package enum HelperExit: Equatable, Sendable, CustomStringConvertible {
    /// It exited with this status.
    case exited(Int32)
    /// A signal ended it.
    case signaled(Int32)

    /// The status a helper exits with when it crashed because its address-space
    /// limit refused an allocation (its crash handler decides; see `shim_crash.h`).
    package static let memoryLimitStatus: Int32 = 3
    /// The status a helper exits with when it could not set up its sandbox.
    package static let sandboxFailedStatus: Int32 = 4

    /// From a `waitpid` status.
    package init(waitStatus status: Int32) {
        if status & 0x7F == 0 {
            self = .exited((status >> 8) & 0xFF)
        } else {
            self = .signaled(status & 0x7F)
        }
    }

    /// True when the item may be decoded again in a fresh helper: a crash or a
    /// kill from outside. A helper stopped by its CPU limit (a timed-out decode)
    /// or its memory limit (the file's demand, every time) is not retried.
    package var isRetryable: Bool {
        switch self {
        case .signaled(SIGXCPU): false
        case .exited(Self.memoryLimitStatus): false
        // Its seccomp policy killed it: the file's doing, not a passing fault.
        case .signaled(SIGSYS): false
        default: true
        }
    }

    /// What the pipeline reports for the item `label`, after `attempts` helpers died on it.
    package func failure(label: String, attempts: Int, memoryLimit: UInt64, cpuSeconds: Double) -> MediaError {
        switch self {
        case .signaled(SIGXCPU):
            return MediaError(
                .timeLimit,
                "\(label): decoding used more than its \(Self.seconds(cpuSeconds)) s of CPU time; the decoder helper was stopped (SIGXCPU)"
            )
        case .exited(Self.memoryLimitStatus):
            return MediaError(
                .memoryLimit,
                "\(label): decoding needed more memory than the decoder helper's limit of \(memoryLimit >> 20) MiB of address space; the helper was stopped"
            )
        case .signaled(SIGSYS):
            return MediaError(
                .decoderMisbehaved,
                "\(label): the decoder helper was killed by its seccomp policy (SIGSYS) for a forbidden system call; only this item is affected"
            )
        case .signaled(let signal):
            let times = attempts > 1 ? " in \(attempts) helpers in a row" : ""
            return MediaError(
                .decoderCrashed,
                "\(label): the decoder crashed on this file (\(Self.name(of: signal)), \(Self.meaning(of: signal)))\(times); only this item is affected"
            )
        case .exited(let status):
            let times = attempts > 1 ? " in \(attempts) helpers in a row" : ""
            return MediaError(
                .decoderCrashed,
                "\(label): the decoder helper exited with status \(status) while decoding this file\(times)")
        }
    }

    package var description: String {
        switch self {
        case .exited(let status): "exit status \(status)"
        case .signaled(let signal): Self.name(of: signal)
        }
    }

    /// `SIGSEGV`, `SIGABRT`, …
    package static func name(of signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
            SIGABRT: "SIGABRT",
            SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGUSR1: "SIGUSR1", SIGSEGV: "SIGSEGV",
            SIGUSR2: "SIGUSR2",
            SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM", SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ",
            SIGSYS: "SIGSYS",
        ]
        return names[signal] ?? "signal \(signal)"
    }

    /// `strsignal`'s words: "Segmentation fault", "Aborted", …
    package static func meaning(of signal: Int32) -> String { SignalSet.meaning(of: signal) }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
