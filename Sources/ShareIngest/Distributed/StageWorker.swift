import Foundation
import Glibc
import MediaFormats
import MediaKit
import ShareManifest
import Synchronization
import SystemCalls

/// A long-running worker that claims jobs from PostgreSQL and runs them with the
/// same execution core as the local pipeline (``StageExecution``, which applies
/// ``ItemLifecycle``, and ``BatchCompletion``) (`share worker`): only the
/// transport differs, claims and leases instead of threads and queues.
///
/// - One coordinator thread, on one connection, registers the worker and holds
///   its advisory lock (its jobs are released the moment its session ends),
///   renews the leases of all its jobs in one statement (the heartbeat), takes
///   back the jobs of workers that are gone (the lifecycle decides: retried, or
///   given up on), and claims work, costliest first, into a local queue,
///   sleeping on `LISTEN share_jobs` when there is none.
/// - `concurrency` executor threads, each with its own connection, run the jobs:
///   after each stage, one statement records the item and, when this worker
///   also serves the item's next stage, keeps it (no new claim); otherwise the
///   stage is queued for whichever worker serves it. The executors share one
///   decoder-memory budget, as the local runner's workers do.
/// - Before taking any job of a batch, the worker checks that it sees the
///   batch's container (its visibility token), can write it, and sees its inputs
///   (``WorkerVisibility``); if not, it hands the jobs back, says why once (log,
///   `share status --db`) and leaves the batch to others.
/// - A stage whose result cannot be saved because the connection is lost (the
///   server restarted) is kept and saved once the connection is back.
/// - SIGINT/SIGTERM: no new jobs are claimed, claimed ones not yet started are
///   handed back, jobs in flight finish their stage and are saved (within
///   ``stopGrace`` seconds even if the server hangs), then the worker exits.
public final class StageWorker: Sendable {
    /// What a worker serves and how.
    public struct Settings: Sendable {
        /// The stages this worker serves (e.g. only `thumbnail` on a big machine).
        public var stages: [StageName] = StageName.allCases
        /// Threads, each with its own connection, working on one job at a time.
        public var concurrency = 2
        /// Seconds a claimed job stays ours without a heartbeat (renewed every third of it).
        public var lease: Double = 30
        /// The name the log, the jobs and `share status --db` show (default: host and process id).
        public var name = "\(FileSystem.hostTag)-\(Processes.current)"

        /// The defaults: every stage, 2 threads, a 30 s lease.
        public init() {}
    }

    /// One line of a worker's log: one per failure, retry and give-up, and for
    /// what an operator must know (a batch it cannot work on, a lost connection).
    public struct Event: Sendable {
        /// What happened.
        public enum Kind: String, Sendable {
            /// The worker registered and is taking jobs.
            case started
            /// The worker stopped (a signal).
            case stopped
            /// The worker will not take a batch's jobs: it cannot see or write its files.
            case blocked
            /// A batch the worker could not work on is visible to it again.
            case unblocked
            /// An item failed for a reason of its own (undecodable, empty, …).
            case failed
            /// A job failed for a reason that is not its item's (its worker died,
            /// stalled, or an error here) and was queued again.
            case retry
            /// A job had all its attempts: its item fails with the last error.
            case gaveUp
            /// A batch's manifest is written.
            case batchDone
            /// A batch's manifest job had all its attempts: the batch failed.
            case batchFailed
            /// The connection to the database was lost.
            case disconnected
            /// The connection is back (and kept results were saved).
            case reconnected
        }

        /// What happened.
        public let kind: Kind
        /// One line for people.
        public let message: String
        /// The same for programs (batch, item, stage, attempt, error, …).
        public let fields: [String: String]
    }

    /// Seconds a statement may still take after SIGINT/SIGTERM (the last saves),
    /// whatever the server does.
    public static let stopGrace: Double = 5

    /// The database (a libpq URI).
    public let url: String
    /// What this worker serves.
    public let settings: Settings
    let events: IngestEventSink?
    let log: (@Sendable (Event) -> Void)?
    /// What decodes the media of the jobs this worker takes.
    let decoder: any MediaDecoder

    /// A worker on the database at `url`; `events` receives each finished stage
    /// and batch, `log` one ``Event`` per failure, retry and notable change.
    public init(
        url: String, settings: Settings, events: IngestEventSink? = nil, log: (@Sendable (Event) -> Void)? = nil,
        decoder: any MediaDecoder = InProcessDecoder()
    ) {
        (self.url, self.settings, self.events, self.log, self.decoder) = (url, settings, events, log, decoder)
    }

    /// Creates or upgrades the schema (`share db migrate`; needs a role that may create tables).
    public static func migrate(url: String, cancellation: CancellationFlag = CancellationFlag()) throws {
        let queue = try JobQueue(url: url, role: "migrate", interruption: Interruption(cancellation))
        do {
            try QueueSchema.migrate(queue.connection)
        } catch let error as PostgresError where error.sqlState == "42501" {
            throw SchemaMismatch(
                description: "PostgreSQL: \(error.message): this role may not change the schema; run share db migrate as the owner role (README: least privilege)")
        }
    }

    /// Works until `cancellation` is set (jobs in flight finish first). Throws
    /// when it cannot start: the database cannot be reached or has no schema.
    public func run(cancellation: CancellationFlag) throws {
        // The coordinator stops waiting at once; executors' saves get a grace.
        let queue = try JobQueue(url: url, role: "worker", interruption: Interruption(cancellation))
        queue.leaseSeconds = settings.lease
        let interruption = Interruption(cancellation, grace: Self.stopGrace)
        try QueueSchema.check(queue.connection)
        decoder.prepare()
        let id = try queue.register(name: settings.name, stages: settings.stages, concurrency: settings.concurrency)
        let run = WorkerRun(worker: self, id: id, interruption: interruption)
        emit(.started, "worker \(settings.name) (#\(id)) serving \(settings.stages.map(\.rawValue).joined(separator: ",")) with \(settings.concurrency) threads",
             ["worker": settings.name, "id": String(id)])
        let join = WorkerThreads.start(name: "worker", count: settings.concurrency) { _ in run.execute() }
        let last = run.coordinate(queue)
        let unstarted = run.handoff.drain().map(\.id)
        join()
        run.stop(last, unstarted: unstarted)
        emit(.stopped, "worker \(settings.name) stopped", ["worker": settings.name])
    }

    func emit(_ kind: Event.Kind, _ message: String, _ fields: [String: String] = [:]) {
        log?(Event(kind: kind, message: message, fields: fields.merging(["worker": settings.name]) { current, _ in current }))
    }
}

/// What a worker knows about a batch it works on: read once, checked visible.
final class PreparedBatch: Sendable {
    let context: BatchContext
    /// When its visibility was last checked (monotonic seconds).
    let checked: Double

    init(_ stored: JobQueue.StoredBatch, decoder: any MediaDecoder) throws {
        context = try BatchContext(stored.record, container: try ContainerDirectory(stored.container), maxAttempts: stored.maxAttempts, decoder: decoder)
        checked = MonotonicClock.now()
    }
}

/// One run of a worker: the state its coordinator and executors share.
final class WorkerRun: Sendable {
    let worker: StageWorker
    let id: Int
    let interruption: Interruption
    /// Claimed jobs waiting for an executor.
    let handoff: BlockingQueue<Job>
    private let busy = Atomic<Int>(0)
    /// The jobs this worker holds (claimed, not yet completed or handed back):
    /// the heartbeat renews these and hands back any other job recorded as ours.
    private let held = Mutex<Set<Int64>>([])
    private let prepared = Mutex<[UUID: PreparedBatch]>([:])
    /// Stages finished and item failures since the last heartbeat.
    private let counters = Mutex<(done: Int, failures: Int)>((0, 0))
    /// Executors signal it when they take a job, so the coordinator refills.
    private let wake = WakePipe()
    /// The execution core the executors share (with one decoder-memory budget).
    let execution: StageExecution

    /// Seconds between checks for jobs of gone workers.
    static let reapInterval = 1.0
    /// Seconds after which a batch's visibility is checked again.
    static let recheckInterval = 30.0

    init(worker: StageWorker, id: Int, interruption: Interruption) {
        self.worker = worker
        self.id = id
        self.interruption = interruption
        handoff = BlockingQueue(capacity: 2 * worker.settings.concurrency + 1)
        // A record whose connection was lost is kept and made again once the
        // server is back (the connection ends its waits when a stop is due).
        execution = StageExecution(
            events: worker.events, cancellation: interruption.flag,
            retries: .init(patience: .infinity) { error in (error as? PostgresError).map { $0.connectionLost && !$0.interrupted } ?? false })
    }

    var settings: StageWorker.Settings { worker.settings }
    var cancellation: CancellationFlag { interruption.flag }

    // MARK: - Coordinator

    /// The coordinator's loop, until cancelled; returns its connection (if still up) for the stop.
    func coordinate(_ first: JobQueue) -> JobQueue? {
        var queue: JobQueue? = first
        var listening = false
        var lostSince: Double?
        var blocked: [UUID: (reason: String, since: Double)] = [:]
        var nextHeartbeat = 0.0, nextReap = 0.0, nextRepair = MonotonicClock.now() + 30
        while !cancellation.isCancelled {
            do {
                if queue == nil {
                    let fresh = try JobQueue(url: worker.url, role: "worker", interruption: Interruption(cancellation))
                    if !(try fresh.relock(worker: id)) {
                        throw PostgresError(message: "this worker's registration is gone (share gc --db?) or its lock is held elsewhere; restart the worker", connectionLost: false)
                    }
                    queue = fresh
                    listening = false
                    if let since = lostSince {
                        worker.emit(.reconnected, "reconnected to the database after \(String(format: "%.1f", MonotonicClock.now() - since)) s")
                        lostSince = nil
                    }
                }
                guard let queue else { continue }
                if !listening {
                    try queue.connection.query("LISTEN share_jobs")
                    listening = true
                }
                let now = MonotonicClock.now()
                if now >= nextHeartbeat {
                    let (done, failures) = counters.withLock { counters in
                        defer { counters = (0, 0) }
                        return counters
                    }
                    do {
                        try queue.heartbeat(worker: id, held: held.withLock { $0 }, lease: settings.lease, stagesDone: done, failures: failures)
                    } catch {
                        counters.withLock { $0 = ($0.done + done, $0.failures + failures) }
                        throw error
                    }
                    nextHeartbeat = now + settings.lease / 3
                }
                if now >= nextReap {
                    try reap(queue)
                    nextReap = now + Self.reapInterval
                }
                if now >= nextRepair {
                    try queue.repairCounters()
                    nextRepair = now + 30
                }
                for (batch, entry) in blocked where now - entry.since > Self.recheckInterval { blocked[batch] = nil }
                let waiting = handoff.count
                let room = 2 * settings.concurrency - waiting - busy.load(ordering: .relaxed)
                if waiting < settings.concurrency && room > 0 {
                    let usable = prepared.withLock { prepared in
                        Set(prepared.filter { now - $0.value.checked < Self.recheckInterval }.keys)
                    }
                    let (jobs, unchecked) = try queue.claim(
                        stages: settings.stages, worker: id, limit: room, batches: usable, blocked: Set(blocked.keys))
                    held.withLock { $0.formUnion(jobs.map(\.id)) }
                    for job in jobs { handoff.push(job) }
                    var checked = false
                    for batch in unchecked where try check(batch, queue: queue, blocked: &blocked) { checked = true }
                    if jobs.count == room || checked { continue }
                }
                let untilHeartbeat = max(0.01, nextHeartbeat - MonotonicClock.now())
                _ = try queue.connection.waitForNotification(seconds: min(1, untilHeartbeat), wake: wake.readEnd)
                wake.drain()
            } catch let error as PostgresError where error.connectionLost {
                if error.interrupted || cancellation.isCancelled { break }
                if lostSince == nil {
                    lostSince = MonotonicClock.now()
                    worker.emit(.disconnected, "lost the database connection: \(error.message); reconnecting", ["error": error.message])
                }
                queue = nil
                pause(0.25)
            } catch {
                worker.emit(.retry, "coordinator: \(error); trying again in 1 s", ["error": "\(error)"])
                pause(1)
            }
        }
        return queue
    }

    /// Checks a batch this worker has not checked yet (or not for a while): true
    /// when its jobs can run here; else why not is recorded and logged (once).
    private func check(_ batch: UUID, queue: JobQueue, blocked: inout [UUID: (reason: String, since: Double)]) throws -> Bool {
        guard let stored = try queue.batch(batch) else { return false }
        var reason = WorkerVisibility.problem(with: stored)
        var ready: PreparedBatch?
        if reason == nil {
            do { ready = try PreparedBatch(stored, decoder: worker.decoder) } catch { reason = "cannot use batch \(batch): \(error)" }
        }
        prepared.withLock { prepared in
            if prepared.count > 512 { prepared.removeAll() }
            prepared[batch] = ready
        }
        if let reason {
            blocked[batch] = (reason, MonotonicClock.now())
            try queue.block(worker: id, batch: batch, reason: reason)
            if !knownBlocked(batch, reason) {
                worker.emit(.blocked, "not taking the jobs of batch \(batch.uuidString): \(reason)", ["batch": batch.uuidString, "error": reason])
            }
            return false
        }
        if forgetBlocked(batch) {
            try queue.unblock(worker: id, batch: batch)
            worker.emit(.unblocked, "batch \(batch.uuidString) is usable here again; taking its jobs", ["batch": batch.uuidString])
        }
        return true
    }

    /// Batches already reported as blocked, with the reason reported (logged once per reason).
    private let reportedBlocks = Mutex<[UUID: String]>([:])

    private func knownBlocked(_ batch: UUID, _ reason: String) -> Bool {
        reportedBlocks.withLock { reported in
            defer { reported[batch] = reason }
            return reported[batch] == reason
        }
    }

    private func forgetBlocked(_ batch: UUID) -> Bool {
        reportedBlocks.withLock { $0.removeValue(forKey: batch) != nil }
    }

    /// Takes back the jobs of workers that are gone (or stopped renewing): each
    /// item's attempt is lost, and the lifecycle decides whether it is queued
    /// again (after a backoff) or given up on; one log line for each.
    private func reap(_ queue: JobQueue) throws {
        for orphan in try queue.orphans() {
            let job = orphan.job
            let lease = job.lease(worker: orphan.worker)
            if job.isManifest {
                try loseManifest(job, lease: lease, error: orphan.reason, queue: queue)
                continue
            }
            var item = job.item
            let next = ItemLifecycle(stages: [], maxAttempts: job.maxAttempts).advance(
                &item, after: .lost(at: job.stage, reason: orphan.reason, blamed: true, crashedDecoding: item.decodingInFlight), stopping: false)
            item.decodingInFlight = false
            guard try queue.record(item, next: next, batch: job.batchID, lease: lease) else { continue }
            logLoss(job, item: item, next: next, error: orphan.reason)
        }
    }

    /// One log line for an attempt lost: queued again, or given up on.
    private func logLoss(_ job: Job, item: ItemState, next: NextStep, error: String) {
        var fields = ["batch": job.batchID.uuidString, "stage": job.stage.rawValue, "item": String(job.index), "attempt": String(item.lostAttempts), "error": error]
        if case .retry(_, let after, _) = next {
            fields["maxAttempts"] = String(job.maxAttempts)
            worker.emit(
                .retry, "retry: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(job.stage.rawValue): attempt \(item.lostAttempts) of \(job.maxAttempts) lost: \(error); queued again in \(Self.seconds(after))",
                fields)
        } else {
            counters.withLock { $0.failures += 1 }
            worker.emit(.gaveUp, "gave up: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(job.stage.rawValue) after \(item.lostAttempts) attempts: \(error)", fields)
        }
    }

    /// The manifest job's attempt was lost: the lifecycle decides whether it is
    /// queued again or the batch fails.
    private func loseManifest(_ job: Job, lease: Lease, error: String, queue: JobQueue) throws {
        let fields = ["batch": job.batchID.uuidString, "stage": job.stage.rawValue, "attempt": String(job.attempts), "maxAttempts": String(job.maxAttempts), "error": error]
        let next = ItemLifecycle(stages: [], maxAttempts: job.maxAttempts).afterLosingFanIn(attempt: job.attempts, reason: error)
        if case .retry(_, let after, _) = next {
            try queue.retryManifest(job, lease: lease, error: error, after: after)
            worker.emit(
                .retry, "retry: the manifest of batch \(job.batchID.uuidString): attempt \(job.attempts) of \(job.maxAttempts) lost: \(error); queued again in \(Self.seconds(after))",
                fields)
            return
        }
        let reason = "the manifest job gave up after \(job.attempts) attempts: \(error)"
        try queue.failBatch(job, lease: lease, reason: reason)
        storeReport(of: job.batchID, queue: queue)
        worker.emit(.batchFailed, "batch \(job.batchID.uuidString) failed: \(reason); share ingest --resume \(job.batchID.uuidString) --db URL retries it", fields)
    }

    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }

    /// A failed batch's report (rebuilt from its items), stored beside where its
    /// manifest would be, for `share report`, if this worker can write there.
    private func storeReport(of batch: UUID, queue: JobQueue) {
        guard let stored = try? queue.batch(batch), WorkerVisibility.problem(with: stored) == nil,
            let container = try? ContainerDirectory(stored.container),
            let report = try? ShareIngestor.finishedReport(of: stored.record, store: queue, container: container)
        else { return }
        let path = container.reportPath(key: stored.record.key)
        FileSystem.remove(path)
        try? AtomicFile.create(path, bytes: report.json(), syncDirectory: false)
    }

    /// Sleeps up to `seconds`, waking early when cancelled.
    private func pause(_ seconds: Double) {
        let end = MonotonicClock.now() + seconds
        while MonotonicClock.now() < end && !cancellation.isCancelled { MonotonicClock.sleep(0.02) }
    }

    /// After the loop: counters flushed, unstarted jobs handed back, the worker
    /// recorded as stopped; bounded by the stop grace if the server hangs.
    func stop(_ queue: JobQueue?, unstarted: [Int64]) {
        let interruption = Interruption(cancellation, grace: 2)
        guard let queue = queue ?? (try? JobQueue(url: worker.url, role: "worker", interruption: interruption)) else { return }
        queue.connection.interruption = interruption
        let (done, failures) = counters.withLock { $0 }
        held.withLock { $0.subtract(unstarted) }
        _ = try? queue.heartbeat(worker: id, held: held.withLock { $0 }, lease: settings.lease, stagesDone: done, failures: failures)
        try? queue.unregister(worker: id, unstarted: unstarted)
        queue.connection.close()
    }

    // MARK: - Executors

    /// An executor thread: runs claimed jobs until the handoff is closed.
    func execute() {
        var queue: JobQueue?
        while let job = handoff.pop() {
            busy.add(1, ordering: .relaxed)
            wake.signal()
            work(job, queue: &queue)
            // Done with it whatever happened: if the row is still recorded as ours
            // (an answer lost with the connection), the next heartbeat hands it back.
            held.withLock { _ = $0.remove(job.id) }
            busy.subtract(1, ordering: .relaxed)
        }
        queue?.connection.close()
    }

    private func work(_ claimed: Job, queue: inout JobQueue?) {
        guard let store = connected(&queue) else { return }
        guard let batch = prepared.withLock({ $0[claimed.batchID] }) else {
            try? store.release([claimed.id], worker: id)
            return
        }
        if claimed.isManifest {
            deliver(claimed, batch: batch.context, store: store)
            return
        }
        var job = claimed
        var item = InFlightItem(job.item)
        // The row's stage, which a record must match: it moves only when a
        // record is made (steps kept here are recorded with a later one).
        var lease: Lease? = job.lease(worker: id)
        while true {
            let step = execution.run(job.stage, on: &item, in: batch.context, store: store, lease: &lease) { [settings] stage in
                settings.stages.contains(stage)
            }
            counters.withLock { counters in
                counters.done += 1
                if item.failure != nil && step.next == .finished { counters.failures += 1 }
            }
            switch step.recorded {
            case .saved, .deferred: break
            case .refused: return  // no longer ours: another worker took it up
            case .failed(let error):
                lose(job, item: item.state, lease: lease, error: error, store: store)
                return
            }
            if let failure = item.failure, step.next == .finished {
                worker.emit(
                    .failed, "failed: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(failure.stage.rawValue): \(failure.reason.rawValue): \(failure.message)",
                    ["batch": job.batchID.uuidString, "item": String(job.index), "stage": failure.stage.rawValue, "reason": failure.reason.rawValue, "error": failure.message])
            }
            guard case .run(let following) = step.next, settings.stages.contains(following) else { return }
            job.stage = following
            job.attempts = 1
        }
    }

    /// This executor's connection, made again when it was lost; nil when it
    /// cannot be made (the job's lease lapses and another worker retries it).
    private func connected(_ queue: inout JobQueue?) -> JobQueue? {
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

    /// A job whose record failed for a reason that is not its item's (a bad
    /// statement, an error here): the attempt is lost, and the lifecycle decides
    /// whether it is queued again or given up on.
    private func lose(_ job: Job, item: ItemState, lease: Lease?, error: String, store: JobQueue) {
        var item = item
        let next = ItemLifecycle(stages: [], maxAttempts: job.maxAttempts).advance(
            &item, after: .lost(at: job.stage, reason: error, blamed: true, crashedDecoding: false), stopping: false)
        guard let lease, (try? store.record(item, next: next, batch: job.batchID, lease: lease)) == true else { return }
        logLoss(job, item: item, next: next, error: error)
    }

    /// The manifest job: every item finished; the fan-in (``BatchCompletion``,
    /// as locally), and the batch recorded done with the job, in one statement.
    private func deliver(_ job: Job, batch: BatchContext, store: JobQueue) {
        let lease = job.lease(worker: id)
        let outcome: BatchCompletion.Outcome?
        do {
            guard let stored = try store.batch(job.batchID) else { return }
            guard stored.record.state == .running else {
                // Done already (a retried manifest job): only the job is completed.
                _ = try store.finish(stored.record, changed: [], lease: lease)
                return
            }
            CrashPoint.hit("manifest-job")
            // The batch's wall time, from its creation, on the wall clock (the
            // planner's and this machine's).
            outcome = try BatchCompletion.finish(
                stored.record, context: batch, store: store, lease: lease, wallSeconds: max(0, Date().timeIntervalSince(stored.record.createdAt)),
                now: Date())
        } catch let failure as BatchCompletion.NotRecorded {
            try? loseManifest(job, lease: lease, error: "\(failure.error)", queue: store)
            return
        } catch {
            try? loseManifest(job, lease: lease, error: "\(error)", queue: store)
            return
        }
        guard let outcome else { return }
        WorkerVisibility.removeToken(container: batch.container.root, batch: job.batchID)
        prepared.withLock { $0[job.batchID] = nil }
        counters.withLock { $0.done += 1 }
        let record = outcome.record
        worker.emit(
            .batchDone,
            "batch \(job.batchID.uuidString) done: \(record.ingestedCount) of \(record.itemCount) ingested\(record.failedCount > 0 ? ", \(record.failedCount) failed" : "") \(record.redirectURL ?? "(no manifest: nothing could be delivered)")",
            ["batch": job.batchID.uuidString, "ingested": String(record.ingestedCount), "failed": String(record.failedCount), "redirectURL": record.redirectURL ?? ""])
        worker.events?(.batchFinished(outcome.report))
    }
}
