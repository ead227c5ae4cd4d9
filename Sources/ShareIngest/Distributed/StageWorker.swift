import Foundation
import Glibc
import MediaFormats
import MediaKit
import ShareManifest

/// A long-running worker that claims stage jobs from PostgreSQL and runs them
/// with the same stage code as the local pipeline (`share worker`). Each of its
/// threads has its own connection and works on one job at a time; a heartbeat
/// renews the lease while the stage runs. A lost connection (the server
/// restarted) is re-established and the work goes on.
public final class StageWorker: @unchecked Sendable {
    /// What a worker serves and how.
    public struct Settings: Sendable {
        /// The stages this worker serves (e.g. only `thumbnail` on a big machine).
        public var stages: [StageName] = StageName.allCases
        /// Threads, each with its own connection, working on one job at a time.
        public var concurrency = 2
        /// Seconds a claimed job stays ours without a renewal.
        public var lease: Double = 30
        /// The name jobs and `share status --db` show (default: host and process id).
        public var name = "\(FileSystem.hostTag)-\(getpid())"

        /// The defaults: every stage, 2 threads, a 30 s lease.
        public init() {}
    }

    /// The database (a libpq URI).
    public let url: String
    /// What this worker serves.
    public let settings: Settings
    let events: IngestEventSink?
    /// What decodes the media of the jobs this worker takes.
    let decoder: any MediaDecoder

    /// A worker on the database at `url`; `events` receives each finished stage and batch.
    public init(url: String, settings: Settings, events: IngestEventSink? = nil, decoder: any MediaDecoder = InProcessDecoder()) {
        self.url = url
        self.settings = settings
        self.events = events
        self.decoder = decoder
    }

    /// Creates or upgrades the schema.
    public static func migrate(url: String) throws {
        try JobQueue(url: url).migrate()
    }

    /// Works until `cancellation` is set (jobs in flight finish first).
    public func run(cancellation: CancellationFlag) throws {
        try Self.migrate(url: url)
        decoder.prepare()
        let join = WorkerThreads.start(name: "worker", count: settings.concurrency) { [self] index in
            loop(thread: index, cancellation: cancellation)
        }
        join()
    }

    private func loop(thread: Int, cancellation: CancellationFlag) {
        let worker = "\(settings.name)/\(thread)"
        var queue: JobQueue?
        var listening = false
        var pipelines: [UUID: (PipelineDefinition, [StageName: any ItemStage], ContainerDirectory, String?)] = [:]
        var lastReap = 0.0
        while !cancellation.isCancelled {
            do {
                if queue == nil || queue?.connection.isConnected == false {
                    queue = try JobQueue(url: url)
                    listening = false
                }
                guard let queue else { continue }
                if !listening {
                    try queue.connection.query("LISTEN share_jobs")
                    listening = true
                }
                // Jobs of dead workers: looked for every couple of seconds, by every thread.
                if MonotonicClock.now() - lastReap > 2 {
                    lastReap = MonotonicClock.now()
                    for job in try queue.expired() {
                        try queue.retryOrGiveUp(job, error: "lease expired: its worker died or stalled", item: job.index >= 0 ? try queue.item(job.batchID, index: job.index) : nil)
                    }
                }
                guard let job = try queue.claim(stages: settings.stages, worker: worker, lease: settings.lease) else {
                    _ = queue.connection.waitForNotification(seconds: 1)
                    continue
                }
                if pipelines[job.batchID] == nil, let stored = try queue.batch(job.batchID) {
                    let pipeline = try PipelineDefinition.decode(Data(stored.record.pipelineJSON.utf8), file: "pipeline of batch \(job.batchID)")
                    let stages = Dictionary(uniqueKeysWithValues: pipeline.makeItemStages().map { ($0.name, $0) })
                    pipelines[job.batchID] = (pipeline, stages, try ContainerDirectory(stored.container), stored.record.message)
                }
                guard let (pipeline, stages, container, message) = pipelines[job.batchID] else { continue }
                let heartbeat = Heartbeat(url: url, job: job, worker: worker, lease: settings.lease)
                defer { heartbeat.stop() }
                if job.stage == .manifest {
                    try deliver(job, queue: queue, pipeline: pipeline, container: container, worker: worker)
                } else if let stage = stages[job.stage], let item = try queue.item(job.batchID, index: job.index) {
                    try run(stage, job: job, item: item, queue: queue, pipeline: pipeline, container: container, message: message, worker: worker, cancellation: cancellation)
                }
            } catch is LeaseLost {
                continue
            } catch let error as PostgresError where error.connectionLost {
                // The server went away: reconnect (the claimed job's lease will lapse and it is retried).
                queue = nil
                usleep(500_000)
            } catch {
                usleep(200_000)
            }
        }
    }

    private func run(
        _ stage: any ItemStage, job: Job, item: ItemWork, queue: JobQueue, pipeline: PipelineDefinition, container: ContainerDirectory,
        message: String?, worker: String, cancellation: CancellationFlag
    ) throws {
        let context = BatchContext(batchID: job.batchID, container: container, pipeline: pipeline, decoder: decoder, message: message, cancellation: cancellation)
        _ = ItemExecution.run(stage, on: item, in: context, events: events)
        item.pendingThumbnail = nil
        let stages = pipeline.itemStages
        let next = stages.firstIndex(of: stage.name).flatMap { $0 + 1 < stages.count ? stages[$0 + 1] : nil }
        try queue.complete(job, item: item, next: next, worker: worker)
    }

    /// The manifest job: every item finished; the fan-in (``BatchCompletion``, as
    /// locally), then the batch is marked done with the manifest job, once.
    private func deliver(_ job: Job, queue: JobQueue, pipeline: PipelineDefinition, container: ContainerDirectory, worker: String) throws {
        guard let stored = try queue.batch(job.batchID) else { return }
        guard stored.record.state == .running else {
            // Done already (a retried manifest job): only the job is completed.
            _ = try queue.finishBatch(job, record: stored.record, worker: worker)
            return
        }
        let items = try queue.items(job.batchID)
        let (record, report) = BatchCompletion.finish(
            stored.record, items: items, pipeline: pipeline, container: container, started: nil, now: Date()) { _ in }
        if try queue.finishBatch(job, record: record, worker: worker) { events?(.batchFinished(report)) }
    }
}

/// Renews a job's lease every third of its length, on its own connection, until stopped.
final class Heartbeat: @unchecked Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let stopped = CancellationFlag()

    init(url: String, job: Job, worker: String, lease: Double) {
        let (wake, done, stopped) = (self.wake, self.done, self.stopped)
        let thread = Thread {
            defer { done.signal() }
            var connection: JobQueue?
            while wake.wait(timeout: .now() + lease / 3) == .timedOut, !stopped.isCancelled {
                do {
                    if connection == nil { connection = try JobQueue(url: url) }
                    _ = try connection?.renew(job, worker: worker, lease: lease)
                } catch {
                    connection = nil
                }
            }
        }
        thread.start()
    }

    func stop() {
        stopped.cancel()
        wake.signal()
        done.wait()
    }
}
