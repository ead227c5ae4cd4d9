import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// One claimed unit of distributed work: the next stage of one item (its row
/// moves through the stages), or a batch's manifest.
struct Job: Sendable {
    let id: Int64
    let batchID: UUID
    /// The item's index; -1 for the manifest job.
    let index: Int
    /// The stage to run now.
    let stage: StageName
    /// For the manifest job, the attempts its fan-in has lost (its one counter;
    /// an item's is its ``ItemState/lostAttempts``).
    let attempts: Int
    let maxAttempts: Int
    /// The item as last recorded (``ItemState`` JSON); nil for the manifest job.
    let snapshot: String?
    /// True for an item that must run alone (``ItemState/suspect``).
    let mustRunAlone: Bool

    var isManifest: Bool { index < 0 }

    /// The item as last recorded; an unreadable record is an item that fails with why.
    var item: ItemState { ItemState.decode(snapshot ?? "", index: index, id: nil) }

    /// What a record of this job must match, held by `worker`.
    func lease(worker: Int) -> Lease { Lease(job: id, worker: worker, stage: stage) }
}

/// The jobs of many batches in PostgreSQL, shared by workers on many machines:
/// the distributed mode's ``JobStore``. Every operation on a job is one
/// statement, so one round trip; creating a batch takes one per 2,000 items:
///
/// - create, in three steps, so a drop of any size is never held in memory:
///   ``begin(_:plan:)``, the batch row, `claimed` (no worker takes its jobs
///   yet); ``append(_:to:plan:)``, a row per item, one statement per chunk of
///   ``BatchPlan/chunkSize`` items; ``seal(_:plan:unfinished:)``, the batch
///   running with its fan-in counter, and the manifest job. A plan cut short
///   leaves the batch `claimed`: planned again, or ``abandon(_:)``ed;
/// - claim: up to N ready jobs, costliest first (`FOR UPDATE SKIP LOCKED` in a
///   CTE, then `UPDATE … RETURNING` with the items' records);
/// - record: the item's new state and where it goes next (kept by the same
///   worker when it serves that stage, so the item's stages need no new claim);
///   when the item is finished, the batch's `remaining` counter is decremented
///   in the same statement, and the one record that brings it to 0 queues the
///   manifest job. No lock is held across round trips.
/// - renew: one statement per worker (not per job) extends all its leases.
final class JobQueue {
    /// The connection; made again when it was lost (``reconnect()``).
    private(set) var connection: PostgresConnection
    private let url: String
    private let role: String
    private let interruption: Interruption?
    /// Seconds a job kept by its worker stays leased without a heartbeat.
    var leaseSeconds: Double = ItemLifecycle.defaultLease
    /// True for a connection that holds no lock (an executor's): a statement
    /// after a lost connection (a server restart) connects again first, so a
    /// record kept while the server was away is made once it is back.
    var reconnects = false

    /// Connects as `share-<role>@<host>`; waits end on `interruption`.
    init(url: String, role: String, interruption: Interruption? = nil) throws(PostgresError) {
        self.url = url
        self.role = role
        self.interruption = interruption
        connection = try PostgresConnection(url: url, role: role, interruption: interruption)
    }

    /// A new connection in place of one that was lost (a server restart): the
    /// next statement then runs on it. Not for a connection holding locks.
    func reconnect() throws(PostgresError) {
        connection = try PostgresConnection(url: url, role: role, interruption: interruption)
    }

    /// Runs one statement (see ``reconnects``).
    @discardableResult
    private func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> [[String: String]] {
        if reconnects && !connection.isConnected { try reconnect() }
        return try connection.query(sql, parameters)
    }

    // MARK: - Rows as JSON

    /// One item's row at planning, or its new state at a record, as the JSON
    /// parameter a statement unpacks (`jsonb_array_elements`).
    private struct Row: Encodable {
        let idx: Int
        let stage: StageName
        let state: String
        let priority: Double
        let snapshot: ItemState
        /// The item's ``ItemState/columns``, by name.
        let columns: [String: String?]

        init(idx: Int, stage: StageName, state: String, priority: Double, snapshot: ItemState) {
            (self.idx, self.stage, self.state, self.priority, self.snapshot) = (idx, stage, state, priority, snapshot)
            columns = Dictionary(uniqueKeysWithValues: zip(JobQueue.columnNames, snapshot.columnValues))
        }
    }

    /// The item columns a statement sets from a ``Row`` unpacked as `e`.
    static let columnNames = ItemState.columns.map(\.name)

    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Rows are plain values: encoding cannot fail.
        return String(decoding: try! encoder.encode(value), as: UTF8.self)
    }

    /// The expected decode cost of `item`'s next stage, which orders claims.
    static func priority(of item: ItemState) -> Double { ItemLifecycle.priority(of: item) }

    /// A row's states, as the lifecycle names them.
    typealias State = ItemLifecycle.RowState

    // MARK: - Claim

    private static let jobColumns =
        "j.id, j.batch_id, j.idx, j.stage, j.attempts, j.max_attempts, j.snapshot, j.\(ItemColumn.suspect)"

    static func job(_ row: [String: String]) -> Job? {
        guard let id = row["id"].flatMap(Int64.init), let batch = row["batch_id"].flatMap(UUID.init(uuidString:)),
            let index = row["idx"].flatMap(Int.init), let stage = row["stage"].map(StageName.init)
        else { return nil }
        return Job(
            id: id, batchID: batch, index: index, stage: stage, attempts: Int(row["attempts"] ?? "0") ?? 0,
            maxAttempts: row["max_attempts"].flatMap(Int.init) ?? ItemLifecycle.defaultMaxAttempts,
            snapshot: row["snapshot"],
            mustRunAlone: row[ItemColumn.suspect.name] != nil)
    }

    /// Claims up to `limit` ready jobs of `stages` (in the lifecycle's order:
    /// ``ItemLifecycle/takenBefore(_:_:)``, skipping rows other workers are claiming), leased to `worker`, only
    /// of the batches in `batches` (those this worker checked it can work on);
    /// in the same statement, the running batches it has not checked yet (not in
    /// `batches` nor in `blocked`), to check before its next claim. So a worker
    /// never claims a job of a batch whose files it cannot see or write.
    func claim(
        stages: [StageName], worker: Int, limit: Int, batches: Set<UUID>, blocked: Set<UUID>, alone: Bool = false
    ) throws -> (jobs: [Job], unchecked: [UUID]) {
        let rows = try query(
            """
            WITH picked AS (
                SELECT id FROM share_jobs
                WHERE state = '\(State.queued)' AND not_before <= now() AND stage = ANY($1::text[]) AND batch_id = ANY($4::uuid[])
                    AND (\(ItemColumn.suspect) IS NOT NULL) = $7::boolean
                ORDER BY \(ItemLifecycle.orderSQL) LIMIT $5 FOR UPDATE SKIP LOCKED),
            claimed AS (
                UPDATE share_jobs j SET state = '\(State.running)', worker_id = $2,
                    lease_until = now() + make_interval(secs => $3::double precision)
                FROM picked WHERE j.id = picked.id
                RETURNING \(Self.jobColumns), j.priority)
            SELECT claimed.*, NULL::uuid AS unchecked FROM claimed
            UNION ALL
            (SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, b.id FROM share_batches b
             WHERE b.state = '\(BatchState.running.rawValue)' AND NOT (b.id = ANY($4::uuid[])) AND NOT (b.id = ANY($6::uuid[])) ORDER BY b.created_at LIMIT 20)
            """,
            [
                Self.array(stages.map(\.rawValue)), String(worker), String(leaseSeconds),
                Self.array(batches.map(\.uuidString)), String(alone ? 1 : limit),
                Self.array(blocked.map(\.uuidString)), alone ? "true" : "false",
            ])
        let jobs = rows.compactMap { row in
            Self.job(row).map { (job: $0, priority: Double(row["priority"] ?? "0") ?? 0) }
        }
        return (
            jobs.sorted { ItemLifecycle.takenBefore(($0.priority, $0.job.id), ($1.priority, $1.job.id)) }.map(\.job),
            rows.compactMap { $0["unchecked"].flatMap(UUID.init(uuidString:)) }
        )
    }

    static func array(_ values: [String]) -> String { "{" + values.joined(separator: ",") + "}" }

    /// Hands claimed jobs that were never started back (a batch this worker
    /// cannot work on, or a stop): parked where they were, as the lifecycle
    /// records a park (``ItemLifecycle/recorded(_:at:holderKeeps:)``: queued
    /// at once, not counted).
    func release(_ jobs: [Int64], worker: Int) throws {
        guard !jobs.isEmpty else { return }
        try query(
            """
            UPDATE share_jobs SET state = '\(Self.handedBack)', worker_id = NULL, lease_until = NULL, not_before = now()
            WHERE id = ANY($1::bigint[]) AND worker_id = $2 AND state = '\(State.running)'
            RETURNING id, pg_notify('share_jobs', '')
            """,
            [Self.array(jobs.map(String.init)), String(worker)])
    }

    /// The state of a job its holder hands back unstarted, or drops (its
    /// record could not be made): the lifecycle's park, where it was.
    static let handedBack = ItemLifecycle.recorded(.park(.manifest), at: .manifest, holderKeeps: false).state

    // MARK: - Jobs of workers that are gone

    /// A running job whose worker is gone (its session ended: the advisory lock
    /// is free) or stopped renewing its lease.
    struct Orphan {
        let job: Job
        /// The worker that held it: a record of its fate is guarded by its lease.
        let worker: Int
        /// Why it was taken from its worker, for the log and the item's last error.
        let reason: String
    }

    /// The advisory locks held now: the ids of the live workers (of this database).
    static let liveWorkers = """
        SELECT objid::bigint AS id FROM pg_locks
        WHERE locktype = 'advisory' AND classid = \(QueueSchema.workerLockSpace) AND objsubid = 2 AND granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        """

    /// The running jobs whose worker is gone or whose lease expired (at most
    /// 200 at a time), once the lifecycle's grace after a server restart has
    /// passed (``ItemLifecycle/restartGrace``). What becomes of each is the
    /// lifecycle's to decide, and recorded guarded by the old holder's lease, so
    /// of two workers reaping at once only one record applies.
    func orphans() throws -> [Orphan] {
        try query(
            """
            WITH live AS (\(Self.liveWorkers))
            SELECT \(Self.jobColumns), j.worker_id AS orphan_worker,
                CASE WHEN j.worker_id IS NULL OR j.worker_id NOT IN (SELECT id FROM live)
                    THEN 'worker ' || coalesce(w.name, '#' || j.worker_id) || ' is gone (its database session ended)'
                    ELSE 'worker ' || coalesce(w.name, '#' || j.worker_id) || ' stopped renewing its lease (stalled or cut off)' END AS reason
            FROM share_jobs j LEFT JOIN share_workers w ON w.id = j.worker_id
            WHERE j.state = '\(State.running)' AND (
                (j.worker_id IS NULL OR j.worker_id NOT IN (SELECT id FROM live))
                    AND (w.locked_at IS NULL OR w.locked_at >= pg_postmaster_start_time() OR now() > pg_postmaster_start_time() + make_interval(secs => $1::double precision))
                OR j.lease_until < now() AND now() > pg_postmaster_start_time() + make_interval(secs => $1::double precision))
            ORDER BY j.id LIMIT 200
            """, [String(ItemLifecycle.restartGrace)]
        ).compactMap { row in
            guard let job = Self.job(row), let worker = row["orphan_worker"].flatMap(Int.init) else { return nil }
            return Orphan(job: job, worker: worker, reason: row["reason"] ?? "")
        }
    }

    /// A manifest job lost an attempt (`lost` now), guarded by `lease`:
    /// `next` runs it again after its backoff (queued, with the attempts it has
    /// lost: the fan-in's one counter), or gives up: the job and its batch end
    /// failed, with why. As the lifecycle records it (``ItemLifecycle/recorded(_:at:holderKeeps:)``).
    func loseFanIn(_ job: Job, lease: Lease, next: NextStep, lost: Int) throws {
        let recorded = ItemLifecycle.recorded(next, at: .manifest, holderKeeps: false)
        if recorded.isFinished {
            try query(
                """
                WITH job AS (
                    UPDATE share_jobs SET state = '\(recorded.state)', attempts = $4, finished_at = now(), lease_until = NULL, last_error = $3,
                        error_at = now()
                    WHERE id = $1 AND worker_id = $2 AND state = '\(State.running)' RETURNING batch_id)
                UPDATE share_batches b SET state = \(BatchLifecycle.sql(.loseFanIn(next: next))), failure = $3,
                    finished_at = extract(epoch FROM now())
                FROM job WHERE b.id = job.batch_id AND b.state = '\(BatchState.running.rawValue)'
                RETURNING b.id, pg_notify('share_batches', b.id::text)
                """,
                [String(job.id), String(lease.worker), recorded.error ?? "", String(lost)])
            return
        }
        try query(
            """
            UPDATE share_jobs SET state = '\(recorded.state)', worker_id = NULL, lease_until = NULL, last_error = $3, error_at = now(), attempts = $5,
                not_before = now() + make_interval(secs => $4::double precision)
            WHERE id = $1 AND worker_id = $2 AND state = '\(State.running)'
            RETURNING id, pg_notify('share_jobs', '')
            """,
            [String(job.id), String(lease.worker), recorded.error ?? "", String(recorded.delay), String(lost)])
    }

    /// Running batches whose fan-in counter (`remaining`) is not 0, with how
    /// many of their items are in fact unfinished (a lost decrement cannot
    /// happen in one statement, but a batch must never wait forever): the
    /// reaper asks the lifecycle whether their fan-in is due (``ItemLifecycle/fanInDue(unfinished:)``).
    func stuckBatches() throws -> [(batch: UUID, unfinished: Int)] {
        try query(
            """
            SELECT b.id, (SELECT count(*) FROM share_jobs j WHERE j.batch_id = b.id AND j.idx >= 0
                    AND j.state NOT IN ('\(State.done)', '\(State.failed)')) AS unfinished
            FROM share_batches b WHERE b.state = '\(BatchState.running.rawValue)' AND b.remaining <> 0
            """
        ).compactMap { row in
            guard let id = row["id"].flatMap(UUID.init(uuidString:)),
                let unfinished = row["unfinished"].flatMap(Int.init)
            else { return nil }
            return (id, unfinished)
        }
    }

    /// The fan-in of `batch` is due: its counter set to 0 and its manifest job,
    /// waiting, queued at once.
    func queueFanIn(of batch: UUID) throws {
        try query(
            """
            WITH counter AS (UPDATE share_batches SET remaining = 0 WHERE id = $1::uuid AND state = '\(BatchState.running.rawValue)' RETURNING id)
            UPDATE share_jobs m SET state = '\(BatchLifecycle.fanInJob.due)', not_before = now() FROM counter
            WHERE m.batch_id = counter.id AND m.idx = -1 AND m.state = '\(BatchLifecycle.fanInJob.waiting)'
            RETURNING m.id, pg_notify('share_jobs', '')
            """, [batch.uuidString])
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

    // MARK: - Batches

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
        try query("SELECT * FROM share_batches WHERE id = $1", [id.uuidString]).first.flatMap(Self.storedBatch)
    }

    /// The batch with this id or key.
    func batch(idOrKey: String) throws -> StoredBatch? {
        try query("SELECT * FROM share_batches WHERE id::text = lower($1) OR key = $1", [idOrKey]).first.flatMap(
            Self.storedBatch)
    }

    static func storedBatch(_ row: [String: String]) -> StoredBatch? {
        guard let record = BatchRecord(row: PostgresRow(values: row)), let container = row["container"] else {
            return nil
        }
        let roots = row["roots"].flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) } ?? []
        return StoredBatch(
            record: record, container: container, token: row["token"], roots: roots,
            remaining: Int(row["remaining"] ?? "0") ?? 0,
            maxAttempts: row["max_attempts"].flatMap(Int.init) ?? ItemLifecycle.defaultMaxAttempts,
            failure: row["failure"])
    }
}

extension JobQueue: JobStore {
    func batch(id: UUID) throws -> BatchRecord? { try batch(id)?.record }

    func batch(key: ShareKey) throws -> BatchRecord? {
        try query("SELECT * FROM share_batches WHERE key = $1", [key.rawValue]).first.flatMap(Self.storedBatch)?.record
    }

    /// The batch row, `claimed` (workers take no job of it yet), with the
    /// container every worker writes into, its token, roots and attempts; rows
    /// a plan cut short left are removed.
    func begin(_ batch: BatchRecord, plan: BatchPlan.Details) throws {
        var record = batch
        record.handle(.claim)
        let extra: [(String, String?)] = [
            ("container", plan.container.root), ("token", plan.token), ("roots", Self.json(plan.roots)),
            ("remaining", "0"),
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

    /// Records an item's step, guarded by `lease`: ``record(_:worker:)`` with one step.
    func record(_ item: ItemState, next: NextStep, batch: UUID, lease: Lease) throws -> Bool {
        try record([LeasedStep(item: item, next: next, lease: lease)], worker: lease.worker).contains(lease.job)
    }

    /// One step of a leased job, as a statement's row.
    struct LeasedStep: Encodable {
        let item: ItemState
        let next: NextStep
        let lease: Lease
        /// The stage it comes from, and the item before it (not in the row:
        /// what a refused record takes the item back to).
        var ran: RanStage? = nil

        /// Where the row goes, as the lifecycle records a step: its next stage
        /// and state, the backoff before it may be claimed again, and the error it keeps.
        var row: ItemLifecycle.Recorded { ItemLifecycle.recorded(next, at: lease.stage, holderKeeps: lease.keeps) }

        private struct Key: CodingKey {
            let stringValue: String
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            let row = row
            try c.encode(lease.job, forKey: Key("job"))
            try c.encode(lease.stage.rawValue, forKey: Key("held"))
            try c.encode(row.stage.rawValue, forKey: Key("stage"))
            try c.encode(row.state.rawValue, forKey: Key("state"))
            try c.encode(item, forKey: Key("snapshot"))
            try c.encode(JobQueue.priority(of: item), forKey: Key("priority"))
            try c.encode(row.delay, forKey: Key("delay"))
            try c.encodeIfPresent(row.error, forKey: Key("error"))
            for (name, value) in zip(JobQueue.columnNames, item.columnValues) {
                try c.encodeIfPresent(value, forKey: Key(name))
            }
        }
    }

    /// Records the steps of jobs `worker` holds, in one statement: each row
    /// changes only if its job is still held by `worker` at the stage its lease
    /// names (a record re-sent after a lost connection never applies twice).
    /// Where a row goes follows its step: kept leased to its holder (it serves
    /// the next stage), queued for any worker (now, or after a retry's backoff),
    /// or finished (done, or failed when given up on): then its batch's
    /// `remaining` is decreased by the items of that batch this statement
    /// finished, and the statement that brings it to 0 queues the manifest job.
    /// Returns the jobs whose rows changed.
    func record(_ steps: [LeasedStep], worker: Int) throws -> Set<Int64> {
        guard !steps.isEmpty else { return [] }
        let columns = Self.columnNames.map { "\($0) = r.\($0)" }.joined(separator: ", ")
        let types = Self.columnNames.map { "\($0) text" }.joined(separator: ", ")
        let row = try query(
            """
            WITH rows AS (
                SELECT * FROM jsonb_to_recordset($2::jsonb) AS r(job bigint, held text, stage text, state text, snapshot jsonb,
                    priority double precision, delay double precision, error text, \(types))),
            job AS (
                UPDATE share_jobs j SET snapshot = r.snapshot, stage = r.stage, state = r.state, priority = r.priority, \(columns),
                    worker_id = CASE WHEN r.state = '\(State.queued)' THEN NULL ELSE j.worker_id END,
                    lease_until = CASE WHEN r.state = '\(State.running)' THEN now() + make_interval(secs => $3::double precision) END,
                    not_before = now() + make_interval(secs => r.delay),
                    finished_at = CASE WHEN r.state IN ('\(State.done)', '\(State.failed)') THEN now() END,
                    last_error = coalesce(r.error, j.last_error), error_at = CASE WHEN r.error IS NULL THEN j.error_at ELSE now() END
                FROM rows r
                WHERE j.id = r.job AND j.worker_id = $1 AND j.state = '\(State.running)' AND j.stage = r.held
                RETURNING j.id, j.batch_id, j.state),
            finished AS (SELECT batch_id, count(*) AS n FROM job WHERE state IN ('\(State.done)', '\(State.failed)') GROUP BY batch_id),
            batch AS (
                UPDATE share_batches b SET remaining = b.remaining - f.n FROM finished f
                WHERE b.id = f.batch_id RETURNING b.id, b.remaining),
            manifest AS (
                UPDATE share_jobs m SET state = '\(BatchLifecycle.fanInJob.due)', not_before = now() FROM batch
                WHERE m.batch_id = batch.id AND batch.remaining <= 0 AND m.idx = -1 AND m.state = '\(BatchLifecycle.fanInJob.waiting)' RETURNING m.id)
            SELECT (SELECT coalesce(string_agg(id::text, ','), '') FROM job) AS owned,
                CASE WHEN EXISTS (SELECT 1 FROM job WHERE state = '\(State.queued)') OR EXISTS (SELECT 1 FROM manifest)
                    THEN pg_notify('share_jobs', '') END AS notified
            """,
            [String(worker), Self.json(steps), String(leaseSeconds)]
        ).first
        return Set((row?["owned"] ?? "").split(separator: ",").compactMap { Int64($0) })
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

    func recordedFanIn(of batch: UUID) throws -> RecordedFanIn? {
        try query(
            """
            SELECT b.state, b.failure, m.attempts, greatest(0, extract(epoch FROM m.not_before - now())) AS wait
            FROM share_batches b LEFT JOIN share_jobs m ON m.batch_id = b.id AND m.idx = -1 WHERE b.id = $1::uuid
            """, [batch.uuidString]
        ).first.map { row in
            RecordedFanIn(
                lost: row["attempts"].flatMap(Int.init) ?? 0, wait: row["wait"].flatMap(Double.init) ?? 0,
                state: row["state"].flatMap(BatchState.init(rawValue:)) ?? .running, failure: row["failure"])
        }
    }

    func earlierPerceptualHashes(for batch: UUID) throws -> [EarlierHash] {
        var found: [EarlierHash] = []
        for row in try query(
            """
            SELECT o.\(ItemColumn.perceptualHash) AS hash, o.idx AS idx, o.batch_id AS batch, b.key AS key FROM share_jobs o
                JOIN share_batches b ON b.id = o.batch_id AND b.state = '\(BatchState.done.rawValue)'
                    AND b.container = (SELECT container FROM share_batches WHERE id = $1::uuid)
                WHERE o.\(ItemColumn.perceptualHash) IS NOT NULL AND o.batch_id <> $1::uuid AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL
                ORDER BY b.created_at, o.idx
            """, [batch.uuidString])
        {
            guard let hash = row["hash"].flatMap(PerceptualHash.parse), let index = row["idx"].flatMap(Int.init),
                let id = row["batch"].flatMap(UUID.init(uuidString:)),
                let key = row["key"].flatMap({ try? ShareKey($0) })
            else { continue }
            found.append(EarlierHash(hash: hash, batch: id, index: index, shareKey: key))
        }
        return found
    }

    func earlierCopies(for batch: UUID) throws -> EarlierCopies {
        var found = EarlierCopies()
        var originals: [Int: EarlierCopy?] = [:]
        // The batch's first item of each content that repeats (one grouping of
        // the batch), joined to the items after it: never a join of every item
        // with the earlier ones, which a fresh table without statistics may plan
        // as a scan of the batch per item (past the statement timeout at 10,000).
        // The original's snapshot comes only on the first row of its copies (rows
        // in order of the original, which is when the cache reads it): a batch of
        // one photo 20,000 times held 20,000 snapshots at once in the result
        // (40 MB under heaptrack; issue 32, item 6).
        for row in try query(
            """
            WITH firsts AS MATERIALIZED (
                SELECT \(ItemColumn.sha256), min(idx) AS first FROM share_jobs WHERE batch_id = $1::uuid AND idx >= 0 AND \(ItemColumn.sha256) IS NOT NULL
                    AND \(ItemColumn.reason) IS NULL GROUP BY \(ItemColumn.sha256) HAVING count(*) > 1)
            SELECT d.idx AS idx, f.first AS original,
                    CASE WHEN row_number() OVER (PARTITION BY f.first ORDER BY d.idx) = 1 THEN o.snapshot END AS snapshot
                FROM firsts f
                JOIN share_jobs d ON d.batch_id = $1::uuid AND d.\(ItemColumn.sha256) = f.\(ItemColumn.sha256) AND d.idx > f.first AND d.\(ItemColumn.reason) IS NULL
                JOIN share_jobs o ON o.batch_id = $1::uuid AND o.idx = f.first
                ORDER BY f.first, d.idx
            """, [batch.uuidString])
        {
            guard let index = row["idx"].flatMap(Int.init), let original = row["original"].flatMap(Int.init) else {
                continue
            }
            found.addInBatch(item: index, original: original, snapshot: { row["snapshot"] }, cache: &originals)
        }
        // Other finished batches of the same container, oldest first: the first
        // copy of each of the batch's contents in each.
        for row in try query(
            """
            SELECT * FROM (
                SELECT DISTINCT ON (o.\(ItemColumn.sha256), o.batch_id) o.\(ItemColumn.sha256) AS \(ItemColumn.sha256), o.idx AS original, o.snapshot AS snapshot, b.key AS key,
                    b.created_at AS created
                FROM share_jobs o
                JOIN share_batches b ON b.id = o.batch_id AND b.state = '\(BatchState.done.rawValue)'
                    AND b.container = (SELECT container FROM share_batches WHERE id = $1::uuid)
                WHERE o.\(ItemColumn.sha256) IN (SELECT \(ItemColumn.sha256) FROM share_jobs WHERE batch_id = $1::uuid AND idx >= 0 AND \(ItemColumn.sha256) IS NOT NULL
                        AND \(ItemColumn.reason) IS NULL)
                    AND o.batch_id <> $1::uuid AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL
                ORDER BY o.\(ItemColumn.sha256), o.batch_id, o.idx) firsts
            ORDER BY created, original
            """, [batch.uuidString])
        {
            guard let sha256 = row[ItemColumn.sha256.name], let original = row["original"].flatMap(Int.init) else {
                continue
            }
            found.addInOtherShare(sha256: sha256, original: original, snapshot: row["snapshot"], key: row["key"])
        }
        return found
    }

    func livePhotoCandidates(for batch: UUID) throws -> [ItemState] {
        try query(
            """
            SELECT d.idx AS idx, d.snapshot AS snapshot FROM share_jobs d WHERE d.batch_id = $1::uuid AND d.idx >= 0 AND d.\(ItemColumn.reason) IS NULL AND (
                (d.\(ItemColumn.contentIdentifier) IS NOT NULL AND EXISTS (SELECT 1 FROM share_jobs o WHERE o.batch_id = d.batch_id
                    AND o.\(ItemColumn.contentIdentifier) = d.\(ItemColumn.contentIdentifier) AND o.idx <> d.idx AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL))
                OR (d.\(ItemColumn.livePhotoName) IS NOT NULL AND EXISTS (SELECT 1 FROM share_jobs o WHERE o.batch_id = d.batch_id
                    AND o.\(ItemColumn.livePhotoName) = d.\(ItemColumn.livePhotoName) AND o.idx <> d.idx AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL)))
            ORDER BY d.idx
            """, [batch.uuidString]
        ).map { row in ItemState.decode(row["snapshot"] ?? "", index: row["idx"].flatMap(Int.init) ?? -1, id: nil) }
    }

    /// A page of the items the fan-in changed, before its end, while `lease`
    /// holds the manifest job (false when it no longer does: nothing changed).
    func record(_ changed: [ItemState], batch: BatchRecord, lease: Lease) throws -> Bool {
        let changes = changed.map {
            Row(idx: $0.index, stage: .manifest, state: State.done.rawValue, priority: 0, snapshot: $0)
        }
        let held = "SELECT 1 FROM share_jobs WHERE id = $1 AND worker_id = $2 AND state = '\(State.running)'"
        let rows = try query(
            """
            WITH items AS (\(Self.fanInChanges(parameter: 4, batch: 3, guardedBy: held)))
            SELECT EXISTS (\(held)) AS owned, (SELECT count(*) FROM items) AS n
            """,
            [String(lease.job), String(lease.worker), batch.id.uuidString, Self.json(changes)])
        return rows.first?["owned"] == "t"
    }

    /// The update of a batch's items to the fan-in's changes (a JSON array of
    /// rows in parameter `parameter`), while `guardedBy` finds a row.
    private static func fanInChanges(parameter: Int, batch: Int, guardedBy condition: String) -> String {
        """
        UPDATE share_jobs j SET snapshot = c->'snapshot', \(columnNames.map { "\($0) = c->'columns'->>'\($0)'" }.joined(separator: ", "))
            FROM jsonb_array_elements($\(parameter)::jsonb) c
            WHERE j.batch_id = $\(batch)::uuid AND j.idx = (c->>'idx')::integer AND EXISTS (\(condition)) RETURNING j.id
        """
    }

    func exportCandidates(for batch: UUID, after: (stem: String, index: Int), limit: Int) throws -> [(
        stem: String, item: ItemState
    )] {
        try query(
            """
            SELECT d.idx AS idx, d.snapshot AS snapshot, d.\(ItemColumn.exportStem) AS \(ItemColumn.exportStem) FROM share_jobs d WHERE d.batch_id = $1::uuid AND d.idx >= 0
                AND d.\(ItemColumn.reason) IS NULL AND d.\(ItemColumn.exportStem) IS NOT NULL AND (d.\(ItemColumn.exportStem) COLLATE "C" > $2 OR (d.\(ItemColumn.exportStem) = $2 AND d.idx > $3::integer))
                AND EXISTS (SELECT 1 FROM share_jobs o WHERE o.batch_id = d.batch_id AND o.\(ItemColumn.exportStem) = d.\(ItemColumn.exportStem)
                    AND o.idx <> d.idx AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL)
            ORDER BY d.\(ItemColumn.exportStem) COLLATE "C", d.idx LIMIT $4::integer
            """, [batch.uuidString, after.stem, String(max(after.index, -1)), String(limit)]
        ).map { row in
            (
                stem: row[ItemColumn.exportStem.name] ?? "",
                item: ItemState.decode(row["snapshot"] ?? "", index: row["idx"].flatMap(Int.init) ?? -1, id: nil)
            )
        }
    }

    func burstCandidates(for batch: UUID, after: (burst: String, index: Int), limit: Int) throws -> [(
        burst: String, item: ItemState
    )] {
        try query(
            """
            SELECT d.idx AS idx, d.snapshot AS snapshot, d.\(ItemColumn.burstID) AS \(ItemColumn.burstID) FROM share_jobs d WHERE d.batch_id = $1::uuid AND d.idx >= 0
                AND d.\(ItemColumn.reason) IS NULL AND d.\(ItemColumn.burstID) IS NOT NULL AND (d.\(ItemColumn.burstID) COLLATE "C" > $2 OR (d.\(ItemColumn.burstID) = $2 AND d.idx > $3::integer))
                AND EXISTS (SELECT 1 FROM share_jobs o WHERE o.batch_id = d.batch_id AND o.\(ItemColumn.burstID) = d.\(ItemColumn.burstID)
                    AND o.idx <> d.idx AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL)
            ORDER BY d.\(ItemColumn.burstID) COLLATE "C", d.idx LIMIT $4::integer
            """, [batch.uuidString, after.burst, String(max(after.index, -1)), String(limit)]
        ).map { row in
            (
                burst: row[ItemColumn.burstID.name] ?? "",
                item: ItemState.decode(row["snapshot"] ?? "", index: row["idx"].flatMap(Int.init) ?? -1, id: nil)
            )
        }
    }

    /// The manifest job's end, in one statement: the batch marked done (its
    /// manifest, counts and the items the manifest stage changed) and the job
    /// completed. False if the job was no longer the lease's holder's, or the
    /// batch was not running (done already: only the job is completed).
    func finish(_ batch: BatchRecord, changed: [ItemState], lease: Lease) throws -> Bool {
        var columns = batch.columns.filter { BatchRecord.mutableColumns.contains($0.key) }.map { ($0.key, $0.value) }
        columns.append(
            (
                "stage_seconds",
                .text(
                    Self.json(Dictionary(uniqueKeysWithValues: batch.stageSeconds.map { ($0.key.rawValue, $0.value) })))
            ))
        let changes = changed.map {
            Row(idx: $0.index, stage: .manifest, state: State.done.rawValue, priority: 0, snapshot: $0)
        }
        let n = columns.count
        let row = try query(
            """
            WITH job AS (
                UPDATE share_jobs SET state = '\(State.done)', finished_at = now(), lease_until = NULL
                WHERE id = $1 AND worker_id = $2 AND state = '\(State.running)' RETURNING batch_id),
            items AS (\(Self.fanInChanges(parameter: n + 4, batch: 3, guardedBy: "SELECT 1 FROM job"))),
            batch AS (
                UPDATE share_batches b SET \(columns.enumerated().map { "\($1.0) = $\($0 + 4)\($1.0 == "stage_seconds" ? "::jsonb" : "")" }.joined(separator: ", ")), failure = NULL
                FROM job WHERE b.id = job.batch_id AND b.state = '\(BatchState.running.rawValue)' RETURNING b.id)
            SELECT (SELECT count(*) FROM job) AS owned, (SELECT count(*) FROM batch) AS finished,
                pg_notify('share_batches', coalesce((SELECT batch_id::text FROM job), '')) AS notified
            """,
            [String(lease.job), String(lease.worker), batch.id.uuidString] + columns.map(\.1.text) + [
                Self.json(changes)
            ])
        return row.first?["owned"] == "1" && row.first?["finished"] == "1"
    }
}

extension JobQueue {
    func listen() throws { try connection.query("LISTEN share_jobs") }

    func waitForWork(seconds: Double, wake: Int32) throws -> Bool {
        try connection.waitForNotification(seconds: seconds, wake: wake)
    }

    var isConnected: Bool { connection.isConnected }

    func interrupt(at interruption: Interruption) { connection.interruption = interruption }

    func close() { connection.close() }
}

/// A PostgreSQL result row (text format), read by column name.
struct PostgresRow: StoreRow {
    let values: [String: String]
    func text(_ column: String) -> String? { values[column] }
}
