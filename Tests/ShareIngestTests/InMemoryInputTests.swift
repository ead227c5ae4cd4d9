import Foundation
import MediaFormats
import ShareIngest
import ShareManifest
import TestSupport
import Testing

/// In-memory inputs (`ShareInput.data`) are written down when their batch is
/// planned, so they survive an interruption and reach workers on other machines.
@Suite(.serialized) struct InMemoryInputTests {
    static let photo = try! Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg")))

    static func checkDelivered(_ entry: SharedMediaFile?, container: TemporaryContainer) throws {
        let entry = try #require(entry)
        #expect(entry.type == .image)
        #expect(entry.fileName == "pasted.jpg")
        #expect(entry.width == 640 && entry.height == 480, "\(entry)")
        let copy = try #require(entry.fileURL?.path)
        #expect(FileManager.default.contents(atPath: copy) == Self.photo)
        #expect(entry.thumbnail != nil)
        // Nothing is left in the spool once the batch is done.
        let spool = container.root + "/.spool"
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: spool)) ?? []).isEmpty)
    }

    @Test func anInterruptedBatchOfInMemoryDataIsFinishedByResume() throws {
        let container = try TemporaryContainer()
        let ingestor = ShareIngestor(container: container.directory)
        let stopped = CancellationFlag()
        stopped.cancel()
        let interrupted = try ingestor.ingest(
            [.data(Self.photo, name: "pasted.jpg"), .text("with a note")], cancellation: stopped)
        #expect(interrupted.interrupted)
        // A new process would have nothing in memory: only the journal and the spool.
        let finished = try ShareIngestor(container: container.directory).resume(interrupted.batchID.uuidString)
        #expect(finished.isComplete, "\(finished.items.map { $0.failure?.message ?? "ok" })")
        try Self.checkDelivered(finished.entries.first, container: container)
        #expect(finished.items.first?.source == "data:pasted.jpg")
    }

    @Test func inMemoryDataGoesThroughTheDistributedWorkers() throws {
        let server = try PostgresServer()
        let container = try TemporaryContainer()
        let worker = Process()
        worker.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
        worker.arguments = ["worker", "--db", server.url, "--concurrency", "1", "--quiet"]
        worker.standardOutput = FileHandle.nullDevice
        worker.standardError = FileHandle.nullDevice
        try StageWorker.migrate(url: server.url)
        try worker.run()
        defer {
            kill(worker.processIdentifier, SIGTERM)
            worker.waitUntilExit()
        }
        let client = DistributedIngestor(url: server.url, container: container.directory)
        let batch = try client.enqueue([.data(Self.photo, name: "pasted.jpg")])
        let done = try #require(try client.wait(for: batch.id, timeout: 120))
        #expect(done.ingestedCount == 1 && done.failedCount == 0)
        let share = try RedirectHandler(container: container.directory).open(try #require(done.redirectURL))
        try Self.checkDelivered(share.entries.first, container: container)
    }
}
