import Foundation
import ShareManifest

/// The distributed queue's side of a store (`JobQueue`, PostgreSQL): items
/// are jobs that workers claim and lease, a record is guarded by the job's
/// lease, and workers register, renew their leases and take back the jobs of
/// workers that are gone. What the worker (``StageWorker``: coordinator,
/// reaper, executors) uses, in four parts by who uses them: ``LeasedRecords``
/// (the executors and the reaper), ``JobClaims`` (the coordinator, the reaper,
/// the batches' checks), ``WorkerRoster`` (the worker's registration and
/// heartbeat) and ``QueueConnection`` (the worker's connection).
protocol JobStore: ItemStore, LeasedRecords, JobClaims, WorkerRoster, QueueConnection {
    /// Seconds a claimed job stays its holder's without a heartbeat.
    var leaseSeconds: Double { get set }
}

/// Steps and ends, each guarded by a lease: what an executor records of the
/// jobs it holds (and the reaper of a job it takes back).
protocol LeasedRecords: AnyObject {
    /// Records an item's state and where it goes next, if `lease` still holds
    /// its job at that stage (false otherwise: the record changes nothing).
    func record(_ item: ItemState, next: NextStep, batch: UUID, lease: Lease) throws -> Bool
    /// Records the steps of several jobs `worker` holds in one statement;
    /// returns the jobs whose rows it changed (the others were not held any more).
    func record(_ steps: [JobQueue.LeasedStep], worker: Int) throws -> Set<Int64>
    /// Records a page of the items the fan-in changed, before its end, while
    /// `lease` holds the manifest job (false when it no longer does).
    func record(_ changed: [ItemState], batch: BatchRecord, lease: Lease) throws -> Bool
    /// Records the fan-in's end with its manifest job, if `lease` still holds
    /// it and the batch is still running.
    func finish(_ batch: BatchRecord, changed: [ItemState], lease: Lease) throws -> Bool
}

/// The queue's jobs: claimed and released by the coordinator, taken back and
/// repaired by the reaper, and the batch rows their checks read.
protocol JobClaims: AnyObject {
    /// Claims up to `limit` ready jobs of `stages` of the batches in `batches`;
    /// `alone`: only a job that must run alone (``ItemState/suspect``), for a
    /// worker that holds nothing else. Also returns running batches this worker
    /// has not checked yet.
    func claim(stages: [StageName], worker: Int, limit: Int, batches: Set<UUID>, blocked: Set<UUID>, alone: Bool) throws
        -> (jobs: [Job], unchecked: [UUID])
    /// Hands claimed jobs that were never started back.
    func release(_ jobs: [Int64], worker: Int) throws
    /// Running jobs whose worker is gone or stopped renewing its lease.
    func orphans() throws -> [JobQueue.Orphan]
    /// Records that a manifest job lost an attempt (`lost` now): `next` queues
    /// it again after its backoff, or gives up (the batch fails, with why).
    func loseFanIn(_ job: Job, lease: Lease, next: NextStep, lost: Int) throws
    /// Running batches whose fan-in counter is not 0, with their unfinished items counted.
    func stuckBatches() throws -> [(batch: UUID, unfinished: Int)]
    /// Queues the fan-in of a running batch whose counter missed its last item.
    func queueFanIn(of batch: UUID) throws
    /// The batch's row with what only the distributed mode records.
    func batch(_ id: UUID) throws -> JobQueue.StoredBatch?
}

/// The workers' registry: a worker registers, renews its leases with its
/// heartbeat, blocks the batches it refuses, and leaves.
protocol WorkerRoster: AnyObject {
    /// Registers a worker and takes its lock on this connection; returns its id.
    func register(name: String, stages: [StageName], concurrency: Int) throws -> Int
    /// Takes the worker's lock again after a reconnect; false if its row is gone or another session holds it.
    func relock(worker: Int) throws -> Bool
    /// Renews the leases of the jobs `worker` holds, adds its counters; returns the leases renewed.
    @discardableResult
    func heartbeat(worker: Int, held: Set<Int64>, lease: Double, stagesDone: Int, failures: Int) throws -> Int
    /// Records that `worker` will not take the jobs of `batch`, and why.
    func block(worker: Int, batch: UUID, reason: String) throws
    /// Lifts a refusal of ``block(worker:batch:reason:)``.
    func unblock(worker: Int, batch: UUID) throws
    /// A clean stop: the jobs claimed but never started are handed back, `worker` recorded as stopped.
    func unregister(worker: Int, unstarted: [Int64]) throws
}

/// A worker's connection to the queue: notifications of new jobs, and its end.
protocol QueueConnection: AnyObject {
    /// Starts listening for new jobs.
    func listen() throws
    /// Waits up to `seconds` for a new job's notification, or for `wake` to be readable.
    @discardableResult
    func waitForWork(seconds: Double, wake: Int32) throws -> Bool
    /// False once the connection was lost.
    var isConnected: Bool { get }
    /// Ends waits of this connection at `interruption` from now on.
    func interrupt(at interruption: Interruption)
    /// Closes the connection.
    func close()
}

/// A distributed job held by a worker: what a record of its item must match to
/// change anything (``LeasedRecords/record(_:next:batch:lease:)``).
struct Lease: Sendable, Hashable {
    /// The job's row.
    let job: Int64
    /// The worker holding it.
    let worker: Int
    /// The stage it holds the item at.
    let stage: StageName
    /// True when the holder goes on with the item's next stage itself (it
    /// serves it): the job stays leased to it instead of being queued.
    var keeps = false
}

/// Records the steps of one claimed job: each record is guarded by its lease,
/// which follows the row's stage once a record is made (steps kept by the
/// holder are recorded with a later one). With `leaving`, the step with which
/// the item leaves its holder is handed to it instead, to be made with other
/// items' in one statement.
final class LeasedSteps: StepRecorder {
    let store: any LeasedRecords
    let batch: UUID
    private(set) var lease: Lease
    private let leaving: ((JobQueue.LeasedStep) -> Void)?

    init(_ store: any LeasedRecords, batch: UUID, lease: Lease, leaving: ((JobQueue.LeasedStep) -> Void)? = nil) {
        self.store = store
        self.batch = batch
        self.lease = lease
        self.leaving = leaving
    }

    func record(_ item: ItemState, next: NextStep, keeps: Bool, ran: RanStage?) throws -> StepRecord {
        var held = lease
        held.keeps = keeps
        if !keeps, let leaving {
            leaving(JobQueue.LeasedStep(item: item, next: next, lease: held, ran: ran))
            return .queued
        }
        guard try store.record(item, next: next, batch: batch, lease: held) else { return .refused }
        if let stage = next.stage { lease = Lease(job: lease.job, worker: lease.worker, stage: stage) }
        return .saved
    }

    var roundTrips: Bool { true }
}
