import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// Runs one stage of one item and records what follows: the one execution
/// core of every mode. The local runner (``BatchRunner``: threads and bounded
/// queues) and the distributed worker (``StageWorker``: claims and leases)
/// differ only in how items reach it and where the next stage runs; what a
/// stage's outcome means (``ItemLifecycle``), the decoder-memory budget, the
/// poison-item marker, the retries of a failing record, cancellation and the
/// events are all here.
final class StageExecution: Sendable {
    /// Bytes of decoder memory that may be in use at once (``DecodeBudget``):
    /// a 4K video poster and a 12 MP HEIC fit together, two 100 MP images do not.
    static let decodeMemoryBudget = 192 << 20

    let budget: DecodeBudget
    let events: IngestEventSink?
    let cancellation: CancellationFlag
    let retries: RecordRetries

    /// Which failed records are tried again, and for how long.
    struct RecordRetries: Sendable {
        /// Seconds a record that keeps failing is tried again: briefly for the
        /// journal (a momentarily full disk), without a limit for a worker (a
        /// database that restarts; its connection ends the wait on a stop).
        let patience: Double
        /// True for an error worth trying again (a lost connection, not a bad statement).
        let isTransient: @Sendable (any Error) -> Bool
    }

    init(events: IngestEventSink?, cancellation: CancellationFlag, retries: RecordRetries, decodeMemoryBudget: Int = StageExecution.decodeMemoryBudget) {
        self.budget = DecodeBudget(limit: decodeMemoryBudget)
        self.events = events
        self.cancellation = cancellation
        self.retries = retries
    }

    /// What became of a record.
    enum Recorded: Equatable {
        /// It is in the store.
        case saved
        /// Not made: the step's holder goes on with the item, and a later record
        /// carries it (``BatchStore/defersKeptSteps``).
        case deferred
        /// The store refused it: the distributed job is no longer the caller's.
        case refused
        /// It could not be made; what the store said.
        case failed(String)
    }

    /// What running a stage left: the item's next step, and its record.
    struct Step {
        let next: NextStep
        let recorded: Recorded
    }

    /// Runs `stage` on `item` in `batch` (unless a stop was asked: then the item
    /// is parked before it), decides the next step (``ItemLifecycle``) and
    /// records both in `store`. `lease` is the distributed job a record must
    /// match (nil locally): it follows the row's stage as records are made;
    /// `serves` tells whether the caller goes on with a stage itself (a worker
    /// that serves it keeps the job).
    func run(
        _ stage: StageName, on item: inout InFlightItem, in batch: BatchContext, store: any BatchStore, lease: inout Lease?,
        serves: (StageName) -> Bool = { _ in true }
    ) -> Step {
        guard let implementation = batch.stages[stage] else {
            let next = batch.lifecycle.advance(
                &item.state, after: .failed(ItemFailure(stage, .io, "\(item.label): stage \(stage.rawValue) is not in the batch's pipeline")),
                stopping: false)
            return Step(next: next, recorded: record(item.state, next: next, batch: batch, store: store, lease: &lease))
        }
        if cancellation.isCancelled {
            // Parked before it started: it waits at this stage (a worker's job
            // goes back to the queue, for another worker).
            return Step(next: .park(stage), recorded: record(item.state, next: .park(stage), batch: batch, store: store, lease: &lease))
        }
        let decodes = implementation.decodes(item)
        markDecoding(decodes, stage: stage, item: &item, batch: batch, store: store, lease: &lease)
        let bytes = decodes ? item.carried.decodeCost?.bytes ?? Self.cost(of: item.state).bytes : 0
        if decodes { budget.acquire(bytes) }
        let outcome = Self.perform(implementation, on: &item, in: batch)
        if decodes { budget.release(bytes) }
        let next = batch.lifecycle.advance(&item.state, after: outcome, stopping: cancellation.isCancelled)
        if case .run = next {} else { item.carried.thumbnail = nil }
        events?(.stageFinished(stage, index: item.index, bytes: stage == .copy ? item.size ?? 0 : 0))
        var keeps = false
        if case .run(let following) = next, serves(following) { keeps = true }
        // A step its holder goes on from itself need not reach a store whose
        // records are round trips: it is recorded with the next one (stages are
        // idempotent, so a holder that dies only costs their redoing).
        let recorded =
            lease != nil && keeps && store.defersKeptSteps
            ? .deferred : record(item.state, next: next, batch: batch, store: store, lease: &lease, keeps: keeps)
        if next == .finished, recorded == .saved { finished(item.state, in: batch) }
        return Step(next: next, recorded: recorded)
    }

    /// ``run(_:on:in:store:lease:serves:)`` without a lease: the local runner's
    /// (the batch's lock is its lease).
    func run(_ stage: StageName, on item: inout InFlightItem, in batch: BatchContext, store: any BatchStore) -> Step {
        var none: Lease?
        return run(stage, on: &item, in: batch, store: store, lease: &none)
    }

    /// ``record(_:next:batch:store:lease:keeps:)`` without a lease (the local runner's).
    func record(_ item: ItemState, next: NextStep, batch: BatchContext, store: any BatchStore) -> Recorded {
        var none: Lease?
        return record(item, next: next, batch: batch, store: store, lease: &none)
    }

    /// Tells the events that `item` left the pipeline.
    func finished(_ item: ItemState, in batch: BatchContext) {
        events?(.itemFinished(ManifestStage(settings: batch.pipeline.manifest).report(for: item, finished: true, message: batch.message)))
    }

    /// The stage's own work: its outcome, its time, and a failed item's files removed
    /// (before its failure is recorded: a crash in between only redoes the item).
    static func perform(_ stage: any PipelineStage, on item: inout InFlightItem, in batch: BatchContext) -> StageOutcome {
        CrashPoint.hit("\(stage.name.rawValue):\(item.source.fileName ?? "")")
        let start = MonotonicClock.now()
        var outcome = StageOutcome.completed(stage.name)
        do throws(ItemFailure) {
            try stage.process(&item, in: batch)
        } catch {
            outcome = .failed(error)
        }
        item.stageSeconds[stage.name] = MonotonicClock.now() - start
        item.decodingInFlight = false
        TestThrottle.pause()
        if case .failed = outcome {
            item.carried.thumbnail = nil
            item.state.removeFiles(in: batch.container)
        }
        return outcome
    }

    /// The item's decode cost: estimated at its sniff, or (resumed, or taken up
    /// by another worker) from what is recorded.
    static func cost(of item: ItemState) -> DecodeCost {
        guard let format = item.sniffed?.format else { return .zero }
        return DecodeCost.estimate(format: format, size: item.size ?? 0, pixels: nil)
    }

    // MARK: - Poison items

    /// Records that a stage is about to decode `item` in this process, so that
    /// a process that dies meanwhile is noticed (a resumed batch, or the worker
    /// that takes the job up, blames the item). Nothing is recorded when the
    /// decoder contains crashes (sandboxed helpers).
    private func markDecoding(
        _ decodes: Bool, stage: StageName, item: inout InFlightItem, batch: BatchContext, store: any BatchStore, lease: inout Lease?
    ) {
        guard decodes, !batch.decoder.containsCrashes else { return }
        item.decodingInFlight = true
        _ = record(item.state, next: .run(stage), batch: batch, store: store, lease: &lease, keeps: true)
    }

    // MARK: - Recording

    /// Records `item` and its next step, trying a transient failure again for
    /// ``RecordRetries/patience`` seconds. One that still fails asks this run
    /// to stop: the store is the batch's memory, and nothing more should be
    /// taken without it (the batch is resumable once it can be written again).
    /// `lease` (a distributed job, nil locally) moves to the item's next stage
    /// once recorded; `keeps`: its holder goes on with that stage itself.
    func record(
        _ item: ItemState, next: NextStep, batch: BatchContext, store: any BatchStore, lease: inout Lease?, keeps: Bool = false
    ) -> Recorded {
        let deadline = MonotonicClock.now() + retries.patience
        var pause = 0.05
        let held = lease.map { Lease(job: $0.job, worker: $0.worker, stage: $0.stage, keeps: keeps) }
        while true {
            do {
                guard try store.record(item, next: next, batch: batch.batchID, lease: held) else { return .refused }
                if let current = lease, let stage = next.stage { lease = Lease(job: current.job, worker: current.worker, stage: stage) }
                return .saved
            } catch {
                guard retries.isTransient(error), MonotonicClock.now() < deadline else {
                    if retries.isTransient(error) { cancellation.cancel() }
                    return .failed("\(error)")
                }
                MonotonicClock.sleep(pause)
                pause = min(1, pause * 2)
            }
        }
    }
}
