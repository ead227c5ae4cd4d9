import Foundation
import ShareManifest

/// One unit of distributed work: a stage of one item (or a batch's manifest).
struct Job: Sendable {
    let id: Int64
    let batchID: UUID
    /// The item's index; -1 for the manifest job.
    let index: Int
    let stage: StageName
    let attempts: Int
    let maxAttempts: Int
}

/// The jobs of many batches in PostgreSQL, shared by workers on many machines.
///
/// - A batch's items are enqueued with their UUIDs; each item has one job per
///   stage, the next one inserted in the same transaction that completes the last.
/// - Workers claim with `SELECT … FOR UPDATE SKIP LOCKED` and hold a lease they
///   renew; a job whose lease expires (its worker died) is queued again, and after
///   `max_attempts` the item fails with the last error: a poison file never blocks.
/// - Completions of one batch are serialized on its row, so exactly one
///   completion sees the last item finish and enqueues the manifest job; the
///   manifest job writes the manifest once and marks the batch done.
/// - `NOTIFY share_jobs` wakes idle workers; they also poll every second.
final class JobQueue {
    let connection: PostgresConnection
    static let schemaVersion = 2
    /// Attempts per job for the batches this queue creates.
    var maxAttempts = 3

    init(url: String) throws(PostgresError) {
        connection = try PostgresConnection(url: url)
    }

    /// Creates or upgrades the schema (versioned; concurrent callers serialize on an advisory lock).
    func migrate() throws {
        try connection.transaction {
            try connection.query("SELECT pg_advisory_xact_lock(727274)")
            try connection.query("CREATE TABLE IF NOT EXISTS share_schema (version integer NOT NULL)")
            let version = Int(try connection.query("SELECT max(version) AS v FROM share_schema").first?["v"] ?? "0") ?? 0
            if version < 1 {
                try connection.query("""
                    CREATE TABLE share_batches (
                        id uuid PRIMARY KEY, key text UNIQUE NOT NULL, container text NOT NULL, pipeline text NOT NULL,
                        message text, state text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz,
                        redirect_url text, manifest_path text, item_count integer NOT NULL DEFAULT 0,
                        ingested integer NOT NULL DEFAULT 0, failed integer NOT NULL DEFAULT 0, skipped integer NOT NULL DEFAULT 0)
                    """)
                try connection.query("""
                    CREATE TABLE share_items (
                        batch_id uuid NOT NULL REFERENCES share_batches(id) ON DELETE CASCADE, idx integer NOT NULL,
                        snapshot jsonb NOT NULL, finished boolean NOT NULL DEFAULT false, PRIMARY KEY (batch_id, idx))
                    """)
                try connection.query("""
                    CREATE TABLE share_jobs (
                        id bigserial PRIMARY KEY, batch_id uuid NOT NULL REFERENCES share_batches(id) ON DELETE CASCADE,
                        idx integer NOT NULL, stage text NOT NULL, state text NOT NULL DEFAULT 'queued',
                        attempts integer NOT NULL DEFAULT 0, max_attempts integer NOT NULL DEFAULT 3,
                        not_before timestamptz NOT NULL DEFAULT now(), lease_until timestamptz, worker text, last_error text,
                        finished_at timestamptz, UNIQUE (batch_id, idx, stage))
                    """)
                try connection.query("CREATE INDEX share_jobs_queued ON share_jobs (stage, not_before) WHERE state = 'queued'")
                try connection.query("CREATE INDEX share_jobs_running ON share_jobs (lease_until) WHERE state = 'running'")
                try connection.query("INSERT INTO share_schema (version) VALUES (1)")
            }
            if version < 2 {
                // The batch row of the journal's row model (BatchStore): times as
                // epoch seconds, the drop's columns.
                try connection.query("""
                    ALTER TABLE share_batches ALTER COLUMN created_at DROP DEFAULT,
                        ALTER COLUMN created_at TYPE double precision USING extract(epoch FROM created_at),
                        ALTER COLUMN finished_at TYPE double precision USING extract(epoch FROM finished_at),
                        ADD COLUMN drop_name text, ADD COLUMN drop_signature text, ADD COLUMN drop_path text
                    """)
                try connection.query("INSERT INTO share_schema (version) VALUES (2)")
            }
        }
    }

    // MARK: - Enqueue

    /// Records a batch (its row, with the container every worker writes into) and
    /// its items, and queues each unfinished item's first stage.
    func create(_ batch: BatchRecord, items: [ItemWork], container: ContainerDirectory) throws {
        var batch = batch
        batch.state = .running
        batch.itemCount = items.count
        let columns = Array(batch.columns) + [("container", StoreValue.text(container.root))]
        try connection.transaction {
            try connection.query(
                "INSERT INTO share_batches (\(columns.map(\.0).joined(separator: ", "))) VALUES (\((1...columns.count).map { "$\($0)" }.joined(separator: ", ")))",
                columns.map(\.1.text))
            for item in items {
                let finished = item.failure != nil
                try connection.query(
                    "INSERT INTO share_items (batch_id, idx, snapshot, finished) VALUES ($1, $2, $3::jsonb, $4)",
                    [batch.id.uuidString, String(item.index), ItemSnapshot(item).json, finished ? "true" : "false"])
                if !finished {
                    try connection.query(
                        "INSERT INTO share_jobs (batch_id, idx, stage, max_attempts) VALUES ($1, $2, $3, $4)",
                        [batch.id.uuidString, String(item.index), StageName.sniff.rawValue, String(maxAttempts)])
                }
            }
            if items.allSatisfy({ $0.failure != nil }) { try enqueueManifest(batch.id, maxAttempts: maxAttempts) }
            try connection.query("NOTIFY share_jobs")
        }
    }

    private func enqueueManifest(_ batch: UUID, maxAttempts: Int) throws {
        try connection.query(
            "INSERT INTO share_jobs (batch_id, idx, stage, max_attempts) VALUES ($1, -1, 'manifest', $2) ON CONFLICT DO NOTHING",
            [batch.uuidString, String(maxAttempts)])
    }

    // MARK: - Claim, renew, complete

    /// Claims the oldest ready job of one of `stages`, leased to `worker` for `lease` seconds.
    func claim(stages: [StageName], worker: String, lease: Double) throws -> Job? {
        let rows = try connection.query(
            """
            UPDATE share_jobs SET state = 'running', attempts = attempts + 1, worker = $2,
                lease_until = now() + make_interval(secs => $3)
            WHERE id = (SELECT id FROM share_jobs WHERE state = 'queued' AND not_before <= now() AND stage = ANY($1::text[])
                        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING id, batch_id, idx, stage, attempts, max_attempts
            """,
            ["{" + stages.map(\.rawValue).joined(separator: ",") + "}", worker, String(lease)])
        return rows.first.flatMap(Self.job)
    }

    static func job(_ row: [String: String]) -> Job? {
        guard let id = row["id"].flatMap(Int64.init), let batch = row["batch_id"].flatMap(UUID.init(uuidString:)),
            let index = row["idx"].flatMap(Int.init), let stage = row["stage"].flatMap(StageName.init(rawValue:))
        else { return nil }
        return Job(id: id, batchID: batch, index: index, stage: stage, attempts: Int(row["attempts"] ?? "1") ?? 1, maxAttempts: Int(row["max_attempts"] ?? "3") ?? 3)
    }

    /// Extends a running job's lease; false if the job is no longer ours.
    func renew(_ job: Job, worker: String, lease: Double) throws -> Bool {
        !(try connection.query(
            "UPDATE share_jobs SET lease_until = now() + make_interval(secs => $3) WHERE id = $1 AND worker = $2 AND state = 'running' RETURNING id",
            [String(job.id), worker, String(lease)])).isEmpty
    }

    /// Records a finished stage: the item's new state, and its next stage's job (or,
    /// when it was the item's last, the manifest job if every item is finished).
    /// Throws ``LeaseLost`` (and changes nothing) if the job was taken from us.
    func complete(_ job: Job, item: ItemWork, next: StageName?, worker: String) throws {
        try connection.transaction {
            try connection.query("SELECT id FROM share_batches WHERE id = $1 FOR UPDATE", [job.batchID.uuidString])
            let owned = try connection.query(
                "UPDATE share_jobs SET state = 'done', finished_at = now(), lease_until = NULL WHERE id = $1 AND worker = $2 AND state = 'running' RETURNING id",
                [String(job.id), worker])
            guard !owned.isEmpty else { throw LeaseLost() }
            try finishItem(job, item: item, next: next)
            try connection.query("NOTIFY share_jobs")
        }
    }

    private func finishItem(_ job: Job, item: ItemWork, next: StageName?) throws {
        let finished = next == nil || item.failure != nil
        try connection.query(
            "UPDATE share_items SET snapshot = $3::jsonb, finished = $4 WHERE batch_id = $1 AND idx = $2",
            [job.batchID.uuidString, String(job.index), ItemSnapshot(item).json, finished ? "true" : "false"])
        if let next, !finished {
            try connection.query(
                "INSERT INTO share_jobs (batch_id, idx, stage, max_attempts) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                [job.batchID.uuidString, String(job.index), next.rawValue, String(job.maxAttempts)])
        }
        if finished {
            let unfinished = try connection.query("SELECT count(*) AS n FROM share_items WHERE batch_id = $1 AND NOT finished", [job.batchID.uuidString])
            if unfinished.first?["n"] == "0" { try enqueueManifest(job.batchID, maxAttempts: job.maxAttempts) }
        }
    }

    /// A job that failed for a reason that is not the file's (or whose worker died):
    /// queued again after a backoff, or, past its attempts, the item fails with
    /// `error`. `item` is the item's last recorded state (nil for the manifest job).
    func retryOrGiveUp(_ job: Job, error: String, item: ItemWork?) throws {
        try connection.transaction {
            try connection.query("SELECT id FROM share_batches WHERE id = $1 FOR UPDATE", [job.batchID.uuidString])
            let backoff = min(30.0, 0.5 * pow(2, Double(job.attempts - 1)))
            let rows = try connection.query(
                """
                UPDATE share_jobs SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
                    worker = NULL, lease_until = NULL, last_error = $2, not_before = now() + make_interval(secs => $3)
                WHERE id = $1 AND state = 'running' RETURNING state
                """,
                [String(job.id), error, String(backoff)])
            if rows.first?["state"] == "failed", let item {
                item.failure = ItemFailure(job.stage, .attemptsExhausted, "\(item.source.label): gave up after \(job.attempts) attempts at \(job.stage.rawValue): \(error)")
                try finishItem(job, item: item, next: nil)
            }
            try connection.query("NOTIFY share_jobs")
        }
    }

    /// Jobs whose lease expired: their workers died. Returns them for
    /// ``retryOrGiveUp(_:error:item:)``.
    func expired() throws -> [Job] {
        try connection.query(
            "SELECT id, batch_id, idx, stage, attempts, max_attempts FROM share_jobs WHERE state = 'running' AND lease_until < now() ORDER BY id LIMIT 50"
        ).compactMap(Self.job)
    }

    // MARK: - Batches and items

    /// A batch row and the container its workers write into.
    struct StoredBatch {
        let record: BatchRecord
        let container: String
    }

    func batch(_ id: UUID) throws -> StoredBatch? {
        try connection.query("SELECT * FROM share_batches WHERE id = $1", [id.uuidString]).first.flatMap(Self.storedBatch)
    }

    func batches() throws -> [StoredBatch] {
        try connection.query("SELECT * FROM share_batches ORDER BY created_at DESC").compactMap(Self.storedBatch)
    }

    static func storedBatch(_ row: [String: String]) -> StoredBatch? {
        guard let record = BatchRecord(row: PostgresRow(values: row)), let container = row["container"] else { return nil }
        return StoredBatch(record: record, container: container)
    }

    func item(_ batch: UUID, index: Int) throws -> ItemWork? {
        try connection.query("SELECT snapshot FROM share_items WHERE batch_id = $1 AND idx = $2", [batch.uuidString, String(index)])
            .first?["snapshot"].flatMap(ItemSnapshot.decode)
    }

    func items(_ batch: UUID) throws -> [ItemWork] {
        try connection.query("SELECT snapshot FROM share_items WHERE batch_id = $1 ORDER BY idx", [batch.uuidString])
            .compactMap { $0["snapshot"].flatMap(ItemSnapshot.decode) }
    }

    /// Marks the batch done (with its manifest) and completes the manifest job, in
    /// one transaction; false if the batch was already done (nothing changes).
    func finishBatch(_ job: Job, record: BatchRecord, worker: String) throws -> Bool {
        try connection.transaction {
            let state = try connection.query("SELECT state FROM share_batches WHERE id = $1 FOR UPDATE", [job.batchID.uuidString]).first?["state"]
            let owned = try connection.query(
                "UPDATE share_jobs SET state = 'done', finished_at = now(), lease_until = NULL WHERE id = $1 AND worker = $2 AND state = 'running' RETURNING id",
                [String(job.id), worker])
            guard !owned.isEmpty else { throw LeaseLost() }
            guard state == "running" else { return false }
            let columns = record.columns.filter { BatchRecord.mutableColumns.contains($0.key) }
            try connection.query(
                "UPDATE share_batches SET \(columns.enumerated().map { "\($1.key) = $\($0 + 2)" }.joined(separator: ", ")) WHERE id = $1",
                [job.batchID.uuidString] + columns.map(\.value.text))
            try connection.query("NOTIFY share_batches")
            return true
        }
    }

    /// Queue depth: jobs per stage and state; and done jobs per worker.
    func depth() throws -> (stages: [[String: String]], workers: [[String: String]]) {
        (try connection.query("SELECT stage, state, count(*) AS n FROM share_jobs GROUP BY stage, state ORDER BY stage, state"),
         try connection.query("SELECT worker, count(*) AS n FROM share_jobs WHERE state = 'done' AND worker IS NOT NULL GROUP BY worker ORDER BY worker"))
    }
}

/// The job's lease expired and another worker took it; our results are dropped
/// (stages are idempotent: the other run writes the same files).
struct LeaseLost: Error {}

extension JobQueue: BatchStore {
    func batch(id: UUID) throws -> BatchRecord? { try batch(id)?.record }

    func batch(key: ShareKey) throws -> BatchRecord? {
        try connection.query("SELECT * FROM share_batches WHERE key = $1", [key.rawValue]).first.flatMap(Self.storedBatch)?.record
    }

    func items(of batch: UUID) throws -> [ItemWork] { try items(batch) }
}

/// A PostgreSQL result row (text format), read by column name.
struct PostgresRow: StoreRow {
    let values: [String: String]
    func text(_ column: String) -> String? { values[column] }
}
