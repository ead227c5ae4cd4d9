import Foundation

/// An item's life through a pipeline's stages: the one place its next step is
/// decided, for the local runner (``BatchRunner``) and for remote workers
/// (``StageWorker``) alike, always from the batch's own lifecycle: retries and
/// their backoff, what a lost attempt or a failed record costs, blame when a
/// process dies, stops, give-ups, and the order in which waiting items are
/// taken. The runners move items; the stores record what they are told.
/// (Modelled on job queues such as Oban and River, where one function moves a
/// job between a few named states.)
struct ItemLifecycle: Sendable {
    /// The pipeline's item stages, in order.
    let stages: [StageName]
    /// Attempts an item may lose (blamed) before it gives up: the batch's
    /// `maxAttempts` (3 by default; `share ingest --max-attempts`).
    let maxAttempts: Int

    /// The default of ``maxAttempts``.
    static let defaultMaxAttempts = 3

    /// Seconds a job a worker claimed stays its own without a heartbeat, unless
    /// set (`share worker --lease`): once past it, the job is taken back and the
    /// worker's attempt is lost (the queue's ``JobQueue`` and ``StageWorker/Settings``).
    static let defaultLease: Double = 30

    /// Every stage of the pipeline's catalog, in run order: where a stage the
    /// pipeline lacks stands.
    let order: [StageName]

    /// What its holder does with an item that waits for space (``waitForSpace(_:_:)``).
    let spaceWait: SpaceWait

    /// What a holder does with an item that could not be written for want of
    /// space. The one decision about a full disk that differs between the modes.
    enum SpaceWait: Sendable, Equatable {
        /// Park it and go on with the others; the run then ends resumable and
        /// says the disk is full (`share ingest` exits 73; `share watch` tries
        /// the batch again later): a person frees space and resumes.
        case park
        /// Take it again after ``ItemLifecycle/spaceBackoff`` (a worker, which
        /// serves every batch and has nobody to tell; `ingest --db` waits).
        case retryLater
    }

    /// Seconds a worker leaves an item that waits for space before taking it again.
    static let spaceBackoff = 30.0

    /// The attempts a batch gets when `asked` for (`--max-attempts`): at least one.
    static func attempts(_ asked: Int) -> Int { max(1, asked) }

    init(
        stages: [StageName], maxAttempts: Int = ItemLifecycle.defaultMaxAttempts,
        order: [StageName] = StageName.allCases,
        spaceWait: SpaceWait = .park
    ) {
        self.stages = stages
        self.maxAttempts = Self.attempts(maxAttempts)
        self.order = order
        self.spaceWait = spaceWait
    }

    /// The lifecycle of a batch of `pipeline`: its item stages, within its catalog's order.
    init(
        pipeline: PipelineDefinition, maxAttempts: Int = ItemLifecycle.defaultMaxAttempts, spaceWait: SpaceWait = .park
    ) {
        self.init(
            stages: pipeline.itemStages, maxAttempts: maxAttempts, order: pipeline.catalog.names, spaceWait: spaceWait)
    }

    // MARK: - Steps

    /// Where an item stands before anything runs: its next stage (or parked
    /// there when `stopping`), or finished (failed, or past the last stage).
    func start(_ item: ItemState, stopping: Bool) -> NextStep {
        guard item.failure == nil, let stage = stage(after: item.completed) else { return .finished }
        return stopping ? .park(stage) : .run(stage)
    }

    /// Just before `stage` runs on `item`: nil when it runs; otherwise the step
    /// that takes its place. A stop parks the item before it; a stage the
    /// batch's pipeline cannot make (`available` false) fails the item.
    func admit(_ item: inout ItemState, to stage: StageName, available: Bool, stopping: Bool) -> NextStep? {
        guard available else {
            return advance(
                &item,
                after: .failed(
                    ItemFailure(stage, .io, "\(item.label): stage \(stage.rawValue) is not in the batch's pipeline")),
                stopping: false)
        }
        return stopping ? .park(stage) : nil
    }

    /// Applies `outcome` to `item` and decides its next step. `stopping`: a stop
    /// was asked, so an item that may go on is parked instead.
    func advance(_ item: inout ItemState, after outcome: StageOutcome, stopping: Bool) -> NextStep {
        switch outcome {
        case .completed(let stage):
            item.completed = stage
            item.lostAttempts = 0
            item.suspect = false
            item.waitingForSpace = nil
            return start(item, stopping: stopping)
        case .failed(let failure) where failure.reason == .diskFull:
            return waitForSpace(&item, failure)
        case .failed(let failure) where failure.reason == .cancelled:
            // Stopped in the middle of its stage (a long copy): what it made is
            // removed, and the stage runs again, from its start, on resuming.
            return .park(failure.stage)
        case .failed(let failure):
            return fail(&item, failure)
        case .lost(let stage, let reason, let loss):
            let blamed: Bool
            switch loss {
            case .died(let alone, _):
                blamed = alone
                // It runs alone next: one of several in flight when their
                // process died, so that a death that is its doing is blamed on
                // it; or the one, blamed, so that another death is its own.
                item.suspect = true
            case .recordRefused:
                blamed = true
            }
            if blamed { item.lostAttempts += 1 }
            if item.lostAttempts >= maxAttempts {
                let crashed = loss == .died(alone: true, decoding: true)
                item.failure =
                    crashed
                    ? ItemFailure(
                        stage, .crashedRepeatedly,
                        "\(item.label): the process died \(item.lostAttempts) times while decoding this file alone; not tried again (the last time: \(reason))"
                    )
                    : ItemFailure(
                        stage, .attemptsExhausted,
                        "\(item.label): gave up after \(item.lostAttempts) attempts at \(stage.rawValue): \(reason)")
                item.suspect = false
                return .gaveUp(reason: item.failure?.message ?? reason)
            }
            if stopping { return .park(stage) }
            return .retry(stage, after: blamed ? Self.backoff(after: item.lostAttempts) : 0, reason: reason)
        }
    }

    /// `item` could not be written for want of space (its copy, a thumbnail, a
    /// preview): not its fault, and not final, whatever stage it was at. What
    /// it had made is removed by now (freeing room for the others), so it
    /// starts again from its first stage, as planned, once there is room
    /// (``spaceWait``: parked, or taken again later); its report says why it
    /// waits (``ItemState/waitingForSpace``). Nothing counts against it.
    func waitForSpace(_ item: inout ItemState, _ failure: ItemFailure) -> NextStep {
        item = item.restarted()
        item.waitingForSpace = failure
        guard let first = stages.first else { return fail(&item, failure) }
        switch spaceWait {
        case .park: return .park(first)
        case .retryLater: return .retry(first, after: Self.spaceBackoff, reason: failure.message)
        }
    }

    /// `item` fails for a reason of its own: final, whatever stage it was at
    /// (a stage's failure; the fan-in's refusals: a schema that cannot carry
    /// it, a duplicate the pipeline skips, a manifest that could not be written).
    func fail(_ item: inout ItemState, _ failure: ItemFailure) -> NextStep {
        item.failure = failure
        return .finished
    }

    // MARK: - Deaths: the items a holder held when it was lost

    /// True when `item`'s record says a stage was decoding it in its holder's
    /// process (``ItemState/decodingInFlight``, recorded before the decode
    /// when ``marksDecoding(_:containsCrashes:)``): in both modes the only
    /// evidence that its holder's death may have been its doing.
    static func wasInFlight(_ item: ItemState) -> Bool { item.decodingInFlight }

    /// Whether a stage records that it is about to decode an item before it
    /// does (``ItemState/decodingInFlight``): when it decodes in the holder's
    /// process. A decoder that contains crashes (sandboxed helpers) cannot take
    /// the holder down with it, so nothing is marked.
    static func marksDecoding(_ decodes: Bool, containsCrashes: Bool) -> Bool { decodes && !containsCrashes }

    /// Whether an item must run alone (``ItemState/suspect``): it was in
    /// flight beside others when their holder died.
    static func mustRunAlone(_ item: ItemState) -> Bool { item.suspect }

    /// Whether a holder may take an item that must run alone: only when it
    /// holds nothing else; until that item has left it, it takes nothing more
    /// (``takesOthers(whileAlone:)``). So a death while it runs is its own.
    static func takesAlone(holding: Int) -> Bool { holding == 0 }

    /// Whether a holder takes other items: not while one that must run alone
    /// is its own.
    static func takesOthers(whileAlone: Bool) -> Bool { !whileAlone }

    /// The items of this batch a holder held when it was lost (its process died;
    /// a worker's session ended or its lease lapsed), with `inFlightBeside`
    /// items of other batches that were in flight in it (the fan-in never is).
    /// Locally the journal holds no claims: `held` are the items its record
    /// says were in flight; a worker held every job it had claimed.
    ///
    /// Only the items in flight (``wasInFlight(_:)``) can have caused the
    /// death: each loses its attempt, blamed (counted) only when it was the
    /// only one in flight (then it may be poison: `crashedRepeatedly` once its
    /// attempts are gone); one of several runs alone next. An item held but not
    /// in flight (claimed and not started, or in a stage that decodes nothing)
    /// is handed back as it was: ready at once, not counted.
    func lose(held: [ItemState], inFlightBeside others: Int = 0, reason: String, stopping: Bool) -> [(
        item: ItemState, next: NextStep
    )] {
        let alone = held.count(where: Self.wasInFlight) + others == 1
        return held.map { lost in
            var item = lost
            let inFlight = Self.wasInFlight(item)
            item.decodingInFlight = false
            guard let stage = start(item, stopping: false).stage else { return (item, .finished) }
            guard inFlight else { return (item, stopping ? .park(stage) : .retry(stage, after: 0, reason: reason)) }
            let next = advance(
                &item, after: .lost(at: stage, reason: reason, .died(alone: alone, decoding: true)), stopping: stopping)
            return (item, next)
        }
    }

    // MARK: - Records that cannot be made

    /// Seconds a record that keeps failing with `failure` is tried again
    /// before the lifecycle decides (``afterFailedRecord(_:next:ran:error:failure:refusedBefore:)``),
    /// in both modes: a store that cannot be reached (a database restarting)
    /// is waited for until a stop is due; one that cannot write now (a
    /// momentarily full disk: a failed copy is still being removed) briefly; a
    /// refusal is final at once.
    static func recordPatience(for failure: StoreFailure) -> Double {
        switch failure {
        case .unreachable: .infinity
        case .unavailable, .full: 0.5
        case .refused: 0
        }
    }

    /// The pause before trying a failing record again, the `attempt`-th time
    /// (from 1): 0.05 s, doubling, at most 1 s.
    static func recordPause(attempt: Int) -> Double { min(1, 0.05 * pow(2, Double(max(0, attempt - 1)))) }

    /// What a record that could not be made means.
    struct FailedRecord: Equatable {
        /// The item's next step (to record, when the store still takes records).
        let next: NextStep
        /// True when its holder stops: locally the run (the batch is resumable);
        /// a worker drops the job (see ``afterFailedRecord(_:next:ran:error:failure:refusedBefore:)``).
        let stopsRun: Bool
    }

    /// The record of `item`'s step to `next` failed with `error` (what it
    /// means: `failure`, after ``recordPatience(for:)``); `ran`: the stage the
    /// step comes from, with the item as it was before it. A store that cannot
    /// be reached or cannot write costs the item nothing: it is parked before
    /// that stage (it waits where its last record has it) and its holder stops
    /// (locally the run stops, resumable; a worker drops the job, which its
    /// next heartbeat hands back, parked: ``recorded(_:at:holderKeeps:)``). A
    /// store that refuses the record counts as a lost attempt: what the stage
    /// made is dropped with the record (it may be what cannot be kept), and the
    /// stage is to run again after its backoff, which is recorded instead; a
    /// second refusal (`refusedBefore`) stops the holder too.
    func afterFailedRecord(
        _ item: inout ItemState, next: NextStep, ran: RanStage?, error: String, failure: StoreFailure,
        refusedBefore: Bool
    ) -> FailedRecord {
        let stage = ran?.stage ?? next.stage ?? self.stage(after: item.completed) ?? .manifest
        guard failure == .refused, !refusedBefore else { return FailedRecord(next: .park(stage), stopsRun: true) }
        if let before = ran?.before { item = before }
        return FailedRecord(
            next: advance(&item, after: .lost(at: stage, reason: error, .recordRefused), stopping: false),
            stopsRun: false)
    }

    // MARK: - The fan-in

    /// The batch's fan-in (locally the end of the run; distributed its manifest
    /// job), which had lost `lostBefore` attempts, lost one more through no fault
    /// of the batch (its process or worker died while it ran, a store error):
    /// it runs again after a backoff while it has attempts left; after the last
    /// one it gives up, and the batch fails (``BatchLifecycle/Event/loseFanIn(next:)``;
    /// `share ingest --resume` reopens it: ``BatchLifecycle/reopened``).
    /// Returns the step and the attempts now lost, which the store keeps as
    /// the fan-in's one counter.
    func afterLosingFanIn(lostBefore: Int, reason: String) -> (next: NextStep, lost: Int) {
        let lost = lostBefore + 1
        guard lost >= maxAttempts else {
            return (.retry(.manifest, after: Self.backoff(after: lost), reason: reason), lost)
        }
        return (.gaveUp(reason: "the manifest job gave up after \(lost) attempts: \(reason)"), lost)
    }

    /// The batch's fan-in could not write the manifest for want of space: not
    /// the batch's fault, so no attempt counts (`lostBefore` stays); it runs
    /// again once there is room, as ``spaceWait`` says: parked (the local run
    /// stops, resumable, and says the disk is full) or queued again after
    /// ``spaceBackoff`` (a worker's manifest job).
    func afterFanInWantsSpace(lostBefore: Int, reason: String) -> (next: NextStep, lost: Int) {
        switch spaceWait {
        case .park: (.park(.manifest), lostBefore)
        case .retryLater: (.retry(.manifest, after: Self.spaceBackoff, reason: reason), lostBefore)
        }
    }

    /// Whether a running batch's fan-in is due: once none of its items is
    /// unfinished (the queue applies it in the statement that finishes the
    /// last item, and the reaper to a batch whose counter missed it).
    static func fanInDue(unfinished: Int) -> Bool { unfinished == 0 }

    // MARK: - Records

    /// The states of a queue's rows (`share_jobs.state`); the journal keeps an
    /// item's stage (NULL once finished) and when it may run.
    enum RowState: String, Sendable, CustomStringConvertible {
        /// The manifest job, until the batch's last item has finished.
        case waiting
        /// Ready to be taken (at once, or after its delay).
        case queued
        /// Held (claimed, leased) by a worker.
        case running
        /// Finished: delivered, or failed for a reason of its own.
        case done
        /// Given up on: its attempts ran out.
        case failed

        var description: String { rawValue }
    }

    /// Where a step leaves an item's record in either store.
    struct Recorded: Equatable {
        /// The stage it waits for; for a finished item, the stage it was held at.
        let stage: StageName
        let state: RowState
        /// Seconds before it may be taken again (a retry's backoff).
        let delay: Double
        /// Why an attempt was lost (kept as the row's last error).
        let error: String?

        /// True when nothing more will run on the item.
        var isFinished: Bool { state == .done || state == .failed }
    }

    /// How `next`, decided for an item held at `held`, is recorded: kept by
    /// its holder (`holderKeeps`: it serves the next stage itself), queued for
    /// any holder (at once: a stage to run, a park; or after a retry's backoff),
    /// done, or failed when given up on. The same for both stores.
    static func recorded(_ next: NextStep, at held: StageName, holderKeeps: Bool) -> Recorded {
        switch next {
        case .run(let following) where holderKeeps: Recorded(stage: following, state: .running, delay: 0, error: nil)
        case .run(let following), .park(let following): Recorded(stage: following, state: .queued, delay: 0, error: nil)
        case .retry(let following, let after, let reason):
            Recorded(stage: following, state: .queued, delay: after, error: reason)
        case .finished: Recorded(stage: held, state: .done, delay: 0, error: nil)
        case .gaveUp(let reason): Recorded(stage: held, state: .failed, delay: 0, error: reason)
        }
    }

    /// Seconds a worker has, after a database restart, to reconnect and take
    /// its lock again before the jobs it held count as lost. A job is lost when
    /// its worker's session ended (its advisory lock is free) or its lease
    /// lapsed, once this grace after a restart has passed.
    static let restartGrace = 15.0

    // MARK: - Counts

    /// How a batch's items count in its report, from what a store counts
    /// (``ItemStore/counts(of:)``), the same for both: an item not finished (an
    /// interrupted batch's) was not delivered, and counts as failed, as its
    /// report shows it.
    static func reportCounts(_ stored: StoredCounts) -> BatchReport.Counts {
        BatchReport.Counts(
            items: stored.items, ingested: stored.ingested, failed: stored.failed + stored.unfinished,
            skipped: stored.skipped)
    }

    // MARK: - Recording before going on

    /// Whether a step is recorded before its holder goes on: always, except when
    /// the holder goes on with the item itself (`holderKeeps`) and either each
    /// record is a round trip to a server (`roundTrips`) or the stage is cheap
    /// to redo (`cheapToRedo`: it decoded nothing, as a sniff or a copy, or it
    /// changed nothing of the item, as the probe of a JSON file): then the next
    /// record carries it. Stages are idempotent, so a holder that dies only
    /// costs their redoing; a step that finishes the item, or hands it to
    /// another holder, is always recorded.
    static func recordsBeforeGoingOn(_ next: NextStep, holderKeeps: Bool, roundTrips: Bool, cheapToRedo: Bool = false)
        -> Bool
    {
        !((roundTrips || cheapToRedo) && holderKeeps && next.stage != nil)
    }

    // MARK: - Order

    /// The order waiting items are taken in, the same for every stage in both
    /// modes: the expected decoding cost of the item (estimated from its
    /// recorded sniff: format, size and the pixels its header announces),
    /// costliest first, so slow decodes start early instead of ending a batch
    /// with one core idle. What differs is among which items: locally those
    /// waiting in front of the stage (a bounded queue, ``BatchRunner/queueCapacity``,
    /// so memory stays flat), distributed every queued job.
    static func priority(of item: ItemState) -> Double { cost(of: item).milliseconds }

    /// What decoding `item` is expected to cost (its share of the decoder-memory
    /// budget and its ``priority(of:)``), from its recorded sniff.
    static func cost(of item: ItemState) -> DecodeCost {
        guard let format = item.sniffed?.format else { return .zero }
        return DecodeCost.estimate(format: format, size: item.size ?? 0, pixels: item.headerPixels)
    }

    /// True when the item of rank `a` is taken before that of rank `b`: the
    /// higher ``priority(of:)`` first, then the one planned first (its index
    /// in its batch; the queue's row id, which also puts an older batch first).
    /// The queue sorts by the same: ``orderSQL``.
    static func takenBefore(_ a: (priority: Double, planned: Int64), _ b: (priority: Double, planned: Int64)) -> Bool {
        a.priority != b.priority ? a.priority > b.priority : a.planned < b.planned
    }

    /// ``takenBefore(_:_:)`` as the queue's `ORDER BY` (its rows' `priority`
    /// and `id`).
    static let orderSQL = "priority DESC, id"

    // MARK: - Stages

    /// The stage after `stage` (the first one after nil), nil after the last.
    func stage(after stage: StageName?) -> StageName? {
        guard let stage else { return stages.first }
        if let position = stages.firstIndex(of: stage) {
            return stages.indices.contains(position + 1) ? stages[position + 1] : nil
        }
        // A stage this pipeline lacks (a record of another version): the first
        // of its stages that runs later in the catalog's order.
        guard let done = order.firstIndex(of: stage) else { return nil }
        return stages.first { (order.firstIndex(of: $0) ?? .max) > done }
    }

    /// The last item stage: an item that completed it goes to the manifest.
    var lastStage: StageName? { stages.last }

    /// True when nothing more will run on `item`.
    func isFinished(_ item: ItemState) -> Bool { start(item, stopping: false).isFinished }

    /// Backoff before attempt `lost + 1`: 0.5 s, doubling, at most 30 s.
    static func backoff(after lost: Int) -> Double { min(30, 0.5 * pow(2, Double(max(0, lost - 1)))) }
}
