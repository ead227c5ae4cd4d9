import Foundation
import TestSupport
import Testing

/// A test's run with or without `--db`: with it, a throwaway PostgreSQL server,
/// migrated, and one real `share worker`; `options` are what a command adds
/// (`--db URL`, or nothing). Keep it alive while the test runs; `stop()` ends the worker.
final class DatabaseMode {
    let options: [String]
    private let server: PostgresServer?
    private let workers: DistributedTests.Workers?

    /// Local (`enabled` false) or through a worker named `worker`.
    init(_ enabled: Bool, worker: String) throws {
        guard enabled else {
            (options, server, workers) = ([], nil, nil)
            return
        }
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start(worker)
        (self.options, self.server, self.workers) = (["--db", server.url], server, workers)
    }

    /// Stops the worker (it must have ended cleanly).
    func stop() { workers?.stopAll() }
}
