import Foundation
import ShareManifest
import SystemCalls

/// The worker's reaper, on a connection of its own: it takes back the jobs of
/// workers that are gone (their session ended) or stopped renewing their
/// leases, and hands each dead worker's jobs to their batch's lifecycle
/// together (``ItemLifecycle/lose(held:inFlightBeside:reason:stopping:)``: a
/// death is blamed only on a job that was its worker's only one in flight;
/// jobs it held without having them in flight are handed back uncounted), and
/// it queues the fan-in of batches left running with nothing unfinished, when
/// the lifecycle says it is due. Every item it gives up on is reported
/// (`itemFinished`, counted once) and logged, as any other.
final class WorkerReaper {
    private let run: WorkerRun
    private var queue: JobQueue?

    /// Seconds between checks for jobs of gone workers.
    static let reapInterval = 1.0
    /// Seconds between repairs of fan-in counters.
    static let repairInterval = 30.0

    init(_ run: WorkerRun) { self.run = run }

    /// The loop, until cancelled.
    func reap() {
        var nextRepair = MonotonicClock.now() + Self.repairInterval
        while !run.cancellation.isCancelled {
            if let queue = run.connected(&queue) {
                do {
                    try takeBack(queue)
                    if MonotonicClock.now() >= nextRepair {
                        try repairCounters(queue)
                        nextRepair = MonotonicClock.now() + Self.repairInterval
                    }
                } catch let error as PostgresError where error.connectionLost {
                    // The coordinator says so; this connection is made again next time.
                } catch {
                    run.worker.emit(.retry, "reaper: \(error); trying again", ["error": "\(error)"])
                }
            }
            run.pause(Self.reapInterval)
        }
        queue?.close()
    }

    /// Takes back the orphaned jobs, each dead worker's together.
    func takeBack(_ queue: any JobStore) throws {
        let orphans = try queue.orphans()
        for (worker, lost) in Dictionary(grouping: orphans, by: \.worker) {
            // The fan-in loses its attempt on its own; it is never in flight
            // beside an item (it decodes nothing).
            let items = lost.filter { !$0.job.isManifest }.map { (orphan: $0, item: $0.job.item) }
            for orphan in lost where orphan.job.isManifest {
                guard let rules = try run.batches.rules(of: orphan.job.batchID, queue: queue) else { continue }
                try run.loseManifest(
                    orphan.job, lease: orphan.job.lease(worker: worker), error: orphan.reason,
                    lifecycle: rules.lifecycle, queue: queue)
            }
            for (batch, jobs) in Dictionary(grouping: items, by: \.orphan.job.batchID) {
                guard let rules = try run.batches.rules(of: batch, queue: queue) else { continue }
                let beside = items.count { $0.orphan.job.batchID != batch && ItemLifecycle.wasInFlight($0.item) }
                let fates = rules.lifecycle.lose(
                    held: jobs.map(\.item), inFlightBeside: beside, reason: jobs[0].orphan.reason,
                    stopping: BatchLifecycle.stoppingWhenLost(.worker, cancelled: run.interruption.flag.isCancelled))
                for ((orphan, _), (item, next)) in zip(jobs, fates) {
                    guard try queue.record(item, next: next, batch: batch, lease: orphan.job.lease(worker: worker))
                    else { continue }
                    if next.isFinished {
                        run.execution.finished(item, manifest: rules.manifest, message: rules.message)
                    }
                    run.logLoss(orphan.job, item: item, next: next, error: orphan.reason)
                }
            }
        }
    }

    /// Queues the fan-in of each running batch whose counter missed its last
    /// item, once the lifecycle says it is due (``ItemLifecycle/fanInDue(unfinished:)``).
    func repairCounters(_ queue: any JobClaims) throws {
        for (batch, unfinished) in try queue.stuckBatches() where ItemLifecycle.fanInDue(unfinished: unfinished) {
            try queue.queueFanIn(of: batch)
        }
    }
}
