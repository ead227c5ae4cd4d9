import Foundation
import Glibc
import MediaFormats
import ShareManifest
import Synchronization
import SystemCalls

/// Runs one planned batch through the pipeline's stages, in this process.
///
/// Each item stage has its own worker threads (the pipeline's `workers`), fed
/// by a bounded queue from the stage before it; a feeder thread puts the
/// batch's unfinished items into the first queue and the calling thread
/// collects finished ones. Each stage runs through ``ItemExecution`` and its
/// result is journaled, so an interrupted batch resumes where it stopped. The
/// fan-in (``BatchCompletion``) runs once, after the last item, and only then.
final class BatchRunner: Sendable {
    let pipeline: PipelineDefinition
    let container: ContainerDirectory
    let journal: BatchJournal
    let events: IngestEventSink?
    let cancellation: CancellationFlag
    let decoder: any MediaDecoder
    let stages: [any ItemStage]
    /// The clock for recorded timestamps (`finishedAt`); tests inject a fixed one.
    let now: @Sendable () -> Date

    /// How many times the process may die while decoding one item alone before
    /// that item fails as poison (`crashedRepeatedly`).
    static let poisonStrikes = 3

    init(
        pipeline: PipelineDefinition, container: ContainerDirectory, journal: BatchJournal, decoder: any MediaDecoder, events: IngestEventSink?,
        cancellation: CancellationFlag, now: @escaping @Sendable () -> Date
    ) {
        self.pipeline = pipeline
        self.container = container
        self.journal = journal
        self.decoder = decoder
        self.events = events
        self.cancellation = cancellation
        self.stages = pipeline.makeItemStages()
        self.now = now
    }

    /// The last item stage: an item that completed it is ready for the manifest.
    var lastStage: StageName { stages.last!.name }

    func isFinished(_ item: ItemWork) -> Bool { item.failure != nil || item.completed == lastStage }

    /// Processes the batch's unfinished items, then finishes the batch. `dispose`
    /// runs after the manifest is written and before the batch is marked done (a
    /// watched drop is moved away there).
    func run(_ batch: inout BatchRecord, items: [ItemWork], dispose: ((BatchRecord, [ItemWork]) -> Void)? = nil) throws(ShareIngestError) -> BatchReport {
        let started = MonotonicClock.now()
        if pipeline.probe != nil || pipeline.thumbnail != nil { decoder.prepare() }
        let context = BatchContext(batchID: batch.id, container: container, pipeline: pipeline, decoder: decoder, message: batch.message, cancellation: cancellation)
        events?(.batchStarted(batchID: batch.id, key: batch.key))
        if batch.state == .running { recoverSuspects(items, context: context) }
        var collected = batch.state == .running ? process(items, context: context) : items
        collected.sort { $0.index < $1.index }
        guard collected.allSatisfy(isFinished) else {
            // Interrupted: nothing is rolled back; the journal knows where each item is.
            return interruptedReport(batch, items: collected, started: started)
        }
        return finish(&batch, items: collected, started: started, dispose: dispose)
    }

    // MARK: - Threads

    /// Bytes of decoder memory that may be in use at once (``DecodeBudget``):
    /// a 4K video poster and a 12 MP HEIC fit together, two 100 MP images do not.
    static let decodeMemoryBudget = 192 << 20
    /// How many items may wait in front of the copy and probe stages: enough for
    /// the costliest of a drop to be picked first, few enough to keep memory flat.
    static let scheduledQueueCapacity = 32

    private func process(_ items: [ItemWork], context: BatchContext) -> [ItemWork] {
        // The copy and probe stages take the costliest waiting item first
        // (``DecodeCost``), so slow decodes start early instead of ending the batch
        // with one core idle; the other queues stay first in, first out.
        let queues = stages.map { stage in
            stage.name == .copy || stage.name == .probe
                ? BlockingQueue<ItemWork>(capacity: max(2 * pipeline.workers(for: stage.name), Self.scheduledQueueCapacity)) { Self.cost(of: $0).milliseconds }
                : BlockingQueue<ItemWork>(capacity: 2 * pipeline.workers(for: stage.name))
        }
        let budget = DecodeBudget(limit: Self.decodeMemoryBudget)
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
                work(stage, from: queues[position], to: next, finished: finished, context: context, budget: budget)
                if remaining.leave() { next.close() }
            })
        }
        var collected: [ItemWork] = []
        while let item = finished.pop() {
            if isFinished(item) { events?(.itemFinished(report(for: item, message: context.message))) }
            collected.append(item)
        }
        for join in joins { join() }
        return collected
    }

    private func work(
        _ stage: any ItemStage, from input: BlockingQueue<ItemWork>, to output: BlockingQueue<ItemWork>, finished: BlockingQueue<ItemWork>,
        context: BatchContext, budget: DecodeBudget
    ) {
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
            markDecoding(stage, item: item, batch: context.batchID)
            // Decoder memory is bounded by the budget (the probe decodes, and so
            // does the thumbnail stage when the probe made no thumbnail).
            let decodes = item.sniffed?.format.isDecodable == true
                && (stage.name == .probe || (stage.name == .thumbnail && item.pendingThumbnail == nil))
            let bytes = decodes ? Self.cost(of: item).bytes : 0
            if decodes { budget.acquire(bytes) }
            let succeeded = ItemExecution.run(stage, on: item, in: context, events: events)
            if decodes { budget.release(bytes) }
            record(item, batch: context.batchID)
            if succeeded { output.push(item) } else { finished.push(item) }
        }
    }

    /// The item's decode cost: estimated at its sniff, or (resumed, or not sniffed
    /// yet) from what is known.
    static func cost(of item: ItemWork) -> DecodeCost {
        if let cost = item.decodeCost { return cost }
        guard let format = item.sniffed?.format else { return .zero }
        return DecodeCost.estimate(format: format, size: item.size ?? 0, pixels: nil)
    }

    // MARK: - Poison items

    /// Journals that `stage` is about to decode `item` in this process, so a
    /// process that dies meanwhile is noticed when the batch resumes. Nothing
    /// is recorded when the decoder contains crashes (sandboxed helpers).
    private func markDecoding(_ stage: any ItemStage, item: ItemWork, batch: UUID) {
        guard !decoder.containsCrashes, stage.name == .probe || stage.name == .thumbnail, item.sniffed?.format.isDecodable == true else { return }
        item.decodingInFlight = true
        record(item, batch: batch)
    }

    /// Before the workers start: the items that were being decoded when the
    /// process died last time. A death is blamed on an item only when it was the
    /// only one being decoded (a kill from outside, or another file's crash, is
    /// not its fault); so suspects are first run again one at a time, alone, and
    /// an item that takes the process down alone ``poisonStrikes`` times fails
    /// with `crashedRepeatedly` instead of being tried again: `--resume` and
    /// `share watch` never crash-loop on it.
    private func recoverSuspects(_ items: [ItemWork], context: BatchContext) {
        let suspects = items.filter { $0.decodingInFlight && !isFinished($0) }
        guard !suspects.isEmpty else { return }
        if suspects.count == 1 { suspects[0].crashStrikes += 1 }
        for item in suspects where !cancellation.isCancelled {
            item.decodingInFlight = false
            if item.crashStrikes >= Self.poisonStrikes {
                item.failure = ItemFailure(
                    nextStage(of: item), .crashedRepeatedly,
                    "\(item.source.label): the process died \(item.crashStrikes) times while decoding this file alone; not tried again")
                item.removeFiles(in: container)
                record(item, batch: context.batchID)
                continue
            }
            record(item, batch: context.batchID)
            for stage in stages where !isFinished(item) && !cancellation.isCancelled && (item.completed.map { $0 < stage.name } ?? true) {
                markDecoding(stage, item: item, batch: context.batchID)
                _ = ItemExecution.run(stage, on: item, in: context, events: events)
                record(item, batch: context.batchID)
            }
        }
    }

    /// The stage an unfinished item would run next.
    private func nextStage(of item: ItemWork) -> StageName {
        stages.map(\.name).first { stage in item.completed.map { $0 < stage } ?? true } ?? lastStage
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
                MonotonicClock.sleep(0.1)
            }
        }
    }

    // MARK: - Fan-in

    private func finish(_ batch: inout BatchRecord, items: [ItemWork], started: Double, dispose: ((BatchRecord, [ItemWork]) -> Void)?) -> BatchReport {
        batch.state = .manifesting
        try? journal.update(batch)
        let (done, report) = BatchCompletion.finish(
            batch, items: items, pipeline: pipeline, container: container, started: started, now: now()
        ) { record($0, batch: batch.id) }
        dispose?(done, items)
        batch = done
        do {
            try journal.update(batch)
            TestThrottle.pause()
        } catch {
            // The journal could not record the end: whatever was written stands (a
            // manifest is complete), and the next start marks the batch done.
        }
        events?(.batchFinished(report))
        return report
    }

    private func interruptedReport(_ batch: BatchRecord, items: [ItemWork], started: Double) -> BatchReport {
        var totals: [StageName: Double] = [:]
        for item in items { totals.merge(item.stageSeconds, uniquingKeysWith: +) }
        var interrupted = BatchReport(
            batchID: batch.id, key: batch.key, redirectURL: nil, manifestPath: nil, schema: pipeline.manifest.schema, pipeline: pipeline.name,
            items: items.map { report(for: $0, message: batch.message) }, stageSeconds: totals, wallSeconds: MonotonicClock.now() - started)
        interrupted.interrupted = true
        return interrupted
    }

    func report(for item: ItemWork, message: String?) -> ItemReport {
        ManifestStage(settings: pipeline.manifest).report(for: item, finished: isFinished(item), message: message)
    }
}

/// Counts down stage workers; the last one to leave closes the next queue.
final class RemainingWorkers: Sendable {
    private let count: Mutex<Int>

    init(_ count: Int) { self.count = Mutex(count) }

    /// True for the last worker.
    func leave() -> Bool {
        count.withLock { count in
            count -= 1
            return count == 0
        }
    }
}
