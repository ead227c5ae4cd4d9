import Foundation
import MediaFormats
import ShareIngest
import ShareManifest

/// `share ingest`: one batch from files, folders, text and links.
enum IngestCommand {
    static let usage = """
        usage: share ingest [--container DIR] [--pipeline NAME|FILE] [--key KEY] [--scheme SCHEME]
                            [--report FILE] [--message TEXT] [--text STRING]... [--url URL]...
                            [--max-attempts N] [--isolation process|none] [--json | --quiet] PATH...
               share ingest --resume BATCH [--container DIR] [--isolation process|none] [--json | --quiet]
               share ingest --db URL [--no-wait | --timeout SECONDS] [--max-attempts N] [options] PATH...   (enqueue for share worker)
               share ingest --resume BATCH --db URL [--timeout SECONDS] [--report FILE] [--json | --quiet]
        """

    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let parsed: Arguments
        switch Command.parse(
            arguments, options: ["container", "pipeline", "key", "scheme", "report", "text", "url", "message", "resume", "db", "max-attempts", "timeout", "isolation"],
            flags: ["json", "quiet", "no-wait"], usage: usage)
        {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        var pipeline: PipelineDefinition
        var key: ShareKey?
        let container: ContainerDirectory
        let decoder: any MediaDecoder
        do {
            decoder = try DecoderOption.decoder(parsed)
        } catch {
            return Command.usageFailure(error.description, usage: usage)
        }
        do {
            pipeline = try PipelineDefinition.load(parsed.value("pipeline") ?? "default")
            if let scheme = parsed.value("scheme") {
                try RedirectURL.validate(scheme: scheme)
                pipeline.manifest.scheme = scheme
            }
            key = try parsed.value("key").map { try ShareKey($0) }
            container = try Command.container(parsed)
        } catch {
            return Command.failure("\(error)")
        }
        let inputs = parsed.positionalPaths.map(ShareInput.path) + parsed.all("text").map(ShareInput.text) + parsed.all("url").map(ShareInput.url)
        let mode: ProgressPrinter.Mode = parsed.flag("json") ? .json : parsed.flag("quiet") ? .quiet : .human
        let printer = ProgressPrinter(mode: mode)
        let cancellation = CancellationFlag()
        let local = parsed.value("db") == nil
        Signals.cancel(cancellation) { _ in if local { Terminal.shared.err("share: interrupted; items in flight finish their stage") } }

        if let url = parsed.value("db") {
            return distributed(inputs, url: url, parsed: parsed, container: container, pipeline: pipeline, key: key, printer: printer, cancellation: cancellation)
        }
        let report: BatchReport
        do {
            var ingestor = ShareIngestor(container: container, pipeline: pipeline, decoder: decoder)
            if let attempts = try parsed.number("max-attempts", in: 1...100) { ingestor.maxAttempts = Int(attempts) }
            if let batch = parsed.value("resume") {
                guard inputs.isEmpty else { return Command.usageFailure("--resume takes no PATH, --text or --url", usage: usage) }
                report = try ingestor.resume(batch, events: printer.handle, cancellation: cancellation)
            } else {
                report = try ingestor.ingest(inputs, key: key, message: parsed.value("message"), events: printer.handle, cancellation: cancellation)
            }
        } catch let error as UsageError {
            return Command.usageFailure(error.description, usage: usage)
        } catch {
            return Command.failure("\(error)")
        }
        if report.interrupted {
            Terminal.shared.err("share: interrupted; nothing is lost: finish with  share ingest --resume \(report.batchID.uuidString) --container \(container.root)")
            return .success
        }
        if let reportPath = parsed.value("report") { write(report, to: reportPath, container: container) }
        if mode != .json { summarize(report, container: container, quiet: mode == .quiet) }
        return report.isComplete ? .success : .partial
    }

    /// `--db`: enqueue for the workers (or, with `--resume`, take up a batch
    /// again), then, unless `--no-wait`, wait for it and report it as a local
    /// batch is reported (`--json`, `--report`, the summary, the URL).
    private static func distributed(
        _ inputs: [ShareInput], url: String, parsed: Arguments, container: ContainerDirectory, pipeline: PipelineDefinition,
        key: ShareKey?, printer: ProgressPrinter, cancellation: CancellationFlag
    ) -> ExitStatus {
        var ingestor = DistributedIngestor(url: url, container: container, pipeline: pipeline)
        let quiet = parsed.flag("quiet") || parsed.flag("json")
        let batch: DistributedIngestor.Batch
        let timeout: Double
        do {
            if let attempts = try parsed.number("max-attempts", in: 1...100) { ingestor.maxAttempts = Int(attempts) }
            timeout = try parsed.number("timeout", in: 0...31_536_000) ?? .infinity
            if let idOrKey = parsed.value("resume") {
                guard inputs.isEmpty else { return Command.usageFailure("--resume takes no PATH, --text or --url", usage: usage) }
                guard let found = try ingestor.resume(idOrKey, cancellation: cancellation) else {
                    return Command.failure("no batch with id or key \(idOrKey) in the database (see share status --db)")
                }
                batch = found
                if !quiet { Terminal.shared.err("share: batch \(batch.id.uuidString) is \(batch.state.rawValue) (\(batch.finishedCount) of \(batch.itemCount) items finished)") }
            } else {
                batch = try ingestor.enqueue(inputs, key: key, message: parsed.value("message"), cancellation: cancellation)
                if !quiet { Terminal.shared.err("share: enqueued batch \(batch.id.uuidString) (\(batch.itemCount) items, key \(batch.key))") }
            }
        } catch let error as UsageError {
            return Command.usageFailure(error.description, usage: usage)
        } catch {
            return Command.failure(cancellation.isCancelled ? "interrupted: \(error)" : "\(error)")
        }
        if parsed.flag("no-wait") {
            Terminal.shared.out(batch.id.uuidString)
            return .success
        }
        let again = "share ingest --resume \(batch.id.uuidString) --db URL"
        let ended: DistributedIngestor.Batch
        let report: BatchReport
        do {
            guard
                let done = try ingestor.wait(
                    for: batch.id, timeout: timeout, cancellation: cancellation, notices: { Terminal.shared.err("share: \($0)") },
                    progress: { Terminal.shared.status("\($0.finishedCount)/\($0.itemCount) items finished") })
            else {
                Terminal.shared.clearStatus()
                let why = cancellation.isCancelled ? "interrupted" : "not finished after \(Int(timeout)) s (--timeout)"
                Terminal.shared.err("share: \(why): batch \(batch.id.uuidString) stays with the workers (share status --db); \(again) waits for it again")
                return .notFinished
            }
            ended = done
            Terminal.shared.clearStatus()
            report = try ingestor.report(of: done, events: printer.handle, cancellation: cancellation)
        } catch {
            Terminal.shared.clearStatus()
            return Command.failure("\(error)")
        }
        if let reportPath = parsed.value("report") { write(report, to: reportPath, container: container) }
        if ended.state == .failed {
            Terminal.shared.err("share: batch \(batch.id.uuidString) failed: \(ended.failure ?? "no reason recorded"); \(again) retries it")
            return .partial
        }
        if !parsed.flag("json") {
            // A resumed batch's container is the one it was planned with.
            summarize(report, container: (try? ContainerDirectory(ended.container)) ?? container, quiet: parsed.flag("quiet"))
        }
        return report.isComplete ? .success : .partial
    }

    private static func write(_ report: BatchReport, to path: String, container: ContainerDirectory) {
        do {
            try report.write(to: path, container: container)
        } catch {
            Terminal.shared.err("share: cannot write the report to \(path): \(error)")
        }
    }

    private static func summarize(_ report: BatchReport, container: ContainerDirectory, quiet: Bool) {
        let terminal = Terminal.shared
        if !quiet {
            var counts = "\(report.ingestedCount) of \(report.items.count) items ingested"
            if report.failedCount > 0 { counts += ", \(report.failedCount) failed" }
            if report.skippedCount > 0 { counts += ", \(report.skippedCount) skipped" }
            if report.attachedCount > 0 { counts += ", \(report.attachedCount) sidecars attached to their media" }
            terminal.err("share: \(counts) in \(String(format: "%.2f", report.wallSeconds)) s")
            terminal.err("share: container:  \(container.root)")
            if let manifest = report.manifestPath {
                terminal.err("share: manifest:   \(manifest)")
                terminal.err("share: thumbnails: \(container.thumbnailsDirectory)")
            } else {
                terminal.err("share: no manifest written: no item could be delivered")
            }
        }
        if let redirect = report.redirectURL { terminal.out(redirect.description) }
    }
}
