import Foundation
import MediaFormats
import ShareIngest
import ShareManifest
import TestSupport
import Testing

@testable import ShareIngestCore

/// The distributed store on a real PostgreSQL server: what a worker's claims
/// and records do to the rows, observed directly.
@Suite(.serialized) struct QueueTests {
    static func batch(key: String) throws -> BatchRecord {
        BatchRecord(
            id: UUID(), key: try ShareKey(key), state: .running,
            pipelineJSON: PipelineDefinition.standard.encodedJSON(), message: nil,
            dropName: nil, dropSignature: nil, dropPath: nil, createdAt: Date())
    }

    /// An item past its sniff, of `format` and `size` bytes (what orders claims).
    static func sniffed(_ index: Int, format: MediaFormat, size: Int64) -> ItemState {
        var item = ItemState(index: index, id: UUID(), source: .text("x"), label: "item-\(index)")
        item.completed = .sniff
        item.size = size
        item.sniffed = SniffedContent(
            format: format, fileExtension: format.fileExtension(keeping: nil), mimeType: format.mimeType,
            recognised: true, declaredExtension: nil, contradictedFormat: nil)
        return item
    }

    /// Workers take the costliest waiting job first (a 12 MP HEIC before a JPEG
    /// before a text file), as the local runner's queues do.
    @Test func claimsTakeTheCostliestJobFirst() throws {
        let server = try PostgresServer()
        try StageWorker.migrate(url: server.url)
        let container = try TemporaryContainer()
        let queue = try JobQueue(url: server.url, role: "test")
        let record = try Self.batch(key: "costliest")
        let items = [
            Self.sniffed(0, format: .text, size: 10), Self.sniffed(1, format: .jpeg, size: 3_000_000),
            Self.sniffed(2, format: .heic, size: 2_500_000),
            Self.sniffed(3, format: .jpeg, size: 200_000),
        ]
        try queue.create(
            record, items: items,
            plan: BatchPlan.Details(container: container.directory, pipeline: .standard, maxAttempts: 3))
        let worker = try queue.register(name: "test", stages: StageName.allCases, concurrency: 1)
        var order: [Int] = []
        while true {
            let (jobs, _) = try queue.claim(
                stages: StageName.allCases, worker: worker, limit: 1, batches: [record.id], blocked: [])
            guard let job = jobs.first else { break }
            #expect(job.stage == .copy)
            order.append(job.index)
        }
        #expect(order == [2, 1, 3, 0])
    }

    /// PostgreSQL's errors carry their SQLSTATE, named, and say what they mean
    /// for a record: a value the server cannot keep (`\u0000` in `jsonb`) is
    /// the record's; a missing table is the server's trouble; a lost
    /// connection is the server away.
    @Test func errorsCarryTheirSQLStateAndWhatTheyMeanForARecord() throws {
        let server = try PostgresServer()
        let connection = try PostgresConnection(url: server.url, role: "test")
        func failure(_ sql: String) -> PostgresError? {
            do {
                try connection.query(sql)
                return nil
            } catch {
                return error
            }
        }
        let refused = try #require(failure(#"SELECT '{"a": "\u0000"}'::jsonb"#))
        #expect(
            refused.sqlState == .untranslatableCharacter && StoreFailure(refused) == .refused,
            "\(refused.sqlState?.code ?? "none"): \(refused)")
        let missing = try #require(failure("SELECT * FROM share_nothing"))
        #expect(
            missing.sqlState == .undefinedTable && missing.sqlState?.code == "42P01"
                && StoreFailure(missing) == .unavailable)
        #expect(SQLState("XX001") == .other("XX001") && SQLState("XX001").errorClass == "XX")
        server.stop()
        let lost = try #require(failure("SELECT 1"))
        #expect(lost.connectionLost && StoreFailure(lost) == .unreachable, "\(lost)")
    }

    /// The queue's item rows have the declared item columns (``ItemColumn``),
    /// each with its index, beside the job's own: none made by hand beside the declaration.
    @Test func theQueuesItemColumnsAreTheDeclaredOnes() throws {
        let server = try PostgresServer()
        try StageWorker.migrate(url: server.url)
        let connection = try PostgresConnection(url: server.url, role: "test")
        let columns = Set(
            try connection.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'share_jobs'")
                .compactMap { $0["column_name"] })
        let own: Set = [
            "id", "batch_id", "idx", "stage", "state", "attempts", "max_attempts", "not_before", "lease_until",
            "worker_id", "last_error", "error_at",
            "finished_at", "snapshot", "priority",
        ]
        #expect(columns.subtracting(own) == Set(ItemColumn.all.map(\.name)), "\(columns.subtracting(own).sorted())")
        let indexes = Set(
            try connection.query("SELECT indexname FROM pg_indexes WHERE tablename = 'share_jobs'").compactMap {
                $0["indexname"]
            })
        #expect(
            Set(ItemColumn.all.filter { $0.index != nil }.map { "share_jobs_\($0.name)" }).isSubset(of: indexes),
            "\(indexes)")
    }

    /// A record is the holder's only: once the job was taken from a worker (its
    /// lease lapsed and another took it), the first worker's late record changes
    /// nothing, and a record re-sent after a lost answer never applies twice.
    @Test func recordsAreGuardedByTheLease() throws {
        let server = try PostgresServer()
        try StageWorker.migrate(url: server.url)
        let container = try TemporaryContainer()
        let queue = try JobQueue(url: server.url, role: "test")
        let record = try Self.batch(key: "leases")
        var item = Self.sniffed(0, format: .jpeg, size: 1000)
        try queue.create(
            record, items: [item],
            plan: BatchPlan.Details(container: container.directory, pipeline: .standard, maxAttempts: 3))
        let worker = try queue.register(name: "holder", stages: StageName.allCases, concurrency: 1)
        let job = try #require(
            try queue.claim(stages: StageName.allCases, worker: worker, limit: 1, batches: [record.id], blocked: [])
                .jobs.first)
        item.completed = .copy
        #expect(
            try queue.record(
                item, next: .run(.probe), batch: record.id, lease: Lease(job: job.id, worker: worker + 1, stage: .copy))
                == false)
        #expect(try queue.record(item, next: .run(.probe), batch: record.id, lease: job.lease(worker: worker)))
        // The same record again (its answer was lost): the row is not at copy any more.
        #expect(try queue.record(item, next: .run(.probe), batch: record.id, lease: job.lease(worker: worker)) == false)
        #expect(
            try server.sql("SELECT stage || ' ' || state FROM share_jobs WHERE idx = 0").trimmingCharacters(
                in: .whitespacesAndNewlines) == "probe queued")
    }
}
