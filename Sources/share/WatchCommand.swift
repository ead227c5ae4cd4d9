import Foundation
import MediaFormats
import ShareIngestCore
import ShareManifest
import Synchronization
import SystemCalls

/// `share watch`: ingests every drop of an inbox, one batch and one manifest each.
enum WatchCommand {
    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let spec = CommandTable.watch
        if let error = ServiceOption.applyLogFormat(arguments) { return Command.usageFailure(error, spec) }
        let parsed: Arguments
        switch Command.parse(arguments, spec) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        let inboxPath = parsed.positionals[0]
        if let refused = checkPlaces(parsed, inbox: inboxPath, spec) { return refused }
        let inbox: Inbox
        let service: ShareService?
        do throws(Exit) { (inbox, service) = try makeInbox(parsed, inbox: inboxPath, spec) } catch {
            return error.status
        }
        let mode: ProgressPrinter.Mode = parsed.flag("json") ? .json : parsed.flag("quiet") ? .quiet : .human
        let printer = ProgressPrinter(
            mode: mode, holdsText: inbox.ingestor.pipeline.manifest.schema == .legacy,
            deliveredLines: !Terminal.shared.stderrIsTerminal)
        let cancellation = CancellationFlag()
        defer { service?.shutdown() }
        Signals.cancel(cancellation) { _ in
            service?.stopping()
            Terminal.shared.err("share: stopping: no new drops; items in flight finish their stage")
        }
        let serviceEvents = service?.events
        let events: IngestEventSink = { event in
            printer.handle(event)
            serviceEvents?(event)
        }
        if mode == .human {
            Terminal.shared.err(
                "share: watching \(inbox.path) (container \(inbox.ingestor.container.root)); Ctrl-C to stop")
        }
        let picturesFailed = Atomic(false)
        do {
            let reportDirectory = parsed.value("report-dir")
            if let reportDirectory {
                do { try FileSystem.makeDirectory(reportDirectory) } catch {
                    return Command.failure("--report-dir \(reportDirectory): \(error)", .cannotCreate)
                }
            }
            let started: () -> Void = { service?.started() }
            let once = parsed.flag("once")
            try inbox.run(once: once, events: events, cancellation: cancellation, started: started) { report in
                let reportPath = inbox.ingestor.container.reportPath(key: report.key)
                if let reportDirectory, !report.interrupted,
                    !writePictures(
                        of: report, container: inbox.ingestor.container, decoder: inbox.ingestor.decoder,
                        to: reportDirectory)
                {
                    picturesFailed.store(true, ordering: .relaxed)
                }
                printLine(report, mode: mode, inbox: inbox, reportPath: reportPath)
            }
        } catch .diskFull(let path, let free) {
            // --once on a full disk: nothing is lost, the next run finishes what waits.
            Terminal.shared.err(
                "share: \(BatchStop.diskFull(path: path, freeBytes: free)); nothing is lost: free some space, then run share watch again: it finishes the drops waiting in \(inbox.path)/.processing first"
            )
            return .cannotCreate
        } catch {
            return Command.failure(error, database: parsed.value("db") != nil)
        }
        if Signals.received != nil { return Signals.serviceExit }
        return picturesFailed.load(ordering: .relaxed) ? .cannotCreate : .success
    }

    /// Ends the command with `status` (the message already said).
    private struct Exit: Error {
        let status: ExitStatus
    }

    /// Before anything is made or moved: the inbox exists, it, the container
    /// and the report folder are apart, and the database (`--db`) answers, at
    /// this share's schema. The exit status when one is not so.
    private static func checkPlaces(_ parsed: Arguments, inbox inboxPath: String, _ spec: CommandSpec) -> ExitStatus? {
        switch (try? FileStatus.of(inboxPath))?.type {
        case nil: return Command.failure("INBOX \(inboxPath) does not exist", .noInput)
        case .directory?: break
        case _?: return Command.failure("INBOX \(inboxPath) is not a folder", .noInput)
        }
        let containerPath = parsed.value("container") ?? ContainerDirectory.defaultPath
        if let overlap = FolderOverlap.ofInbox(inboxPath, container: containerPath) {
            return Command.usageFailure(overlap, spec)
        }
        if let reports = parsed.value("report-dir"), let overlap = FolderOverlap.ofReports(reports, inbox: inboxPath) {
            return Command.usageFailure(overlap, spec)
        }
        // Readiness that is true: the database answers, at this share's schema, before anything starts.
        if let url = parsed.value("db") {
            do {
                try ServiceMonitor.Database(url: url).check.run()
            } catch {
                return Command.failure(
                    "--db \(DatabaseURL.masked(url)): \(DatabaseSecrets.scrub("\(error)"))", .unavailable)
            }
        }
        return nil
    }

    /// The inbox to watch, with its ingestor (local, or `--db`'s), and the
    /// service around it (`--listen`, readiness checks, sd_notify), if any.
    private static func makeInbox(
        _ parsed: Arguments, inbox inboxPath: String, _ spec: CommandSpec
    ) throws(Exit) -> (Inbox, ShareService?) {
        do {
            guard let disposition = DropDisposition(rawValue: parsed.value("on-success") ?? "move") else {
                throw UsageError("--on-success must be move, delete or keep")
            }
            let pipeline = try MediaChoices.apply(
                parsed, to: try PipelineDefinition.load(parsed.value("pipeline") ?? "default"))
            let selection = MediaChoices.selection(parsed)
            let container = try Command.container(parsed)
            let decoder = try DecoderOption.decoder(parsed)
            let limits = IngestCommand.sizeLimits(parsed, defaults: .watchDefaults)
            let distributed = parsed.value("db").map { url in
                var distributed = DistributedIngestor(url: url, container: container, pipeline: pipeline)
                distributed.sizeLimits = limits
                distributed.selection = selection
                return distributed
            }
            var ingestor = ShareIngestor(container: container, pipeline: pipeline, decoder: decoder)
            ingestor.sizeLimits = limits
            ingestor.selection = selection
            let inbox = try Inbox(
                path: inboxPath, ingestor: ingestor, settle: parsed.seconds("settle") ?? 3,
                disposition: disposition, distributed: distributed,
                notices: { batch, notice in Terminal.shared.err("share: batch \(batch.uuidString): \(notice)") })
            let watched = inbox
            let checks =
                [ServiceMonitor.containerCheck(container.root)]
                + (parsed.value("db").map { [ServiceMonitor.Database(url: $0).check] } ?? [])
            let service = try ServiceOption.make(parsed, role: .watch, decoder: decoder, checks: checks) {
                ServiceMonitor.refreshInboxGauges(watched, $0)
            }
            return (inbox, service)
        } catch let error as UsageError {
            throw Exit(status: Command.usageFailure(error.description, spec))
        } catch {
            throw Exit(status: Command.failure(error, database: parsed.value("db") != nil))
        }
    }

    /// A batch's line on stdout (and, when the disk filled, what waits, on
    /// stderr); nothing with `--json`, whose batchFinished event carries it all.
    private static func printLine(_ report: BatchReport, mode: ProgressPrinter.Mode, inbox: Inbox, reportPath: String) {
        switch mode {
        case .json: break  // the batchFinished event carries it all
        case .human, .quiet:
            let url = report.redirectURL?.description ?? "-"
            if report.interrupted, case .diskFull? = report.stop {
                // Not failed: the items wait, and the batch is finished when there is room.
                let waiting = report.unfinishedCount
                Terminal.shared.err(
                    "share: \(report.stop!); \(waiting) item\(waiting == 1 ? "" : "s") wait\(waiting == 1 ? "s" : "") for space; the drop stays in \(inbox.path)/.processing/\(report.batchID.uuidString) and is finished once there is room"
                )
                Terminal.shared.out(
                    "\(url) ingested=\(report.ingestedCount) waiting=\(waiting) stopped=diskFull report=\(reportPath)"
                )
                break
            }
            let state = report.interrupted ? " interrupted" : ""
            Terminal.shared.out(
                "\(url) ingested=\(report.ingestedCount) failed=\(report.failedCount) skipped=\(report.skippedCount)\(report.attachedCount > 0 ? " attached=\(report.attachedCount)" : "")\(state) report=\(reportPath)"
            )
        }
    }

    /// `--report-dir`: the batch's HTML page and contact sheet, `<key>.html` and `<key>.jpg`.
    private static func writePictures(
        of report: BatchReport, container: ContainerDirectory, decoder: any MediaDecoder, to directory: String
    ) -> Bool {
        let base = "\(directory)/\(report.key.rawValue)"
        do {
            // For people to open: the umask's mode (0666 less it), not owner-only.
            try AtomicFile.replace(
                base + ".html",
                bytes: Array(ReportPage(report, container: container, pagePath: base + ".html").html.utf8), mode: 0o666)
            let sheet = try report.contactSheet(in: container, decoder: decoder)
            try AtomicFile.replace(base + ".jpg", bytes: sheet.jpeg, mode: 0o666)
            return true
        } catch {
            Terminal.shared.err("share: cannot write the report pictures of \(report.key) to \(directory): \(error)")
            return false
        }
    }
}
