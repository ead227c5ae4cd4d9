import Foundation
import ShareManifest
import TestSupport
import Testing

@testable import ShareIngestCore

/// The batch columns are declared once (``BatchColumn``): both stores' real
/// batch tables, as their migrations make them, have exactly the declared
/// columns, and the batch's row is the declaration's.
@Suite struct BatchColumnTests {
    /// The journal's `batches` (SQLite, `PRAGMA table_info`) has the columns
    /// declared for the journal, no more, no fewer.
    @Test func theJournalsBatchTableHasTheDeclaredColumns() throws {
        let container = try TemporaryContainer()
        let journal = try BatchJournal(container: container.directory)
        let table = try journal.database.query("PRAGMA table_info(batches)").compactMap { $0.text("name") }
        let declared = BatchColumn.columns(of: .journal).map(\.name)
        #expect(table.count == Set(table).count)
        #expect(
            Set(table) == Set(declared),
            "in the table only: \(Set(table).subtracting(declared).sorted()); declared only: \(Set(declared).subtracting(table).sorted())"
        )
    }

    /// The queue's `share_batches` (a throwaway PostgreSQL, migrated by `share
    /// db migrate`'s code; `information_schema.columns`) has the columns
    /// declared for the queue, no more, no fewer.
    @Test func theQueuesBatchTableHasTheDeclaredColumns() throws {
        let server = try PostgresServer()
        try StageWorker.migrate(url: server.url)
        let queue = try JobQueue(url: server.url, role: "columns")
        defer { queue.close() }
        let table = try queue.connection.query(
            """
            SELECT column_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = 'share_batches'
            """
        ).compactMap { $0["column_name"] }
        let declared = BatchColumn.columns(of: .queue).map(\.name)
        #expect(
            Set(table) == Set(declared),
            "in the table only: \(Set(table).subtracting(declared).sorted()); declared only: \(Set(declared).subtracting(table).sorted())"
        )
    }

    /// The batch's row is the declaration's: every column of the record once,
    /// in its order, in both stores; an update writes the mutable ones, the
    /// state among them; the columns' names are all different.
    @Test func theBatchRowIsTheDeclaredOne() throws {
        let record = BatchRecord(
            id: UUID(), key: try ShareKey("COLUMNS1"), state: .running, pipelineJSON: "{}", message: nil,
            createdAt: Date())
        #expect(record.columns.map(\.key) == BatchColumn.recorded.map(\.name))
        #expect(BatchColumn.recorded.allSatisfy { $0.stores == Set(BatchColumn.Store.allCases) })
        #expect(record.mutableColumns.map(\.key) == BatchColumn.recorded.filter(\.mutable).map(\.name))
        #expect(record.mutableColumns.contains { $0.key == BatchColumn.state.name })
        #expect(Set(BatchColumn.all.map(\.name)).count == BatchColumn.all.count)
    }
}
