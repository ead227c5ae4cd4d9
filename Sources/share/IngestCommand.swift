import Foundation
import ShareIngest
import ShareManifest

/// `share ingest`: one batch from files, folders, text and links.
enum IngestCommand {
    static let usage = """
        usage: share ingest [--container DIR] [--pipeline NAME|FILE] [--key KEY] [--scheme SCHEME]
                            [--report FILE] [--message TEXT] [--text STRING]... [--url URL]...
                            [--json | --quiet] PATH...
               share ingest --resume BATCH [--container DIR] [--json | --quiet]
               share ingest --db URL [--no-wait] [--max-attempts N] [options] PATH...   (enqueue for share worker)
        """

    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let parsed: Arguments
        switch Command.parse(
            arguments, options: ["container", "pipeline", "key", "scheme", "report", "text", "url", "message", "resume", "db", "max-attempts"],
            flags: ["json", "quiet", "no-wait"], usage: usage)
        {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        var pipeline: PipelineDefinition
        var key: ShareKey?
        let container: ContainerDirectory
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
        Signals.cancel(cancellation) { _ in Terminal.shared.err("share: interrupted; items in flight finish their stage") }

        if let url = parsed.value("db") {
            return enqueue(inputs, url: url, parsed: parsed, container: container, pipeline: pipeline, key: key, cancellation: cancellation)
        }
        let report: BatchReport
        do {
            let ingestor = ShareIngestor(container: container, pipeline: pipeline)
            if let batch = parsed.value("resume") {
                guard inputs.isEmpty else { return Command.usageFailure("--resume takes no PATH, --text or --url", usage: usage) }
                report = try ingestor.resume(batch, events: printer.handle, cancellation: cancellation)
            } else {
                report = try ingestor.ingest(inputs, key: key, message: parsed.value("message"), events: printer.handle, cancellation: cancellation)
            }
        } catch {
            return Command.failure("\(error)")
        }
        if report.interrupted {
            Terminal.shared.err("share: interrupted; nothing is lost: finish with  share ingest --resume \(report.batchID.uuidString) --container \(container.root)")
            return .success
        }
        if let reportPath = parsed.value("report") {
            do {
                try report.json().write(to: URL(fileURLWithPath: reportPath))
            } catch {
                Terminal.shared.err("share: cannot write the report to \(reportPath): \(error.localizedDescription)")
            }
        }
        if mode != .json { summarize(report, container: container, quiet: mode == .quiet) }
        return report.isComplete ? .success : .partial
    }

    /// `--db`: enqueue for the workers; unless `--no-wait`, wait for the manifest.
    private static func enqueue(
        _ inputs: [ShareInput], url: String, parsed: Arguments, container: ContainerDirectory, pipeline: PipelineDefinition,
        key: ShareKey?, cancellation: CancellationFlag
    ) -> ExitStatus {
        var ingestor = DistributedIngestor(url: url, container: container, pipeline: pipeline)
        do {
            if let attempts = try parsed.number("max-attempts", in: 1...100) { ingestor.maxAttempts = Int(attempts) }
            let batch = try ingestor.enqueue(inputs, key: key, message: parsed.value("message"))
            Terminal.shared.err("share: enqueued batch \(batch.id.uuidString) (\(batch.itemCount) items, key \(batch.key))")
            if parsed.flag("no-wait") {
                Terminal.shared.out(batch.id.uuidString)
                return .success
            }
            guard let done = try ingestor.wait(for: batch.id, cancellation: cancellation) else {
                Terminal.shared.err("share: stopped waiting; the workers go on (see share status --db)")
                return .success
            }
            Terminal.shared.err("share: \(done.ingestedCount) of \(done.itemCount) items ingested" + (done.failedCount > 0 ? ", \(done.failedCount) failed" : "") + (done.skippedCount > 0 ? ", \(done.skippedCount) skipped" : ""))
            if let manifest = done.manifestPath { Terminal.shared.err("share: manifest:   \(manifest)") }
            if let redirect = done.redirectURL { Terminal.shared.out(redirect) }
            return done.ingestedCount == done.itemCount ? .success : .partial
        } catch let error as UsageError {
            return Command.usageFailure(error.description, usage: usage)
        } catch {
            return Command.failure("\(error)")
        }
    }

    private static func summarize(_ report: BatchReport, container: ContainerDirectory, quiet: Bool) {
        let terminal = Terminal.shared
        if !quiet {
            var counts = "\(report.ingestedCount) of \(report.items.count) items ingested"
            if report.failedCount > 0 { counts += ", \(report.failedCount) failed" }
            if report.skippedCount > 0 { counts += ", \(report.skippedCount) skipped" }
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
