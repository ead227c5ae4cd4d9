import DecoderIsolation
import Foundation
import ShareIngest
import ShareManifest
import SystemCalls

/// Shared helpers of the commands.
enum Command {
    static let usage = """
        share: ingest shared photos, videos, files, text and links into a container and
        write the SharedMediaFile manifest a host app reads after its redirect URL.

        usage: share <command> [options]

        commands:
          ingest PATH...     copy, sniff, thumbnail and probe items; write the manifest;
                             print the redirect URL as the last line of stdout
          open URL           check and print the manifest a redirect URL names (--consume: take it)
          watch INBOX        ingest every folder dropped into INBOX: one batch and manifest per drop
          status             list the container's batches: state, counts, keys, redirect URLs
          report URL|KEY     a batch as an HTML page and/or a JPEG contact sheet, for people to look at
          gc                 remove the files of consumed shares older than a retention period
          worker --db URL    claim and run stage jobs from PostgreSQL (distributed mode)
          db migrate         create or upgrade the PostgreSQL schema
          doctor             what this machine offers the decoder sandbox, and what a helper gets
          help               this text

        Run `share <command> --help` for a command's options.
        """

    /// Why a command stops before it starts: `--help` was asked for (success) or
    /// the arguments are wrong (usage error, already reported).
    struct EarlyExit: Error { let status: ExitStatus }

    /// Parses a command's arguments (`--help` is always allowed): the arguments, or
    /// the exit to take after printing the usage.
    static func parse(_ arguments: ArraySlice<String>, options: Set<String>, flags: Set<String>, usage: String) -> Result<Arguments, EarlyExit> {
        do {
            let parsed = try Arguments(arguments, options: options, flags: flags.union(["help"]))
            if parsed.flag("help") {
                Terminal.shared.out(usage)
                return .failure(EarlyExit(status: .success))
            }
            return .success(parsed)
        } catch {
            return .failure(EarlyExit(status: usageFailure(error.description, usage: usage)))
        }
    }

    static func usageFailure(_ message: String, usage: String) -> ExitStatus {
        Terminal.shared.err("share: \(message)")
        Terminal.shared.err(usage)
        return .unusable
    }

    /// The container of `--container` (default: `$SHARE_CONTAINER`, else
    /// `~/.local/share/share-ingest/container`), with its state in `$SHARE_STATE_DIR` if set.
    static func container(_ parsed: Arguments) throws(ContainerError) -> ContainerDirectory {
        let state = ProcessEnvironment.value("SHARE_STATE_DIR").flatMap { $0.isEmpty ? nil : $0 }
        return try ContainerDirectory(parsed.value("container") ?? ContainerDirectory.defaultPath, stateDirectory: state)
    }

    static func failure(_ message: String) -> ExitStatus {
        Terminal.shared.err("share: \(message)")
        return .unusable
    }
}

// A command that decodes in sandboxed helpers forks their template first of
// all: while this process has one thread and its libraries are loaded and
// relocated (the template starts without paying the dynamic loader again), and
// before anything here copies the arguments or the environment (the template
// wipes both and must find no copy: HelperTemplate.forkEarly).
if DecoderOption.decodesInHelpers(argc: CommandLine.argc, argv: CommandLine.unsafeArgv) { ProcessIsolatedDecoder.forkHelperTemplate() }

// A decoder helper (started by this binary's ProcessIsolatedDecoder) runs
// nothing else of the CLI.
if CommandLine.arguments.dropFirst().first == DecoderHelper.command {
    Processes.exit(DecoderHelper.main(Array(CommandLine.arguments.dropFirst(2))))
}

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
case "help", "--help", "-h", nil:
    Terminal.shared.out(Command.usage)
    status = arguments.first == nil ? .unusable : .success
default:
    status = Command.usageFailure("unknown command \"\(arguments.first!)\"", usage: Command.usage)
}
status.exit()
