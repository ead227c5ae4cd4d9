import Foundation

/// Records the steps of a batch's items into its journal (the batch's lock is
/// the holder's lease).
final class JournalSteps: StepRecorder {
    let journal: any JournalStore
    let batch: UUID

    init(_ journal: any JournalStore, batch: UUID) {
        self.journal = journal
        self.batch = batch
    }

    func record(_ item: ItemState, next: NextStep, keeps: Bool, ran: RanStage?) throws -> StepRecord {
        try journal.record(item, next: next, batch: batch)
        return .saved
    }

    var roundTrips: Bool { false }
}
