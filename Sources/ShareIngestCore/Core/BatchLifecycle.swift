import Foundation
import SystemCalls

/// A batch's life: the one place its state changes, for the local runner,
/// the watcher, `share gc` and the distributed queue alike. In the style of
/// swift-nio's state machines: the state is private, and it changes only
/// through an ``Event``, which returns the ``Action`` its holder takes (the
/// stores write a batch's state only as an action says). ``BatchRecord``
/// holds one, and its state has no setter anywhere else, so a new
/// assignment elsewhere does not compile.
///
/// The table of transitions (``transition(_:)``) is what both stores' SQL
/// reads too (the state a statement writes, the states it applies to), and
/// the sets of states that callers and queries ask about (``unfinished``,
/// ``resumable``…) are written here once. So are the fan-in's decisions
/// about the sidecars an item carries (``failCarriedSidecars(of:_:)``) and
/// which steps are cheap to redo (``cheapToRedo(_:of:decodes:unchanged:)``).
struct BatchLifecycle: Sendable, Equatable {
    /// Where the batch is in its life: changed only by ``handle(_:)``.
    private(set) var state: BatchState

    /// The lifecycle of a batch found in `state` (a store's row; a new batch).
    init(_ state: BatchState) { self.state = state }

    /// What happens to a batch.
    enum Event: Sendable, Equatable {
        /// Its plan begins (a drop claimed; `share ingest` planning): `claimed`,
        /// no worker or runner takes any of it yet.
        case claim
        /// Its plan is recorded, every item with it: `running`.
        case seal
        /// Its fan-in starts (locally; a worker's manifest job runs in the
        /// queue): `manifesting`.
        case startFanIn
        /// Its fan-in waits (for room on the disk; a stop): `running`, the
        /// fan-in still to run, nothing counted.
        case fanInWaits
        /// Its fan-in lost an attempt and goes on to `next`
        /// (``ItemLifecycle/afterLosingFanIn(lostBefore:reason:)``): `failed`
        /// once it gave up, `running` (its fan-in to run again) otherwise.
        case loseFanIn(next: NextStep)
        /// `share ingest --resume`: a `failed` batch is reopened (``Action/reopen``),
        /// `running`; any other is resumed as it is (``Action/none``).
        case resume
        /// The fan-in wrote its end: `done`.
        case end
        /// The batch ended in `state` in another store (a watched drop's batch,
        /// run by the workers of the distributed queue): the watcher's journal
        /// keeps the same.
        case endedElsewhere(BatchState)
        /// Given up before it ran (a drop that vanished; a plan cut short; a
        /// batch left unfinished longer than `share gc --older-than`): `abandoned`.
        case abandon
        /// A consumed share whose files `share gc` removed: `collected`.
        case collect
    }

    /// What the holder of a batch does after an event.
    enum Action: Sendable, Equatable {
        /// Nothing changes: nothing to record.
        case none
        /// Record the batch in this state (with what the event changed beside it).
        case record(BatchState)
        /// Reopen it in its store (``JournalStore/reopen(_:)``; the queue's
        /// `reopen`): the batch `running`, its fan-in as ``reopened`` says.
        case reopen
    }

    /// An event's transition: the states it is taken from (nil: any) and the
    /// state it leaves the batch in. What ``handle(_:)`` applies, and what
    /// both stores' statements write (``sql(_:)``). Only `resume` is refused
    /// from another state (``Action/none``); for the others, `from` says where
    /// their callers take them (each caller's guard, or its statement's `WHERE`,
    /// as before this lifecycle), not a check made here.
    static func transition(_ event: Event) -> (from: Set<BatchState>?, to: BatchState) {
        switch event {
        case .claim: (nil, .claimed)
        case .seal: (nil, .running)
        case .startFanIn: ([.running], .manifesting)
        case .fanInWaits: (nil, .running)
        case .loseFanIn(let next):
            (
                [.running, .manifesting],
                ItemLifecycle.recorded(next, at: .manifest, holderKeeps: false).isFinished ? .failed : .running
            )
        case .resume: (reopenable, .running)
        case .end: (nil, .done)
        case .endedElsewhere(let state): (nil, state)
        case .abandon: (nil, .abandoned)
        case .collect: ([.done], .collected)
        }
    }

    /// Applies `event`; returns what its holder does.
    mutating func handle(_ event: Event) -> Action {
        let transition = Self.transition(event)
        if case .resume = event {
            guard Self.reopenable.contains(state) else { return .none }
            state = transition.to
            return .reopen
        }
        state = transition.to
        return .record(state)
    }

    // MARK: - Sets of states, written once

    /// The states of a batch that is not finished: a run (or the watcher's
    /// next start, or `--resume`) still has work to do on it.
    static let unfinished: Set<BatchState> = [.claimed, .running, .manifesting]

    /// Unfinished batches whose plan was recorded: what `share ingest
    /// --resume` without a batch finishes.
    static let planned = unfinished.subtracting([.claimed])

    /// A failed batch is reopened by `--resume` (``Event/resume``).
    static let reopenable: Set<BatchState> = [.failed]

    /// The batches `share ingest --resume <batch>` takes: planned, or failed (reopened).
    static let resumable = planned.union(reopenable)

    /// Batches finished for good: neither unfinished nor to be reopened. A
    /// drop of the same name is a new batch (unless it is the same content).
    static let settled = Set(BatchState.allCases).subtracting(unfinished).subtracting(reopenable)

    /// Batches whose manifest was written (and may since have been collected).
    static let delivered: Set<BatchState> = [.done, .collected]

    /// Finished batches whose rows the queue prunes once old enough.
    static let prunable: Set<BatchState> = [.done, .failed, .abandoned]

    /// `states` as an SQL list (for `state IN (…)`), in a stable order.
    static func sql(_ states: Set<BatchState>) -> String {
        states.map(\.rawValue).sorted().map { "'\($0)'" }.joined(separator: ", ")
    }

    /// The state `event` writes, as an SQL literal.
    static func sql(_ event: Event) -> String { "'\(transition(event).to.rawValue)'" }

    // MARK: - The fan-in

    /// A failed batch resumed (`share ingest --resume`): its fan-in, with no
    /// attempt lost, ready at once; its items as they were.
    static let reopened = (lost: 0, next: NextStep.run(.manifest))

    /// The state of the batch's fan-in job in the queue once the batch is
    /// sealed with `unfinished` items: queued when it is due at once
    /// (``ItemLifecycle/fanInDue(unfinished:)``), waiting for the last item otherwise.
    static func fanInJobState(unfinished: Int) -> ItemLifecycle.RowState {
        ItemLifecycle.fanInDue(unfinished: unfinished) ? fanInJob.due : fanInJob.waiting
    }

    /// The fan-in job's states in the queue: waiting while the batch has
    /// unfinished items, queued once its fan-in is due (by the statement that
    /// finishes the last item, or by the reaper: ``ItemLifecycle/fanInDue(unfinished:)``).
    static let fanInJob = (waiting: ItemLifecycle.RowState.waiting, due: ItemLifecycle.RowState.queued)

    // MARK: - The carried sidecars' failures

    /// Why the fan-in fails the sidecars an item carries with it (beside a
    /// sidecar's own failure to be read or copied, ``fail(_:_:)``).
    enum SidecarsFail: Sendable, Equatable {
        /// The capture-date range asked for left their media out: what
        /// describes it is left out too.
        case mediaOutsideDateRange
        /// The manifest could not be written (`error`): nothing is delivered.
        case manifestUnwritten(SystemError)
    }

    /// Whether `sidecar` fails for `cause`: one already failed keeps its own
    /// failure; a borrowed share (an edited copy's share of its original's
    /// Takeout JSON) is left to its original when its media is left out, and
    /// fails with everything else when the manifest is not written.
    static func fails(_ sidecar: CarriedSidecar, _ cause: SidecarsFail) -> Bool {
        guard sidecar.failure == nil else { return false }
        switch cause {
        case .mediaOutsideDateRange: return !sidecar.borrowed
        case .manifestUnwritten: return true
        }
    }

    /// Fails the sidecars `item` carries that fail for `cause` (``fails(_:_:)``),
    /// each with why; the one place a carried sidecar's failure is set beside
    /// ``fail(_:_:)``.
    static func failCarriedSidecars(of item: inout ItemState, _ cause: SidecarsFail) {
        for position in item.carriedSidecars.indices where fails(item.carriedSidecars[position], cause) {
            let label = item.carriedSidecars[position].label(carriedBy: item)
            item.carriedSidecars[position].failure =
                switch cause {
                case .mediaOutsideDateRange:
                    ItemFailure(
                        .manifest, .outsideDateRange,
                        "\(label): describes \(item.label), which the capture-date range left out; not delivered")
                case .manifestUnwritten(let error):
                    ItemFailure(.manifest, writing: error, "\(label): the manifest could not be written: \(error)")
                }
        }
    }

    /// A carried sidecar could not be read or copied: it fails with `failure`.
    static func fail(_ sidecar: inout CarriedSidecar, _ failure: ItemFailure) { sidecar.failure = failure }

    // MARK: - Cheap to redo

    /// Whether a stage's step is cheap to redo after a crash, so its record may
    /// wait for the next one when its holder keeps the item
    /// (``ItemLifecycle/recordsBeforeGoingOn(_:holderKeeps:roundTrips:cheapToRedo:)``):
    /// the stage completed, and it decoded nothing (a sniff; a copy, which a
    /// resumed batch finds complete at its final name) or it changed nothing of
    /// the item (`unchanged`, as the probe of a JSON file).
    static func cheapToRedo(
        _ outcome: StageOutcome, of stage: StageName, decodes: Bool, unchanged: @autoclosure () -> Bool
    ) -> Bool {
        outcome == .completed(stage) && (!decodes || unchanged())
    }

    // MARK: - Where the modes differ

    /// Who holds a batch's fan-in: the local run (`share ingest`, `share
    /// watch`: the journal's lock holder) or a worker of the queue (`--db`).
    enum Holder: String, Sendable, CaseIterable {
        case localRun, worker
    }

    /// The decisions about a batch that differ between the modes: each decided
    /// here once (``decision(_:for:)``), each a row of docs/design.md's
    /// decision table and of `LifecycleSituationTests`.
    enum Difference: String, Sendable, CaseIterable {
        /// The fan-in wrote the manifest, but the store could not record the end.
        case failedEndRecord
        /// The fan-in's batch is no longer running (finished meanwhile).
        case batchNoLongerRunning
        /// Whether the items lost with their holder are parked (a stop was
        /// asked) rather than taken again.
        case stoppingWhenLost
    }

    /// What a holder does in one of the ``Difference``s.
    enum Decision: String, Sendable {
        /// What was written stands and the outcome is returned; the next start
        /// finds the fan-in lost (`manifesting`) and runs it again, which
        /// records the batch done.
        case outcomeStands
        /// The fan-in loses an attempt (``ItemLifecycle/afterLosingFanIn(lostBefore:reason:)``).
        case fanInLosesAttempt
        /// Refused: the caller is told the batch is not resumable.
        case refuse
        /// Only its job is completed (a retried manifest job).
        case completeJob
        /// As the holder's cancellation flag says: a stop asked of the run parks them.
        case cancellationFlag
        /// Never: another worker goes on with them at once, whatever this one does.
        case never
    }

    /// What `holder` does in `difference`: the one place each is decided.
    static func decision(_ difference: Difference, for holder: Holder) -> Decision {
        switch (difference, holder) {
        case (.failedEndRecord, .localRun): .outcomeStands
        case (.failedEndRecord, .worker): .fanInLosesAttempt
        case (.batchNoLongerRunning, .localRun): .refuse
        case (.batchNoLongerRunning, .worker): .completeJob
        case (.stoppingWhenLost, .localRun): .cancellationFlag
        case (.stoppingWhenLost, .worker): .never
        }
    }

    /// Whether the items `holder` lost are parked rather than taken again
    /// (``Difference/stoppingWhenLost``), `cancelled`: a stop was asked of it.
    static func stoppingWhenLost(_ holder: Holder, cancelled: Bool) -> Bool {
        decision(.stoppingWhenLost, for: holder) == .cancellationFlag && cancelled
    }
}
