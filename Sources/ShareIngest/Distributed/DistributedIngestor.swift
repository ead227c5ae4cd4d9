import Foundation
import ShareManifest

/// The client side of the distributed mode: enqueues batches in PostgreSQL for
/// `share worker` processes (on any machine that sees the container) and waits
/// for their manifests.
public struct DistributedIngestor: Sendable {
    /// The database (a libpq URI).
    public let url: String
    /// The shared container.
    public var container: ContainerDirectory
    /// The pipeline stored with each batch and used by the workers.
    public var pipeline: PipelineDefinition
    /// Attempts per job before its item fails (a poison file never blocks the queue).
    public var maxAttempts = 3
    /// Where batch and item UUIDs come from (as for ``ShareIngestor/identifiers``).
    public var identifiers: IdentifierSource
    /// The clock for the batch's recorded `createdAt`.
    public var now: @Sendable () -> Date

    /// A client of the database at `url` (a libpq URI), for batches into `container` (which every worker must see at the same path).
    public init(
        url: String, container: ContainerDirectory, pipeline: PipelineDefinition = .standard, identifiers: IdentifierSource = .random,
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
        /// `running` until the manifest job finishes, then `done`.
        public let state: BatchState
        /// The redirect URL, once done (nil if nothing could be delivered).
        public let redirectURL: String?
        /// The manifest file, once done.
        public let manifestPath: String?
        /// Items planned.
        public let itemCount: Int
        /// Items delivered.
        public let ingestedCount: Int
        /// Items that failed.
        public let failedCount: Int
        /// Items skipped.
        public let skippedCount: Int
    }

    /// Plans the batch here (``BatchPlan``, as a local batch is: walks the
    /// folders, assigns UUIDs, spools in-memory inputs into the shared container)
    /// and enqueues it (as batch `id` when given: a watched drop keeps its
    /// journal's id).
    public func enqueue(_ inputs: [ShareInput], key: ShareKey? = nil, message: String? = nil, id: UUID? = nil) throws -> Batch {
        try BatchPlan.check(inputs)
        let queue = try Self.queue(url)
        queue.maxAttempts = maxAttempts
        let plan = try BatchPlan(
            pipeline: pipeline, key: key, message: message, container: container, store: queue, identifiers: identifiers, now: now(), id: id)
        let items = try BatchPlan.items(for: inputs, batch: plan.record.id, container: container, identifiers: identifiers)
        try queue.create(plan.record, items: items, container: container)
        return Batch(
            id: plan.record.id, key: plan.record.key, state: .running, redirectURL: nil, manifestPath: nil, itemCount: items.count,
            ingestedCount: 0, failedCount: 0, skippedCount: 0)
    }

    /// The batch as the database has it now, if it was enqueued.
    public func batch(_ id: UUID) throws -> Batch? {
        try Self.queue(url).batch(id).map(Self.batch)
    }

    /// A connection to a database whose schema is up to date (a fresh server may
    /// be reached by this client before any worker migrated it).
    static func queue(_ url: String) throws -> JobQueue {
        let queue = try JobQueue(url: url)
        try queue.migrate()
        return queue
    }

    /// Waits until the batch is done (woken by NOTIFY, polling every second).
    public func wait(for id: UUID, timeout: Double = .infinity, cancellation: CancellationFlag = CancellationFlag()) throws -> Batch? {
        let deadline = Date().addingTimeInterval(timeout)
        var queue = try Self.queue(url)
        try queue.connection.query("LISTEN share_batches")
        while Date() < deadline && !cancellation.isCancelled {
            do {
                if let batch = try queue.batch(id).map(Self.batch), batch.state == .done { return batch }
                _ = queue.connection.waitForNotification(seconds: 1)
            } catch let error as PostgresError where error.connectionLost {
                usleep(500_000)
                if let fresh = try? JobQueue(url: url) {
                    queue = fresh
                    try? queue.connection.query("LISTEN share_batches")
                }
            }
        }
        return nil
    }

    /// Every batch, newest first, and the queue depth: jobs per stage and state,
    /// and jobs done per worker.
    public static func status(url: String) throws -> (batches: [Batch], stages: [(stage: String, state: String, count: Int)], workers: [(worker: String, done: Int)]) {
        let queue = try Self.queue(url)
        let depth = try queue.depth()
        return (
            try queue.batches().map(batch),
            depth.stages.map { ($0["stage"] ?? "", $0["state"] ?? "", Int($0["n"] ?? "0") ?? 0) },
            depth.workers.map { ($0["worker"] ?? "", Int($0["n"] ?? "0") ?? 0) })
    }

    static func batch(_ stored: JobQueue.StoredBatch) -> Batch {
        let r = stored.record
        return Batch(
            id: r.id, key: r.key, state: r.state, redirectURL: r.redirectURL, manifestPath: r.manifestPath, itemCount: r.itemCount,
            ingestedCount: r.ingestedCount, failedCount: r.failedCount, skippedCount: r.skippedCount)
    }
}
