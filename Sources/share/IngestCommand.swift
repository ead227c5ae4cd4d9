import Foundation
import Glibc
import MediaFormats
import ShareIngestCore
import ShareManifest

/// `share ingest`: one batch from files, folders, text and links.
enum IngestCommand {
    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let spec = CommandTable.ingest
        let parsed: Arguments
        switch Command.parse(arguments, spec) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        let inputs =
            parsed.positionalPaths.map(ShareInput.path) + parsed.all("text").map(ShareInput.text)
            + parsed.all("url").map(ShareInput.url)
        if let refused = usageRefusal(parsed, inputs: inputs, spec) { return refused }
        if parsed.flag("dry-run") { return DryRun.run(inputs, parsed: parsed) }
        let pipeline: PipelineDefinition
        let key: ShareKey?
        let container: ContainerDirectory
        let decoder: any MediaDecoder
        do {
            decoder = try DecoderOption.decoder(parsed, onDemand: true)
        } catch {
            return Command.usageFailure(error.description, spec)
        }
        do throws(Exit) { (pipeline, key) = try loadPipeline(parsed, spec) } catch { return error.status }
        if parsed.value("db") == nil, parsed.value("resume") == nil, inputs.isEmpty {
            return Command.usageFailure(ShareIngestError.noInputs.description, spec)
        }
        // A path that does not exist is said before the container is made.
        if parsed.value("resume") == nil, !inputs.isEmpty {
            do {
                try ShareIngestor.checkInputs(inputs)
            } catch {
                return Command.failure(error)
            }
        }
        do {
            container = try Command.container(parsed)
        } catch {
            return Command.failure(error)
        }
        let mode: ProgressPrinter.Mode = parsed.flag("json") ? .json : parsed.flag("quiet") ? .quiet : .human
        let printer = ProgressPrinter(
            mode: mode, holdsText: pipeline.manifest.schema == .legacy || parsed.value("resume") != nil,
            deliveredLines: parsed.flag("verbose"))
        let cancellation = CancellationFlag()
        let local = parsed.value("db") == nil
        Signals.cancel(cancellation) { _ in
            if local { Terminal.shared.err("share: interrupted; items in flight finish their stage") }
        }

        if let url = parsed.value("db") {
            if let flag = ["resume-unfinished", "new-batch"].first(where: parsed.flag) {
                return Command.usageFailure(
                    "--\(flag) is for local batches; with --db, share status --db lists the batches and --resume BATCH finishes one",
                    spec)
            }
            return distributed(
                inputs, url: url, parsed: parsed, container: container, pipeline: pipeline, key: key, printer: printer,
                cancellation: cancellation)
        }
        // Nothing is recorded before what can be known of the helpers' sandbox
        // without starting one has passed (they start at the first item to decode).
        if let refusal = DecoderOption.refusal(of: decoder) {
            return Command.failure("--isolation process: \(refusal)", .unavailable)
        }
        let report: BatchReport
        switch ingestLocally(
            inputs, parsed: parsed, container: container, pipeline: pipeline, decoder: decoder, key: key,
            printer: printer, mode: mode, cancellation: cancellation)
        {
        case .ran(let ran): report = ran
        case .exit(let status): return status
        }
        if report.interrupted { return stopped(report, mode: mode, container: container) }
        let written = parsed.value("report").map { write(report, to: $0, container: container) } ?? true
        if mode != .json { summarize(report, container: container, quiet: mode == .quiet) }
        guard written else { return .cannotCreate }
        return outcome(of: report)
    }

    /// The options that do not go together (`--resume` with inputs; `--no-wait`
    /// or `--timeout` without `--db`; `--dry-run` with `--resume` or `--db`).
    private static func usageRefusal(_ parsed: Arguments, inputs: [ShareInput], _ spec: CommandSpec) -> ExitStatus? {
        if parsed.value("resume") != nil, !inputs.isEmpty {
            return Command.usageFailure("--resume takes no PATH, --text or --url", spec)
        }
        if parsed.value("db") == nil,
            let option = ["no-wait", "timeout"].first(where: { parsed.flag($0) || parsed.value($0) != nil })
        {
            return Command.usageFailure(
                "--\(option) is for batches enqueued with --db; a local batch runs here until it ends", spec)
        }
        if parsed.flag("dry-run"), parsed.value("resume") != nil || parsed.value("db") != nil {
            return Command.usageFailure("--dry-run plans new inputs: not with --resume or --db", spec)
        }
        return nil
    }

    /// Ends the command with `status` (the message already said).
    private struct Exit: Error {
        let status: ExitStatus
    }

    /// The pipeline (`--pipeline`, `--scheme`, the media choices) and the key
    /// (`--key`) of a batch; the media choices are refused with `--resume`.
    private static func loadPipeline(
        _ parsed: Arguments, _ spec: CommandSpec
    ) throws(Exit) -> (PipelineDefinition, ShareKey?) {
        var pipeline: PipelineDefinition
        let key: ShareKey?
        do {
            pipeline = try PipelineDefinition.load(parsed.value("pipeline") ?? "default")
            if let scheme = parsed.value("scheme") {
                try RedirectURL.validate(scheme: scheme)
                pipeline.manifest.scheme = scheme
            }
            key = try parsed.value("key").map { try ShareKey($0) }
        } catch {
            throw Exit(status: Command.failure(error))
        }
        if parsed.value("resume") != nil, let option = MediaChoices.given(parsed) {
            throw Exit(
                status: Command.usageFailure(
                    "--\(option) chooses for a new batch; a resumed batch keeps the choices it was started with", spec))
        }
        do { pipeline = try MediaChoices.apply(parsed, to: pipeline) } catch {
            throw Exit(status: Command.usageFailure(error.description, spec))
        }
        return (pipeline, key)
    }

    /// What a local run came to: a report, or an exit status before one.
    private enum LocalRun {
        case ran(BatchReport)
        case exit(ExitStatus)
    }

    /// The local batch: `--resume BATCH`, the unfinished batch of the same
    /// inputs (`--resume-unfinished`; refused without it or while another
    /// share holds it), or a new batch.
    private static func ingestLocally(
        _ inputs: [ShareInput], parsed: Arguments, container: ContainerDirectory, pipeline: PipelineDefinition,
        decoder: any MediaDecoder, key: ShareKey?, printer: ProgressPrinter, mode: ProgressPrinter.Mode,
        cancellation: CancellationFlag
    ) -> LocalRun {
        do {
            var ingestor = ShareIngestor(container: container, pipeline: pipeline, decoder: decoder)
            if let attempts = parsed.integer("max-attempts") { ingestor.maxAttempts = attempts }
            ingestor.sizeLimits = sizeLimits(parsed, defaults: .none)
            ingestor.selection = MediaChoices.selection(parsed)
            // Before the journal is opened (a look for an unfinished batch of these inputs).
            if parsed.value("resume") == nil { ingestor.prepareDecoder(for: inputs) }
            if let batch = parsed.value("resume") {
                return .ran(try ingestor.resume(batch, events: printer.handle, cancellation: cancellation))
            } else if !parsed.flag("new-batch"), let unfinished = try ingestor.unfinishedBatches(of: inputs).last {
                // The same command again after an interruption: finish that batch, never a second copy of everything.
                let batch = unfinished.batch.id.uuidString
                guard !unfinished.held else {
                    return .exit(
                        Command.failure(
                            "another share is ingesting these inputs into \(container.root) now (batch \(batch)); wait for it to end, or start another beside it with --new-batch",
                            .temporaryFailure))
                }
                guard parsed.flag("resume-unfinished") else {
                    let started = ISO8601DateFormatter().string(from: unfinished.batch.createdAt)
                    return .exit(
                        Command.failure(
                            "an unfinished batch of these inputs (started \(started)) is in \(container.root): finish it with  share ingest --resume \(batch) --container \(container.root)  (or run this again with --resume-unfinished; --new-batch starts another beside it)",
                            .temporaryFailure))
                }
                if mode != .json {
                    Terminal.shared.err("share: finishing the unfinished batch \(batch) of these inputs")
                }
                return .ran(try ingestor.resume(batch, events: printer.handle, cancellation: cancellation))
            } else {
                return .ran(
                    try ingestor.ingest(
                        inputs, key: key, message: parsed.value("message"), events: printer.handle,
                        cancellation: cancellation))
            }
        } catch {
            return .exit(Command.failure(error))
        }
    }

    /// The exit of a batch that stopped before its end (asked to, the disk
    /// full, the store failing), with how to finish it.
    private static func stopped(
        _ report: BatchReport, mode: ProgressPrinter.Mode, container: ContainerDirectory
    ) -> ExitStatus {
        let resume = "share ingest --resume \(report.batchID.uuidString) --container \(container.root)"
        // --json's last line says how the batch ended, as batchFinished does for a finished one.
        if mode == .json { Terminal.shared.out(JSONLine.stopped(report, resume: resume)) }
        switch report.stop ?? .asked {
        case .asked:
            Terminal.shared.err("share: interrupted; nothing is lost: finish with  \(resume)")
            return ExitStatus.after(signal: Signals.received ?? SIGINT)
        case .diskFull:
            let waiting = report.items.filter { $0.failure?.reason == .diskFull }
            if mode != .json {
                for item in waiting { Terminal.shared.err("share: waits for space: \(item.failure!.message)") }
            }
            let items =
                waiting.isEmpty
                ? ""
                : "; \(waiting.count) item\(waiting.count == 1 ? "" : "s") wait\(waiting.count == 1 ? "s" : "") for space"
            Terminal.shared.err(
                "share: \(report.stop!)\(items); nothing is lost: free some space, then finish with  \(resume)")
            return .cannotCreate
        case .storeFailed:
            Terminal.shared.err("share: \(report.stop!); nothing is lost: finish with  \(resume)")
            return .cannotCreate
        }
    }

    /// `--db`: enqueue for the workers (or, with `--resume`, take up a batch
    /// again), then, unless `--no-wait`, wait for it and report it as a local
    /// batch is reported (`--json`, `--report`, the summary, the URL).
    private static func distributed(
        _ inputs: [ShareInput], url: String, parsed: Arguments, container: ContainerDirectory,
        pipeline: PipelineDefinition,
        key: ShareKey?, printer: ProgressPrinter, cancellation: CancellationFlag
    ) -> ExitStatus {
        var ingestor = DistributedIngestor(url: url, container: container, pipeline: pipeline)
        let quiet = parsed.flag("quiet") || parsed.flag("json")
        let batch: DistributedIngestor.Batch
        do throws(Exit) {
            batch = try enqueueOrResume(
                inputs, with: &ingestor, parsed: parsed, key: key, quiet: quiet, cancellation: cancellation)
        } catch {
            return error.status
        }
        let timeout = parsed.seconds("timeout") ?? .infinity
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
                    for: batch.id, timeout: timeout, cancellation: cancellation,
                    notices: { Terminal.shared.err("share: \($0)") },
                    progress: { Terminal.shared.status("\($0.finishedCount)/\($0.itemCount) items finished") })
            else {
                Terminal.shared.clearStatus()
                let why = cancellation.isCancelled ? "interrupted" : "not finished after \(Int(timeout)) s (--timeout)"
                Terminal.shared.err(
                    "share: \(why): batch \(batch.id.uuidString) stays with the workers (share status --db); \(again) waits for it again"
                )
                return cancellation.isCancelled
                    ? ExitStatus.after(signal: Signals.received ?? SIGINT) : .temporaryFailure
            }
            ended = done
            Terminal.shared.clearStatus()
            report = try ingestor.report(of: done, events: printer.handle, cancellation: cancellation)
        } catch {
            Terminal.shared.clearStatus()
            return Command.failure(error, database: true)
        }
        let written = parsed.value("report").map { write(report, to: $0, container: container) } ?? true
        if ended.state == .failed {
            Terminal.shared.err(
                "share: batch \(batch.id.uuidString) failed: \(ended.failure ?? "no reason recorded"); \(again) retries it"
            )
            return .temporaryFailure
        }
        if !parsed.flag("json") {
            // A resumed batch's container is the one it was planned with.
            summarize(
                report, container: (try? ContainerDirectory(ended.container)) ?? container, quiet: parsed.flag("quiet"))
        }
        guard written else { return .cannotCreate }
        return outcome(of: report)
    }

    /// `--db`'s batch: taken up again (`--resume`) or enqueued, with the
    /// ingestor's limits and choices set from the options.
    private static func enqueueOrResume(
        _ inputs: [ShareInput], with ingestor: inout DistributedIngestor, parsed: Arguments, key: ShareKey?,
        quiet: Bool, cancellation: CancellationFlag
    ) throws(Exit) -> DistributedIngestor.Batch {
        do {
            if let attempts = parsed.integer("max-attempts") { ingestor.maxAttempts = attempts }
            ingestor.sizeLimits = sizeLimits(parsed, defaults: .none)
            ingestor.selection = MediaChoices.selection(parsed)
            if let idOrKey = parsed.value("resume") {
                guard let batch = try ingestor.resume(idOrKey, cancellation: cancellation) else {
                    throw Exit(
                        status: Command.failure(
                            "no batch with id or key \(idOrKey) in the database (see share status --db)", .noInput))
                }
                if !quiet {
                    Terminal.shared.err(
                        "share: batch \(batch.id.uuidString) is \(batch.state.rawValue) (\(batch.finishedCount) of \(batch.itemCount) items finished)"
                    )
                }
                return batch
            } else {
                let batch = try ingestor.enqueue(
                    inputs, key: key, message: parsed.value("message"), cancellation: cancellation)
                if !quiet {
                    Terminal.shared.err(
                        "share: enqueued batch \(batch.id.uuidString) (\(batch.itemCount) items, key \(batch.key))")
                }
                return batch
            }
        } catch let exit as Exit {
            throw exit
        } catch {
            if cancellation.isCancelled {
                throw Exit(
                    status: Command.failure(
                        "interrupted: \(error)", ExitStatus.after(signal: Signals.received ?? SIGINT)))
            }
            throw Exit(status: Command.failure(error, database: true))
        }
    }

    /// `--report FILE`; false (and said on stderr) when it cannot be written: the batch is delivered all the same.
    private static func write(_ report: BatchReport, to path: String, container: ContainerDirectory) -> Bool {
        do {
            try report.write(to: path, container: container)
            return true
        } catch {
            Terminal.shared.err("share: cannot write the report to \(path): \(error) (the batch is delivered)")
            return false
        }
    }

    private static func summarize(_ report: BatchReport, container: ContainerDirectory, quiet: Bool) {
        let terminal = Terminal.shared
        if !quiet {
            var counts = "\(report.ingestedCount) of \(report.items.count) items ingested"
            if report.failedCount > 0 { counts += ", \(report.failedCount) failed" }
            if report.skippedCount > 0 { counts += ", \(report.skippedCount) skipped" }
            if report.attachedCount > 0 { counts += ", \(report.attachedCount) sidecars attached to their media" }
            // Delivered, but the same content as a copy delivered before (`duplicateOf`).
            let duplicates = report.entries.filter { $0.duplicateOf != nil }.count
            if duplicates > 0 {
                counts +=
                    duplicates == 1
                    ? " (1 of them a duplicate of an earlier copy: duplicateOf)"
                    : " (\(duplicates) of them duplicates of earlier copies: duplicateOf)"
            }
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

    /// The exit status of a batch that ended: 0 when every item was
    /// delivered (or left out by a filter asked for), 1 when some were not, 66 when the inputs held nothing to
    /// ingest (an empty folder: no manifest, no URL; said on stderr) or none could be read.
    static func outcome(of report: BatchReport) -> ExitStatus {
        guard report.counts.items > 0 else {
            Terminal.shared.err(
                "share: nothing to ingest: the inputs hold no file (hidden entries are skipped); no manifest, no redirect URL"
            )
            return .noInput
        }
        // Nothing delivered because no input could be read is not "partly done".
        if report.ingestedCount + report.attachedCount == 0,
            report.undelivered(for: [.unreadable]) == report.counts.items
        {
            return .noInput
        }
        // What --include, --exclude and --taken-after/-before left out was asked for: not "partly done".
        let chosen = report.undelivered(for: leftOutByChoice)
        if chosen > 0, report.ingestedCount + report.attachedCount == 0, chosen == report.counts.items {
            Terminal.shared.err(
                "share: nothing to ingest: every file was left out by --include, --exclude, --taken-after or --taken-before; no manifest, no redirect URL"
            )
            return .noInput
        }
        if chosen > 0, report.ingestedCount + report.attachedCount + chosen == report.counts.items { return .success }
        return report.isComplete ? .success : .partial
    }

    /// The reasons an item is skipped because the command asked for it.
    static let leftOutByChoice: Set<ItemFailure.Reason> = [.filtered, .outsideDateRange]

    /// `--max-item-size` and `--max-drop-size` over `defaults` (0: no limit).
    static func sizeLimits(_ parsed: Arguments, defaults: SizeLimits) -> SizeLimits {
        func limit(_ name: String, _ fallback: Int64?) -> Int64? {
            guard let given = parsed.size(name) else { return fallback }
            return given == 0 ? nil : given
        }
        return SizeLimits(item: limit("max-item-size", defaults.item), drop: limit("max-drop-size", defaults.drop))
    }
}
