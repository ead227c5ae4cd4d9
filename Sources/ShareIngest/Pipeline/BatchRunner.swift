import Foundation
import Glibc
import MediaKit

/// Runs one planned batch through the pipeline's stages.
///
/// Each item stage has its own worker threads (the pipeline's `workers`), fed
/// by a bounded queue from the stage before it; a feeder thread puts the
/// batch's unfinished items into the first queue and the calling thread
/// collects finished ones. Every stage's result is journaled, so an interrupted
/// batch resumes where it stopped. The manifest is written once, after the last
/// item, and only then.
final class BatchRunner: @unchecked Sendable {
    let pipeline: PipelineDefinition
    let container: ContainerDirectory
    let journal: BatchJournal
    let events: IngestEventSink?
    let cancellation: CancellationFlag
    let stages: [any ItemStage]
    let manifestStage: ManifestStage
    /// The clock for recorded timestamps (`finishedAt`); tests inject a fixed one.
    var now: @Sendable () -> Date = { Date() }

    init(pipeline: PipelineDefinition, container: ContainerDirectory, journal: BatchJournal, events: IngestEventSink?, cancellation: CancellationFlag) {
        self.pipeline = pipeline
        self.container = container
        self.journal = journal
        self.events = events
        self.cancellation = cancellation
        var stages: [any ItemStage] = [SniffStage(settings: pipeline.sniff), CopyStage(settings: pipeline.copy)]
        if let probe = pipeline.probe {
            stages.append(ProbeStage(settings: probe, keepMediaOpen: pipeline.thumbnail != nil))
        }
        if let thumbnail = pipeline.thumbnail { stages.append(ThumbnailStage(settings: thumbnail)) }
        self.stages = stages
        self.manifestStage = ManifestStage(settings: pipeline.manifest)
    }

    /// The last item stage: an item that completed it is ready for the manifest.
    var lastStage: StageName { stages.last!.name }

    func isFinished(_ item: ItemWork) -> Bool { item.failure != nil || item.completed == lastStage }

    /// Processes the batch's unfinished items, then writes the manifest. `dispose`
    /// runs after the manifest is written and before the batch is marked done (a
    /// watched drop is moved away there).
    func run(_ batch: inout BatchRecord, items: [ItemWork], message: String?, dispose: ((BatchRecord, [ItemWork]) -> Void)? = nil) throws(ShareIngestError) -> BatchReport {
        let started = MonotonicClock.now()
        if pipeline.probe != nil || pipeline.thumbnail != nil {
            do { try Vips.start() } catch { throw .containerUnusable(path: container.root, reason: "libvips failed to start: \(error)") }
        }
        let context = BatchContext(batchID: batch.id, container: container, pipeline: pipeline, message: message, cancellation: cancellation)
        events?(.batchStarted(batchID: batch.id, key: batch.key))

        var collected: [ItemWork] = []
        if batch.state == .running {
            collected = process(items, context: context)
        } else {
            collected = items
        }
        collected.sort { $0.index < $1.index }
        return finish(&batch, items: collected, message: message, started: started, dispose: dispose)
    }

    // MARK: - Threads

    private func process(_ items: [ItemWork], context: BatchContext) -> [ItemWork] {
        let queues = stages.map { BlockingQueue<ItemWork>(capacity: 2 * pipeline.workers(for: $0.name)) }
        let finished = BlockingQueue<ItemWork>(capacity: 64)
        var joins: [@Sendable () -> Void] = []
        joins.append(WorkerThreads.start(name: "feed", count: 1) { [self] _ in
            for item in items {
                if isFinished(item) { finished.push(item) } else { queues[0].push(item) }
            }
            queues[0].close()
        })
        for (position, stage) in stages.enumerated() {
            let next = position + 1 < queues.count ? queues[position + 1] : finished
            let remaining = RemainingWorkers(pipeline.workers(for: stage.name))
            joins.append(WorkerThreads.start(name: stage.name.rawValue, count: pipeline.workers(for: stage.name)) { [self] _ in
                work(stage, from: queues[position], to: next, finished: finished, context: context)
                if stage.name == .probe || stage.name == .thumbnail { Vips.threadShutdown() }
                if remaining.leave() { next.close() }
            })
        }
        var collected: [ItemWork] = []
        while let item = finished.pop() {
            if item.failure != nil {
                // Files first, then the record: a crash in between redoes the item.
                removeFiles(of: item)
                record(item, batch: context.batchID)
            }
            item.media = nil
            if isFinished(item) { events?(.itemFinished(report(for: item, message: context.message))) }
            collected.append(item)
        }
        for join in joins { join() }
        return collected
    }

    private func work(_ stage: any ItemStage, from input: BlockingQueue<ItemWork>, to output: BlockingQueue<ItemWork>, finished: BlockingQueue<ItemWork>, context: BatchContext) {
        while let item = input.pop() {
            if let done = item.completed, done >= stage.name {
                output.push(item)
                continue
            }
            if cancellation.isCancelled {
                // Parked: it stays at the last stage it finished and is resumed later.
                item.media = nil
                finished.push(item)
                continue
            }
            let start = MonotonicClock.now()
            do throws(ItemFailure) {
                try stage.process(item, in: context)
                item.completed = stage.name
                record(item, batch: context.batchID)
            } catch {
                item.failure = error
            }
            item.stageSeconds[stage.name] = MonotonicClock.now() - start
            events?(.stageFinished(stage.name, index: item.index, bytes: stage.name == .copy ? item.size ?? 0 : 0))
            if item.failure != nil {
                item.media = nil
                finished.push(item)
            } else {
                output.push(item)
            }
        }
    }

    private func record(_ item: ItemWork, batch: UUID) {
        do {
            try journal.save(item, batch: batch)
        } catch {
            // The journal is the batch's memory; if it cannot be written, stop taking work.
            item.warnings.append("journal: \(error)")
            cancellation.cancel()
        }
    }

    // MARK: - Fan-in

    private func finish(_ batch: inout BatchRecord, items: [ItemWork], message: String?, started: Double, dispose: ((BatchRecord, [ItemWork]) -> Void)?) -> BatchReport {
        let unfinished = items.filter { !isFinished($0) }
        if !unfinished.isEmpty {
            // Interrupted: nothing is rolled back; the journal knows where each item is.
            return makeReport(batch, items: items, message: message, started: started, manifestSeconds: 0, interrupted: true)
        }
        let manifestStart = MonotonicClock.now()
        let hasFiles = items.contains { $0.failure == nil && $0.isFileLike }
        for item in items where item.failure == nil {
            if let failure = manifestStage.unsupportedBySchema(item, batchHasFiles: hasFiles) {
                item.failure = failure
                record(item, batch: batch.id)
            }
        }
        var delivered = items.filter { $0.failure == nil }
        do {
            batch.state = .manifesting
            try journal.update(batch)
            CrashPoint.hit("before-manifest")
            if !delivered.isEmpty {
                let path = container.manifestPath(key: batch.key)
                let entries = delivered.map { manifestStage.entry(for: $0, message: message) }
                let redirect = manifestStage.redirect(for: entries, key: batch.key)
                // A manifest already in place was written by the run that crashed
                // before marking the batch done: it is this batch's, complete.
                if access(path, F_OK) != 0 {
                    do {
                        _ = try manifestStage.write(entries, key: batch.key, container: container)
                    } catch {
                        let reason: ItemFailure.Reason = error.isDiskFull ? .diskFull : .io
                        for item in delivered {
                            item.failure = ItemFailure(.manifest, reason, "\(item.source.label): the manifest could not be written: \(error)")
                            removeFiles(of: item)
                            record(item, batch: batch.id)
                        }
                        delivered = []
                    }
                }
                if !delivered.isEmpty {
                    batch.manifestPath = path
                    batch.redirectURL = redirect.description
                }
            }
            CrashPoint.hit("after-manifest")
            // Kept beside the manifest for `share report` and `share status` (and
            // beside a failed drop); losing it costs no item, so a failure to
            // write it is not the batch's failure.
            let reportPath = container.reportPath(key: batch.key)
            unlink(reportPath)
            let stored = makeReport(batch, items: items, message: message, started: started, manifestSeconds: MonotonicClock.now() - manifestStart, interrupted: false)
            try? AtomicFile.create(reportPath, bytes: stored.json(), syncDirectory: false)
            dispose?(batch, items)
            let reports = stored.items
            batch.state = .done
            batch.finishedAt = now()
            batch.itemCount = items.count
            batch.ingestedCount = reports.count { $0.status == .ingested }
            batch.failedCount = reports.count { $0.status == .failed }
            batch.skippedCount = reports.count { $0.status == .skipped }
            try journal.update(batch)
        } catch {
            events?(.itemFinished(ItemReport(index: -1, source: "journal", status: .failed, failure: ItemFailure(.manifest, .io, "journal: \(error)"), warnings: [], entry: nil, id: nil, stageSeconds: [:])))
        }
        let result = makeReport(batch, items: items, message: message, started: started, manifestSeconds: MonotonicClock.now() - manifestStart, interrupted: false)
        events?(.batchFinished(result))
        return result
    }

    private func makeReport(_ batch: BatchRecord, items: [ItemWork], message: String?, started: Double, manifestSeconds: Double, interrupted: Bool) -> BatchReport {
        var totals: [StageName: Double] = [:]
        for item in items { totals.merge(item.stageSeconds, uniquingKeysWith: +) }
        if !interrupted { totals[.manifest] = manifestSeconds }
        return BatchReport(
            batchID: batch.id, key: batch.key, redirectURL: batch.redirectURL.flatMap { try? RedirectURL.parse($0).url }, manifestPath: batch.manifestPath,
            schema: pipeline.manifest.schema, pipeline: pipeline.name, items: items.map { report(for: $0, message: message) },
            stageSeconds: totals, wallSeconds: MonotonicClock.now() - started, interrupted: interrupted)
    }

    func report(for item: ItemWork, message: String?) -> ItemReport {
        let status: ItemStatus
        switch item.failure?.reason {
        case nil: status = isFinished(item) ? .ingested : .failed
        case .notRegularFile, .symbolicLink, .tooDeep, .unsupportedBySchema: status = .skipped
        default: status = .failed
        }
        return ItemReport(
            index: item.index, source: item.source.label, status: status, failure: item.failure, warnings: item.warnings,
            entry: status == .ingested ? manifestStage.entry(for: item, message: message) : nil,
            id: item.copyPath != nil ? item.id : nil, stageSeconds: item.stageSeconds)
    }

    private func removeFiles(of item: ItemWork) {
        for path in item.ownedFiles(in: container) { FileSystem.remove(path) }
        item.copyPath = nil
        item.thumbnailPath = nil
    }
}

/// Counts down stage workers; the last one to leave closes the next queue.
final class RemainingWorkers: @unchecked Sendable {
    private let lock = NSLock()
    private var count: Int

    init(_ count: Int) { self.count = count }

    /// True for the last worker.
    func leave() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        count -= 1
        return count == 0
    }
}
