import Foundation
import ShareManifest

/// What `share status --db` shows: each batch with its live progress, the
/// workers (live ones apart from those that are gone), and recent failures
/// with their reasons.
public struct DistributedStatus: Sendable {
    /// Jobs waiting for, and being run at, one stage.
    public struct StageCount: Sendable, Equatable {
        /// Items waiting for a worker to take this stage.
        public let queued: Int
        /// Items a worker is running this stage on.
        public let running: Int
    }

    /// A batch and how far it is.
    public struct BatchProgress: Sendable {
        /// The batch (state, counts, the items finished so far).
        public let batch: DistributedIngestor.Batch
        /// Unfinished items per stage they wait for or run.
        public let stages: [StageName: StageCount]
        /// Seconds of work per stage, summed over the batch's items so far.
        public let stageSeconds: [StageName: Double]
        /// Jobs that failed at least once for a reason that is not their item's
        /// (a worker died or stalled) and were run again.
        public let retried: Int
        /// The manifest job: `waiting` (for the last item), `queued`, `running`, `done` or `failed`.
        public let manifest: String
    }

    /// A batch a worker will not work on, and why.
    public struct Block: Sendable {
        /// The batch.
        public let batch: UUID
        /// Why (the container or an input cannot be seen or written there).
        public let reason: String
    }

    /// A registered worker.
    public struct Worker: Sendable {
        /// Its name (`--name`, default host and process id).
        public let name: String
        /// The host it runs on, and its process id there.
        public let host: String
        /// Its process id on `host`.
        public let pid: Int
        /// The stages it serves.
        public let stages: [String]
        /// Its threads.
        public let concurrency: Int
        /// True while its database session lives (it holds its advisory lock).
        public let live: Bool
        /// True when it stopped cleanly (a signal); false for a gone worker that died.
        public let stopped: Bool
        /// When it registered.
        public let startedAt: Date
        /// Its last heartbeat.
        public let lastSeen: Date
        /// Stages it finished (counted at its heartbeats).
        public let stagesDone: Int
        /// Item failures it saw.
        public let failures: Int
        /// Jobs it holds now.
        public let holding: Int
        /// Batches it will not work on, and why.
        public let blocked: [Block]
    }

    /// A recent failure: an item that failed, or a job that was retried or given up on.
    public struct Failure: Sendable {
        /// When.
        public let time: Date
        /// The batch.
        public let batch: UUID
        /// The item's index (nil for the manifest job).
        public let index: Int?
        /// The item's source as the report names it.
        public let source: String?
        /// The stage.
        public let stage: String
        /// The reason: the item's failure (`undecodable: …`) or the job's last error.
        public let error: String
    }

    /// Running and failed batches, and the most recent finished ones; newest first.
    public let batches: [BatchProgress]
    /// Live workers first, then the most recently seen gone ones.
    public let workers: [Worker]
    /// Workers that are gone in all (``workers`` lists the most recent).
    public let goneWorkers: Int
    /// Jobs waiting and running per stage, over every batch.
    public let queue: [StageName: StageCount]
    /// The most recent failures, newest first.
    public let failures: [Failure]
}

extension JobQueue {
    /// Reads the whole status in a handful of statements.
    func status(finishedBatches: Int = 10, workerLimit: Int = 20, failureLimit: Int = 10) throws -> DistributedStatus {
        let batches = try statusBatches(finished: finishedBatches)
        let (workers, gone) = try statusWorkers(limit: workerLimit)
        return DistributedStatus(
            batches: batches, workers: workers, goneWorkers: gone, queue: try statusQueue(),
            failures: try failures(limit: failureLimit))
    }

    /// The batches not delivered yet and the last `finished` done ones, newest
    /// first, each with its jobs per stage and its seconds per stage.
    private func statusBatches(finished finishedBatches: Int) throws -> [DistributedStatus.BatchProgress] {
        let batchRows = try connection.query(
            """
            SELECT * FROM share_batches
            WHERE state NOT IN (\(BatchLifecycle.sql(BatchLifecycle.delivered))) OR id IN (SELECT id FROM share_batches WHERE state = '\(BatchState.done.rawValue)' ORDER BY created_at DESC LIMIT $1)
            ORDER BY created_at DESC LIMIT 200
            """,
            [String(finishedBatches)])
        let stored = batchRows.compactMap(Self.storedBatch)
        let ids = Self.array(stored.map(\.record.id.uuidString))
        let (stages, manifest, retried) = try statusStages(of: ids)
        let seconds = try statusSeconds(of: ids)
        return stored.map { batch in
            DistributedStatus.BatchProgress(
                batch: DistributedIngestor.batch(batch), stages: stages[batch.record.id] ?? [:],
                stageSeconds: seconds[batch.record.id] ?? [:],
                retried: retried[batch.record.id] ?? 0, manifest: manifest[batch.record.id] ?? "")
        }
    }

    /// The batches' jobs per stage (queued and running), their manifest job's
    /// state and how many of their jobs were retried.
    private func statusStages(of ids: String) throws -> (
        stages: [UUID: [StageName: DistributedStatus.StageCount]], manifest: [UUID: String], retried: [UUID: Int]
    ) {
        var stages: [UUID: [StageName: DistributedStatus.StageCount]] = [:]
        var manifest: [UUID: String] = [:]
        var retried: [UUID: Int] = [:]
        for row in try connection.query(
            """
            SELECT batch_id, stage, state, count(*) AS n, count(*) FILTER (WHERE last_error IS NOT NULL) AS retried
            FROM share_jobs WHERE batch_id = ANY($1::uuid[]) GROUP BY batch_id, stage, state
            """, [ids])
        {
            guard let batch = row["batch_id"].flatMap(UUID.init(uuidString:)),
                let stage = row["stage"].flatMap(StageName.init(rawValue:))
            else { continue }
            let n = Int(row["n"] ?? "0") ?? 0
            retried[batch, default: 0] += Int(row["retried"] ?? "0") ?? 0
            if stage == .manifest { manifest[batch] = row["state"] ?? "" }
            let old = stages[batch]?[stage] ?? DistributedStatus.StageCount(queued: 0, running: 0)
            switch row["state"] {
            case JobQueue.State.queued.rawValue:
                stages[batch, default: [:]][stage] = .init(queued: old.queued + n, running: old.running)
            case JobQueue.State.running.rawValue:
                stages[batch, default: [:]][stage] = .init(queued: old.queued, running: old.running + n)
            default: break
            }
        }
        return (stages, manifest, retried)
    }

    /// Seconds per stage: a finished batch's, summed once by its fan-in; a
    /// running one's, summed over its items now.
    private func statusSeconds(of ids: String) throws -> [UUID: [StageName: Double]] {
        var seconds: [UUID: [StageName: Double]] = [:]
        for row in try connection.query(
            """
            SELECT b.id AS batch_id, s.key AS stage, s.value::double precision AS seconds
            FROM share_batches b, jsonb_each_text(b.stage_seconds) s WHERE b.id = ANY($1::uuid[]) AND b.stage_seconds IS NOT NULL
            UNION ALL
            SELECT j.batch_id, s.key, sum(s.value::double precision)
            FROM share_jobs j JOIN share_batches b ON b.id = j.batch_id AND b.stage_seconds IS NULL, jsonb_each_text(j.snapshot->'\(ItemState.CodingKeys.stageSeconds.rawValue)') s
            WHERE j.batch_id = ANY($1::uuid[]) GROUP BY j.batch_id, s.key
            """, [ids])
        {
            guard let batch = row["batch_id"].flatMap(UUID.init(uuidString:)),
                let stage = row["stage"].flatMap(StageName.init(rawValue:))
            else { continue }
            seconds[batch, default: [:]][stage] = Double(row["seconds"] ?? "0") ?? 0
        }
        return seconds
    }

    /// The live workers, then at most `limit` gone ones, each with what it is
    /// blocked on; and how many are gone.
    private func statusWorkers(limit workerLimit: Int) throws -> (workers: [DistributedStatus.Worker], gone: Int) {
        var blocks: [Int: [DistributedStatus.Block]] = [:]
        for row in try connection.query("SELECT worker_id, batch_id, reason FROM share_worker_blocks ORDER BY since") {
            guard let worker = row["worker_id"].flatMap(Int.init),
                let batch = row["batch_id"].flatMap(UUID.init(uuidString:))
            else { continue }
            blocks[worker, default: []].append(.init(batch: batch, reason: row["reason"] ?? ""))
        }
        let workerRows = try connection.query(
            """
            WITH live AS (\(Self.liveWorkers))
            SELECT w.*, w.id IN (SELECT id FROM live) AS live, extract(epoch FROM w.started_at) AS started, extract(epoch FROM w.last_seen) AS seen,
                (SELECT count(*) FROM share_jobs j WHERE j.worker_id = w.id AND j.state = '\(JobQueue.State.running)') AS holding,
                count(*) FILTER (WHERE w.id NOT IN (SELECT id FROM live)) OVER () AS gone
            FROM share_workers w ORDER BY (w.id IN (SELECT id FROM live)) DESC, w.last_seen DESC
            """)
        let live = workerRows.filter { $0["live"] == "t" }
        let gone = workerRows.filter { $0["live"] != "t" }
        let workers = (live + gone.prefix(workerLimit)).map { row in
            let id = Int(row["id"] ?? "") ?? 0
            return DistributedStatus.Worker(
                name: row["name"] ?? "", host: row["host"] ?? "", pid: Int(row["pid"] ?? "") ?? 0,
                stages: (row["stages"] ?? "").split(separator: ",").map(String.init),
                concurrency: Int(row["concurrency"] ?? "") ?? 0,
                live: row["live"] == "t", stopped: row["stopped_at"] != nil,
                startedAt: Date(timeIntervalSince1970: Double(row["started"] ?? "") ?? 0),
                lastSeen: Date(timeIntervalSince1970: Double(row["seen"] ?? "") ?? 0),
                stagesDone: Int(row["stages_done"] ?? "") ?? 0, failures: Int(row["failures"] ?? "") ?? 0,
                holding: Int(row["holding"] ?? "") ?? 0,
                blocked: row["live"] == "t" ? blocks[id] ?? [] : [])
        }
        return (workers, gone.count)
    }

    /// Jobs waiting and running per stage, over every batch.
    private func statusQueue() throws -> [StageName: DistributedStatus.StageCount] {
        var queue: [StageName: DistributedStatus.StageCount] = [:]
        for row in try connection.query(
            "SELECT stage, state, count(*) AS n FROM share_jobs WHERE state IN ('\(JobQueue.State.queued)', '\(JobQueue.State.running)') GROUP BY stage, state"
        ) {
            guard let stage = row["stage"].flatMap(StageName.init(rawValue:)) else { continue }
            let n = Int(row["n"] ?? "0") ?? 0
            let old = queue[stage] ?? .init(queued: 0, running: 0)
            queue[stage] =
                row["state"] == JobQueue.State.queued.rawValue
                ? .init(queued: old.queued + n, running: old.running)
                : .init(queued: old.queued, running: old.running + n)
        }
        return queue
    }

    /// The most recent failures: jobs retried or given up on (their last error),
    /// and items that failed for a reason of their own.
    func failures(limit: Int, batch: UUID? = nil) throws -> [DistributedStatus.Failure] {
        let rows = try connection.query(
            """
            SELECT * FROM (
                (SELECT extract(epoch FROM error_at) AS at, batch_id, idx, stage, last_error AS error, snapshot FROM share_jobs
                 WHERE error_at IS NOT NULL AND ($2::uuid IS NULL OR batch_id = $2::uuid) ORDER BY error_at DESC LIMIT $1)
                UNION ALL
                (SELECT extract(epoch FROM finished_at), batch_id, idx, NULL::text, NULL::text, snapshot FROM share_jobs
                 WHERE \(ItemColumn.reason) IS NOT NULL AND state = '\(JobQueue.State.done)' AND finished_at IS NOT NULL AND ($2::uuid IS NULL OR batch_id = $2::uuid)
                 ORDER BY finished_at DESC LIMIT $1)
            ) f ORDER BY at DESC LIMIT $1
            """,
            [String(limit), batch?.uuidString])
        return rows.compactMap { row in
            guard let batch = row["batch_id"].flatMap(UUID.init(uuidString:)), let index = row["idx"].flatMap(Int.init)
            else { return nil }
            // An item that failed for a reason of its own: its failure is in its record.
            let item = row["snapshot"].map { ItemState.decode($0, index: index, id: nil) }
            let failure = row["stage"] == nil ? item?.failure : nil
            return DistributedStatus.Failure(
                time: Date(timeIntervalSince1970: Double(row["at"] ?? "") ?? 0), batch: batch,
                index: index >= 0 ? index : nil,
                source: item?.label, stage: row["stage"] ?? failure?.stage.rawValue ?? "",
                error: row["error"] ?? failure.map { "\($0.reason.rawValue): \($0.message)" } ?? "")
        }
    }

    /// `share gc --db`: deletes finished (done or failed) batches, with their
    /// jobs, finished more than `retention` seconds ago, and workers gone as long.
    func prune(olderThan retention: Double) throws -> (batches: Int, jobs: Int, workers: Int) {
        let row =
            try connection.query(
                """
                WITH old AS (
                    DELETE FROM share_batches WHERE state IN (\(BatchLifecycle.sql(BatchLifecycle.prunable))) AND finished_at < extract(epoch FROM now()) - $1::double precision
                        OR state = '\(BatchState.claimed.rawValue)' AND created_at < extract(epoch FROM now()) - $1::double precision
                    RETURNING id),
                live AS (\(Self.liveWorkers)),
                workers AS (
                    DELETE FROM share_workers w WHERE w.id NOT IN (SELECT id FROM live) AND w.last_seen < now() - make_interval(secs => $1::double precision)
                        AND NOT EXISTS (SELECT 1 FROM share_jobs j WHERE j.worker_id = w.id AND j.state = '\(JobQueue.State.running)')
                    RETURNING id)
                SELECT (SELECT count(*) FROM old) AS batches, (SELECT count(*) FROM share_jobs WHERE batch_id IN (SELECT id FROM old)) AS jobs,
                    (SELECT count(*) FROM workers) AS workers
                """,
                [String(retention)]
            ).first ?? [:]
        return (Int(row["batches"] ?? "0") ?? 0, Int(row["jobs"] ?? "0") ?? 0, Int(row["workers"] ?? "0") ?? 0)
    }
}
