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
    /// Stages finished and item failures since the last heartbeat; a failure
    /// is counted where every finished item is told, once (``leaving``).
    let counters = WorkerCounters()
    /// Told the status of every item of this worker that leaves the pipeline,
    /// whichever path finished it (an executor, the reaper, both through
    /// ``execution``): each failed item is counted for the heartbeat, whether
    /// or not anyone listens to the events (no report is made for nobody).
    let leaving: @Sendable (ItemStatus) -> Void
    /// The worker's own events (nil: nobody listens).
    var events: IngestEventSink? { worker.events }
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
        batches = WorkerBatches(worker: worker, id: id, cancellation: interruption.flag)
        let counters = counters
        leaving = { status in if status == .failed { counters.withLock { $0.failures += 1 } } }
        // A record whose connection was lost is kept and made again once the
        // server is back, as the lifecycle's patience says (the connection ends
        // its waits when a stop is due).
        execution = StageExecution(events: worker.events, cancellation: interruption.flag, leaving: leaving)
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
    /// attempt counted, or not: it died beside others, or was not in flight),
    /// or given up on. (Counting a give-up is ``leaving``'s business.)
    func logLoss(_ job: Job, item: ItemState, next: NextStep, error: String) {
        var fields = [
            "batch": job.batchID.uuidString, "stage": job.stage.rawValue, "item": String(job.index),
            "attempt": String(item.lostAttempts), "error": error,
        ]
        switch next {
        case .retry(_, 0, _) where item.suspect:
            worker.emit(
                .retry,
                "retry: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(job.stage.rawValue): \(error); queued again, not counted (it was not alone in flight: it runs alone next)",
                fields)
        case .retry(_, 0, _):
            worker.emit(
                .retry,
                "retry: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(job.stage.rawValue): \(error); queued again, not counted (it was held, not in flight)",
                fields)
        case .retry(_, let after, _):
            fields["maxAttempts"] = String(job.maxAttempts)
            worker.emit(
                .retry,
                "retry: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(job.stage.rawValue): attempt \(item.lostAttempts) of \(job.maxAttempts) lost: \(error); queued again in \(Self.seconds(after))",
                fields)
        case .gaveUp:
            worker.emit(
                .gaveUp,
                "gave up: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(job.stage.rawValue) after \(item.lostAttempts) attempts: \(error)",
                fields)
        default:
            break
        }
    }

    /// The manifest job lost its attempt (its worker died, an error that is not
    /// the batch's): recorded as the batch's lifecycle decides (``ItemLifecycle/afterLosingFanIn(lostBefore:reason:)``):
    /// queued again after its backoff, or the batch fails.
    /// `forWantOfSpace`: the manifest could not be written for want of space,
    /// which costs no attempt (``ItemLifecycle/afterFanInWantsSpace(lostBefore:reason:)``).
    func loseManifest(
        _ job: Job, lease: Lease, error: String, lifecycle: ItemLifecycle, queue: any JobStore,
        forWantOfSpace: Bool = false
    ) throws {
        let (next, lost) =
            forWantOfSpace
            ? lifecycle.afterFanInWantsSpace(lostBefore: job.attempts, reason: error)
            : lifecycle.afterLosingFanIn(lostBefore: job.attempts, reason: error)
        try queue.loseFanIn(job, lease: lease, next: next, lost: lost)
        let fields = [
            "batch": job.batchID.uuidString, "stage": job.stage.rawValue, "attempt": String(lost),
            "maxAttempts": String(lifecycle.maxAttempts), "error": error,
        ]
        switch next {
        case .retry(_, let after, _):
            worker.emit(
                .retry,
                "retry: the manifest of batch \(job.batchID.uuidString): attempt \(lost) of \(lifecycle.maxAttempts) lost: \(error); queued again in \(Self.seconds(after))",
                fields)
        case .gaveUp(let reason):
            storeReport(of: job.batchID, queue: queue)
            worker.emit(
                .batchFailed,
                "batch \(job.batchID.uuidString) failed: \(reason); share ingest --resume \(job.batchID.uuidString) --db URL retries it",
                fields)
        default:
            break
        }
    }

    /// A failed batch's report (rebuilt from its items), stored beside where its
    /// manifest would be, for `share report`, if this worker can write there.
    private func storeReport(of batch: UUID, queue: any JobStore) {
        guard let stored = try? queue.batch(batch), WorkerVisibility.problem(with: stored) == nil,
            let container = try? ContainerDirectory(stored.container),
            let report = try? ShareIngestor.finishedReport(
                of: stored.record, store: queue, container: container, catalog: settings.catalog)
        else { return }
        let path = container.reportPath(key: stored.record.key)
        FileSystem.remove(path)
        try? AtomicFile.create(path, bytes: report.json(), syncDirectory: false)
    }
}

/// A worker's counts since its last heartbeat: stages finished, items failed.
final class WorkerCounters: Sendable {
    private let counts = Mutex<(done: Int, failures: Int)>((0, 0))

    func withLock<Result>(_ body: (inout (done: Int, failures: Int)) -> Result) -> Result {
        counts.withLock { body(&$0) }
    }
}
