import DecoderIsolation
import Foundation
import ShareIngestCore
import ShareManifest
import SystemCalls

/// Shared helpers of the commands.
enum Command {
    /// Parses a command's arguments against its table entry: the arguments, or
    /// the status to exit with after printing the help (`-h`, `--help`: stdout,
    /// 0) or a one-line usage error (stderr, 64).
    static func parse(_ arguments: ArraySlice<String>, _ spec: CommandSpec) -> Result<Arguments, EarlyExit> {
        if Arguments.asksForHelp(arguments) {
            Terminal.shared.out(Help.text(of: spec))
            return .failure(EarlyExit(status: .success))
        }
        do {
            return .success(try Arguments(arguments, spec: spec))
        } catch {
            return .failure(EarlyExit(status: usageFailure(error.description, spec)))
        }
    }

    /// Why a command stops before it starts: help was asked for, or the arguments are wrong (already reported).
    struct EarlyExit: Error { let status: ExitStatus }

    /// One line on stderr, `share CMD: message`; exit 64.
    static func usageFailure(_ message: String, _ spec: CommandSpec) -> ExitStatus {
        Terminal.shared.err("share \(spec.name): \(message)")
        return .usage
    }

    /// The container of `--container` (default: `$SHARE_CONTAINER`, else
    /// `$XDG_DATA_HOME/share-ingest/container`, else `$HOME/.local/share/…`),
    /// with its state in `$SHARE_STATE_DIR` if set; created if missing.
    static func container(_ parsed: Arguments) throws(ContainerError) -> ContainerDirectory {
        try ContainerDirectory(
            parsed.value("container") ?? ContainerDirectory.defaultPath, stateDirectory: stateDirectory)
    }

    /// The container of a command that only reads one (`status`, `open`,
    /// `report`, `gc`): it must exist; nothing is created.
    static func existingContainer(_ parsed: Arguments) throws(ContainerError) -> ContainerDirectory {
        try ContainerDirectory(
            existing: parsed.value("container") ?? ContainerDirectory.defaultPath, stateDirectory: stateDirectory)
    }

    private static var stateDirectory: String? {
        ProcessEnvironment.value("SHARE_STATE_DIR").flatMap { $0.isEmpty ? nil : $0 }
    }

    /// One line on stderr, `share: <error>`; the exit status the error stands for.
    static func failure(_ error: any Error, database: Bool = false) -> ExitStatus {
        Terminal.shared.err("share: \(error)")
        return ExitStatus.of(error, database: database)
    }

    /// One line on stderr, `share: message`; exit `status`.
    static func failure(_ message: String, _ status: ExitStatus) -> ExitStatus {
        Terminal.shared.err("share: \(message)")
        return status
    }
}

// Two malloc arenas, not glibc's sixteen on two cores: the stage threads kept
// what they freed each in an arena of its own (1,000 small files: the parent's
// peak 44.2 MB with the default, 41.0-41.4 MB with two and the journal's smaller
// page cache; BENCHMARKS.md, "The parent's peak under 40 MiB"). Before any thread.
FreedMemory.limitArenas(2)

// SIGINT and SIGTERM: blocked in every thread from here, taken by one (Signals).
Signals.start()

// Over RLIMIT_FSIZE a write must fail with EFBIG (reported per item, temporaries
// removed), not kill the process with SIGXFSZ and leave a half-written file.
SignalSet.ignore(SIGXFSZ)

let arguments = CommandLine.arguments.dropFirst()
let status: ExitStatus
switch arguments.first {
case "ingest": status = IngestCommand.run(arguments.dropFirst())
case "open": status = OpenCommand.run(arguments.dropFirst())
case "watch": status = WatchCommand.run(arguments.dropFirst())
case "status": status = StatusCommand.run(arguments.dropFirst())
case "report": status = ReportCommand.run(arguments.dropFirst())
case "gc": status = GCCommand.run(arguments.dropFirst())
case "worker": status = WorkerCommand.run(arguments.dropFirst())
case "db": status = WorkerCommand.database(arguments.dropFirst())
case "doctor": status = DoctorCommand.run(arguments.dropFirst())
case "completion", "man", "help", "version": status = DocumentationCommand.run(arguments.first!, arguments.dropFirst())
case "--help", "-h":
    Terminal.shared.out(Help.general)
    status = .success
case "--version":
    Terminal.shared.out("share \(Help.version)")
    status = .success
case nil:
    Terminal.shared.err(
        "share: no command given; commands: \(CommandTable.commandWords.joined(separator: ", ")) (see share --help)")
    status = .usage
case let word?:
    status = DocumentationCommand.unknownCommand(word)
}
status.exit()
