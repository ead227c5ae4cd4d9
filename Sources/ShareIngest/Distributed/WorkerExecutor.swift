import Foundation
import ShareManifest
import SystemCalls

/// One of the worker's executors, on a connection of its own: it takes claimed
/// jobs from the coordinator's queue and runs each item's stages back to back
/// while this worker serves them, through the execution core every mode shares
/// (``StageExecution``: the lifecycle decides each step, a step the executor
/// goes on from is recorded with the next one). An item leaves the worker
/// (one record) when it is finished or its next stage is another pool's. A
/// manifest job runs the batch's fan-in (``BatchCompletion``), as locally.
final class WorkerExecutor {
    private let run: WorkerRun
    private var queue: JobQueue?

    init(_ run: WorkerRun) { self.run = run }

    private var settings: StageWorker.Settings { run.settings }

    /// Runs claimed jobs until the handoff is closed.
    func execute() {
        while let job = run.handoff.pop() {
            run.busy.add(1, ordering: .relaxed)
            run.wake.signal()
            work(job)
            // Done with it whatever happened: if the row is still recorded as ours
            // (an answer lost with the connection), the next heartbeat hands it back.
            run.held.withLock { _ = $0.remove(job.id) }
            run.busy.subtract(1, ordering: .relaxed)
            if job.mustRunAlone { run.runningAlone.store(false, ordering: .releasing) }
            run.wake.signal()
        }
        queue?.close()
    }

    private func work(_ claimed: Job) {
        guard let store = run.connected(&queue) else { return }
        guard let batch = run.batches.context(of: claimed.batchID) else {
            try? store.release([claimed.id], worker: run.id)
            return
        }
        if claimed.isManifest {
            deliver(claimed, batch: batch, store: store)
            return
        }
        var stage = claimed.stage
        var item = InFlightItem(claimed.item)
        let steps = LeasedSteps(store, batch: claimed.batchID, lease: claimed.lease(worker: run.id))
        while true {
            let step = run.execution.run(stage, on: &item, in: batch, steps: steps) { [settings] stage in settings.stages.contains(stage) }
            run.counters.withLock { counters in
                counters.done += 1
                if step.next.isFinished && item.failure != nil { counters.failures += 1 }
            }
            switch step.recorded {
            case .saved, .deferred: break
            // No longer ours (another worker took it up), or the store cannot
            // take it: the job's lease lapses and the reaper hands it on.
            case .refused, .failed: return
            }
            if let failure = item.failure, step.next.isFinished {
                run.worker.emit(
                    .failed, "failed: batch \(claimed.batchID.uuidString) item \(claimed.index) (\(item.label)) at \(failure.stage.rawValue): \(failure.reason.rawValue): \(failure.message)",
                    ["batch": claimed.batchID.uuidString, "item": String(claimed.index), "stage": failure.stage.rawValue, "reason": failure.reason.rawValue,
                     "error": failure.message])
            }
            if case .gaveUp(let reason) = step.next {
                run.logLoss(claimed, item: item.state, next: step.next, error: reason)
            }
            guard case .run(let following) = step.next, settings.stages.contains(following) else { return }
            stage = following
        }
    }

    /// The manifest job: every item finished; the fan-in (``BatchCompletion``,
    /// as locally), and the batch recorded done with the job, in one statement.
    private func deliver(_ job: Job, batch: BatchContext, store: JobQueue) {
        let lease = job.lease(worker: run.id)
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
                stored.record, context: batch, store: store, wallSeconds: max(0, Date().timeIntervalSince(stored.record.createdAt)), now: Date(),
                recordEnd: { record, changed in try store.finish(record, changed: changed, lease: lease) })
        } catch let failure as BatchCompletion.NotRecorded {
            try? run.loseManifest(job, lease: lease, error: "\(failure.error)", lifecycle: batch.lifecycle, queue: store)
            return
        } catch {
            try? run.loseManifest(job, lease: lease, error: "\(error)", lifecycle: batch.lifecycle, queue: store)
            return
        }
        guard let outcome else { return }
        WorkerVisibility.removeToken(container: batch.container.root, batch: job.batchID)
        run.batches.forget(job.batchID)
        run.counters.withLock { $0.done += 1 }
        let record = outcome.record
        run.worker.emit(
            .batchDone,
            "batch \(job.batchID.uuidString) done: \(record.ingestedCount) of \(record.itemCount) ingested\(record.failedCount > 0 ? ", \(record.failedCount) failed" : "") \(record.redirectURL ?? "(no manifest: nothing could be delivered)")",
            ["batch": job.batchID.uuidString, "ingested": String(record.ingestedCount), "failed": String(record.failedCount), "redirectURL": record.redirectURL ?? ""])
        run.worker.events?(.batchFinished(outcome.report))
    }
}
