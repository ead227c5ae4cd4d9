import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

// The queue's jobs and their leases: claims, hand-backs, the jobs of
// workers that are gone, and the records of each step (``JobQueue``).
extension JobQueue {
    // MARK: - Claim

    static let jobColumns =
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
}
