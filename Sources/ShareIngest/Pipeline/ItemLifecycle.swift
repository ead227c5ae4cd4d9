import Foundation

/// What became of an attempt at an item's next stage.
enum StageOutcome: Sendable, Equatable {
    /// The stage did its job.
    case completed(StageName)
    /// The item failed for a reason of its own: final.
    case failed(ItemFailure)
    /// The attempt was lost through no fault of the file: its worker died or
    /// stalled, a store or system error that is not the file's, or the whole
    /// process died while decoding it in-process. `blamed`: the attempt counts
    /// against the item (it was the only item being decoded when the process
    /// died; a job's worker vanished with it). `crashedDecoding`: the loss was a
    /// death while decoding, so an item out of attempts is poison
    /// (`crashedRepeatedly`) rather than unlucky (`attemptsExhausted`).
    case lost(at: StageName, reason: String, blamed: Bool, crashedDecoding: Bool)
}

/// What happens to an item next. Only ``ItemLifecycle`` decides it; the local
/// runner and the distributed worker carry it out, each with its transport.
enum NextStep: Sendable, Equatable {
    /// Run this stage now.
    case run(StageName)
    /// Run this stage again, not before `after` seconds have passed; `reason`:
    /// why the attempt was lost.
    case retry(StageName, after: Double, reason: String)
    /// Stop here, resumable: a stop was asked. The item waits before this stage
    /// (for `--resume`, a later watcher, or another worker).
    case park(StageName)
    /// Finished: it goes to the manifest (delivered or failed; the fan-in counts it).
    case finished

    /// The stage the item waits for, if it is not finished.
    var stage: StageName? {
        switch self {
        case .run(let stage), .retry(let stage, _, _), .park(let stage): stage
        case .finished: nil
        }
    }
}

/// An item's life through a pipeline's stages: the one place its next step is
/// decided from an outcome, for the local runner (``BatchRunner``) and for
/// remote workers (``StageWorker``) alike, so retries, poison items, stops and
/// give-ups behave the same in every mode. (Modelled on job queues such as
/// Oban and River, where one function moves a job between a few named states.)
struct ItemLifecycle: Sendable {
    /// The pipeline's item stages, in order.
    let stages: [StageName]
    /// Attempts an item may lose (``StageOutcome/lost(at:reason:blamed:crashedDecoding:)``,
    /// blamed) before it fails: the batch's `maxAttempts` (3 by default).
    let maxAttempts: Int

    init(stages: [StageName], maxAttempts: Int = 3) {
        self.stages = stages
        self.maxAttempts = max(1, maxAttempts)
    }

    /// Where an item stands before anything runs: its next stage (or parked
    /// there when `stopping`), or finished (failed, or past the last stage).
    func start(_ item: ItemState, stopping: Bool) -> NextStep {
        guard item.failure == nil, let stage = stage(after: item.completed) else { return .finished }
        return stopping ? .park(stage) : .run(stage)
    }

    /// Applies `outcome` to `item` and decides its next step. `stopping`: a stop
    /// was asked, so an item that may go on is parked instead.
    func advance(_ item: inout ItemState, after outcome: StageOutcome, stopping: Bool) -> NextStep {
        switch outcome {
        case .completed(let stage):
            item.completed = stage
            item.lostAttempts = 0
            return start(item, stopping: stopping)
        case .failed(let failure):
            item.failure = failure
            return .finished
        case .lost(let stage, let reason, let blamed, let crashedDecoding):
            if blamed { item.lostAttempts += 1 }
            if item.lostAttempts >= maxAttempts {
                item.failure =
                    crashedDecoding
                    ? ItemFailure(
                        stage, .crashedRepeatedly,
                        "\(item.label): the process died \(item.lostAttempts) times while decoding this file alone; not tried again")
                    : ItemFailure(stage, .attemptsExhausted, "\(item.label): gave up after \(item.lostAttempts) attempts at \(stage.rawValue): \(reason)")
                return .finished
            }
            if stopping { return .park(stage) }
            return .retry(stage, after: blamed ? Self.backoff(after: item.lostAttempts) : 0, reason: reason)
        }
    }

    /// The batch's fan-in (its manifest job, distributed) lost its `attempt`-th
    /// attempt through no fault of the batch (its worker died, a store error):
    /// it runs again after a backoff while it has attempts left; after the last
    /// one it is finished, and the batch fails (`share ingest --resume` retries it).
    func afterLosingFanIn(attempt: Int, reason: String) -> NextStep {
        attempt < maxAttempts ? .retry(.manifest, after: Self.backoff(after: attempt), reason: reason) : .finished
    }

    /// The stage after `stage` (the first one after nil), nil after the last.
    func stage(after stage: StageName?) -> StageName? {
        guard let stage else { return stages.first }
        return stages.first { $0 > stage }
    }

    /// The last item stage: an item that completed it goes to the manifest.
    var lastStage: StageName? { stages.last }

    /// True when nothing more will run on `item`.
    func isFinished(_ item: ItemState) -> Bool { start(item, stopping: false) == .finished }

    /// Backoff before attempt `lost + 1`: 0.5 s, doubling, at most 30 s.
    static func backoff(after lost: Int) -> Double { min(30, 0.5 * pow(2, Double(max(0, lost - 1)))) }
}
