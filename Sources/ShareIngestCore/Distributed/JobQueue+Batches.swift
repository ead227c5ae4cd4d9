import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

// The queue's batches: their rows, their plan (begin, append, seal),
// reopening and abandoning them, and their items' counts (``JobQueue``).
extension JobQueue {
    // MARK: - Batches

    /// The queue's batch columns, as a select list (``BatchColumn/selectList(_:table:)``).
    static let batchColumns = BatchColumn.selectList(.queue)

    /// A batch row with what only the distributed mode records.
    struct StoredBatch {
        let record: BatchRecord
        /// The container every worker writes into.
        let container: String
        /// The token planning wrote into the container (nil for older batches).
        let token: String?
        /// The folders and files given at planning (absolute), which workers must see.
        let roots: [String]
        /// Items not finished yet.
        let remaining: Int
        /// Attempts an item (or the manifest job) may lose before it fails.
        let maxAttempts: Int
        /// Why the batch failed (state `failed`).
        let failure: String?
    }

    func batch(_ id: UUID) throws -> StoredBatch? {
        try query("SELECT \(Self.batchColumns) FROM share_batches WHERE \(BatchColumn.id) = $1", [id.uuidString]).first
            .flatMap(Self.storedBatch)
    }

    /// The batch with this id or key.
    func batch(idOrKey: String) throws -> StoredBatch? {
        try query(
            "SELECT \(Self.batchColumns) FROM share_batches WHERE \(BatchColumn.id)::text = lower($1) OR \(BatchColumn.key) = $1",
            [idOrKey]
        ).first.flatMap(
            Self.storedBatch)
    }

    static func storedBatch(_ row: [String: String]) -> StoredBatch? {
        guard let record = BatchRecord(row: PostgresRow(values: row)), let container = row[BatchColumn.container.name]
        else {
            return nil
        }
        let roots =
            row[BatchColumn.roots.name].flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) } ?? []
        return StoredBatch(
            record: record, container: container, token: row[BatchColumn.token.name], roots: roots,
            remaining: Int(row[BatchColumn.remaining.name] ?? "0") ?? 0,
            maxAttempts: row[BatchColumn.maxAttempts.name].flatMap(Int.init) ?? ItemLifecycle.defaultMaxAttempts,
            failure: row[BatchColumn.failure.name])
    }
    /// A failed batch resumed (`share ingest --resume`): running again, its
    /// manifest job as the lifecycle reopens it (``BatchLifecycle/reopened``).
    func reopen(_ batch: UUID) throws {
        let recorded = ItemLifecycle.recorded(BatchLifecycle.reopened.next, at: .manifest, holderKeeps: false)
        try query(
            """
            WITH b AS (
                UPDATE share_batches SET state = \(BatchLifecycle.sql(.resume)), failure = NULL, finished_at = NULL
                WHERE id = $1 AND state IN (\(BatchLifecycle.sql(BatchLifecycle.reopenable))) RETURNING id)
            UPDATE share_jobs j SET state = '\(recorded.state)', attempts = $2, not_before = now(), worker_id = NULL, lease_until = NULL, finished_at = NULL
            FROM b WHERE j.batch_id = b.id AND j.idx = -1 AND j.state = '\(State.failed)'
            RETURNING j.id, pg_notify('share_jobs', '')
            """,
            [batch.uuidString, String(BatchLifecycle.reopened.lost)])
    }
    /// A batch whose planner stopped before every item was enqueued (still
    /// `claimed`: no worker took any of it): abandoned, its rows removed.
    func abandon(_ batch: UUID) throws {
        try query(
            """
            WITH gone AS (DELETE FROM share_jobs WHERE batch_id = $1)
            UPDATE share_batches SET state = \(BatchLifecycle.sql(.abandon)), finished_at = extract(epoch FROM now())
            WHERE id = $1 AND state = '\(BatchState.claimed.rawValue)'
            """,
            [batch.uuidString])
    }
    func batch(id: UUID) throws -> BatchRecord? { try batch(id)?.record }
    func batch(key: ShareKey) throws -> BatchRecord? {
        try query("SELECT \(Self.batchColumns) FROM share_batches WHERE \(BatchColumn.key) = $1", [key.rawValue]).first
            .flatMap(Self.storedBatch)?.record
    }
    /// The batch row, `claimed` (workers take no job of it yet), with the
    /// container every worker writes into, its token, roots and attempts; rows
    /// a plan cut short left are removed.
    func begin(_ batch: BatchRecord, plan: BatchPlan.Details) throws {
        var record = batch
        record.handle(.claim)
        let extra: [(String, String?)] = [
            (BatchColumn.container.name, plan.container.root), (BatchColumn.token.name, plan.token),
            (BatchColumn.roots.name, Self.json(plan.roots)), (BatchColumn.remaining.name, "0"),
        ]
        let columns = record.columns.map { ($0.key, $0.value.text) } + extra
        try query(
            """
            WITH gone AS (DELETE FROM share_jobs WHERE batch_id = $1::uuid)
            INSERT INTO share_batches (\(columns.map(\.0).joined(separator: ", ")))
            VALUES (\((1...columns.count).map { "$\($0)" }.joined(separator: ", ")))
            ON CONFLICT (id) DO UPDATE SET state = \(BatchLifecycle.sql(.claim))
            """,
            columns.map(\.1))
    }
    /// One statement: a row per item at its first stage (or finished, for one
    /// that failed while the drop was walked), a chunk of the plan.
    func append(_ items: [ItemState], to batch: BatchRecord, plan: BatchPlan.Details) throws {
        guard !items.isEmpty else { return }
        let rows = items.map { item in
            let next = plan.lifecycle.start(item, stopping: false)
            let recorded = ItemLifecycle.recorded(
                next, at: next.stage ?? plan.lifecycle.lastStage ?? .manifest, holderKeeps: false)
            return Row(
                idx: item.index, stage: recorded.stage, state: recorded.state.rawValue,
                priority: Self.priority(of: item), snapshot: item)
        }
        try query(
            """
            INSERT INTO share_jobs (batch_id, idx, stage, state, max_attempts, priority, snapshot, finished_at, \(Self.columnNames.joined(separator: ", ")))
            SELECT $1::uuid, (e->>'idx')::integer, e->>'stage', e->>'state', $3::integer, (e->>'priority')::double precision,
                e->'snapshot', CASE WHEN e->>'state' IN ('\(State.done)', '\(State.failed)') THEN now() END, \(Self.columnNames.map { "e->'columns'->>'\($0)'" }.joined(separator: ", "))
            FROM jsonb_array_elements($2::jsonb) e
            """,
            [batch.id.uuidString, Self.json(rows), String(plan.lifecycle.maxAttempts)])
    }
    /// One statement: the batch running, with its count of unfinished items (the
    /// fan-in counter), and its manifest job, waiting for the last item (queued
    /// at once if none is left); workers are woken.
    func seal(_ batch: BatchRecord, plan: BatchPlan.Details, unfinished: Int) throws {
        let fanIn = BatchLifecycle.fanInJobState(unfinished: unfinished)
        try query(
            """
            WITH batch AS (
                UPDATE share_batches SET state = \(BatchLifecycle.sql(.seal)), item_count = $2, remaining = $3 WHERE id = $1::uuid RETURNING id),
            manifest AS (
                INSERT INTO share_jobs (batch_id, idx, stage, state, max_attempts)
                SELECT batch.id, -1, '\(StageName.manifest)', '\(fanIn)', $4::integer FROM batch)
            SELECT pg_notify('share_jobs', '')
            """,
            [batch.id.uuidString, String(batch.itemCount), String(unfinished), String(plan.lifecycle.maxAttempts)])
    }
    func items(of batch: UUID, after index: Int, limit: Int) throws -> [ItemState] {
        try query(
            "SELECT idx, snapshot FROM share_jobs WHERE batch_id = $1 AND idx > $2 ORDER BY idx LIMIT $3",
            [batch.uuidString, String(max(index, -1)), String(limit)]
        ).map { row in
            ItemState.decode(row["snapshot"] ?? "", index: row["idx"].flatMap(Int.init) ?? -1, id: nil)
        }
    }
    func counts(of batch: UUID) throws -> StoredCounts {
        let skipped = ItemFailure.skipping.sorted { $0.rawValue < $1.rawValue }.map { "'\($0.rawValue)'" }.joined(
            separator: ", ")
        let finished = "state IN ('\(State.done)', '\(State.failed)')"
        let row = try query(
            """
            SELECT count(*) AS items, count(*) FILTER (WHERE NOT \(finished)) AS unfinished,
                count(*) FILTER (WHERE \(finished) AND \(ItemColumn.reason) IS NULL) AS ingested,
                count(*) FILTER (WHERE \(finished) AND \(ItemColumn.reason) IN (\(skipped))) AS skipped,
                count(*) FILTER (WHERE \(finished) AND \(ItemColumn.reason) NOT IN (\(skipped))) AS failed
            FROM share_jobs WHERE batch_id = $1::uuid AND idx >= 0
            """, [batch.uuidString]
        ).first
        func count(_ name: String) -> Int { row?[name].flatMap(Int.init) ?? 0 }
        return StoredCounts(
            items: count("items"), ingested: count("ingested"), failed: count("failed"), skipped: count("skipped"),
            unfinished: count("unfinished"))
    }
    func recordedItems(of batch: UUID) throws -> [RecordedItem] {
        try query(
            """
            SELECT idx, snapshot, stage, state, greatest(0, extract(epoch FROM not_before - now())) AS wait
            FROM share_jobs WHERE batch_id = $1::uuid AND idx >= 0 ORDER BY idx
            """, [batch.uuidString]
        ).map { row in
            let finished = [State.done.rawValue, State.failed.rawValue].contains(row["state"] ?? "")
            return RecordedItem(
                item: ItemState.decode(row["snapshot"] ?? "", index: row["idx"].flatMap(Int.init) ?? -1, id: nil),
                stage: finished ? nil : row["stage"].map(StageName.init), wait: row["wait"].flatMap(Double.init) ?? 0)
        }
    }
}
