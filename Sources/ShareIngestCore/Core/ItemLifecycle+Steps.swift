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

/// The stage a step comes from, and the item as it was before that stage ran:
/// what a refused record takes the item back to (``ItemLifecycle/afterFailedRecord(_:next:ran:error:failure:refusedBefore:)``).
/// A reference: it rides with every step a worker's leaving items wait to
/// record, and copying the item with each would cost a retain per field.
final class RanStage: Sendable {
    let stage: StageName
    let before: ItemState

    init(stage: StageName, before: ItemState) {
        self.stage = stage
        self.before = before
    }
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
