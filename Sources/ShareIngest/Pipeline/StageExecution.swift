import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// Runs one stage of one item and records what follows: the one execution
/// core of every mode. The local runner (``BatchRunner``: threads and bounded
/// queues) and the distributed worker (``StageWorker``: claims and leases)
/// differ only in how items reach it and where the next stage runs. What a
/// stage's outcome means, and what a failed record costs, is the batch's
/// ``ItemLifecycle``'s to decide; here are the decoder-memory budget, the
/// poison-item marker, the record with its retries, cancellation and the events.
final class StageExecution: Sendable {
    /// Bytes of decoder memory that may be in use at once (``DecodeBudget``):
    /// a 4K video poster and a 12 MP HEIC fit together, two 100 MP images do not.
    static let decodeMemoryBudget = 192 << 20

    let budget: DecodeBudget
    let events: IngestEventSink?
    let cancellation: CancellationFlag
    let retries: RecordRetries

    /// How long a failing record is tried again, and which failures are the
    /// store's (unreachable, full: worth waiting for) rather than the record's.
    struct RecordRetries: Sendable {
        /// Seconds a record that keeps failing is tried again: briefly for the
        /// journal (a momentarily full disk), without a limit for a worker (a
        /// database that restarts; its connection ends the wait on a stop).
        let patience: Double
        /// True for an error of the store, not of this record (a lost
        /// connection, a full disk; not a value the store refuses).
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
        /// carries it (``ItemLifecycle/recordsBeforeGoingOn(_:holderKeeps:roundTrips:cheapToRedo:)``).
        case deferred
        /// The store refused it: the distributed job is no longer the caller's.
        case refused
        /// Its holder makes it later with others (``StepRecord/queued``).
        case queued
        /// It could not be made (what the store said): the lifecycle says the
        /// run stops (the local batch stops, resumable; a worker drops the job,
        /// whose lease lapses).
        case failed(String)
    }

    /// What running a stage left: the item's next step, and its record.
    struct Step {
        let next: NextStep
        let recorded: Recorded
    }

    /// Runs `stage` on `item` in `batch` (unless the lifecycle admits it no
    /// further: a stop parks it before the stage), decides the next step
    /// (``ItemLifecycle``) and records both through `steps`. `keeps` tells
    /// whether the holder goes on with a stage itself (a worker that serves it).
    func run(
        _ stage: StageName, on item: inout InFlightItem, in batch: BatchContext, steps: any StepRecorder, keeps: (StageName) -> Bool = { _ in true }
    ) -> Step {
        let implementation = batch.stages[stage]
        if let instead = batch.lifecycle.admit(&item.state, to: stage, available: implementation != nil, stopping: cancellation.isCancelled) {
            return record(&item.state, next: instead, in: batch, steps: steps)
        }
        guard let implementation else { return Step(next: .finished, recorded: .failed("no stage \(stage)")) }
        let decodes = implementation.decodes(item)
        markDecoding(decodes, stage: stage, item: &item, batch: batch, steps: steps)
        let bytes = decodes ? item.carried.decodeCost?.bytes ?? Self.cost(of: item.state).bytes : 0
        if decodes { budget.acquire(bytes) }
        let before = item.state
        let outcome = Self.perform(implementation, on: &item, in: batch)
        if decodes { budget.release(bytes) }
        let next = batch.lifecycle.advance(&item.state, after: outcome, stopping: cancellation.isCancelled)
        if case .run = next {} else { item.carried.thumbnail = nil }
        events?(.stageFinished(stage, index: item.index, bytes: stage == .copy ? item.size ?? 0 : 0))
        var holderKeeps = false
        if case .run(let following) = next, keeps(following) { holderKeeps = true }
        // Cheap to redo after a crash: a stage that decoded nothing (a sniff, a
        // copy, which a resumed batch finds complete at its final name), or one
        // that changed nothing of the item.
        let cheapToRedo = outcome == .completed(stage) && (!decodes || item.state.isUnchanged(since: before, by: stage))
        guard ItemLifecycle.recordsBeforeGoingOn(next, holderKeeps: holderKeeps, roundTrips: steps.roundTrips, cheapToRedo: cheapToRedo) else {
            return Step(next: next, recorded: .deferred)
        }
        return record(&item.state, next: next, in: batch, steps: steps, keeps: holderKeeps)
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
    /// that takes the job up, hands the lifecycle the items that were in
    /// flight). Nothing is recorded when the decoder contains crashes (sandboxed
    /// helpers).
    private func markDecoding(_ decodes: Bool, stage: StageName, item: inout InFlightItem, batch: BatchContext, steps: any StepRecorder) {
        guard decodes, !batch.decoder.containsCrashes else { return }
        item.decodingInFlight = true
        _ = try? steps.record(item.state, next: .run(stage), keeps: true)
    }

    // MARK: - Recording

    /// Records `item` and its next step through `steps`, trying a failing
    /// record again for ``RecordRetries/patience`` seconds. A record that still
    /// fails goes to the lifecycle (``ItemLifecycle/afterFailedRecord(_:at:error:transient:)``):
    /// a store that is unreachable or full stops this run (the item waits where
    /// it was); a record the store refuses costs the item an attempt, and that
    /// step is recorded instead. Every finished item that is recorded is told to
    /// the events (`itemFinished`), whichever path finished it.
    func record(_ item: inout ItemState, next: NextStep, in batch: BatchContext, steps: any StepRecorder, keeps: Bool = false) -> Step {
        var next = next
        var refusedOnce = false
        while true {
            switch attempt(item, next: next, steps: steps, keeps: keeps) {
            case .saved:
                if next.isFinished { finished(item, in: batch) }
                return Step(next: next, recorded: .saved)
            case .refused:
                return Step(next: next, recorded: .refused)
            case .queued:
                return Step(next: next, recorded: .queued)
            case .failed(let error, let transient):
                let stage = next.stage ?? batch.lifecycle.stage(after: item.completed) ?? .manifest
                let decision = batch.lifecycle.afterFailedRecord(&item, at: stage, error: error, transient: transient || refusedOnce)
                if decision.stopsRun { return Step(next: decision.next, recorded: .failed(error)) }
                // The attempt the refused record cost is recorded once; if the
                // store refuses that too, the run stops.
                refusedOnce = true
                next = decision.next
            }
        }
    }

    private enum Attempt {
        case saved, refused, queued
        case failed(String, transient: Bool)
    }

    private func attempt(_ item: ItemState, next: NextStep, steps: any StepRecorder, keeps: Bool) -> Attempt {
        let deadline = MonotonicClock.now() + retries.patience
        var pause = 0.05
        while true {
            do {
                switch try steps.record(item, next: next, keeps: keeps) {
                case .saved: return .saved
                case .refused: return .refused
                case .queued: return .queued
                }
            } catch {
                // A store that is away is waited for, unless a stop is due: then
                // the item simply waits where it was, as after any stop.
                let transient = retries.isTransient(error)
                guard transient, MonotonicClock.now() < deadline, !cancellation.isCancelled else {
                    return .failed("\(error)", transient: transient || cancellation.isCancelled)
                }
                MonotonicClock.sleep(pause)
                pause = min(1, pause * 2)
            }
        }
    }
}

/// Where the holder of an item records its steps: the journal (the batch's
/// lock is its lease) or a distributed job (its lease follows the row's stage).
protocol StepRecorder: AnyObject {
    /// Records `item` and its next step; `keeps`: the holder goes on with that
    /// stage itself.
    func record(_ item: ItemState, next: NextStep, keeps: Bool) throws -> StepRecord
    /// True when each record is a round trip to a server.
    var roundTrips: Bool { get }
}

/// What a recorder did with a step.
enum StepRecord {
    /// It is in the store.
    case saved
    /// It was not the holder's to record any more (a lease lost).
    case refused
    /// The holder makes it later, with other items' steps, in one statement,
    /// and tells the events once it is saved (a worker's items leaving it).
    case queued
}
