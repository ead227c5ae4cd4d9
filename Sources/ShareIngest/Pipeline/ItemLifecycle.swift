import Foundation

/// What became of an attempt at an item's next stage.
enum StageOutcome: Sendable, Equatable {
    /// The stage did its job.
    case completed(StageName)
    /// The item failed for a reason of its own: final.
    case failed(ItemFailure)
    /// The attempt was lost through no fault of the file: see ``Loss``.
    case lost(at: StageName, reason: String, Loss)
}

/// How an attempt was lost, which decides whether it counts against the item.
enum Loss: Sendable, Equatable {
    /// The process (or the worker) that held the item died with it. `alone`:
    /// it was the only item that process held in flight, so the death can be
    /// its doing; `decoding`: it was being decoded in that process, so an item
    /// that dies alone too often is poison (`crashedRepeatedly`).
    case died(alone: Bool, decoding: Bool)
    /// The store refused the record of its step (not for being unreachable):
    /// the record itself may be what cannot be kept, so it counts.
    case recordRefused
}

/// What happens to an item next. Only ``ItemLifecycle`` decides it; the local
/// runner and the distributed worker carry it out, each with its transport,
/// and the stores record it as they are told.
enum NextStep: Sendable, Equatable {
    /// Run this stage now.
    case run(StageName)
    /// Run this stage again, not before `after` seconds have passed; `reason`:
    /// why the attempt was lost.
    case retry(StageName, after: Double, reason: String)
    /// Stop here, resumable: a stop was asked. The item waits before this stage
    /// (for `--resume`, a later watcher, or another worker).
    case park(StageName)
    /// Finished: delivered, or failed for a reason of its own (the fan-in counts it).
    case finished
    /// Finished because its attempts ran out (it fails with `attemptsExhausted`
    /// or `crashedRepeatedly`); a distributed job ends `failed`.
    case gaveUp(reason: String)

    /// The stage the item waits for, if it is not finished.
    var stage: StageName? {
        switch self {
        case .run(let stage), .retry(let stage, _, _), .park(let stage): stage
        case .finished, .gaveUp: nil
        }
    }

    /// True when nothing more will run on the item.
    var isFinished: Bool { stage == nil }
}

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

    /// Every stage of the pipeline's catalog, in run order: where a stage the
    /// pipeline lacks stands.
    let order: [StageName]

    init(stages: [StageName], maxAttempts: Int = ItemLifecycle.defaultMaxAttempts, order: [StageName] = StageName.allCases) {
        self.stages = stages
        self.maxAttempts = max(1, maxAttempts)
        self.order = order
    }

    /// The lifecycle of a batch of `pipeline`: its item stages, within its catalog's order.
    init(pipeline: PipelineDefinition, maxAttempts: Int = ItemLifecycle.defaultMaxAttempts) {
        self.init(stages: pipeline.itemStages, maxAttempts: maxAttempts, order: pipeline.catalog.names)
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
                &item, after: .failed(ItemFailure(stage, .io, "\(item.label): stage \(stage.rawValue) is not in the batch's pipeline")), stopping: false)
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
            return start(item, stopping: stopping)
        case .failed(let failure):
            item.failure = failure
            return .finished
        case .lost(let stage, let reason, let loss):
            let blamed: Bool
            switch loss {
            case .died(let alone, _):
                blamed = alone
                // One of several in flight when their process died: it runs
                // alone next, so that a death that is its doing is blamed on it.
                item.suspect = !alone
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
                        "\(item.label): the process died \(item.lostAttempts) times while decoding this file alone; not tried again")
                    : ItemFailure(stage, .attemptsExhausted, "\(item.label): gave up after \(item.lostAttempts) attempts at \(stage.rawValue): \(reason)")
                item.suspect = false
                return .gaveUp(reason: item.failure?.message ?? reason)
            }
            if stopping { return .park(stage) }
            return .retry(stage, after: blamed ? Self.backoff(after: item.lostAttempts) : 0, reason: reason)
        }
    }

    // MARK: - Deaths and lost records

    /// The items that were in flight when the process (or worker) holding them
    /// died: `lost` for a local batch resumed after a crash (the items that were
    /// being decoded in-process), or the jobs a worker held when it vanished.
    /// Each loses its attempt, but only when it was the only one in flight is it
    /// blamed: a death beside others is no item's proven fault, and each of them
    /// runs alone next (``ItemState/suspect``). `others`:
    /// items of other batches that died with them. Returns each item with its
    /// next step.
    func recover(suspects lost: [ItemState], besides others: Int = 0, reason: String, stopping: Bool) -> [(item: ItemState, next: NextStep)] {
        let alone = lost.count + others == 1
        return lost.map { suspect in
            var item = suspect
            let decoding = item.decodingInFlight
            item.decodingInFlight = false
            guard let stage = start(item, stopping: false).stage else { return (item, .finished) }
            let next = advance(&item, after: .lost(at: stage, reason: reason, .died(alone: alone, decoding: decoding)), stopping: stopping)
            return (item, next)
        }
    }

    /// A worker was found gone with `jobs` of this batch and `others` more
    /// (of other batches, or their fan-ins): ``recover(suspects:besides:reason:stopping:)``.
    func lose(jobs: [ItemState], besides others: Int, reason: String) -> [(item: ItemState, next: NextStep)] {
        recover(suspects: jobs, besides: others, reason: reason, stopping: false)
    }

    /// What a record that could not be made means.
    struct FailedRecord: Equatable {
        /// The item's next step (to record, when the store still takes records).
        let next: NextStep
        /// True when the run must stop: the store is the batch's memory, and
        /// nothing more is taken without it (the batch is resumable once it can
        /// be written again).
        let stopsRun: Bool
    }

    /// The record of `item`'s step at `stage` failed with `error`. A store that
    /// is unreachable or full (`transient`, still failing after the holder's
    /// patience) costs the item nothing: it waits where it was and the run
    /// stops. A store that refuses this record counts as a lost attempt.
    func afterFailedRecord(_ item: inout ItemState, at stage: StageName, error: String, transient: Bool) -> FailedRecord {
        if transient { return FailedRecord(next: .park(stage), stopsRun: true) }
        return FailedRecord(next: advance(&item, after: .lost(at: stage, reason: error, .recordRefused), stopping: false), stopsRun: false)
    }

    /// The batch's fan-in (its manifest job, distributed), which had lost
    /// `lostBefore` attempts, lost one more through no fault of the batch (its
    /// worker died, a store error): it runs again after a backoff while it has
    /// attempts left; after the last one it gives up, and the batch fails
    /// (`share ingest --resume` retries it). Returns the step and the attempts
    /// now lost, which the store keeps as the fan-in's one counter.
    func afterLosingFanIn(lostBefore: Int, reason: String) -> (next: NextStep, lost: Int) {
        let lost = lostBefore + 1
        return (lost < maxAttempts ? .retry(.manifest, after: Self.backoff(after: lost), reason: reason) : .gaveUp(reason: reason), lost)
    }

    /// Whether a step is recorded before its holder goes on: always, except when
    /// the holder goes on with the item itself (`holderKeeps`) and either each
    /// record is a round trip to a server (`roundTrips`) or the stage is cheap
    /// to redo (`cheapToRedo`: it decoded nothing, as a sniff or a copy, or it
    /// changed nothing of the item, as the probe of a JSON file): then the next
    /// record carries it. Stages are idempotent, so a holder that dies only
    /// costs their redoing; a step that finishes the item, or hands it to
    /// another holder, is always recorded.
    static func recordsBeforeGoingOn(_ next: NextStep, holderKeeps: Bool, roundTrips: Bool, cheapToRedo: Bool = false) -> Bool {
        !((roundTrips || cheapToRedo) && holderKeeps && next.stage != nil)
    }

    // MARK: - Order

    /// The order waiting items are taken in, the same for every stage in both
    /// modes: the expected decoding cost of the item (estimated from its sniffed
    /// header), costliest first, so slow decodes start early instead of ending a
    /// batch with one core idle.
    static func priority(of item: ItemState, estimate: DecodeCost? = nil) -> Double {
        if let estimate { return estimate.milliseconds }
        guard let format = item.sniffed?.format else { return 0 }
        return DecodeCost.estimate(format: format, size: item.size ?? 0, pixels: nil).milliseconds
    }

    // MARK: - Stages

    /// The stage after `stage` (the first one after nil), nil after the last.
    func stage(after stage: StageName?) -> StageName? {
        guard let stage else { return stages.first }
        if let position = stages.firstIndex(of: stage) { return stages.indices.contains(position + 1) ? stages[position + 1] : nil }
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
