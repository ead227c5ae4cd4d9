import Foundation
import Glibc
import MediaFormats
import MediaKit
import ShareManifest
import Synchronization
import SystemCalls

/// A long-running worker that claims jobs from PostgreSQL and runs them with the
/// same stage code as the local pipeline (``ItemExecution``, ``BatchCompletion``)
/// (`share worker`).
///
/// - One coordinator thread, on one connection, registers the worker and holds
///   its advisory lock (its jobs are released the moment its session ends),
///   renews the leases of all its jobs in one statement (the heartbeat), takes
///   back the jobs of workers that are gone, and claims work in batches into a
///   local queue, sleeping on `LISTEN share_jobs` when there is none.
/// - `concurrency` executor threads, each with its own connection, run the jobs:
///   after each stage, one statement saves the item and, when this worker also
///   serves the item's next stage, keeps it (no new claim); otherwise the stage
///   is queued for whichever worker serves it.
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
            throw QueueSchema.Mismatch(
                description: "PostgreSQL: \(error.message): this role may not change the schema; run share db migrate as the owner role (README: least privilege)")
        }
    }

    /// Works until `cancellation` is set (jobs in flight finish first). Throws
    /// when it cannot start: the database cannot be reached or has no schema.
    public func run(cancellation: CancellationFlag) throws {
        // The coordinator stops waiting at once; executors' saves get a grace.
        let queue = try JobQueue(url: url, role: "worker", interruption: Interruption(cancellation))
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
    let id: UUID
    let pipeline: PipelineDefinition
    let stages: [StageName: any ItemStage]
    let order: [StageName]
    let container: ContainerDirectory
    let message: String?
    /// When its visibility was last checked (monotonic seconds).
    let checked: Double

    init(_ stored: JobQueue.StoredBatch) throws {
        id = stored.record.id
        pipeline = try PipelineDefinition.decode(Data(stored.record.pipelineJSON.utf8), file: "pipeline of batch \(stored.record.id)")
        let made = pipeline.makeItemStages()
        stages = Dictionary(uniqueKeysWithValues: made.map { ($0.name, $0) })
        order = made.map(\.name)
        container = try ContainerDirectory(stored.container)
        message = stored.record.message
        checked = MonotonicClock.now()
    }

    /// The item stage after `stage`, nil after the last.
    func next(after stage: StageName) -> StageName? {
        order.firstIndex(of: stage).flatMap { $0 + 1 < order.count ? order[$0 + 1] : nil }
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

    /// Seconds between checks for jobs of gone workers.
    static let reapInterval = 1.0
    /// Seconds after which a batch's visibility is checked again.
    static let recheckInterval = 30.0

    init(worker: StageWorker, id: Int, interruption: Interruption) {
        self.worker = worker
        self.id = id
        self.interruption = interruption
        handoff = BlockingQueue(capacity: 2 * worker.settings.concurrency + 1)
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
                        stages: settings.stages, worker: id, lease: settings.lease, limit: room, batches: usable, blocked: Set(blocked.keys))
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
            do { ready = try PreparedBatch(stored) } catch { reason = "cannot use batch \(batch): \(error)" }
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

    /// Takes back the jobs of workers that are gone (or stopped renewing): one
    /// log line per job queued again; those out of attempts are given up on.
    private func reap(_ queue: JobQueue) throws {
        for orphan in try queue.reapOrphans() {
            let job = orphan.job
            let item = job.snapshot.flatMap(ItemSnapshot.decode)
            let what = job.isManifest ? "the manifest of batch \(job.batchID.uuidString)" : "batch \(job.batchID.uuidString) item \(job.index)\(item.map { " (\($0.source.label))" } ?? "") at \(job.stage.rawValue)"
            var fields = ["batch": job.batchID.uuidString, "stage": job.stage.rawValue, "attempt": String(job.attempts), "maxAttempts": String(job.maxAttempts), "error": orphan.reason]
            if !job.isManifest { fields["item"] = String(job.index) }
            if orphan.requeued {
                worker.emit(.retry, "retry: \(what): attempt \(job.attempts) of \(job.maxAttempts) lost: \(orphan.reason); queued again in \(Self.seconds(JobQueue.backoff(after: job.attempts)))", fields)
            } else {
                try giveUp(job, item: item, error: orphan.reason, holder: orphan.worker, queue: queue)
            }
        }
    }

    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }

    /// A job that had all its attempts: its item fails with `error` (or, for the
    /// manifest job, the batch fails), guarded by the worker that held it.
    func giveUp(_ job: Job, item: ItemWork?, error: String, holder: Int, queue: JobQueue) throws {
        var fields = ["batch": job.batchID.uuidString, "stage": job.stage.rawValue, "attempt": String(job.attempts), "error": error]
        if job.isManifest {
            let reason = "the manifest job gave up after \(job.attempts) attempts: \(error)"
            try queue.failBatch(job, worker: holder, reason: reason)
            storeReport(of: job.batchID, queue: queue)
            worker.emit(.batchFailed, "batch \(job.batchID.uuidString) failed: \(reason); share ingest --resume \(job.batchID.uuidString) --db URL retries it", fields)
            return
        }
        fields["item"] = String(job.index)
        var snapshot: String?
        if let item {
            item.failure = ItemFailure(job.stage, .attemptsExhausted, "\(item.source.label): gave up after \(job.attempts) attempts at \(job.stage.rawValue): \(error)")
            item.pendingThumbnail = nil
            snapshot = ItemSnapshot(item).json
        }
        _ = try queue.complete(job, snapshot: snapshot, next: .gaveUp(error), worker: holder, lease: settings.lease)
        counters.withLock { $0.failures += 1 }
        worker.emit(.gaveUp, "gave up: batch \(job.batchID.uuidString) item \(job.index)\(item.map { " (\($0.source.label))" } ?? "") at \(job.stage.rawValue) after \(job.attempts) attempts: \(error)", fields)
    }

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
        guard let batch = prepared.withLock({ $0[claimed.batchID] }) else {
            _ = perform(claimed, queue: &queue) { try $0.release([claimed.id], worker: self.id) }
            return
        }
        if claimed.isManifest {
            deliver(claimed, batch: batch, queue: &queue)
            return
        }
        guard let item = claimed.snapshot.flatMap(ItemSnapshot.decode) else {
            fail(claimed, item: nil, error: "the item's saved state cannot be read", queue: &queue)
            return
        }
        var job = claimed
        while true {
            guard let stage = batch.stages[job.stage] else {
                fail(job, item: item, error: "stage \(job.stage.rawValue) is not in the batch's pipeline", queue: &queue)
                return
            }
            let context = BatchContext(
                batchID: job.batchID, container: batch.container, pipeline: batch.pipeline, decoder: worker.decoder, message: batch.message,
                cancellation: CancellationFlag())
            _ = ItemExecution.run(stage, on: item, in: context, events: worker.events)
            let following = batch.next(after: job.stage)
            let next: JobQueue.Next
            if item.failure != nil || following == nil {
                next = .finished
            } else if let following, settings.stages.contains(following), !cancellation.isCancelled {
                next = .keep(following)
            } else {
                next = .queue(following!)
            }
            if case .keep = next {} else { item.pendingThumbnail = nil }
            let snapshot = ItemSnapshot(item).json
            let completion = perform(job, item: item, queue: &queue, saving: true) { [settings, id] queue in
                try queue.complete(job, snapshot: snapshot, next: next, worker: id, lease: settings.lease)
            }
            counters.withLock { counters in
                counters.done += 1
                if item.failure != nil { counters.failures += 1 }
            }
            if let failure = item.failure {
                worker.emit(
                    .failed, "failed: batch \(job.batchID.uuidString) item \(job.index) (\(item.source.label)) at \(failure.stage.rawValue): \(failure.reason.rawValue): \(failure.message)",
                    ["batch": job.batchID.uuidString, "item": String(job.index), "stage": failure.stage.rawValue, "reason": failure.reason.rawValue, "error": failure.message])
            }
            guard let completion, completion.owned, case .keep(let following) = next else { return }
            job.stage = following
            job.attempts = 1
        }
    }

    /// The manifest job: every item finished; the fan-in (``BatchCompletion``, as
    /// locally), then the batch is marked done with the job, in one statement.
    private func deliver(_ job: Job, batch: PreparedBatch, queue: inout JobQueue?) {
        let outcome: (record: BatchRecord, report: BatchReport, changed: [ItemWork])?? = perform(job, queue: &queue) { queue in
            guard let stored = try queue.batch(job.batchID) else { return nil }
            guard stored.record.state == .running else {
                // Done already (a retried manifest job): only the job is completed.
                _ = try queue.finishBatch(job, record: stored.record, changed: [], worker: self.id)
                return nil
            }
            let items = try queue.items(job.batchID)
            CrashPoint.hit("manifest-job")
            var changed: [ItemWork] = []
            // The batch's wall time, from its creation (the planner's clock).
            let started = MonotonicClock.now() - max(0, Date().timeIntervalSince(stored.record.createdAt))
            let (record, report) = BatchCompletion.finish(
                stored.record, items: items, pipeline: batch.pipeline, container: batch.container, started: started, now: Date()
            ) { changed.append($0) }
            return (record, report, changed)
        }
        guard let outcome, let outcome else { return }
        let finished = perform(job, queue: &queue, saving: true) { queue in
            try queue.finishBatch(job, record: outcome.record, changed: outcome.changed, worker: self.id)
        }
        guard finished == true else { return }
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

    /// A job that failed here for a reason that is not its item's: queued again
    /// (one log line), or given up on after its last attempt.
    private func fail(_ job: Job, item: ItemWork?, error: String, queue: inout JobQueue?) {
        _ = perform(job, queue: &queue, retrying: false) { queue in
            if try queue.retry(job, worker: self.id, error: error) {
                var fields = ["batch": job.batchID.uuidString, "stage": job.stage.rawValue, "attempt": String(job.attempts), "maxAttempts": String(job.maxAttempts), "error": error]
                if !job.isManifest { fields["item"] = String(job.index) }
                self.worker.emit(
                    .retry,
                    "retry: batch \(job.batchID.uuidString) \(job.isManifest ? "manifest" : "item \(job.index)") at \(job.stage.rawValue): attempt \(job.attempts) of \(job.maxAttempts) failed: \(error); queued again in \(Self.seconds(JobQueue.backoff(after: job.attempts)))",
                    fields)
            } else {
                try self.giveUp(job, item: item, error: error, holder: self.id, queue: queue)
            }
        }
    }

    /// Runs `body` on this executor's connection (made when missing). When the
    /// connection is lost and `saving` (a finished stage's result is in hand),
    /// the result is kept: the worker reconnects and tries again until it is
    /// saved, the job is no longer ours, or the worker must stop. Other errors
    /// queue the job again (``fail(_:item:error:queue:)``) unless `retrying` is
    /// false. Nil when it did not happen.
    private func perform<T>(
        _ job: Job, item: ItemWork? = nil, queue: inout JobQueue?, saving: Bool = false, retrying: Bool = true, _ body: (JobQueue) throws -> T
    ) -> T? {
        var lost: String?
        while true {
            do {
                if queue == nil { queue = try JobQueue(url: worker.url, role: "worker", interruption: interruption) }
                let result = try body(queue!)
                if let lost {
                    worker.emit(.reconnected, "saved batch \(job.batchID.uuidString) item \(job.index) \(job.stage.rawValue), kept while the database was away (\(lost))", ["batch": job.batchID.uuidString, "item": String(job.index), "stage": job.stage.rawValue])
                }
                return result
            } catch is LeaseLost {
                return nil
            } catch let error as PostgresError where error.connectionLost {
                queue = nil
                if error.interrupted || interruption.isDue || !saving { return nil }
                if lost == nil {
                    lost = error.message
                    worker.emit(.disconnected, "cannot save batch \(job.batchID.uuidString) item \(job.index) \(job.stage.rawValue): \(error.message); keeping the result and retrying", ["batch": job.batchID.uuidString, "item": String(job.index), "stage": job.stage.rawValue, "error": error.message])
                }
                pause(0.25)
            } catch {
                // An error of the statement itself: the job is queued again (or,
                // if that fails too, its lease lapses and another worker retries it).
                if retrying { fail(job, item: item ?? job.snapshot.flatMap(ItemSnapshot.decode), error: "\(error)", queue: &queue) }
                return nil
            }
        }
    }
}
