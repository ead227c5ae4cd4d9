import Glibc
import MediaFormats
import ShareIngestCore
import ShareManifest
import SystemCalls

/// The exit statuses of `share`, with what each means (docs/using-share.md's table and
/// `share --help` are made from ``meaning``). The numbers above 1 are the
/// BSD sysexits' (`EX_USAGE`, `EX_NOINPUT`, …) and the shells' 128 + signal.
enum ExitStatus: Int32, CaseIterable, Sendable {
    /// Every item was delivered (or the command did what it was asked).
    case success = 0
    /// Partly done: the batch ran and delivered the rest, but some items failed
    /// or were skipped; `doctor`: the helper's sandbox is weaker than the strongest.
    case partial = 1
    /// The command line is wrong: an unknown option or command, a stray
    /// argument, a bad value (`EX_USAGE`).
    case usage = 64
    /// An input is missing or unreadable: a path, the container of `status`,
    /// `open`, `report` or `gc`, a batch or share that does not exist; where
    /// `share` runs as root, a container (or inbox) another user owns or may
    /// write in, or a link in it (`EX_NOINPUT`).
    case noInput = 66
    /// A service it needs is unavailable: the database (unreachable, refused,
    /// schema missing or old), the metrics port, a decoder helper (`EX_UNAVAILABLE`).
    case unavailable = 69
    /// An output cannot be created or written: the container, the manifest
    /// key (already taken), a report file (`EX_CANTCREAT`).
    case cannotCreate = 73
    /// A temporary failure; the same command later may succeed: another process
    /// holds the batch, or with `--db` the batch did not end while `ingest`
    /// waited (`EX_TEMPFAIL`).
    case temporaryFailure = 75
    /// Interrupted by SIGINT (Ctrl-C); resumable.
    case interrupted = 130
    /// Stopped by SIGTERM outside a service manager; resumable. Under systemd
    /// (`NOTIFY_SOCKET` or `INVOCATION_ID` set) `watch` and `worker` exit 0.
    case terminated = 143

    func exit() -> Never { Processes.exit(rawValue) }

    /// One line for the documents' table and `--help`.
    var meaning: String {
        switch self {
        case .success:
            "success: every item delivered (but those --include, --exclude, --taken-after or --taken-before left out), or the command did what was asked"
        case .partial:
            "partly done: some items failed or were skipped, the rest were delivered (doctor: a weaker sandbox than the strongest)"
        case .usage: "usage error: unknown command or option, a stray argument, a bad value"
        case .noInput:
            "an input is missing or unreadable: a path, the container (status, open, report, gc), a batch or share; as root, a container or inbox others could write in; ingest: no input could be read, the inputs hold no file, or the filters left out every one"
        case .unavailable:
            "a service is unavailable: the database (unreachable, refused, no schema), the metrics port, a decoder helper"
        case .cannotCreate:
            "cannot create or write the output: the container (its disk full: resumable once space is freed), the key (taken), the report file"
        case .temporaryFailure:
            "temporary failure, try again: another process holds the batch; an unfinished batch of the same inputs waits (--resume-unfinished); --db: the batch did not end in time"
        case .interrupted: "interrupted by SIGINT; resumable (share ingest --resume)"
        case .terminated: "stopped by SIGTERM; resumable. watch and worker under systemd exit 0 instead"
        }
    }

    /// The status a signal leaves: 128 + its number.
    static func after(signal: Int32) -> ExitStatus { signal == SIGTERM ? .terminated : .interrupted }

    /// The status an error that stopped a command stands for.
    static func of(_ error: any Error, database: Bool = false) -> ExitStatus {
        switch error {
        case is UsageError, is ShareKeyError, is RedirectURLError, is DatabaseURL.Refusal: return .usage
        case let error as ShareIngestError: return of(error, database: database)
        case let error as ContainerError: return error.isMissing || error.isRefused ? .noInput : .cannotCreate
        case let error as PipelineError: return error.field == "(file)" ? .noInput : .usage
        case is PostgresError: return .unavailable
        case let error as SystemError:
            switch error.kind {
            case .notFound: return .noInput
            case .permission, .diskFull, .tooLarge, .io: return .cannotCreate
            }
        default: return .unavailable
        }
    }

    private static func of(_ error: ShareIngestError, database: Bool) -> ExitStatus {
        switch error {
        case .containerUnusable, .diskFull, .manifestExists, .keyTaken: .cannotCreate
        case .noInputs, .badScheme, .batchNotResumable: .usage
        case .pipeline(let problem): problem.field == "(file)" ? .noInput : .usage
        case .inputMissing, .unknownBatch, .planInterrupted: .noInput
        case .batchBusy: .temporaryFailure
        case .storeUnavailable: database ? .unavailable : .cannotCreate
        }
    }
}
