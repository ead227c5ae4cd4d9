import Foundation
import Glibc
import MediaFormats
import ShareManifest
import Synchronization
import SystemCalls

/// A long-running worker that claims jobs from PostgreSQL and runs them with the
/// same execution core as the local pipeline (``StageExecution``, which applies
/// ``ItemLifecycle``, and ``BatchCompletion``) (`share worker`): only the
/// transport differs, claims and leases instead of threads and queues.
///
/// Each job of the worker is in a file of its own, with its own connection:
/// - the coordinator (``WorkerCoordinator``) registers the worker and holds its
///   advisory lock (its jobs are released the moment its session ends), renews
///   the leases of all its jobs in one statement (the heartbeat) and claims
///   work, costliest first, into a local queue, sleeping on `LISTEN share_jobs`
///   when there is none; a job that must run alone is claimed only by an idle
///   worker, which then claims nothing else until it is done;
/// - the reaper (``WorkerReaper``) takes back the jobs of workers that are gone
///   and hands them to the batch's lifecycle (``ItemLifecycle/lose(held:inFlightBeside:reason:stopping:)``:
///   retried, or given up on), and repairs fan-in counters;
/// - `concurrency` executors (``WorkerExecutor``), each with its own connection, run the jobs:
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
        /// The stages this worker serves (e.g. only `thumbnail` on a big machine);
        /// by default every stage of its catalog.
        public var stages: [StageName] {
            get { chosenStages ?? catalog.names }
            set { chosenStages = newValue }
        }
        private var chosenStages: [StageName]?
        /// Threads, each with its own connection, working on one job at a time.
        public var concurrency = 2
        /// Seconds a claimed job stays ours without a heartbeat (renewed every third of it).
        public var lease: Double = ItemLifecycle.defaultLease
        /// The name the log, the jobs and `share status --db` show (default: host and process id).
        public var name = "\(FileSystem.hostTag)-\(Processes.current)"
        /// The stages this worker can run: the built-in ones, unless a caller
        /// added its own (which it then serves by default).
        var catalog = StageCatalog.builtin

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
        decoder: any MediaDecoder
    ) {
        (self.url, self.settings, self.events, self.log, self.decoder) = (url, settings, events, log, decoder)
    }

    /// Creates or upgrades the schema (`share db migrate`; needs a role that may create tables).
    /// Returns the names of the migrations it applied, in order (none: the schema was up to date).
    @discardableResult
    public static func migrate(url: String, cancellation: CancellationFlag = CancellationFlag()) throws -> [String] {
        let queue = try JobQueue(url: url, role: "migrate", interruption: Interruption(cancellation))
        do {
            return try QueueSchema.migrate(queue.connection)
        } catch let error as PostgresError where error.sqlState == .insufficientPrivilege {
            throw SchemaMismatch(
                description:
                    "PostgreSQL: \(error.message): this role may not change the schema; run share db migrate as the owner role (docs/operating.md: Least privilege)"
            )
        }
    }

    /// Works until `cancellation` is set (jobs in flight finish first). Throws
    /// when it cannot start: the database cannot be reached or has no schema.
    public func run(cancellation: CancellationFlag) throws {
        // The coordinator stops waiting at once; executors' saves get a grace.
        let queue = try JobQueue(url: url, role: "worker", interruption: Interruption(cancellation))
        queue.leaseSeconds = settings.lease
        try QueueSchema.check(queue.connection)
        decoder.prepare()
        let id = try queue.register(name: settings.name, stages: settings.stages, concurrency: settings.concurrency)
        let run = WorkerRun(worker: self, id: id, interruption: Interruption(cancellation, grace: Self.stopGrace))
        emit(
            .started,
            "worker \(settings.name) (#\(id)) serving \(settings.stages.map(\.rawValue).joined(separator: ",")) with \(settings.concurrency) threads",
            ["worker": settings.name, "id": String(id)])
        let executors = WorkerThreads.start(name: "worker", count: settings.concurrency) { _ in
            WorkerExecutor(run).execute()
        }
        let reaper = WorkerThreads.start(name: "reaper", count: 1) { _ in WorkerReaper(run).reap() }
        let coordinator = WorkerCoordinator(run)
        let last = coordinator.coordinate(queue)
        let unstarted = run.handoff.drain().map(\.id)
        executors()
        reaper()
        coordinator.stop(last, unstarted: unstarted)
        emit(.stopped, "worker \(settings.name) stopped", ["worker": settings.name])
    }

    func emit(_ kind: Event.Kind, _ message: String, _ fields: [String: String] = [:]) {
        log?(
            Event(
                kind: kind, message: message,
                fields: fields.merging(["worker": settings.name]) { current, _ in current }))
    }
}
