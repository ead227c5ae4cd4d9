import Foundation
import ShareManifest
import SystemCalls

/// The worker's coordinator, on the connection that registered it (and holds
/// its advisory lock): it renews the leases of every job the worker holds (the
/// heartbeat), checks the batches it has not seen (``WorkerBatches``), and
/// claims work into the executors' queue, in the lifecycle's order. A job that
/// must run alone (``ItemLifecycle/mustRunAlone(_:)``) is claimed only when the
/// lifecycle lets it (``ItemLifecycle/takesAlone(holding:)``: the worker holds
/// nothing), and then nothing else until it is done (``ItemLifecycle/takesOthers(whileAlone:)``). With no work it sleeps on
/// `LISTEN share_jobs`, woken by an executor that took or finished a job.
final class WorkerCoordinator {
    private let run: WorkerRun
    /// Whether jobs were handed out since the worker last gave its freed memory back.
    private var workedSinceRelease = false
    /// Since when the worker has held nothing and found nothing to claim.
    private var idleSince: Double?
    /// Seconds of idleness after work before the worker gives its freed memory
    /// back: a pause between a batch's jobs is not worth it (the pages would be
    /// faulted in again at once), the end of a batch is.
    static let releaseAfterIdle = 1.0

    init(_ run: WorkerRun) { self.run = run }

    private var settings: StageWorker.Settings { run.settings }
    private var cancellation: CancellationFlag { run.cancellation }

    /// The loop, until cancelled; returns its connection (if still up) for the stop.
    func coordinate(_ first: JobQueue) -> JobQueue? {
        var queue: JobQueue? = first
        var listening = false
        var lostSince: Double?
        var nextHeartbeat = 0.0
        while !cancellation.isCancelled {
            do {
                if queue == nil {
                    let fresh = try JobQueue(
                        url: run.worker.url, role: "worker", interruption: Interruption(cancellation))
                    if !(try fresh.relock(worker: run.id)) {
                        throw PostgresError(
                            message:
                                "this worker's registration is gone (share gc --db?) or its lock is held elsewhere; restart the worker",
                            connectionLost: false)
                    }
                    queue = fresh
                    listening = false
                    if let since = lostSince {
                        run.worker.emit(
                            .reconnected,
                            "reconnected to the database after \(String(format: "%.1f", MonotonicClock.now() - since)) s"
                        )
                        lostSince = nil
                    }
                }
                guard let queue else { continue }
                if !listening {
                    try queue.listen()
                    listening = true
                }
                if MonotonicClock.now() >= nextHeartbeat {
                    try heartbeat(queue)
                    nextHeartbeat = MonotonicClock.now() + settings.lease / 3
                }
                if try claim(queue) { continue }
                // Idle with counts not yet sent: sent now, so `share status --db`
                // right after a batch shows the stages this worker did.
                if isIdle, run.counters.withLock({ $0.done + $0.failures }) > 0 {
                    try heartbeat(queue)
                    nextHeartbeat = MonotonicClock.now() + settings.lease / 3
                }
                let untilHeartbeat = max(0.01, nextHeartbeat - MonotonicClock.now())
                _ = try queue.waitForWork(seconds: min(1, untilHeartbeat), wake: run.wake.readEnd)
                run.wake.drain()
            } catch let error as PostgresError where error.connectionLost {
                if error.interrupted || cancellation.isCancelled { break }
                if lostSince == nil {
                    lostSince = MonotonicClock.now()
                    run.worker.emit(
                        .disconnected, "lost the database connection: \(error.message); reconnecting",
                        ["error": error.message])
                }
                queue = nil
                run.pause(0.25)
            } catch {
                run.worker.emit(.retry, "coordinator: \(error); trying again in 1 s", ["error": "\(error)"])
                run.pause(1)
            }
        }
        return queue
    }

    /// True when nothing waits to run here and nothing runs.
    private var isIdle: Bool { run.handoff.count == 0 && run.busy.load(ordering: .relaxed) == 0 }

    /// Renews the leases of the jobs held, and sends the counters.
    private func heartbeat(_ queue: any WorkerRoster) throws {
        let (done, failures) = run.counters.withLock { counters in
            defer { counters = (0, 0) }
            return counters
        }
        do {
            try queue.heartbeat(
                worker: run.id, held: run.held.withLock { $0 }, lease: settings.lease, stagesDone: done,
                failures: failures)
        } catch {
            run.counters.withLock { $0 = ($0.done + done, $0.failures + failures) }
            throw error
        }
    }

    /// Claims what the executors have room for; true when it should claim again
    /// at once (it filled the room, or checked new batches).
    private func claim(_ queue: any JobClaims & WorkerRoster) throws -> Bool {
        guard ItemLifecycle.takesOthers(whileAlone: run.runningAlone.load(ordering: .acquiring)) else { return false }
        let now = MonotonicClock.now()
        let waiting = run.handoff.count
        let busy = run.busy.load(ordering: .relaxed)
        let ahead = run.claimAhead
        let room = ahead - waiting - busy
        // Refilled once half of what is held ahead is taken.
        guard waiting <= ahead / 2, room > 0 else { return false }
        let usable = run.batches.usable(now: now)
        let refused = run.batches.refused(now: now)
        // Idle: a job that must run alone goes first, and alone.
        if waiting == 0, busy == 0, ItemLifecycle.takesAlone(holding: run.held.withLock { $0.count }) {
            let (alone, _) = try queue.claim(
                stages: settings.stages, worker: run.id, limit: 1, batches: usable, blocked: refused, alone: true)
            if let job = alone.first {
                run.runningAlone.store(true, ordering: .releasing)
                hand([job])
                return false
            }
        }
        let (jobs, unchecked) = try queue.claim(
            stages: settings.stages, worker: run.id, limit: room, batches: usable, blocked: refused, alone: false)
        hand(jobs)
        if !jobs.isEmpty || waiting > 0 || busy > 0 || !run.held.withLock({ $0.isEmpty }) {
            workedSinceRelease = workedSinceRelease || !jobs.isEmpty
            idleSince = nil
        } else if workedSinceRelease {
            let since = idleSince ?? now
            idleSince = since
            if now - since >= Self.releaseAfterIdle {
                // Idle after work: what the executors' threads freed goes back to the
                // kernel, so the worker's size after a batch is what it holds, not the
                // largest batch it ever ran (BENCHMARKS: the ten-batch soak).
                FreedMemory.release()
                (workedSinceRelease, idleSince) = (false, nil)
            }
        }
        var checked = false
        for batch in unchecked where try run.batches.check(batch, queue: queue) { checked = true }
        return jobs.count == room || checked
    }

    private func hand(_ jobs: [Job]) {
        run.held.withLock { $0.formUnion(jobs.map(\.id)) }
        for job in jobs { run.handoff.push(job) }
    }

    /// After the loop: counters flushed, unstarted jobs handed back, the worker
    /// recorded as stopped; bounded by the stop grace if the server hangs.
    func stop(_ queue: JobQueue?, unstarted: [Int64]) {
        let interruption = Interruption(cancellation, grace: 2)
        guard let queue = queue ?? (try? JobQueue(url: run.worker.url, role: "worker", interruption: interruption))
        else { return }
        queue.interrupt(at: interruption)
        let (done, failures) = run.counters.withLock { $0 }
        run.held.withLock { $0.subtract(unstarted) }
        _ = try? queue.heartbeat(
            worker: run.id, held: run.held.withLock { $0 }, lease: settings.lease, stagesDone: done, failures: failures)
        try? queue.unregister(worker: run.id, unstarted: unstarted)
        queue.close()
    }
}
