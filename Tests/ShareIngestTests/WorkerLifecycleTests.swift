import Foundation
import ShareIngest
import ShareManifest
import Synchronization
import TestSupport
import Testing

@testable import ShareIngestCore

/// What becomes of the jobs of a worker that vanished, decided by the batch's
/// own lifecycle in the reaper of a live worker: a death is blamed only on a
/// job that was its worker's only one in flight (being decoded in its process,
/// as its record says), a job it held without having it in flight is handed
/// back uncounted, and every item given up on is told to the events, as any
/// other finished item.
@Suite struct WorkerLifecycleTests {
    /// A real worker in this process, its log lines and events kept.
    final class LiveWorker: @unchecked Sendable {
        /// Values appended from other threads.
        final class Collected<Value: Sendable>: Sendable {
            private let values = Mutex<[Value]>([])
            func append(_ value: Value) { values.withLock { $0.append(value) } }
            var all: [Value] { values.withLock { $0 } }
        }

        let stop = CancellationFlag()
        let lines = Collected<StageWorker.Event>()
        let finished = Collected<ItemReport>()
        private let done = DispatchSemaphore(value: 0)

        init(url: String) {
            var settings = StageWorker.Settings()
            settings.concurrency = 2
            settings.lease = 30
            let worker = StageWorker(
                url: url, settings: settings,
                events: { [finished] event in if case .itemFinished(let report) = event { finished.append(report) } },
                log: { [lines] event in lines.append(event) })
            let thread = Thread { [stop, done] in
                try? worker.run(cancellation: stop)
                done.signal()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }

        func end() {
            stop.cancel()
            done.wait()
        }

        func messages(_ kind: StageWorker.Event.Kind) -> [String] {
            lines.all.filter { $0.kind == kind }.map(\.message)
        }
    }

    /// A worker that claims `count` jobs of `batch` on its own session, records
    /// that it is decoding each (`inFlight`, as an executor does before it
    /// decodes in-process), and then vanishes (the session ends: its advisory
    /// lock is released at once).
    static func vanish(holding count: Int, of batch: UUID, url: String, inFlight: Bool = true) throws -> [Job] {
        let ghost = try JobQueue(url: url, role: "ghost")
        let id = try ghost.register(name: "ghost", stages: StageName.allCases, concurrency: count)
        var jobs: [Job] = []
        while jobs.count < count {
            let (claimed, _) = try ghost.claim(
                stages: StageName.allCases, worker: id, limit: count - jobs.count, batches: [batch], blocked: [])
            #expect(!claimed.isEmpty, "nothing left to claim")
            if claimed.isEmpty { break }
            jobs += claimed
        }
        for job in jobs where inFlight {
            var item = job.item
            item.decodingInFlight = true
            var lease = job.lease(worker: id)
            lease.keeps = true
            #expect(try ghost.record(item, next: .run(job.stage), batch: batch, lease: lease))
        }
        ghost.close()
        return jobs
    }

    static func enqueue(_ texts: [String], url: String, container: TemporaryContainer, maxAttempts: Int = 3) throws -> (
        DistributedIngestor, DistributedIngestor.Batch
    ) {
        var client = DistributedIngestor(url: url, container: container.directory)
        client.maxAttempts = maxAttempts
        return (client, try client.enqueue(texts.map { .text($0) }))
    }

    @Test func aWorkerThatDiesHoldingTwoJobsBlamesNeither() throws {
        let server = try PostgresServer()
        try StageWorker.migrate(url: server.url)
        let container = try TemporaryContainer()
        let (client, batch) = try Self.enqueue(["one", "two", "three"], url: server.url, container: container)
        let lost = try Self.vanish(holding: 2, of: batch.id, url: server.url)
        let worker = LiveWorker(url: server.url)
        defer { worker.end() }
        let done = try #require(try client.wait(for: batch.id, timeout: 120))
        #expect(done.ingestedCount == 3 && done.failedCount == 0)
        let retries = worker.messages(.retry)
        for job in lost {
            #expect(
                retries.contains {
                    $0.contains("item \(job.index) ")
                        && $0.contains("not counted (it was not alone in flight: it runs alone next)")
                },
                "\(retries)")
        }
        #expect(!retries.contains { $0.contains("attempt 1 of") }, "\(retries)")
    }

    @Test func aWorkerThatDiesHoldingOneJobCostsItAnAttempt() throws {
        let server = try PostgresServer()
        try StageWorker.migrate(url: server.url)
        let container = try TemporaryContainer()
        let (client, batch) = try Self.enqueue(["one", "two"], url: server.url, container: container)
        let lost = try Self.vanish(holding: 1, of: batch.id, url: server.url)
        let worker = LiveWorker(url: server.url)
        defer { worker.end() }
        let done = try #require(try client.wait(for: batch.id, timeout: 120))
        #expect(done.ingestedCount == 2)
        let retries = worker.messages(.retry)
        #expect(
            retries.contains { $0.contains("item \(lost[0].index) ") && $0.contains("attempt 1 of 3 lost") },
            "\(retries)")
    }

    /// With one attempt allowed, the job a vanished worker was decoding alone is
    /// given up on: its item fails (`crashedRepeatedly`: its holder died while
    /// decoding it alone, as locally) and the events hear of it, once.
    @Test func aGiveUpInTheReaperIsToldToTheEvents() throws {
        let server = try PostgresServer()
        try StageWorker.migrate(url: server.url)
        let container = try TemporaryContainer()
        let (client, batch) = try Self.enqueue(["one", "two"], url: server.url, container: container, maxAttempts: 1)
        let lost = try Self.vanish(holding: 1, of: batch.id, url: server.url)
        let worker = LiveWorker(url: server.url)
        defer { worker.end() }
        let done = try #require(try client.wait(for: batch.id, timeout: 120))
        #expect(done.ingestedCount == 1 && done.failedCount == 1)
        let told = worker.finished.all
        let givenUp = told.filter { $0.index == lost[0].index }
        #expect(givenUp.count == 1, "\(told.map { "\($0.index) \($0.status)" })")
        #expect(givenUp.first?.failure?.reason == .crashedRepeatedly)
        #expect(worker.messages(.gaveUp).contains { $0.contains("item \(lost[0].index) ") })
    }

    /// Jobs a vanished worker held without having them in flight (claimed and
    /// not started, or in a stage that decodes nothing in its process) are no
    /// proof against any item: handed back as they were, uncounted, and not
    /// made to run alone, as a local run leaves the items it had not in hand.
    @Test func jobsAWorkerHeldButHadNotInFlightAreHandedBackUncounted() throws {
        let server = try PostgresServer()
        try StageWorker.migrate(url: server.url)
        let container = try TemporaryContainer()
        let (client, batch) = try Self.enqueue(
            ["one", "two", "three"], url: server.url, container: container, maxAttempts: 1)
        let lost = try Self.vanish(holding: 2, of: batch.id, url: server.url, inFlight: false)
        let worker = LiveWorker(url: server.url)
        defer { worker.end() }
        let done = try #require(try client.wait(for: batch.id, timeout: 120))
        #expect(done.ingestedCount == 3 && done.failedCount == 0)
        let retries = worker.messages(.retry)
        for job in lost {
            #expect(
                retries.contains {
                    $0.contains("item \(job.index) ") && $0.contains("not counted (it was held, not in flight)")
                }, "\(retries)")
        }
    }
}
