import Foundation
import Glibc
import MediaFormats
import ShareManifest

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
    let decoder: any MediaDecoder
    let stages: [any ItemStage]
    let manifestStage: ManifestStage
    /// The clock for recorded timestamps (`finishedAt`); tests inject a fixed one.
    var now: @Sendable () -> Date = { Date() }

    init(
        pipeline: PipelineDefinition, container: ContainerDirectory, journal: BatchJournal, decoder: any MediaDecoder, events: IngestEventSink?,
        cancellation: CancellationFlag
    ) {
        self.pipeline = pipeline
        self.decoder = decoder
        self.container = container
        self.journal = journal
        self.events = events
        self.cancellation = cancellation
        self.stages = pipeline.makeItemStages()
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
        if pipeline.probe != nil || pipeline.thumbnail != nil { decoder.prepare() }
        let context = BatchContext(batchID: batch.id, container: container, pipeline: pipeline, decoder: decoder, message: message, cancellation: cancellation)
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
                if remaining.leave() { next.close() }
            })
        }
        var collected: [ItemWork] = []
        while let item = finished.pop() {
            if item.failure != nil {
                // Files first, then the record: a crash in between redoes the item.
                item.removeFiles(in: container)
                record(item, batch: context.batchID)
            }
            item.pendingThumbnail = nil
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
                item.pendingThumbnail = nil
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
            TestThrottle.pause()
            events?(.stageFinished(stage.name, index: item.index, bytes: stage.name == .copy ? item.size ?? 0 : 0))
            if item.failure != nil {
                item.pendingThumbnail = nil
                finished.push(item)
            } else {
                output.push(item)
            }
        }
    }

    private func record(_ item: ItemWork, batch: UUID) {
        // A full disk can be momentary (a failed copy is still being removed): try
        // again briefly before giving up.
        for attempt in 0..<5 {
            do {
                try journal.save(item, batch: batch)
                return
            } catch {
                if attempt == 4 {
                    // The journal is the batch's memory; if it cannot be written, stop
                    // taking work: the batch is interrupted, and resumable once it can.
                    item.warnings.append("journal: \(error)")
                    cancellation.cancel()
                }
                usleep(100_000)
            }
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
        do {
            batch.state = .manifesting
            try journal.update(batch)
            let delivery = manifestStage.deliver(items, key: batch.key, container: container, message: message) { record($0, batch: batch.id) }
            batch.manifestPath = delivery.manifestPath
            batch.redirectURL = delivery.redirect?.description
            CrashPoint.hit("after-manifest")
            TestThrottle.pause()
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
            TestThrottle.pause()
        } catch {
            // The journal could not record the end: whatever was written stands (a
            // manifest is complete), and the next start marks the batch done.
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
        manifestStage.report(for: item, finished: isFinished(item), message: message)
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
