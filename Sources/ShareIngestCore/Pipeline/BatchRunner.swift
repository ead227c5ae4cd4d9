import Foundation
import MediaFormats
import ShareManifest
import Synchronization
import SystemCalls

/// Runs one planned batch in this process: the local transport of the item
/// lifecycle.
///
/// Each item stage has its own worker threads (the pipeline's `workers`), each
/// fed by a bounded queue that hands out waiting items in the lifecycle's order
/// (``ItemLifecycle/takenBefore(_:_:)``, as the distributed claim does); a
/// feeder thread reads the batch's unfinished items from the journal a page at
/// a time and puts each into the queue of its next stage. A worker runs the
/// stage through ``StageExecution`` (the execution core both modes share:
/// outcome, lifecycle, record, events) and hands the item to the queue of the
/// stage it is to run next; nothing holds finished items. The fan-in
/// (``BatchCompletion``) runs once, after the last item, and only then. What
/// happens to an item, and to the fan-in, is the lifecycle's to decide; this
/// runner only moves items and waits when it is told to.
final class BatchRunner: Sendable {
    let context: BatchContext
    let store: any JournalStore
    let execution: StageExecution
    let events: IngestEventSink?
    let cancellation: CancellationFlag
    /// The clock for recorded timestamps (`finishedAt`); tests inject a fixed one.
    let now: @Sendable () -> Date
    /// Why this run stopped itself (the journal failed), when it did; a stop
    /// asked from outside leaves it nil.
    private let stoppedBy = Mutex<BatchStop?>(nil)
    /// Items this run left waiting for space.
    private let waitingForSpace = Counter()

    /// How many items may wait in front of each stage: enough for the costliest
    /// of a drop to be picked first, few enough to keep memory flat.
    static let queueCapacity = 32
    /// Items read from the store at a time.
    static let pageSize = 500

    init(
        _ batch: BatchRecord, container: ContainerDirectory, journal: any JournalStore, decoder: any MediaDecoder,
        events: IngestEventSink?,
        cancellation: CancellationFlag, now: @escaping @Sendable () -> Date, catalog: StageCatalog
    ) throws(ShareIngestError) {
        // The run's own flag: set by a stop from outside, or by the run itself.
        let cancellation = CancellationFlag(within: cancellation)
        self.context = try BatchContext(
            batch, container: container, decoder: decoder, catalog: catalog, cancellation: cancellation)
        self.store = journal
        self.events = events
        self.cancellation = cancellation
        self.execution = StageExecution(events: events, cancellation: cancellation)
        self.now = now
    }

    var lifecycle: ItemLifecycle { context.lifecycle }

    /// Records the steps of this batch's items into the journal.
    var steps: JournalSteps { JournalSteps(store, batch: context.batchID) }

    /// Processes the batch's unfinished items, then finishes the batch. `dispose`
    /// runs after the manifest is written and before the batch is marked done (a
    /// watched drop is moved away there).
    func run(_ batch: inout BatchRecord, dispose: ((BatchRecord) -> Void)? = nil) throws(ShareIngestError)
        -> BatchReport
    {
        let started = MonotonicClock.now()
        if context.pipeline.decodes { context.decoder.prepare() }
        events?(.batchStarted(batchID: batch.id, key: batch.key, itemCount: batch.itemCount))
        var unfinished = 0
        do {
            if batch.state == .running {
                try runLostItemsAlone()
                unfinished = try process()
            }
        } catch {
            throw .journal(error, container: context.container)
        }
        guard unfinished == 0 else {
            // Interrupted: nothing is rolled back; the journal knows where each item is.
            return try interruptedReport(batch, started: started)
        }
        // The stage threads are gone; what they freed stays in their malloc
        // arenas unless given back, and the fan-in would add its pages on top.
        FreedMemory.release()
        return try finish(&batch, started: started, dispose: dispose)
    }

    // MARK: - Threads

    /// A stage's queue: bounded, handing out the item the lifecycle takes first.
    static func stageQueue(capacity: Int) -> BlockingQueue<InFlightItem> {
        BlockingQueue(capacity: capacity) { a, b in
            ItemLifecycle.takenBefore(
                (ItemLifecycle.priority(of: a.state), Int64(a.index)),
                (ItemLifecycle.priority(of: b.state), Int64(b.index)))
        }
    }

    /// Runs every unfinished item to its end (or, once stopped, to where it is
    /// parked); returns how many are not finished.
    private func process() throws -> Int {
        let stages = lifecycle.stages
        let queues = Dictionary(
            uniqueKeysWithValues: stages.map { stage in
                (stage, Self.stageQueue(capacity: max(2 * context.pipeline.workers(for: stage), Self.queueCapacity)))
            })
        // Items only move to later stages: a stage's queue is closed once the
        // feeder and every worker of the stages before it are done.
        let producers = Producers(
            stages: stages, workers: { self.context.pipeline.workers(for: $0) }, close: { queues[$0]?.close() })
        let unfinished = Counter()
        let feedError = Mutex<(any Error)?>(nil)
        var joins: [@Sendable () -> Void] = []
        joins.append(
            WorkerThreads.start(name: "feed", count: 1) { [self] _ in
                do {
                    try feed { item, next in
                        if case .run(let stage) = next {
                            queues[stage]?.push(item)
                        } else {
                            settle(next, unfinished: unfinished)
                        }
                    }
                } catch {
                    feedError.withLock { $0 = error }
                    cancellation.cancel()
                }
                producers.done(after: nil)
            })
        for stage in stages {
            joins.append(
                WorkerThreads.start(name: stage.rawValue, count: context.pipeline.workers(for: stage)) { [self] _ in
                    while var item = queues[stage]?.pop() {
                        // A retry recorded with its backoff (by a run before this one) waits for it here.
                        pause(item.carried.wait)
                        item.carried.wait = 0
                        var step = execution.run(stage, on: &item, in: context, steps: steps)
                        // A lost attempt is taken again here, after its backoff.
                        while case .retry(let again, let after, _) = step.next, again == stage, step.recorded == .saved
                        {
                            pause(after)
                            step = execution.run(stage, on: &item, in: context, steps: steps)
                        }
                        if step.stopsRun { stop(after: step) }
                        if case .run(let next) = step.next, step.goesOn {
                            queues[next]?.push(item)
                        } else {
                            settle(step.next, unfinished: unfinished)
                            if item.state.waitingForSpace != nil, !step.next.isFinished { waitingForSpace.increment() }
                        }
                    }
                    producers.done(after: stage)
                })
        }
        for join in joins { join() }
        if let error = feedError.withLock({ $0 }) { throw error }
        return unfinished.value
    }

    /// The run stops itself after `step`, whose record the store failed:
    /// items in flight finish their stage, and the report says why.
    private func stop(after step: StageExecution.Step) {
        let journal = context.container.stateDirectory
        let cause: BatchStop
        switch (step.storeFailure, step.recorded) {
        case (.full?, _): cause = .diskFull(path: journal, freeBytes: (try? FileSystem.space(of: journal))?.available)
        case (_, .failed(let error)): cause = .storeFailed(error)
        default: cause = .storeFailed("a step could not be recorded")
        }
        stoppedBy.withLock { $0 = $0 ?? cause }
        cancellation.cancel()
    }

    /// Why a run that left items unfinished stopped: the journal's failure;
    /// otherwise a stop asked from outside; otherwise, with items waiting for
    /// space (``ItemLifecycle/waitForSpace(_:_:)``), a full disk.
    private func stopCause() -> BatchStop {
        if let cause = stoppedBy.withLock({ $0 }) { return cause }
        if waitingForSpace.value == 0 || cancellation.isCancelled { return .asked }
        let root = context.container.root
        return .diskFull(path: root, freeBytes: (try? FileSystem.space(of: root))?.available)
    }

    private func settle(_ next: NextStep, unfinished: Counter) {
        if !next.isFinished { unfinished.increment() }
    }

    /// Sleeps up to `seconds`, waking early when cancelled.
    private func pause(_ seconds: Double) {
        let end = MonotonicClock.now() + seconds
        while MonotonicClock.now() < end && !cancellation.isCancelled {
            MonotonicClock.sleep(min(0.05, max(0, end - MonotonicClock.now())))
        }
    }

    /// Reads the unfinished items a page at a time and hands each, with where
    /// it starts, to `body`. An item recorded as unfinished that has in fact
    /// finished (an older journal's, or one whose last record was lost) is
    /// recorded finished here. Items lost in flight and those that must run
    /// alone (``runLostItemsAlone()``) are done by now.
    private func feed(_ body: (InFlightItem, NextStep) -> Void) throws {
        try forEachUnfinished { recorded in
            var state = Self.resuming(recorded)
            let next = lifecycle.start(state, stopping: cancellation.isCancelled)
            if next.isFinished { _ = execution.record(&state, next: next, in: context, steps: steps) }
            var item = InFlightItem(state)
            item.carried.wait = recorded.wait
            body(item, next)
        }
    }

    /// `recorded`'s item as it goes on: from its first stage again when its
    /// recorded copy is gone (``ItemState/lostItsCopy``).
    private static func resuming(_ recorded: RecordedItem) -> ItemState {
        recorded.item.lostItsCopy ? recorded.item.restarted() : recorded.item
    }

    private func forEachUnfinished(_ body: (RecordedItem) throws -> Void) throws {
        var last = -1
        while true {
            let page = try store.unfinishedItems(of: context.batchID, after: last, limit: Self.pageSize)
            for recorded in page { try body(recorded) }
            guard page.count == Self.pageSize, let end = page.last?.item.index else { return }
            last = end
        }
    }

    // MARK: - Lost items, and items that must run alone

    /// Before the workers start: the items the journal says were in flight
    /// when the process died last time (``ItemLifecycle/wasInFlight(_:)``) go
    /// to the lifecycle, which decides what that death costs each
    /// (``ItemLifecycle/lose(held:inFlightBeside:reason:stopping:)``: blamed only
    /// on an item that was alone). Then each item that must run alone
    /// (``ItemLifecycle/mustRunAlone(_:)``) runs to its end, one at a time,
    /// after its backoff, while this process holds nothing else
    /// (``ItemLifecycle/takesAlone(holding:)``), as an idle worker takes one:
    /// so an item that takes the process down alone is blamed, and fails as
    /// poison once out of attempts; `--resume` and `share watch` never
    /// crash-loop on it.
    func runLostItemsAlone() throws {
        for recorded in try recoverLost() where !cancellation.isCancelled { runAlone(recorded) }
    }

    /// The lifecycle's decisions about the items lost in flight, recorded; the
    /// items that must run alone now, in order, each with where and when it runs.
    func recoverLost() throws -> [RecordedItem] {
        var lost: [ItemState] = []
        var alone: [RecordedItem] = []
        try forEachUnfinished { recorded in
            if ItemLifecycle.wasInFlight(recorded.item) {
                lost.append(recorded.item)
            } else if ItemLifecycle.mustRunAlone(recorded.item) {
                alone.append(recorded)
            }
        }
        for (item, next) in lifecycle.lose(
            held: lost, reason: "the process died while decoding it",
            stopping: BatchLifecycle.stoppingWhenLost(.localRun, cancelled: cancellation.isCancelled))
        {
            var state = item
            let step = execution.record(&state, next: next, in: context, steps: steps)
            if step.stopsRun { stop(after: step) }
            if step.recorded == .saved, !next.isFinished, ItemLifecycle.mustRunAlone(state) {
                alone.append(
                    RecordedItem(
                        item: state, stage: next.stage,
                        wait: ItemLifecycle.recorded(next, at: .manifest, holderKeeps: false).delay))
            }
        }
        return alone.sorted { $0.item.index < $1.item.index }
    }

    /// Runs `recorded` to its end (or until a stop), after its backoff.
    private func runAlone(_ recorded: RecordedItem) {
        var item = InFlightItem(Self.resuming(recorded))
        pause(recorded.wait)
        var next = lifecycle.start(item.state, stopping: cancellation.isCancelled)
        while let stage = next.stage, !cancellation.isCancelled {
            if case .park = next { break }
            let step = execution.run(stage, on: &item, in: context, steps: steps)
            if step.stopsRun { stop(after: step) }
            guard step.goesOn else { break }
            if case .retry(_, let after, _) = step.next { pause(after) }
            next = step.next
        }
    }

    // MARK: - Fan-in

    /// The fan-in, once every item has finished: run as the lifecycle says.
    /// One found under way (`manifesting`) was lost with the process that ran
    /// it; one that fails (not for the batch's items: they are final) loses an
    /// attempt; either runs again after its backoff while the lifecycle gives
    /// it attempts (``ItemLifecycle/afterLosingFanIn(lostBefore:reason:)``),
    /// as a manifest job does, and after the last the batch fails (`--resume`
    /// reopens it).
    private func finish(_ batch: inout BatchRecord, started: Double, dispose: ((BatchRecord) -> Void)?)
        throws(ShareIngestError) -> BatchReport
    {
        var outcome: BatchCompletion.Outcome?
        do {
            if batch.state == .manifesting { try loseFanIn(&batch, reason: "the process died while the fan-in ran") }
            while outcome == nil, batch.state == .running {
                // A retry's backoff is waited out; a stop asked meanwhile leaves the
                // batch resumable, its fan-in still to run.
                if let wait = try store.recordedFanIn(of: batch.id)?.wait, wait > 0 {
                    pause(wait)
                    if cancellation.isCancelled { return try interruptedReport(batch, started: started) }
                }
                batch.handle(.startFanIn)
                try? store.update(batch, durable: true)
                do {
                    outcome = try fanIn(batch, started: started, dispose: dispose)
                    guard outcome != nil || BatchLifecycle.decision(.batchNoLongerRunning, for: .localRun) != .refuse
                    else {
                        throw ShareIngestError.batchNotResumable(batch.id, .done)
                    }
                } catch let error as ShareIngestError {
                    throw error
                } catch let wants as BatchCompletion.WantsSpace {
                    // Nothing lost, nothing counted: the batch waits, running, for
                    // room (recorded if the journal still can be written).
                    let lost = (try? store.recordedFanIn(of: batch.id))?.lost ?? 0
                    let (next, kept) = lifecycle.afterFanInWantsSpace(lostBefore: lost, reason: "\(wants)")
                    try? store.loseFanIn(batch.id, next: next, lost: kept)
                    batch.handle(.fanInWaits)
                    let folder = wants.error.path.parentPath
                    stoppedBy.withLock {
                        $0 = .diskFull(path: folder, freeBytes: (try? FileSystem.space(of: folder))?.available)
                    }
                    return try interruptedReport(batch, started: started)
                } catch {
                    try loseFanIn(&batch, reason: "\(error)")
                }
            }
        } catch let error as ShareIngestError {
            throw error
        } catch {
            throw .journal(error, container: context.container)
        }
        guard let outcome else {
            let failure = (try? store.recordedFanIn(of: batch.id))?.failure ?? "the fan-in gave up"
            throw .containerUnusable(
                path: context.container.root,
                reason: "\(failure); share ingest --resume \(batch.id.uuidString) retries it")
        }
        batch = outcome.record
        TestThrottle.pause()
        events?(.batchFinished(outcome.report))
        return outcome.report
    }

    /// The fan-in's one run; nil when the batch was not this run's to finish.
    private func fanIn(_ batch: BatchRecord, started: Double, dispose: ((BatchRecord) -> Void)?) throws
        -> BatchCompletion.Outcome?
    {
        do {
            return try BatchCompletion.finish(
                batch, context: context, store: store, wallSeconds: MonotonicClock.now() - started, now: now(),
                events: events,
                beforeRecording: { dispose?($0) },
                recordChanged: { [store] changed in
                    try store.record(changed, batch: batch.id)
                    return true
                },
                recordEnd: { [store] record, changed in
                    try store.finish(record, changed: changed)
                    return true
                })
        } catch let failure as BatchCompletion.NotRecorded
            where BatchLifecycle.decision(.failedEndRecord, for: .localRun) == .outcomeStands
        {
            // The journal could not record the end: whatever was written stands (a
            // manifest is complete), and the next start finds the fan-in lost and
            // runs it again, which records the batch done.
            return failure.outcome
        }
    }

    /// The fan-in lost an attempt: recorded as the lifecycle decides, and
    /// `batch` as it now stands (running, its fan-in to run again; or failed).
    func loseFanIn(_ batch: inout BatchRecord, reason: String) throws {
        let (next, lost) = lifecycle.afterLosingFanIn(
            lostBefore: try store.recordedFanIn(of: batch.id)?.lost ?? 0, reason: reason)
        try store.loseFanIn(batch.id, next: next, lost: lost)
        batch.handle(.loseFanIn(next: next))
    }

    /// The report of a batch that stopped before all its items finished: its
    /// counts from the journal, as the lifecycle counts them, its items read
    /// from it (``ItemReports/rebuilt(batch:store:pipeline:message:)``).
    private func interruptedReport(_ batch: BatchRecord, started: Double) throws(ShareIngestError) -> BatchReport {
        let counts: BatchReport.Counts
        do {
            counts = ItemLifecycle.reportCounts(try store.counts(of: batch.id))
        } catch {
            throw .journal(error, container: context.container)
        }
        let (pipeline, message, opener) = (context.pipeline, batch.message, store.opener)
        // A batch small enough to hold is read now, from the store at hand; a
        // larger one from its store opened again when its items are read.
        var interrupted = BatchReport(
            batchID: batch.id, key: batch.key, redirectURL: nil, manifestPath: nil, schema: pipeline.manifest.schema,
            pipeline: pipeline.name,
            items: counts.items <= BatchReport.itemsHeldInMemory
                ? ItemReports(ItemReports.rebuilt(batch: batch.id, store: store, pipeline: pipeline, message: message))
                : ItemReports(count: counts.items) {
                    ItemReports.rebuilt(batch: batch.id, opening: opener, pipeline: pipeline, message: message)
                },
            counts: counts, stageSeconds: [:], wallSeconds: MonotonicClock.now() - started)
        interrupted.interrupted = true
        interrupted.stop = stopCause()
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

    init(
        stages: [StageName], workers: @escaping @Sendable (StageName) -> Int,
        close: @escaping @Sendable (StageName) -> Void
    ) {
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
            let after = stage.flatMap { stages.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
            return stages[after...].filter { later in
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
