import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// Runs one stage of one item and records what follows: the one execution
/// core of every mode. The local runner (``BatchRunner``: threads and bounded
/// queues) and the distributed worker (``StageWorker``: claims and leases)
/// differ only in how items reach it and where the next stage runs. Every
/// decision is the batch's ``ItemLifecycle``'s: what a stage's outcome means,
/// whether a decode is marked, how long a failing record is tried again and
/// what it costs when it still fails, and whether the holder stops; here are
/// the decoder-memory budget, the marker and the records themselves,
/// cancellation and the events.
final class StageExecution: Sendable {
    /// Bytes of decoder memory that may be in use at once (``DecodeBudget``):
    /// a 4K video poster and a 12 MP HEIC fit together, two 100 MP images do not.
    static let decodeMemoryBudget = 192 << 20

    let budget: DecodeBudget
    let events: IngestEventSink?
    /// Told the status of every item that leaves the pipeline through this
    /// core, whether or not anyone listens to the events (a worker counts its
    /// failures so, without making reports nobody reads).
    let leaving: (@Sendable (ItemStatus) -> Void)?
    let cancellation: CancellationFlag

    init(
        events: IngestEventSink?, cancellation: CancellationFlag, leaving: (@Sendable (ItemStatus) -> Void)? = nil,
        decodeMemoryBudget: Int = StageExecution.decodeMemoryBudget
    ) {
        self.budget = DecodeBudget(limit: decodeMemoryBudget)
        self.events = events
        self.leaving = leaving
        self.cancellation = cancellation
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
        /// It could not be made (what the store said).
        case failed(String)
    }

    /// What running a stage left: the item's next step, its record, and
    /// whether its holder stops (the lifecycle's ``ItemLifecycle/FailedRecord/stopsRun``).
    struct Step {
        let next: NextStep
        let recorded: Recorded
        var stopsRun = false
        /// Why its holder stops, when the store failed it: what the store said
        /// it is (a full disk is told as such).
        var storeFailure: StoreFailure?

        /// True when the holder goes on with the item: its step is recorded,
        /// or carried by a later record.
        var goesOn: Bool { recorded == .saved || recorded == .deferred }
    }

    /// Runs `stage` on `item` in `batch` (unless the lifecycle admits it no
    /// further: a stop parks it before the stage), decides the next step
    /// (``ItemLifecycle``) and records both through `steps`. `keeps` tells
    /// whether the holder goes on with a stage itself (a worker that serves it).
    func run(
        _ stage: StageName, on item: inout InFlightItem, in batch: BatchContext, steps: any StepRecorder,
        keeps: (StageName) -> Bool = { _ in true }
    ) -> Step {
        let implementation = batch.stages[stage]
        if let instead = batch.lifecycle.admit(
            &item.state, to: stage, available: implementation != nil, stopping: cancellation.isCancelled)
        {
            return record(&item.state, next: instead, in: batch, steps: steps)
        }
        guard let implementation else {
            return Step(next: .finished, recorded: .failed("no stage \(stage)"), stopsRun: true)
        }
        let decodes = implementation.decodes(item)
        if ItemLifecycle.marksDecoding(decodes, containsCrashes: batch.decoder.containsCrashes) {
            // Recorded before the decode, so that a process that dies meanwhile
            // is noticed: a resumed batch, or the worker that takes the job up,
            // hands the lifecycle the items that were in flight.
            item.decodingInFlight = true
            let marked = record(&item.state, next: .run(stage), in: batch, steps: steps, keeps: true)
            guard marked.recorded == .saved, marked.next == .run(stage) else {
                item.decodingInFlight = false
                return marked
            }
        }
        let bytes = decodes ? ItemLifecycle.cost(of: item.state).bytes : 0
        if decodes { budget.acquire(bytes) }
        let before = item.state
        let outcome = Self.perform(implementation, on: &item, in: batch)
        if decodes { budget.release(bytes) }
        let next = batch.lifecycle.advance(&item.state, after: outcome, stopping: cancellation.isCancelled)
        // Its last stage done, its capture date is known: outside the range asked, it is
        // skipped here (its event says so) and its copies removed before it is recorded.
        if next == .finished, item.state.failure == nil,
            let outside = ManifestStage(settings: batch.pipeline.manifest).outsideDateRange(item.state)
        {
            _ = batch.lifecycle.fail(&item.state, outside)
            item.state.removeFiles(in: batch.container)
        }
        if case .run = next {} else { item.carried.thumbnail = nil }
        events?(.stageFinished(stage, index: item.index, bytes: stage == .copy ? item.size ?? 0 : 0))
        var holderKeeps = false
        if case .run(let following) = next, keeps(following) { holderKeeps = true }
        let cheapToRedo = BatchLifecycle.cheapToRedo(
            outcome, of: stage, decodes: decodes, unchanged: item.state.isUnchanged(since: before, by: stage))
        guard
            ItemLifecycle.recordsBeforeGoingOn(
                next, holderKeeps: holderKeeps, roundTrips: steps.roundTrips, cheapToRedo: cheapToRedo)
        else {
            return Step(next: next, recorded: .deferred)
        }
        return record(
            &item.state, next: next, in: batch, steps: steps, keeps: holderKeeps,
            ran: RanStage(stage: stage, before: before))
    }

    /// Tells the events that `item` left the pipeline.
    func finished(_ item: ItemState, in batch: BatchContext) {
        finished(item, manifest: ManifestStage(settings: batch.pipeline.manifest), message: batch.message)
    }

    /// Tells ``leaving`` that `item` left the pipeline, and the events its
    /// report (made only when someone listens).
    func finished(_ item: ItemState, manifest: ManifestStage, message: String?) {
        leaving?(ManifestStage.status(of: item, finished: true))
        events?(.itemFinished(manifest.report(for: item, finished: true, message: message)))
    }

    /// The stage's own work: its outcome, its time, and a failed item's files removed
    /// (before its failure is recorded: a crash in between only redoes the item).
    static func perform(_ stage: any PipelineStage, on item: inout InFlightItem, in batch: BatchContext) -> StageOutcome
    {
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

    // MARK: - Recording

    /// Records `item` and its next step through `steps`. A failing record is
    /// tried again as long as the lifecycle's patience for what the store said
    /// lasts (``ItemLifecycle/recordPatience(for:)``, ``ItemLifecycle/recordPause(attempt:)``),
    /// then goes to the lifecycle (``ItemLifecycle/afterFailedRecord(_:next:ran:error:failure:refusedBefore:)``),
    /// which says what the item's next step is now and whether its holder
    /// stops. Every finished item that is recorded is told to the events
    /// (`itemFinished`), whichever path finished it.
    func record(
        _ item: inout ItemState, next: NextStep, in batch: BatchContext, steps: any StepRecorder, keeps: Bool = false,
        ran: RanStage? = nil
    ) -> Step {
        var next = next
        var ran = ran
        var keeps = keeps
        var refusedBefore = false
        while true {
            switch attempt(item, next: next, steps: steps, keeps: keeps, ran: ran) {
            case .saved:
                if next.isFinished { finished(item, in: batch) }
                return Step(next: next, recorded: .saved)
            case .refused:
                return Step(next: next, recorded: .refused)
            case .queued:
                return Step(next: next, recorded: .queued)
            case .failed(let error, let failure):
                let decision = batch.lifecycle.afterFailedRecord(
                    &item, next: next, ran: ran, error: error, failure: failure, refusedBefore: refusedBefore)
                if decision.stopsRun {
                    return Step(next: decision.next, recorded: .failed(error), stopsRun: true, storeFailure: failure)
                }
                refusedBefore = true
                next = decision.next
                // The step recorded instead runs that stage again: nothing ran since.
                ran = nil
                keeps = false
            }
        }
    }

    private enum Attempt {
        case saved, refused, queued
        case failed(String, StoreFailure)
    }

    private func attempt(_ item: ItemState, next: NextStep, steps: any StepRecorder, keeps: Bool, ran: RanStage?)
        -> Attempt
    {
        let started = MonotonicClock.now()
        var tries = 0
        while true {
            do {
                switch try steps.record(item, next: next, keeps: keeps, ran: ran) {
                case .saved: return .saved
                case .refused: return .refused
                case .queued: return .queued
                }
            } catch {
                // Tried again while the lifecycle's patience lasts, unless a stop
                // is due: then the item simply waits where it was, as after any stop.
                let failure = StoreFailure(error)
                tries += 1
                guard MonotonicClock.now() - started < ItemLifecycle.recordPatience(for: failure),
                    !cancellation.isCancelled
                else {
                    return .failed("\(error)", failure)
                }
                MonotonicClock.sleep(ItemLifecycle.recordPause(attempt: tries))
            }
        }
    }
}

/// Where the holder of an item records its steps: the journal (the batch's
/// lock is its lease) or a distributed job (its lease follows the row's stage).
protocol StepRecorder: AnyObject {
    /// Records `item` and its next step; `keeps`: the holder goes on with that
    /// stage itself; `ran`: the stage the step comes from (a record made later
    /// keeps it, in case it is refused then).
    func record(_ item: ItemState, next: NextStep, keeps: Bool, ran: RanStage?) throws -> StepRecord
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
