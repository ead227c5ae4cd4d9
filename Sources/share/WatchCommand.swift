import Foundation
import MediaFormats
import ShareIngest
import ShareManifest
import SystemCalls

/// `share watch`: ingests every drop of an inbox, one batch and one manifest each.
enum WatchCommand {
    static let usage = """
        usage: share watch INBOX [--container DIR] [--pipeline NAME|FILE] [--settle SECONDS]
                                 [--on-success move|delete|keep] [--report-dir DIR] [--db URL] [--once]
                                 [--isolation process|none] [--metrics HOST:PORT] [--log-format plain|json]
                                 [--json | --quiet]
        """

    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        if let error = ServiceOption.applyLogFormat(arguments) { return Command.usageFailure(error, usage: usage) }
        let parsed: Arguments
        switch Command.parse(arguments, options: Set(["container", "pipeline", "settle", "on-success", "report-dir", "db", "isolation"]).union(ServiceOption.options), flags: ["once", "json", "quiet"], usage: usage) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        guard parsed.positionals.count == 1, let inboxPath = parsed.positionals.first else {
            return Command.usageFailure("expected exactly one INBOX folder", usage: usage)
        }
        let inbox: Inbox
        let service: ShareService?
        do {
            let settle = try parsed.number("settle", in: 0...86_400) ?? 3
            guard let disposition = DropDisposition(rawValue: parsed.value("on-success") ?? "move") else {
                throw UsageError("--on-success must be move, delete or keep")
            }
            let pipeline = try PipelineDefinition.load(parsed.value("pipeline") ?? "default")
            let container = try Command.container(parsed)
            let decoder = try DecoderOption.decoder(parsed)
            let distributed = parsed.value("db").map { DistributedIngestor(url: $0, container: container, pipeline: pipeline) }
            inbox = try Inbox(
                path: inboxPath, ingestor: ShareIngestor(container: container, pipeline: pipeline, decoder: decoder), settle: settle, disposition: disposition,
                distributed: distributed, notices: { batch, notice in Terminal.shared.err("share: batch \(batch.uuidString): \(notice)") })
            let watched = inbox
            let checks = [ServiceMonitor.containerCheck(container.root)] + (parsed.value("db").map { [ServiceMonitor.Database(url: $0).check] } ?? [])
            service = try ServiceOption.make(parsed, role: .watch, decoder: decoder, checks: checks) { ServiceMonitor.refreshInboxGauges(watched, $0) }
        } catch let error as UsageError {
            return Command.usageFailure(error.description, usage: usage)
        } catch {
            return Command.failure("\(error)")
        }
        let mode: ProgressPrinter.Mode = parsed.flag("json") ? .json : parsed.flag("quiet") ? .quiet : .human
        let printer = ProgressPrinter(mode: mode)
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
            Terminal.shared.err("share: watching \(inbox.path) (container \(inbox.ingestor.container.root)); Ctrl-C to stop")
        }
        do {
            let reportDirectory = parsed.value("report-dir")
            if let reportDirectory { try FileSystem.makeDirectory(reportDirectory) }
            try inbox.run(once: parsed.flag("once"), events: events, cancellation: cancellation, started: { service?.started() }) { report in
                let reportPath = inbox.ingestor.container.reportPath(key: report.key)
                if let reportDirectory, !report.interrupted {
                    writePictures(of: report, container: inbox.ingestor.container, decoder: inbox.ingestor.decoder, to: reportDirectory)
                }
                switch mode {
                case .json: break  // the batchFinished event carries it all
                case .human, .quiet:
                    let url = report.redirectURL?.description ?? "-"
                    let state = report.interrupted ? " interrupted" : ""
                    Terminal.shared.out("\(url) ingested=\(report.ingestedCount) failed=\(report.failedCount) skipped=\(report.skippedCount)\(report.attachedCount > 0 ? " attached=\(report.attachedCount)" : "")\(state) report=\(reportPath)")
                }
            }
        } catch {
            return Command.failure("\(error)")
        }
        return .success
    }

    /// `--report-dir`: the batch's HTML page and contact sheet, `<key>.html` and `<key>.jpg`.
    private static func writePictures(of report: BatchReport, container: ContainerDirectory, decoder: any MediaDecoder, to directory: String) {
        let base = "\(directory)/\(report.key.rawValue)"
        do {
            try AtomicFile.replace(base + ".html", bytes: Array(ReportPage(report, container: container).html.utf8))
            let sheet = try report.contactSheet(in: container, decoder: decoder)
            try AtomicFile.replace(base + ".jpg", bytes: sheet.jpeg)
        } catch {
            Terminal.shared.err("share: cannot write the report pictures of \(report.key) to \(directory): \(error)")
        }
    }
}
