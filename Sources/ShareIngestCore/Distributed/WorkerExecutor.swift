import Foundation
import ShareManifest
import SystemCalls

/// One of the worker's executors, on a connection of its own: it takes claimed
/// jobs from the coordinator's queue and runs each item's stages back to back
/// while this worker serves them, through the execution core every mode shares
/// (``StageExecution``: the lifecycle decides each step, a step the executor
/// goes on from is recorded with the next one). An item leaves the worker when
/// it is finished or its next stage is another pool's; the records of items
/// leaving are made together, in one statement for up to ``recordsPerStatement``
/// of them (at once when no claimed job is waiting, or after ``recordDelay``),
/// so a batch of small items costs a fraction of a transaction per item. A
/// manifest job runs the batch's fan-in (``BatchCompletion``), as locally.
final class WorkerExecutor {
    private let run: WorkerRun
    private var queue: JobQueue?
    /// The store given instead of a connection of its own (tests: a store whose
    /// records fail as a situation needs).
    private let given: (any JobStore)?
    /// Items whose last step here waits to be recorded with others.
    private var leaving: [(step: JobQueue.LeasedStep, job: Job, batch: BatchContext)] = []
    private var oldestLeaving = 0.0

    /// The most records made in one statement.
    static let recordsPerStatement = 64
    /// Seconds a leaving item's record may wait for others.
    static let recordDelay = 0.05

    init(_ run: WorkerRun, store: (any JobStore)? = nil) {
        self.run = run
        given = store
    }

    /// Its connection (made again when it was lost), or the store it was given.
    private func connected() -> (any JobStore)? { given ?? run.connected(&queue) }

    private var settings: StageWorker.Settings { run.settings }

    /// Runs claimed jobs until the handoff is closed.
    func execute() {
        while let job = nextJob() {
            run.busy.add(1, ordering: .relaxed)
            run.wake.signal()
            let started = MonotonicClock.now()
            work(job)
            run.jobFinished(seconds: MonotonicClock.now() - started)
            run.busy.subtract(1, ordering: .relaxed)
            if job.mustRunAlone {
                flushLeaving()
                run.runningAlone.store(false, ordering: .releasing)
            }
            if leaving.count >= Self.recordsPerStatement || run.handoff.count == 0
                || MonotonicClock.now() - oldestLeaving > Self.recordDelay
            {
                flushLeaving()
            }
            run.wake.signal()
        }
        flushLeaving()
        queue?.close()
    }

    /// The next claimed job. While records wait to be made it waits only until
    /// they are due, and makes them then: another executor may take the job this
    /// one saw waiting, and records left waiting behind an empty handoff would hold
    /// their items (and their batch) until this executor got another job.
    private func nextJob() -> Job? {
        while !leaving.isEmpty {
            switch run.handoff.pop(waitingAtMost: oldestLeaving + Self.recordDelay - MonotonicClock.now()) {
            case .element(let job): return job
            case .closed: return nil  // `execute` makes the records after its loop
            case .timedOut: flushLeaving()
            }
        }
        return run.handoff.pop()
    }

    func work(_ claimed: Job) {
        guard let store = connected() else { return forget(claimed) }
        guard let batch = run.batches.context(of: claimed.batchID) else {
            try? store.release([claimed.id], worker: run.id)
            return forget(claimed)
        }
        if claimed.isManifest {
            deliver(claimed, batch: batch, store: store)
            return forget(claimed)
        }
        var stage = claimed.stage
        var item = InFlightItem(claimed.item)
        let steps = LeasedSteps(store, batch: claimed.batchID, lease: claimed.lease(worker: run.id)) { [self] step in
            if leaving.isEmpty { oldestLeaving = MonotonicClock.now() }
            leaving.append((step, claimed, batch))
        }
        while true {
            let step = run.execution.run(stage, on: &item, in: batch, steps: steps) { [settings] stage in
                settings.stages.contains(stage)
            }
            run.counters.withLock { $0.done += 1 }
            switch step.recorded {
            case .queued: return  // it leaves: recorded with the others (``flushLeaving()``)
            case .saved: left(item.state, next: step.next, job: claimed)
            case .deferred: break
            // No longer ours (another worker took it up), or its record could not
            // be made and the lifecycle stops its holder (``StageExecution/Step/stopsRun``):
            // dropped; the next heartbeat hands it back, parked where its last
            // record has it (``JobQueue/handedBack``), if it is still recorded as ours.
            case .refused, .failed: return forget(claimed)
            }
            guard case .run(let following) = step.next, settings.stages.contains(following) else {
                return forget(claimed)
            }
            stage = following
        }
    }

    /// The job is no longer this worker's to renew.
    private func forget(_ job: Job) { run.held.withLock { _ = $0.remove(job.id) } }

    /// What is logged once an item's step is saved: its failure, or its
    /// give-up (counted where it is told: ``WorkerRun/leaving``).
    private func left(_ item: ItemState, next: NextStep, job: Job) {
        guard next.isFinished else { return }
        if let failure = item.failure {
            if case .gaveUp(let reason) = next {
                run.logLoss(job, item: item, next: next, error: reason)
            } else {
                run.worker.emit(
                    .failed,
                    "failed: batch \(job.batchID.uuidString) item \(job.index) (\(item.label)) at \(failure.stage.rawValue): \(failure.reason.rawValue): \(failure.message)",
                    [
                        "batch": job.batchID.uuidString, "item": String(job.index), "stage": failure.stage.rawValue,
                        "reason": failure.reason.rawValue,
                        "error": failure.message,
                    ])
            }
        }
    }

    /// Makes the records of the items leaving this worker, in one statement. A
    /// failing statement is tried again while the lifecycle's patience for what
    /// the store said lasts (``ItemLifecycle/recordPatience(for:)``: a lost
    /// connection until a stop is due; each record is the holder's to make until
    /// its lease lapses); then it is made again one record at a time, each
    /// through the lifecycle (``StageExecution/record(_:next:in:steps:keeps:ran:)``).
    func flushLeaving() {
        guard !leaving.isEmpty else { return }
        let batch = leaving
        leaving = []
        var owned: Set<Int64>?
        let started = MonotonicClock.now()
        var tries = 0
        while owned == nil, let store = connected() {
            do {
                owned = try store.record(batch.map(\.step), worker: run.id)
            } catch
                where MonotonicClock.now() - started < ItemLifecycle.recordPatience(for: StoreFailure(error))
                && !run.cancellation.isCancelled
            {
                tries += 1
                run.pause(ItemLifecycle.recordPause(attempt: tries))
            } catch {
                for pending in batch {
                    var item = pending.step.item
                    let steps = LeasedSteps(store, batch: pending.job.batchID, lease: pending.step.lease)
                    let step = run.execution.record(
                        &item, next: pending.step.next, in: pending.batch, steps: steps, ran: pending.step.ran)
                    if step.recorded == .saved { left(item, next: step.next, job: pending.job) }
                    forget(pending.job)
                }
                return
            }
        }
        for pending in batch {
            forget(pending.job)
            guard owned?.contains(pending.job.id) == true else { continue }
            if pending.step.next.isFinished { run.execution.finished(pending.step.item, in: pending.batch) }
            left(pending.step.item, next: pending.step.next, job: pending.job)
        }
    }

    /// The manifest job: every item finished; the fan-in (``BatchCompletion``,
    /// as locally), and the batch recorded done with the job, in one statement.
    private func deliver(_ job: Job, batch: BatchContext, store: any JobStore) {
        let lease = job.lease(worker: run.id)
        let outcome: BatchCompletion.Outcome?
        do {
            guard let stored = try store.batch(job.batchID) else { return }
            guard stored.record.state == .running else {
                // Done already (a retried manifest job): only the job is completed.
                if BatchLifecycle.decision(.batchNoLongerRunning, for: .worker) == .completeJob {
                    _ = try store.finish(stored.record, changed: [], lease: lease)
                }
                return
            }
            CrashPoint.hit("manifest-job")
            // The batch's wall time, from its creation, on the wall clock (the
            // planner's and this machine's).
            outcome = try BatchCompletion.finish(
                stored.record, context: batch, store: store,
                wallSeconds: max(0, Date().timeIntervalSince(stored.record.createdAt)), now: Date(),
                events: run.worker.events,
                recordChanged: { changed in try store.record(changed, batch: stored.record, lease: lease) },
                recordEnd: { record, changed in try store.finish(record, changed: changed, lease: lease) })
        } catch let wants as BatchCompletion.WantsSpace {
            try? run.loseManifest(
                job, lease: lease, error: "\(wants)", lifecycle: batch.lifecycle, queue: store, forWantOfSpace: true)
            return
        } catch let failure as BatchCompletion.NotRecorded
            where BatchLifecycle.decision(.failedEndRecord, for: .worker) == .fanInLosesAttempt
        {
            try? run.loseManifest(
                job, lease: lease, error: "\(failure.error)", lifecycle: batch.lifecycle, queue: store)
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
            [
                "batch": job.batchID.uuidString, "ingested": String(record.ingestedCount),
                "failed": String(record.failedCount), "redirectURL": record.redirectURL ?? "",
            ])
        run.worker.events?(.batchFinished(outcome.report))
    }
}
