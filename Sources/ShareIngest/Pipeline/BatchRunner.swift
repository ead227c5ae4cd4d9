import Foundation
import MediaFormats
import ShareManifest
import Synchronization
import SystemCalls

/// Runs one planned batch in this process: the local transport of the item
/// lifecycle.
///
/// Each item stage has its own worker threads (the pipeline's `workers`), each
/// fed by a bounded queue; a feeder thread reads the batch's unfinished items
/// from the store a page at a time and puts each into the queue of its next
/// stage. A worker runs the stage through ``StageExecution`` (the execution core
/// both modes share: outcome, lifecycle, record, events) and hands the item to
/// the queue of the stage it is to run next; nothing holds finished items. The
/// fan-in (``BatchCompletion``) runs once, after the last item, and only then.
final class BatchRunner: Sendable {
    let context: BatchContext
    let store: BatchJournal
    let execution: StageExecution
    let events: IngestEventSink?
    let cancellation: CancellationFlag
    /// The clock for recorded timestamps (`finishedAt`); tests inject a fixed one.
    let now: @Sendable () -> Date

    /// How many times the process may die while decoding one item alone before
    /// that item fails as poison (`crashedRepeatedly`).
    static let poisonStrikes = 3
    /// How many items may wait in front of the copy and probe stages: enough for
    /// the costliest of a drop to be picked first, few enough to keep memory flat.
    static let scheduledQueueCapacity = 32
    /// Items read from the store at a time.
    static let pageSize = 500
    /// Seconds a failing journal record is tried again (a full disk can be
    /// momentary: a failed copy is still being removed) before the batch stops.
    static let recordPatience = 0.5

    init(
        _ batch: BatchRecord, container: ContainerDirectory, journal: BatchJournal, decoder: any MediaDecoder, events: IngestEventSink?,
        cancellation: CancellationFlag, now: @escaping @Sendable () -> Date
    ) throws(ShareIngestError) {
        self.context = try BatchContext(batch, container: container, maxAttempts: Self.poisonStrikes, decoder: decoder)
        self.store = journal
        self.events = events
        self.cancellation = cancellation
        self.execution = StageExecution(
            events: events, cancellation: cancellation, retries: .init(patience: Self.recordPatience, isTransient: { _ in true }))
        self.now = now
    }

    var lifecycle: ItemLifecycle { context.lifecycle }

    /// Processes the batch's unfinished items, then finishes the batch. `dispose`
    /// runs after the manifest is written and before the batch is marked done (a
    /// watched drop is moved away there).
    func run(_ batch: inout BatchRecord, dispose: ((BatchRecord) -> Void)? = nil) throws(ShareIngestError) -> BatchReport {
        let started = MonotonicClock.now()
        if context.pipeline.probe != nil || context.pipeline.thumbnail != nil || context.pipeline.motion != nil { context.decoder.prepare() }
        events?(.batchStarted(batchID: batch.id, key: batch.key))
        var unfinished = 0
        do {
            if batch.state == .running {
                try recoverSuspects()
                unfinished = try process()
            }
        } catch {
            throw .containerUnusable(path: context.container.root, reason: "journal: \(error)")
        }
        guard unfinished == 0 else {
            // Interrupted: nothing is rolled back; the journal knows where each item is.
            return try interruptedReport(batch, started: started)
        }
        return try finish(&batch, started: started, dispose: dispose)
    }

    // MARK: - Threads

    /// Runs every unfinished item to its end (or, once stopped, to where it is
    /// parked); returns how many are not finished.
    private func process() throws -> Int {
        let stages = lifecycle.stages
        let queues = Dictionary(
            uniqueKeysWithValues: stages.map { stage in
                let workers = context.pipeline.workers(for: stage)
                // The copy and probe stages take the costliest waiting item first
                // (``DecodeCost``), so slow decodes start early instead of ending
                // the batch with one core idle; the other queues stay first in, first out.
                let queue =
                    stage == .copy || stage == .probe
                    ? BlockingQueue<InFlightItem>(capacity: max(2 * workers, Self.scheduledQueueCapacity)) {
                        ($0.carried.decodeCost ?? StageExecution.cost(of: $0.state)).milliseconds
                    }
                    : BlockingQueue<InFlightItem>(capacity: 2 * workers)
                return (stage, queue)
            })
        // Items only move to later stages: a stage's queue is closed once the
        // feeder and every worker of the stages before it are done.
        let producers = Producers(stages: stages, workers: { self.context.pipeline.workers(for: $0) }) { queues[$0]?.close() }
        let unfinished = Counter()
        let feedError = Mutex<(any Error)?>(nil)
        var joins: [@Sendable () -> Void] = []
        joins.append(
            WorkerThreads.start(name: "feed", count: 1) { [self] _ in
                do {
                    try feed { item, next in
                        if let stage = next.stage, case .run = next { queues[stage]?.push(item) } else { settle(next, unfinished: unfinished) }
                    }
                } catch {
                    feedError.withLock { $0 = error }
                    cancellation.cancel()
                }
                producers.done(after: nil)
            })
        for stage in stages {
            let workers = context.pipeline.workers(for: stage)
            joins.append(
                WorkerThreads.start(name: stage.rawValue, count: workers) { [self] _ in
                    while var item = queues[stage]?.pop() {
                        let step = execution.run(stage, on: &item, in: context, store: store)
                        if case .failed(let error) = step.recorded {
                            // The journal could not record it: the run stops (resumable).
                            item.warnings.append("journal: \(error)")
                            unfinished.increment()
                            continue
                        }
                        switch step.next {
                        case .run(let next): queues[next]?.push(item)
                        case .retry(let next, let after, _):
                            MonotonicClock.sleep(after)
                            queues[next]?.push(item)
                        case .park, .finished: settle(step.next, unfinished: unfinished)
                        }
                    }
                    producers.done(after: stage)
                })
        }
        for join in joins { join() }
        if let error = feedError.withLock({ $0 }) { throw error }
        return unfinished.value
    }

    private func settle(_ next: NextStep, unfinished: Counter) {
        if next != .finished { unfinished.increment() }
    }

    /// Reads the unfinished items a page at a time and hands each, with where
    /// it starts, to `body`. An item recorded as unfinished that has in fact
    /// finished (an older journal's, or one whose last record was lost) is
    /// recorded finished here.
    private func feed(_ body: (InFlightItem, NextStep) -> Void) throws {
        var last = -1
        while true {
            let page = try store.unfinishedItems(of: context.batchID, after: last, limit: Self.pageSize)
            for state in page {
                let next = lifecycle.start(state, stopping: cancellation.isCancelled)
                if next == .finished {
                    _ = execution.record(state, next: .finished, batch: context, store: store)
                    execution.finished(state, in: context)
                }
                body(InFlightItem(state), next)
            }
            guard page.count == Self.pageSize, let end = page.last?.index else { return }
            last = end
        }
    }

    // MARK: - Poison items

    /// Before the workers start: the items that were being decoded when the
    /// process died last time. A death is blamed on an item only when it was the
    /// only one being decoded (a kill from outside, or another file's crash, is
    /// not its fault); so suspects are first run again one at a time, alone, and
    /// an item that takes the process down alone ``poisonStrikes`` times fails
    /// with `crashedRepeatedly` instead of being tried again: `--resume` and
    /// `share watch` never crash-loop on it.
    private func recoverSuspects() throws {
        var suspects: [ItemState] = []
        var last = -1
        while true {
            let page = try store.unfinishedItems(of: context.batchID, after: last, limit: Self.pageSize)
            suspects += page.filter(\.decodingInFlight)
            guard page.count == Self.pageSize, let end = page.last?.index else { break }
            last = end
        }
        for suspect in suspects where !cancellation.isCancelled {
            var item = InFlightItem(suspect)
            item.decodingInFlight = false
            guard let stage = lifecycle.start(item.state, stopping: false).stage else { continue }
            let outcome = StageOutcome.lost(
                at: stage, reason: "the process died while decoding it", blamed: suspects.count == 1, crashedDecoding: true)
            var next = lifecycle.advance(&item.state, after: outcome, stopping: cancellation.isCancelled)
            if next == .finished { item.state.removeFiles(in: context.container) }
            _ = execution.record(item.state, next: next, batch: context, store: store)
            if next == .finished { execution.finished(item.state, in: context) }
            while let stage = next.stage, !cancellation.isCancelled {
                next = execution.run(stage, on: &item, in: context, store: store).next
            }
        }
    }

    // MARK: - Fan-in

    private func finish(_ batch: inout BatchRecord, started: Double, dispose: ((BatchRecord) -> Void)?) throws(ShareIngestError) -> BatchReport {
        batch.state = .manifesting
        try? store.update(batch)
        let outcome: BatchCompletion.Outcome?
        do {
            outcome = try BatchCompletion.finish(
                batch, context: context, store: store, lease: nil, wallSeconds: MonotonicClock.now() - started, now: now(),
                beforeRecording: { dispose?($0) })
        } catch let failure as BatchCompletion.NotRecorded {
            // The journal could not record the end: whatever was written stands (a
            // manifest is complete), and the next start records the batch done.
            outcome = failure.outcome
        } catch {
            throw .containerUnusable(path: context.container.root, reason: "journal: \(error)")
        }
        guard let outcome else { throw .batchNotResumable(batch.id, .done) }
        batch = outcome.record
        TestThrottle.pause()
        events?(.batchFinished(outcome.report))
        return outcome.report
    }

    /// The report of a batch that stopped before all its items finished: its
    /// counts from the journal, its items read from it when needed.
    private func interruptedReport(_ batch: BatchRecord, started: Double) throws(ShareIngestError) -> BatchReport {
        let counts: BatchReport.Counts
        do { counts = try store.counts(of: batch.id) } catch { throw .containerUnusable(path: context.container.root, reason: "journal: \(error)") }
        let (container, pipeline, message) = (context.container, context.pipeline, batch.message)
        var interrupted = BatchReport(
            batchID: batch.id, key: batch.key, redirectURL: nil, manifestPath: nil, schema: pipeline.manifest.schema, pipeline: pipeline.name,
            items: counts.items <= BatchReport.itemsHeldInMemory
                ? ItemReports(ItemReports.rebuilt(batch: batch.id, container: container, pipeline: pipeline, message: message))
                : ItemReports(count: counts.items) { ItemReports.rebuilt(batch: batch.id, container: container, pipeline: pipeline, message: message) },
            counts: counts, stageSeconds: [:], wallSeconds: MonotonicClock.now() - started)
        interrupted.interrupted = true
        return interrupted
    }
}

/// Counts, for each stage, who may still put items into its queue (the feeder
/// and the workers of every earlier stage), and closes the queue when none is left.
final class Producers: Sendable {
    private let remaining: Mutex<[StageName: Int]>
    private let stages: [StageName]
    private let workers: @Sendable (StageName) -> Int
    private let close: @Sendable (StageName) -> Void

    init(stages: [StageName], workers: @escaping @Sendable (StageName) -> Int, close: @escaping @Sendable (StageName) -> Void) {
        self.stages = stages
        self.workers = workers
        self.close = close
        var remaining: [StageName: Int] = [:]
        for (position, stage) in stages.enumerated() {
            remaining[stage] = 1 + stages.prefix(position).map(workers).reduce(0, +)
        }
        self.remaining = Mutex(remaining)
    }

    /// One producer is done: the feeder (`stage` nil) or one worker of `stage`.
    func done(after stage: StageName?) {
        let closing = remaining.withLock { remaining in
            stages.filter { later in stage.map { later > $0 } ?? true }.filter { later in
                remaining[later, default: 0] -= 1
                return remaining[later] == 0
            }
        }
        for stage in closing { close(stage) }
    }
}

/// A count shared by threads.
final class Counter: Sendable {
    private let count = Atomic(0)

    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
