import Foundation
import ShareManifest
import Synchronization
import SystemCalls

/// One run of a worker: what its coordinator, reaper and executors share (the
/// claimed jobs waiting for an executor, the jobs held, the batches checked),
/// and what more than one of them does (a lost fan-in, a failure's log line).
/// Each of them has its own connection.
final class WorkerRun: Sendable {
    let worker: StageWorker
    let id: Int
    let interruption: Interruption
    /// Claimed jobs waiting for an executor.
    let handoff: BlockingQueue<Job>
    /// Executors running a job now.
    let busy = Atomic<Int>(0)
    /// The jobs this worker holds (claimed, not yet completed or handed back):
    /// the heartbeat renews these and hands back any other job recorded as ours.
    let held = Mutex<Set<Int64>>([])
    /// True while an executor runs a job that must run alone: nothing else is claimed.
    let runningAlone = Atomic<Bool>(false)
    /// Stages finished and item failures since the last heartbeat.
    let counters = Mutex<(done: Int, failures: Int)>((0, 0))
    /// Seconds an executor takes per job, averaged over the last ones (how many
    /// jobs the coordinator claims at a time follows from it).
    private let jobSeconds = Mutex<Double>(1)
    /// Executors signal it when they take or finish a job, so the coordinator refills.
    let wake = WakePipe()
    /// The batches this worker checked it can work on, and those it cannot.
    let batches: WorkerBatches
    /// The execution core the executors share (with one decoder-memory budget).
    let execution: StageExecution

    init(worker: StageWorker, id: Int, interruption: Interruption) {
        self.worker = worker
        self.id = id
        self.interruption = interruption
        handoff = BlockingQueue(capacity: Self.mostClaimed + worker.settings.concurrency)
        batches = WorkerBatches(worker: worker, id: id)
        // A record whose connection was lost is kept and made again once the
        // server is back (the connection ends its waits when a stop is due).
        execution = StageExecution(
            events: worker.events, cancellation: interruption.flag,
            retries: .init(patience: .infinity) { StoreFailure($0) == .unreachable })
    }

    /// The most jobs claimed ahead of the executors.
    static let mostClaimed = 64
    /// Seconds of work the jobs claimed ahead may amount to: what another
    /// worker would wait for them at most, had it nothing to do.
    static let claimedSeconds = 0.5

    /// An executor finished a job after `seconds`.
    func jobFinished(seconds: Double) {
        jobSeconds.withLock { $0 = 0.9 * $0 + 0.1 * seconds }
    }

    /// How many jobs to hold claimed ahead of the executors: twice their number,
    /// or, for cheap jobs, as many as they finish in ``claimedSeconds`` (at most
    /// ``mostClaimed``), so small items cost a fraction of a claim each without
    /// one worker hoarding what others could do.
    var claimAhead: Int {
        let perJob = jobSeconds.withLock { $0 }
        let affordable = Int(Double(settings.concurrency) * Self.claimedSeconds / max(perJob, 0.0001))
        return min(Self.mostClaimed, max(2 * settings.concurrency, affordable))
    }

    var settings: StageWorker.Settings { worker.settings }
    var cancellation: CancellationFlag { interruption.flag }

    /// A connection of this worker's own (an executor's or the reaper's), made
    /// again when it was lost; nil when it cannot be made now.
    func connected(_ queue: inout JobQueue?) -> JobQueue? {
        do {
            if let existing = queue {
                if !existing.connection.isConnected { try existing.reconnect() }
            } else {
                let fresh = try JobQueue(url: worker.url, role: "worker", interruption: interruption)
                fresh.leaseSeconds = settings.lease
                fresh.reconnects = true
                queue = fresh
            }
            return queue
        } catch {
            return nil
        }
    }

    /// Sleeps up to `seconds`, waking early when cancelled.
    func pause(_ seconds: Double) {
        let end = MonotonicClock.now() + seconds
        while MonotonicClock.now() < end && !cancellation.isCancelled { MonotonicClock.sleep(0.02) }
    }

    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }

    // MARK: - What more than one of them does

    /// One log line for an item whose attempt was lost: queued again (the
    /// attempt counted, or not: it died beside others), or given up on.
    func logLoss(_ job: Job, item: ItemState, next: NextStep, error: String) {
        var fields = ["batch": job.batchID.uuidString, "stage": job.stage.rawValue, "item": String(job.index), "attempt": String(item.lostAttempts), "error": error]
        switch next {
        case .retry(_, 0, _) where item.suspect:
            worker.emit(
                .retry,
                "retry: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(job.stage.rawValue): \(error); queued again, not counted (it was not alone in flight: it runs alone next)",
                fields)
        case .retry(_, let after, _):
            fields["maxAttempts"] = String(job.maxAttempts)
            worker.emit(
                .retry,
                "retry: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(job.stage.rawValue): attempt \(item.lostAttempts) of \(job.maxAttempts) lost: \(error); queued again in \(Self.seconds(after))",
                fields)
        case .gaveUp:
            counters.withLock { $0.failures += 1 }
            worker.emit(.gaveUp, "gave up: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(job.stage.rawValue) after \(item.lostAttempts) attempts: \(error)", fields)
        default:
            break
        }
    }

    /// The manifest job lost its attempt (its worker died, an error that is not
    /// the batch's): the batch's lifecycle decides whether it is queued again or
    /// the batch fails.
    func loseManifest(_ job: Job, lease: Lease, error: String, lifecycle: ItemLifecycle, queue: any JobStore) throws {
        let (next, attempt) = lifecycle.afterLosingFanIn(lostBefore: job.attempts, reason: error)
        let fields = ["batch": job.batchID.uuidString, "stage": job.stage.rawValue, "attempt": String(attempt), "maxAttempts": String(lifecycle.maxAttempts), "error": error]
        if case .retry(_, let after, _) = next {
            try queue.retryManifest(job, lease: lease, error: error, attempt: attempt, after: after)
            worker.emit(
                .retry, "retry: the manifest of batch \(job.batchID.uuidString): attempt \(attempt) of \(lifecycle.maxAttempts) lost: \(error); queued again in \(Self.seconds(after))",
                fields)
            return
        }
        let reason = "the manifest job gave up after \(attempt) attempts: \(error)"
        try queue.failBatch(job, lease: lease, reason: reason)
        storeReport(of: job.batchID, queue: queue)
        worker.emit(.batchFailed, "batch \(job.batchID.uuidString) failed: \(reason); share ingest --resume \(job.batchID.uuidString) --db URL retries it", fields)
    }

    /// A failed batch's report (rebuilt from its items), stored beside where its
    /// manifest would be, for `share report`, if this worker can write there.
    private func storeReport(of batch: UUID, queue: any JobStore) {
        guard let stored = try? queue.batch(batch), WorkerVisibility.problem(with: stored) == nil,
            let container = try? ContainerDirectory(stored.container),
            let report = try? ShareIngestor.finishedReport(of: stored.record, store: queue, container: container, catalog: settings.catalog)
        else { return }
        let path = container.reportPath(key: stored.record.key)
        FileSystem.remove(path)
        try? AtomicFile.create(path, bytes: report.json(), syncDirectory: false)
    }
}
