import Foundation
import ShareManifest

/// One claimed unit of distributed work: the next stage of one item (its row
/// moves through the stages), or a batch's manifest.
struct Job: Sendable {
    let id: Int64
    let batchID: UUID
    /// The item's index; -1 for the manifest job.
    let index: Int
    /// The stage to run now.
    var stage: StageName
    /// Attempts at this stage, this one included.
    var attempts: Int
    let maxAttempts: Int
    /// The item as last saved (``ItemSnapshot`` JSON); nil for the manifest job.
    let snapshot: String?

    var isManifest: Bool { index < 0 }
}

/// The jobs of many batches in PostgreSQL, shared by workers on many machines.
/// Every operation on a job is one statement, so one round trip:
///
/// - enqueue: the batch row and every item's row in one statement;
/// - claim: up to N ready jobs (`FOR UPDATE SKIP LOCKED` in a CTE, then
///   `UPDATE … RETURNING` with the items' snapshots);
/// - complete: the item's new snapshot and next stage (kept by the same worker
///   when it serves that stage, so the item's stages need no new claim); when
///   the item is finished, the batch's `remaining` counter is decremented in the
///   same statement, and the one completion that brings it to 0 queues the
///   manifest job. No lock is held across round trips: the batch row is locked
///   only for the instant of the decrement.
/// - renew: one statement per worker (not per job) extends all its leases.
final class JobQueue {
    let connection: PostgresConnection

    /// Connects as `share-<role>@<host>`; waits end on `interruption`.
    init(url: String, role: String, interruption: Interruption? = nil) throws(PostgresError) {
        connection = try PostgresConnection(url: url, role: role, interruption: interruption)
    }

    // MARK: - Enqueue

    /// What a batch's rows hold beyond the journal's row model; set before ``create(_:items:container:)``.
    struct Planning {
        /// The stage each item starts at (nil: the pipeline has no item stage).
        var firstStage: StageName? = .sniff
        /// The token written into the container at planning (see ``WorkerVisibility``).
        var token: String?
        /// The absolute inputs given at planning, which every worker must see.
        var roots: [String] = []
        /// Attempts per job before its item (or the batch, for the manifest job) fails.
        var maxAttempts = 3
    }

    /// The distributed extras of the next batch ``create(_:items:container:)`` records.
    var planning = Planning()

    /// Records a planned batch and its items in one statement: the batch row
    /// (with the container every worker writes into, and ``planning``), one row
    /// per item at the pipeline's first stage (or finished, for an item that
    /// failed at planning), and the manifest job, waiting for the last item
    /// (queued at once if none is left).
    func create(_ batch: BatchRecord, items: [ItemWork], container: ContainerDirectory) throws {
        var batch = batch
        batch.state = .running
        batch.itemCount = items.count
        let firstStage = planning.firstStage
        let remaining = firstStage == nil ? 0 : items.count { $0.failure == nil }
        let extra: [(String, String?)] = [
            ("container", container.root), ("token", planning.token), ("roots", Self.json(planning.roots)),
            ("remaining", String(remaining)), ("max_attempts", String(planning.maxAttempts)),
        ]
        let columns = batch.columns.map { ($0.key, $0.value.text) } + extra
        let rows = items.map { item in
            let finished = item.failure != nil || firstStage == nil
            return #"{"idx":\#(item.index),"stage":"\#((firstStage ?? .manifest).rawValue)","state":"\#(finished ? "done" : "queued")","snapshot":\#(ItemSnapshot(item).json)}"#
        }
        let n = columns.count
        try connection.query(
            """
            WITH batch AS (
                INSERT INTO share_batches (\(columns.map(\.0).joined(separator: ", ")))
                VALUES (\((1...n).map { "$\($0)" }.joined(separator: ", "))) RETURNING id),
            items AS (
                INSERT INTO share_jobs (batch_id, idx, stage, state, max_attempts, snapshot, finished_at)
                SELECT batch.id, (e->>'idx')::integer, e->>'stage', e->>'state', $\(n + 2)::integer, e->'snapshot',
                    CASE WHEN e->>'state' = 'done' THEN now() END
                FROM batch, jsonb_array_elements($\(n + 1)::jsonb) e),
            manifest AS (
                INSERT INTO share_jobs (batch_id, idx, stage, state, max_attempts)
                SELECT batch.id, -1, 'manifest', CASE WHEN $\(n + 3)::integer = 0 THEN 'queued' ELSE 'waiting' END, $\(n + 2)::integer FROM batch)
            SELECT pg_notify('share_jobs', '')
            """,
            columns.map(\.1) + ["[" + rows.joined(separator: ",") + "]", String(planning.maxAttempts), String(remaining)])
    }

    static func json(_ value: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: value, options: [.withoutEscapingSlashes]), as: UTF8.self)
    }

    // MARK: - Claim, complete, retry

    private static let jobColumns = "j.id, j.batch_id, j.idx, j.stage, j.attempts, j.max_attempts, j.snapshot"

    static func job(_ row: [String: String]) -> Job? {
        guard let id = row["id"].flatMap(Int64.init), let batch = row["batch_id"].flatMap(UUID.init(uuidString:)),
            let index = row["idx"].flatMap(Int.init), let stage = row["stage"].flatMap(StageName.init(rawValue:))
        else { return nil }
        return Job(
            id: id, batchID: batch, index: index, stage: stage, attempts: Int(row["attempts"] ?? "1") ?? 1,
            maxAttempts: Int(row["max_attempts"] ?? "3") ?? 3, snapshot: row["snapshot"])
    }

    /// Claims up to `limit` ready jobs of `stages` (oldest first, skipping rows
    /// other workers are claiming), leased to `worker` for `lease` seconds, only
    /// of the batches in `batches` (those this worker checked it can work on);
    /// in the same statement, the running batches it has not checked yet (not in
    /// `batches` nor in `blocked`), to check before its next claim. So a worker
    /// never claims a job of a batch whose files it cannot see or write.
    func claim(stages: [StageName], worker: Int, lease: Double, limit: Int, batches: Set<UUID>, blocked: Set<UUID>) throws -> (jobs: [Job], unchecked: [UUID]) {
        let rows = try connection.query(
            """
            WITH picked AS (
                SELECT id FROM share_jobs
                WHERE state = 'queued' AND not_before <= now() AND stage = ANY($1::text[]) AND batch_id = ANY($4::uuid[])
                ORDER BY id LIMIT $5 FOR UPDATE SKIP LOCKED),
            claimed AS (
                UPDATE share_jobs j SET state = 'running', attempts = j.attempts + 1, worker_id = $2,
                    lease_until = now() + make_interval(secs => $3::double precision)
                FROM picked WHERE j.id = picked.id
                RETURNING \(Self.jobColumns))
            SELECT claimed.*, NULL::uuid AS unchecked FROM claimed
            UNION ALL
            (SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, b.id FROM share_batches b
             WHERE b.state = 'running' AND NOT (b.id = ANY($4::uuid[])) AND NOT (b.id = ANY($6::uuid[])) ORDER BY b.created_at LIMIT 20)
            """,
            [
                Self.array(stages.map(\.rawValue)), String(worker), String(lease), Self.array(batches.map(\.uuidString)), String(limit),
                Self.array(blocked.map(\.uuidString)),
            ])
        return (rows.compactMap(Self.job).sorted { $0.id < $1.id }, rows.compactMap { $0["unchecked"].flatMap(UUID.init(uuidString:)) })
    }

    static func array(_ values: [String]) -> String { "{" + values.joined(separator: ",") + "}" }

    /// What became of a completion.
    struct Completion {
        /// False when the job was no longer ours (released, taken over): nothing changed.
        let owned: Bool
        /// True when this completion finished the batch's last item and queued its manifest job.
        let queuedManifest: Bool
    }

    /// What a completion does with the item's row.
    enum Next {
        /// The worker goes on with `stage` itself (it serves it): the row stays leased to it.
        case keep(StageName)
        /// `stage` is for whichever worker claims it.
        case queue(StageName)
        /// The item is finished (delivered to the manifest stage, or failed for a reason of its own).
        case finished
        /// The item failed for a reason that is not its own, after its last attempt.
        case gaveUp(String)
    }

    /// Saves a finished stage in one statement: the item's snapshot and what comes
    /// next; a finished item decrements its batch's `remaining`, and the
    /// completion that brings it to 0 queues the manifest job. Only changes the
    /// row if it is still `worker`'s, at `job.stage` (so a completion re-sent after
    /// a lost connection never applies twice).
    func complete(_ job: Job, snapshot: String?, next: Next, worker: Int, lease: Double) throws -> Completion {
        let (stage, state, error): (StageName, String, String?) =
            switch next {
            case .keep(let stage): (stage, "running", nil)
            case .queue(let stage): (stage, "queued", nil)
            case .finished: (job.stage, "done", nil)
            case .gaveUp(let error): (job.stage, "failed", error)
            }
        let row = try connection.query(
            """
            WITH job AS (
                UPDATE share_jobs SET snapshot = coalesce($3::jsonb, snapshot), stage = $4, state = $5::text,
                    attempts = CASE WHEN $5::text = 'running' THEN 1 WHEN $5::text = 'queued' THEN 0 ELSE attempts END,
                    worker_id = CASE WHEN $5::text = 'queued' THEN NULL ELSE worker_id END,
                    lease_until = CASE WHEN $5::text = 'running' THEN now() + make_interval(secs => $6::double precision) END,
                    not_before = now(), finished_at = CASE WHEN $5::text IN ('done', 'failed') THEN now() END,
                    last_error = coalesce($7, last_error), error_at = CASE WHEN $7 IS NULL THEN error_at ELSE now() END
                WHERE id = $1 AND worker_id = $2 AND state = 'running' AND stage = $8
                RETURNING batch_id, state),
            batch AS (
                UPDATE share_batches b SET remaining = b.remaining - 1 FROM job
                WHERE b.id = job.batch_id AND job.state IN ('done', 'failed') RETURNING b.id, b.remaining),
            manifest AS (
                UPDATE share_jobs m SET state = 'queued', not_before = now() FROM batch
                WHERE m.batch_id = batch.id AND batch.remaining <= 0 AND m.idx = -1 AND m.state = 'waiting' RETURNING m.id)
            SELECT (SELECT count(*) FROM job) AS owned, (SELECT count(*) FROM manifest) AS manifest,
                CASE WHEN $5::text = 'queued' OR EXISTS (SELECT 1 FROM manifest) THEN pg_notify('share_jobs', '') END AS notified
            """,
            [String(job.id), String(worker), snapshot, stage.rawValue, state, String(lease), error, job.stage.rawValue]
        ).first
        return Completion(owned: row?["owned"] == "1", queuedManifest: row?["manifest"] == "1")
    }

    /// Backoff before attempt `attempts + 1`: 0.5 s, doubling, at most 30 s.
    static func backoff(after attempts: Int) -> Double { min(30, 0.5 * pow(2, Double(max(0, attempts - 1)))) }

    /// A job of `worker` that failed for a reason that is not its item's: queued
    /// again after a backoff, unless it has had all its attempts (then false, and
    /// nothing changed: the caller gives up on it).
    func retry(_ job: Job, worker: Int, error: String) throws -> Bool {
        !(try connection.query(
            """
            UPDATE share_jobs SET state = 'queued', worker_id = NULL, lease_until = NULL, last_error = $3, error_at = now(),
                not_before = now() + make_interval(secs => $4::double precision)
            WHERE id = $1 AND worker_id = $2 AND state = 'running' AND attempts < max_attempts
            RETURNING id, pg_notify('share_jobs', '')
            """,
            [String(job.id), String(worker), error, String(Self.backoff(after: job.attempts))])).isEmpty
    }

    /// Hands claimed jobs that were never started back (a batch this worker
    /// cannot work on, or a stop): queued at once, the attempt not counted.
    func release(_ jobs: [Int64], worker: Int) throws {
        guard !jobs.isEmpty else { return }
        try connection.query(
            """
            UPDATE share_jobs SET state = 'queued', attempts = greatest(0, attempts - 1), worker_id = NULL, lease_until = NULL, not_before = now()
            WHERE id = ANY($1::bigint[]) AND worker_id = $2 AND state = 'running'
            RETURNING id, pg_notify('share_jobs', '')
            """,
            [Self.array(jobs.map(String.init)), String(worker)])
    }

    // MARK: - Jobs of workers that are gone

    /// A running job whose worker is gone (its session ended: the advisory lock
    /// is free) or stopped renewing its lease.
    struct Orphan {
        let job: Job
        /// The worker that held it, for a give-up guarded like a completion.
        let worker: Int
        /// Why it was taken from its worker, for the log and the item's last error.
        let reason: String
        /// True when it was queued again; false when it has had all its attempts.
        let requeued: Bool
    }

    /// The advisory locks held now: the ids of the live workers (of this database).
    static let liveWorkers = """
        SELECT objid::bigint AS id FROM pg_locks
        WHERE locktype = 'advisory' AND classid = \(QueueSchema.workerLockSpace) AND objsubid = 2 AND granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        """

    /// Seconds a worker has, after a server restart, to reconnect and take its
    /// lock again before its jobs count as orphaned.
    static let restartGrace = 15

    /// Finds the running jobs whose worker is gone or whose lease expired, and
    /// queues again (after a backoff) those with attempts left; one statement.
    /// Returns all of them: those without attempts left are for the caller to
    /// give up on.
    func reapOrphans() throws -> [Orphan] {
        try connection.query(
            """
            WITH live AS (\(Self.liveWorkers)),
            orphan AS (
                SELECT j.id, j.worker_id,
                    CASE WHEN j.worker_id IS NULL OR j.worker_id NOT IN (SELECT id FROM live)
                        THEN 'worker ' || coalesce(w.name, '#' || j.worker_id) || ' is gone (its database session ended)'
                        ELSE 'worker ' || coalesce(w.name, '#' || j.worker_id) || ' stopped renewing its lease (stalled or cut off)' END AS reason
                FROM share_jobs j LEFT JOIN share_workers w ON w.id = j.worker_id
                WHERE j.state = 'running' AND (
                    (j.worker_id IS NULL OR j.worker_id NOT IN (SELECT id FROM live))
                        AND (w.locked_at IS NULL OR w.locked_at >= pg_postmaster_start_time() OR now() > pg_postmaster_start_time() + make_interval(secs => \(Self.restartGrace)))
                    OR j.lease_until < now() AND now() > pg_postmaster_start_time() + make_interval(secs => \(Self.restartGrace)))
                ORDER BY j.id LIMIT 200
                FOR UPDATE OF j SKIP LOCKED),
            requeued AS (
                UPDATE share_jobs j SET state = 'queued', worker_id = NULL, lease_until = NULL, last_error = orphan.reason, error_at = now(),
                    not_before = now() + make_interval(secs => least(30, 0.5 * 2 ^ greatest(0, j.attempts - 1))::double precision)
                FROM orphan WHERE j.id = orphan.id AND j.attempts < j.max_attempts RETURNING j.id)
            SELECT \(Self.jobColumns), o.worker_id AS orphan_worker, o.reason, (j.id IN (SELECT id FROM requeued)) AS requeued,
                CASE WHEN EXISTS (SELECT 1 FROM requeued) THEN pg_notify('share_jobs', '') END AS notified
            FROM orphan o JOIN share_jobs j ON j.id = o.id
            """
        ).compactMap { row in
            guard let job = Self.job(row), let worker = row["orphan_worker"].flatMap(Int.init) else { return nil }
            return Orphan(job: job, worker: worker, reason: row["reason"] ?? "", requeued: row["requeued"] == "t")
        }
    }

    /// Batches left `running` although none of their items is unfinished (a lost
    /// decrement cannot happen in one statement, but a batch must never wait
    /// forever): their counter is set right and their manifest job queued.
    func repairCounters() throws {
        try connection.query(
            """
            WITH stuck AS (
                UPDATE share_batches b SET remaining = 0
                WHERE b.state = 'running' AND b.remaining <> 0
                    AND NOT EXISTS (SELECT 1 FROM share_jobs j WHERE j.batch_id = b.id AND j.idx >= 0 AND j.state IN ('queued', 'running'))
                RETURNING b.id),
            manifest AS (
                UPDATE share_jobs m SET state = 'queued', not_before = now() FROM stuck
                WHERE m.batch_id = stuck.id AND m.idx = -1 AND m.state = 'waiting' RETURNING m.id)
            SELECT CASE WHEN EXISTS (SELECT 1 FROM manifest) THEN pg_notify('share_jobs', '') END AS notified
            """)
    }

    // MARK: - Batches and items

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
        /// Why the batch failed (state `failed`).
        let failure: String?
    }

    func batch(_ id: UUID) throws -> StoredBatch? {
        try connection.query("SELECT * FROM share_batches WHERE id = $1", [id.uuidString]).first.flatMap(Self.storedBatch)
    }

    /// The batch with this id or key.
    func batch(idOrKey: String) throws -> StoredBatch? {
        try connection.query("SELECT * FROM share_batches WHERE id::text = lower($1) OR key = $1", [idOrKey]).first.flatMap(Self.storedBatch)
    }

    static func storedBatch(_ row: [String: String]) -> StoredBatch? {
        guard let record = BatchRecord(row: PostgresRow(values: row)), let container = row["container"] else { return nil }
        let roots = row["roots"].flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String] } ?? []
        return StoredBatch(
            record: record, container: container, token: row["token"], roots: roots, remaining: Int(row["remaining"] ?? "0") ?? 0,
            failure: row["failure"])
    }

    func items(_ batch: UUID) throws -> [ItemWork] {
        try connection.query("SELECT snapshot FROM share_jobs WHERE batch_id = $1 AND idx >= 0 ORDER BY idx", [batch.uuidString])
            .compactMap { $0["snapshot"].flatMap(ItemSnapshot.decode) }
    }

    /// The manifest job's end, in one statement: the batch marked done (its
    /// manifest, counts and the items the manifest stage changed) and the job
    /// completed. Throws ``LeaseLost`` if the job was no longer ours; false if the
    /// batch was not running (done already: only the job is completed).
    func finishBatch(_ job: Job, record: BatchRecord, changed: [ItemWork], worker: Int) throws -> Bool {
        let columns = record.columns.filter { BatchRecord.mutableColumns.contains($0.key) }
        let changes = "[" + changed.map { #"{"idx":\#($0.index),"snapshot":\#(ItemSnapshot($0).json)}"# }.joined(separator: ",") + "]"
        let n = columns.count
        let row = try connection.query(
            """
            WITH job AS (
                UPDATE share_jobs SET state = 'done', finished_at = now(), lease_until = NULL
                WHERE id = $1 AND worker_id = $2 AND state = 'running' RETURNING batch_id),
            items AS (
                UPDATE share_jobs j SET snapshot = c->'snapshot' FROM jsonb_array_elements($\(n + 4)::jsonb) c
                WHERE j.batch_id = $3::uuid AND j.idx = (c->>'idx')::integer AND EXISTS (SELECT 1 FROM job) RETURNING j.id),
            batch AS (
                UPDATE share_batches b SET \(columns.enumerated().map { "\($1.key) = $\($0 + 4)" }.joined(separator: ", ")), failure = NULL
                FROM job WHERE b.id = job.batch_id AND b.state = 'running' RETURNING b.id)
            SELECT (SELECT count(*) FROM job) AS owned, (SELECT count(*) FROM batch) AS finished,
                pg_notify('share_batches', coalesce((SELECT batch_id::text FROM job), '')) AS notified
            """,
            [String(job.id), String(worker), job.batchID.uuidString] + columns.map(\.value.text) + [changes])
        guard row.first?["owned"] == "1" else { throw LeaseLost() }
        return row.first?["finished"] == "1"
    }

    /// The manifest job gave up: the batch ends `failed`, with `reason`; one
    /// statement, guarded like a completion (`worker` held the job).
    func failBatch(_ job: Job, worker: Int, reason: String) throws {
        try connection.query(
            """
            WITH job AS (
                UPDATE share_jobs SET state = 'failed', finished_at = now(), lease_until = NULL, last_error = $3, error_at = now()
                WHERE id = $1 AND worker_id = $2 AND state = 'running' RETURNING batch_id)
            UPDATE share_batches b SET state = 'failed', failure = $3, finished_at = extract(epoch FROM now())
            FROM job WHERE b.id = job.batch_id AND b.state = 'running'
            RETURNING b.id, pg_notify('share_batches', b.id::text)
            """,
            [String(job.id), String(worker), reason])
    }
}

/// The job was no longer ours (released to another worker); our results are
/// dropped (stages are idempotent: the other run writes the same files).
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
