import Foundation
import ShareManifest
import SystemCalls

/// The client side of the distributed mode: enqueues batches in PostgreSQL for
/// `share worker` processes (on any machine that sees the container and the
/// inputs at the same paths), waits for them, and reads their reports and the
/// queue's status.
///
/// Nothing here waits without a limit or ignores a stop request: connections
/// have a connect timeout, statements a time limit, and every call takes a
/// ``CancellationFlag`` (SIGINT, SIGTERM) that ends its waits at once.
public struct DistributedIngestor: Sendable {
    /// The database (a libpq URI).
    public let url: String
    /// The shared container.
    public var container: ContainerDirectory
    /// The pipeline stored with each batch and used by the workers.
    public var pipeline: PipelineDefinition
    /// Attempts per job before its item fails (a poison file never blocks the
    /// queue), or, for the manifest job, before the batch fails.
    public var maxAttempts = ItemLifecycle.defaultMaxAttempts
    /// Files (and a batch's inputs together) past these sizes fail before anything is copied (``SizeLimits``).
    public var sizeLimits = SizeLimits.none
    /// Which files of the inputs are taken (``DropSelection``), decided here when the batch is planned.
    public var selection = DropSelection.all
    /// Where batch and item UUIDs come from (as for ``ShareIngestor/identifiers``).
    public var identifiers: IdentifierSource
    /// The clock for the batch's recorded `createdAt`.
    public var now: @Sendable () -> Date

    /// A client of the database at `url` (a libpq URI), for batches into `container` (which every worker must see at the same path).
    public init(
        url: String, container: ContainerDirectory, pipeline: PipelineDefinition = .standard,
        identifiers: IdentifierSource = .random,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.url = url
        self.container = container
        self.pipeline = pipeline
        self.identifiers = identifiers
        self.now = now
    }

    /// A batch as the database has it.
    public struct Batch: Sendable {
        /// The batch id.
        public let id: UUID
        /// The manifest key.
        public let key: ShareKey
        /// `running` until the manifest job finishes, then `done`; `failed` when the
        /// manifest job had all its attempts (see ``failure``).
        public let state: BatchState
        /// The redirect URL, once done (nil if nothing could be delivered).
        public let redirectURL: String?
        /// The manifest file, once done.
        public let manifestPath: String?
        /// Items planned.
        public let itemCount: Int
        /// Items finished so far (delivered, failed or skipped): live progress.
        public let finishedCount: Int
        /// Items delivered (counted when the batch is done).
        public let ingestedCount: Int
        /// Items that failed (counted when the batch is done).
        public let failedCount: Int
        /// Items skipped (counted when the batch is done).
        public let skippedCount: Int
        /// Why the batch failed (state `failed`).
        public let failure: String?
        /// When it was enqueued.
        public let createdAt: Date
        /// When it ended (done or failed).
        public let finishedAt: Date?
        /// The container its workers write into (absolute).
        public let container: String
    }

    static func connect(_ url: String, role: String, cancellation: CancellationFlag) throws -> JobQueue {
        let queue = try JobQueue(url: url, role: role, interruption: Interruption(cancellation))
        try QueueSchema.check(queue.connection)
        return queue
    }

    /// Plans the batch here (``BatchPlan``, as a local batch is: walks the
    /// folders with their absolute paths, assigns UUIDs and labels, spools
    /// in-memory inputs into the shared container), writes its visibility token
    /// into the container, and enqueues it (as batch `id` when given: a watched
    /// drop keeps its journal's id): the batch row, its items a chunk at a time,
    /// then the batch running with its manifest job (``JobQueue``).
    public func enqueue(
        _ inputs: [ShareInput], key: ShareKey? = nil, message: String? = nil, id: UUID? = nil,
        cancellation: CancellationFlag = CancellationFlag()
    ) throws -> Batch {
        try enqueue(inputs, key: key, message: message, id: id, shownRoot: nil, cancellation: cancellation)
    }

    /// ``enqueue(_:key:message:id:cancellation:)``, with reports naming the
    /// files under `shownRoot.shown` instead of `shownRoot.actual` (a watched
    /// drop by its place in the inbox).
    func enqueue(
        _ inputs: [ShareInput], key: ShareKey?, message: String?, id: UUID?,
        shownRoot: (actual: String, shown: String)?,
        cancellation: CancellationFlag
    ) throws -> Batch {
        try BatchPlan.check(inputs)
        let queue = try Self.connect(url, role: "ingest", cancellation: cancellation)
        let plan = try BatchPlan(
            pipeline: pipeline, key: key, message: message, container: container, store: queue,
            identifiers: identifiers, now: now(),
            maxAttempts: maxAttempts, id: id)
        let roots = BatchPlan.absolute(inputs).compactMap { input -> String? in
            guard case .path(let path) = input else { return nil }
            return String(validating: path.bytes, as: UTF8.self)
        }
        let details = BatchPlan.Details(
            container: container, pipeline: pipeline, maxAttempts: maxAttempts,
            token: try WorkerVisibility.writeToken(container: container, batch: plan.record.id), roots: roots,
            sizeLimits: sizeLimits, selection: selection)
        _ = try BatchPlan.commit(
            plan.record, inputs: inputs, into: queue, plan: details, identifiers: identifiers, shownRoot: shownRoot)
        guard let stored = try queue.batch(plan.record.id) else {
            throw ShareIngestError.unknownBatch(plan.record.id.uuidString)
        }
        return Self.batch(stored)
    }

    /// The batch as the database has it now (by id or key), if it was enqueued.
    public func batch(_ idOrKey: String, cancellation: CancellationFlag = CancellationFlag()) throws -> Batch? {
        try Self.connect(url, role: "ingest", cancellation: cancellation).batch(idOrKey: idOrKey).map(Self.batch)
    }

    /// The batch as the database has it now, if it was enqueued.
    public func batch(_ id: UUID, cancellation: CancellationFlag = CancellationFlag()) throws -> Batch? {
        try batch(id.uuidString, cancellation: cancellation)
    }

    /// `share ingest --resume BATCH --db`: a failed batch (its manifest job ran
    /// out of attempts) has its manifest job queued again, with new attempts; a
    /// running or done batch is returned as it is. Nil if no batch has this id or key.
    public func resume(_ idOrKey: String, cancellation: CancellationFlag = CancellationFlag()) throws -> Batch? {
        let queue = try Self.connect(url, role: "ingest", cancellation: cancellation)
        guard let stored = try queue.batch(idOrKey: idOrKey) else { return nil }
        if stored.record.state == .claimed {
            // Its planner stopped before every item was enqueued: no worker took
            // any of it; it is abandoned, its rows removed.
            try queue.abandon(stored.record.id)
            throw ShareIngestError.planInterrupted(stored.record.id)
        }
        // Its manifest job gave up: reopened as the lifecycle says (``BatchLifecycle/reopened``).
        var record = stored.record
        if record.handle(.resume) == .reopen { try queue.reopen(record.id) }
        return try queue.batch(stored.record.id).map(Self.batch)
    }

    /// What ``wait(for:timeout:cancellation:notices:progress:)`` tells while it waits: the
    /// problems that would otherwise make it wait silently, and when they end.
    public enum WaitNotice: Sendable, CustomStringConvertible {
        /// No worker is connected to the database.
        case noLiveWorker
        /// Live workers exist but none can work on this batch: each one's reason.
        case noWorkerCanWork([(worker: String, reason: String)])
        /// The batch has jobs of these stages and no live worker that can work on it serves them.
        case stagesNotServed([StageName])
        /// After a problem: `count` live workers can work on the batch again.
        case workersAvailable(Int)

        /// One sentence for people.
        public var description: String {
            switch self {
            case .noLiveWorker:
                "no live worker is connected to the database; the batch stays queued until one starts (share worker --db URL); see share status --db"
            case .noWorkerCanWork(let reasons):
                "no live worker can work on this batch: "
                    + reasons.map { "\($0.worker): \($0.reason)" }.joined(separator: "; ")
            case .stagesNotServed(let stages):
                "no live worker serves \(stages.map(\.rawValue).joined(separator: ", ")) for this batch; start one with --stages including it"
            case .workersAvailable(let count): "\(count) live worker\(count == 1 ? "" : "s") can work on the batch now"
            }
        }
    }

    /// Seconds ``wait(for:timeout:cancellation:notices:progress:)`` gives workers to show
    /// up before saying that none is there.
    public static let workerGrace = 2.0

    /// Waits until the batch is done or failed (woken by NOTIFY, checking every
    /// second): nil when `timeout` passed or `cancellation` was set first. While
    /// it waits, `notices` hears within seconds when no live worker can take the
    /// batch's jobs (none connected, none that can see its files, none serving a
    /// stage it needs), and `progress` the items finished so far.
    public func wait(
        for id: UUID, timeout: Double = .infinity, cancellation: CancellationFlag = CancellationFlag(),
        notices: (@Sendable (WaitNotice) -> Void)? = nil, progress: (@Sendable (Batch) -> Void)? = nil
    ) throws -> Batch? {
        let started = MonotonicClock.now()
        let deadline = timeout.isFinite ? started + timeout : .infinity
        var queue: JobQueue?
        var problem: String?
        var nextCheck = started + Self.workerGrace
        var lastFinished = -1
        while MonotonicClock.now() < deadline && !cancellation.isCancelled {
            do {
                if queue == nil {
                    queue = try Self.connect(url, role: "ingest", cancellation: cancellation)
                    try queue?.connection.query("LISTEN share_batches")
                }
                guard let queue else { continue }
                guard let stored = try queue.batch(id) else { throw ShareIngestError.unknownBatch(id.uuidString) }
                let batch = Self.batch(stored)
                if batch.state != .running { return batch }
                if batch.finishedCount != lastFinished {
                    lastFinished = batch.finishedCount
                    progress?(batch)
                }
                if MonotonicClock.now() >= nextCheck {
                    nextCheck = MonotonicClock.now() + 1
                    let notice = try availability(of: id, queue: queue)
                    if let notice, "\(notice)" != problem {
                        problem = "\(notice)"
                        notices?(notice)
                    } else if notice == nil, problem != nil {
                        problem = nil
                        notices?(.workersAvailable(try liveWorkers(for: id, queue: queue).usable))
                    }
                }
                _ = try queue.connection.waitForNotification(
                    seconds: min(1, max(0.01, deadline - MonotonicClock.now())))
            } catch let error as PostgresError where error.connectionLost && !error.interrupted {
                queue = nil
                let end = MonotonicClock.now() + 0.5
                while MonotonicClock.now() < end && !cancellation.isCancelled { MonotonicClock.sleep(0.02) }
            }
        }
        return nil
    }

    /// The live workers, and those of them that can work on the batch.
    private func liveWorkers(for id: UUID, queue: JobQueue) throws -> (rows: [[String: String]], usable: Int) {
        let rows = try queue.connection.query(
            """
            WITH live AS (\(JobQueue.liveWorkers))
            SELECT w.name, w.stages, b.reason FROM share_workers w
            LEFT JOIN share_worker_blocks b ON b.worker_id = w.id AND b.batch_id = $1
            WHERE w.id IN (SELECT id FROM live) ORDER BY w.name
            """,
            [id.uuidString])
        return (rows, rows.count { $0["reason"] == nil })
    }

    /// Why no live worker would take the batch's queued jobs now, if so.
    private func availability(of id: UUID, queue: JobQueue) throws -> WaitNotice? {
        let (workers, _) = try liveWorkers(for: id, queue: queue)
        if workers.isEmpty { return .noLiveWorker }
        let usable = workers.filter { $0["reason"] == nil }
        if usable.isEmpty { return .noWorkerCanWork(workers.map { ($0["name"] ?? "", $0["reason"] ?? "") }) }
        let served = Set(usable.flatMap { ($0["stages"] ?? "").split(separator: ",").map(String.init) })
        let pending = try queue.connection.query(
            "SELECT DISTINCT stage FROM share_jobs WHERE batch_id = $1 AND state = '\(JobQueue.State.queued)'",
            [id.uuidString]
        )
        .compactMap { $0["stage"].map(StageName.init) }
        let missing = pending.filter { !served.contains($0.rawValue) }.sorted { $0.rawValue < $1.rawValue }
        return missing.isEmpty ? nil : .stagesNotServed(missing)
    }

    /// The report of a batch that ended (done or failed): the one its worker
    /// stored beside the manifest, or one rebuilt from the items' final records
    /// (a failed batch has no manifest). The same document as a local batch's;
    /// `events` hears what a local run tells (`batchStarted`, each item,
    /// `batchFinished`), so a progress printer shows both modes alike.
    public func report(
        of batch: Batch, events: IngestEventSink? = nil, cancellation: CancellationFlag = CancellationFlag()
    ) throws -> BatchReport {
        let queue = try Self.connect(url, role: "ingest", cancellation: cancellation)
        guard let stored = try queue.batch(batch.id) else { throw ShareIngestError.unknownBatch(batch.id.uuidString) }
        let record = stored.record
        let container = try ContainerDirectory(stored.container)
        return ShareIngestor.replay(
            try ShareIngestor.finishedReport(of: record, store: queue, container: container, catalog: pipeline.catalog),
            to: events)
    }

    /// The final records of a batch's items (which the inbox splits its drop by).
    func recordedItems(of batch: UUID, cancellation: CancellationFlag) throws -> [ItemState] {
        try Self.connect(url, role: "ingest", cancellation: cancellation).recordedItems(of: batch).map(\.item)
    }

    /// Every batch worth showing (running, failed and the latest finished ones)
    /// with its live progress, the workers live and gone, the queue per stage and
    /// the latest failures with their reasons.
    public static func status(url: String, cancellation: CancellationFlag = CancellationFlag()) throws
        -> DistributedStatus
    {
        try connect(url, role: "status", cancellation: cancellation).status()
    }

    /// `share gc --db`: deletes the batches (with their jobs) that ended more
    /// than `retention` seconds ago, and the workers gone as long; returns how
    /// many of each (with `dryRun`, how many it would delete, deleting nothing).
    public static func prune(
        url: String, olderThan retention: Double, dryRun: Bool = false,
        cancellation: CancellationFlag = CancellationFlag()
    ) throws -> (batches: Int, jobs: Int, workers: Int) {
        let queue = try connect(url, role: "gc", cancellation: cancellation)
        guard dryRun else { return try queue.prune(olderThan: retention) }
        try queue.connection.query("BEGIN")
        defer { _ = try? queue.connection.query("ROLLBACK") }
        return try queue.prune(olderThan: retention)
    }

    static func batch(_ stored: JobQueue.StoredBatch) -> Batch {
        let r = stored.record
        return Batch(
            id: r.id, key: r.key, state: r.state, redirectURL: r.redirectURL, manifestPath: r.manifestPath,
            itemCount: r.itemCount,
            finishedCount: max(0, r.itemCount - stored.remaining), ingestedCount: r.ingestedCount,
            failedCount: r.failedCount,
            skippedCount: r.skippedCount, failure: stored.failure, createdAt: r.createdAt, finishedAt: r.finishedAt,
            container: stored.container)
    }
}
