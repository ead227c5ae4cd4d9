import Foundation
import Glibc
import ShareManifest
import SystemCalls

/// Workers in `share_workers`. A worker is live exactly while its session holds
/// its advisory lock (`pg_advisory_lock(727275, id)`): the server releases it
/// the moment the session ends (the process died, its machine or network went
/// away and TCP keepalives noticed), so other workers can take its jobs back at
/// once instead of waiting for their leases.
extension JobQueue {
    /// Registers a worker and takes its lock on this connection; returns its id.
    func register(name: String, stages: [StageName], concurrency: Int) throws -> Int {
        let row = try connection.query(
            "INSERT INTO share_workers (name, host, pid, stages, concurrency) VALUES ($1, $2, $3, $4, $5) RETURNING id",
            [
                name, FileSystem.hostTag, String(Processes.current), stages.map(\.rawValue).joined(separator: ","),
                String(concurrency),
            ])
        guard let id = row.first?["id"].flatMap(Int.init) else {
            throw PostgresError(message: "could not register the worker", connectionLost: false)
        }
        guard try relock(worker: id) else {
            throw PostgresError(message: "worker id \(id) is locked by another session", connectionLost: false)
        }
        return id
    }

    /// Takes the worker's lock again (after a reconnect: a server restart ended
    /// every session); false if the worker's row is gone (`share gc --db` removed
    /// it) or another session holds the lock.
    func relock(worker: Int) throws -> Bool {
        let row = try connection.query(
            """
            WITH locked AS (SELECT pg_try_advisory_lock(\(QueueSchema.workerLockSpace), $1) AS ok)
            UPDATE share_workers SET locked_at = now(), last_seen = now(), stopped_at = NULL
            FROM locked WHERE id = $1 AND locked.ok RETURNING id
            """,
            [String(worker)])
        return !row.isEmpty
    }

    /// The worker's heartbeat, one statement for all its jobs: extends the lease
    /// of every job it holds (`held`), hands back any other job recorded as its
    /// own, parked where it was (``JobQueue/handedBack``: a claim or a
    /// completion whose answer was lost with the connection, or a job its
    /// executor dropped because its record could not be made: the lifecycle's
    /// park, ``ItemLifecycle/afterFailedRecord(_:next:ran:error:failure:refusedBefore:)``),
    /// records that it was seen, and adds the stages it finished and the failures
    /// it saw since the last one. Returns the number of leases renewed.
    @discardableResult
    func heartbeat(worker: Int, held: Set<Int64>, lease: Double, stagesDone: Int, failures: Int) throws -> Int {
        let row = try connection.query(
            """
            WITH renewed AS (
                UPDATE share_jobs SET lease_until = now() + make_interval(secs => $2::double precision)
                WHERE worker_id = $1 AND state = '\(JobQueue.State.running)' AND id = ANY($5::bigint[]) RETURNING id),
            lost AS (
                UPDATE share_jobs SET state = '\(JobQueue.handedBack)', worker_id = NULL, lease_until = NULL, not_before = now()
                WHERE worker_id = $1 AND state = '\(JobQueue.State.running)' AND NOT (id = ANY($5::bigint[])) RETURNING id)
            UPDATE share_workers SET last_seen = now(), stages_done = stages_done + $3, failures = failures + $4
            WHERE id = $1
            RETURNING (SELECT count(*) FROM renewed) AS renewed,
                CASE WHEN EXISTS (SELECT 1 FROM lost) THEN pg_notify('share_jobs', '') END AS notified
            """,
            [String(worker), String(lease), String(stagesDone), String(failures), Self.array(held.map(String.init))])
        return Int(row.first?["renewed"] ?? "0") ?? 0
    }

    /// Records that the worker will not take a batch's jobs, and why.
    func block(worker: Int, batch: UUID, reason: String) throws {
        try connection.query(
            """
            INSERT INTO share_worker_blocks (worker_id, batch_id, reason) VALUES ($1, $2, $3)
            ON CONFLICT (worker_id, batch_id) DO UPDATE SET reason = excluded.reason
            """,
            [String(worker), batch.uuidString, reason])
    }

    /// The worker can work on the batch again.
    func unblock(worker: Int, batch: UUID) throws {
        try connection.query(
            "DELETE FROM share_worker_blocks WHERE worker_id = $1 AND batch_id = $2",
            [String(worker), batch.uuidString])
    }

    /// A clean stop: the jobs claimed but never started are handed back, the
    /// worker is recorded as stopped (its lock goes with the session).
    func unregister(worker: Int, unstarted: [Int64]) throws {
        try release(unstarted, worker: worker)
        try connection.query(
            "UPDATE share_workers SET stopped_at = now(), last_seen = now() WHERE id = $1", [String(worker)])
        try connection.query("DELETE FROM share_worker_blocks WHERE worker_id = $1", [String(worker)])
    }
}
