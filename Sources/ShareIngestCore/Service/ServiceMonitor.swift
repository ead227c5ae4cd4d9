import Foundation
import Glibc
import Synchronization
import SystemCalls

/// What `/healthz` and `/readyz` answer and what the gauges read from outside
/// the process's memory (the inbox, the journal, the database): checked on a
/// thread of its own every ``interval`` seconds, never per scrape, so a scrape
/// costs nothing and a hung database never holds the listener.
package final class ServiceMonitor: Sendable {
    /// One readiness check: its name (in `/readyz`'s body) and what it tries; it throws to fail.
    package struct Check: Sendable {
        package let name: String
        package let run: @Sendable () throws -> Void
        package init(_ name: String, _ run: @escaping @Sendable () throws -> Void) {
            (self.name, self.run) = (name, run)
        }
    }

    private struct State {
        var started = false
        var stopping = false
        /// Each check's last result: nil when it passed, else why not.
        var results: [(name: String, failure: String?)] = []
        var checkedOnce = false
    }

    package let metrics: ServiceMetrics
    package let interval: Double
    private let checks: [Check]
    private let refresh: @Sendable (ServiceMetrics) -> Void
    private let state = Mutex(State())
    private let stopped = Atomic(false)
    private let wake = WakePipe()

    /// `checks` decide `/readyz`; `refresh` sets the gauges read from outside (it reports its own failures as 0s).
    package init(
        metrics: ServiceMetrics, interval: Double = 5, checks: [Check],
        refresh: @escaping @Sendable (ServiceMetrics) -> Void = { _ in }
    ) {
        (self.metrics, self.interval, self.checks, self.refresh) = (metrics, interval, checks, refresh)
    }

    /// Checks now and then every ``interval`` seconds, on a thread of its own, until ``stop()``.
    package func start() {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                checkNow()
                _ = try? Polling.wait([wake.readEnd], milliseconds: Int32(interval * 1000))
                wake.drain()
            }
        }
        thread.name = "share-monitor"
        thread.start()
    }

    package func stop() {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
    }

    /// Checks again at once (e.g. when the process has just become able to work).
    package func recheck() { wake.signal() }

    /// The process can work now (migrations checked, the inbox scanned); until then `/readyz` says it is starting.
    package func markStarted() {
        state.withLock { $0.started = true }
        recheck()
    }

    /// SIGTERM: `/readyz` fails from now on (take no new work here).
    package func markStopping() { state.withLock { $0.stopping = true } }

    /// Runs every check and the refresh once (the monitor's thread does, every ``interval``).
    package func checkNow() {
        var results: [(String, String?)] = []
        for check in checks {
            do {
                try check.run()
                results.append((check.name, nil))
            } catch {
                results.append((check.name, DatabaseSecrets.scrub("\(error)")))
            }
        }
        refresh(metrics)
        state.withLock { state in
            state.results = results
            state.checkedOnce = true
        }
    }

    /// `/readyz`: 200 when started and every check passed, else 503 naming each failing check.
    package var readiness: (ready: Bool, body: String) {
        state.withLock { state in
            var failing: [String] = []
            if !state.started { failing.append("started: not yet (checking the schema or scanning the inbox)") }
            if state.stopping { failing.append("stopping: the process is shutting down") }
            if !state.checkedOnce { failing.append("checks: not run yet") }
            failing += state.results.compactMap { result in result.failure.map { "\(result.name): \($0)" } }
            if failing.isEmpty { return (true, "ready\n" + state.results.map { "ok \($0.name)\n" }.joined()) }
            return (
                false,
                "not ready\n" + failing.map { "failing \($0)\n" }.joined()
                    + state.results.filter { $0.failure == nil }.map { "ok \($0.name)\n" }.joined()
            )
        }
    }

    /// What the listener serves: `/metrics`, `/healthz`, `/readyz`.
    package func route(_ path: String) -> ServiceListener.Response? {
        switch path {
        case "/metrics":
            return ServiceListener.Response(
                200, metrics.registry.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        case "/healthz": return ServiceListener.Response(200, "alive\n")
        case "/readyz":
            let (ready, body) = readiness
            return ServiceListener.Response(ready ? 200 : 503, body)
        default: return nil
        }
    }

    // MARK: - The checks and gauges of each command

    /// The container is writable: a file is made in it (and removed).
    package static func containerCheck(_ root: String) -> Check {
        Check("container") {
            let probe = "\(root)/.share-readyz-\(Processes.current)"
            let file = try FileDescriptor.open(probe, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
            defer { FileSystem.remove(probe) }
            try file.close(path: probe)
        }
    }

    /// The database is reachable and at this share's schema version; keeps one
    /// connection (made again after a failure) for ``refreshWorkerGauges(_:)``.
    package final class Database: @unchecked Sendable {
        private let url: String
        /// Guards `connection`, used by the monitor's thread alone.
        private let lock = NSLock()
        private var connection: PostgresConnection?

        package init(url: String) { self.url = url }

        /// Runs `body` on the connection (connecting first); a failure drops it, to reconnect next time.
        func with<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
            lock.lock()
            defer { lock.unlock() }
            do {
                let held = try connection ?? PostgresConnection(url: url, role: "monitor")
                connection = held
                return try body(held)
            } catch {
                connection = nil
                throw error
            }
        }

        package var check: Check {
            Check("database") { [self] in try with { try QueueSchema.check($0) } }
        }

        /// Jobs ready per stage and batches running, from the queue.
        package func refreshWorkerGauges(_ metrics: ServiceMetrics) {
            let counts = try? with { connection in
                let ready = try connection.query(
                    "SELECT stage, count(*) AS n FROM share_jobs WHERE state = '\(JobQueue.State.queued)' AND not_before <= now() GROUP BY stage"
                )
                let running = try connection.query(
                    "SELECT count(*) AS n FROM share_batches WHERE state = '\(BatchState.running.rawValue)'")
                return (ready, Double(running.first?["n"] ?? "0") ?? 0)
            }
            var ready = Dictionary(uniqueKeysWithValues: metrics.stages.map { ([$0.rawValue], 0.0) })
            for row in counts?.0 ?? [] {
                if let stage = row["stage"], let n = row["n"].flatMap(Double.init) { ready[[stage]] = n }
            }
            metrics.registry.replace("share_jobs_ready", with: ready)
            metrics.registry.set("share_batches_in_flight", to: counts?.1 ?? 0)
        }
    }

    /// Drops waiting in the inbox and batches in flight in its journal.
    package static func refreshInboxGauges(_ inbox: Inbox, _ metrics: ServiceMetrics) {
        metrics.registry.set("share_inbox_drops_waiting", to: Double(inbox.drops().count))
        let running = try? inbox.journal.database.query(
            "SELECT count(*) AS n FROM batches WHERE state IN (\(BatchLifecycle.sql(BatchLifecycle.unfinished)))")
        let count = running?.first?.columns["n"].flatMap { value -> Double? in
            if case .integer(let n) = value { return Double(n) }
            return value.text.flatMap(Double.init)
        }
        metrics.registry.set("share_batches_in_flight", to: count ?? 0)
    }

    /// The live counts for a service manager's status line.
    package var statusLine: String {
        let r = metrics.registry
        let items = ["ingested", "failed", "skipped"].map {
            "\($0) \(MetricsRegistry.number(r.value("share_items_total", [$0])))"
        }.joined(separator: ", ")
        return "items \(items); batches in flight \(MetricsRegistry.number(r.value("share_batches_in_flight")))"
    }
}
