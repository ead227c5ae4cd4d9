import Foundation
import TestSupport
import Testing

/// Several `share worker` processes on one PostgreSQL server (a real one, started
/// for each test), killed and restarted for real.
@Suite(.serialized) struct DistributedTests {
    /// Worker processes, each restartable.
    final class Workers {
        let url: String
        var processes: [String: Process] = [:]
        let environment: [String: String]

        init(url: String, environment: [String: String] = [:]) {
            self.url = url
            self.environment = environment
        }

        func start(_ name: String, lease: Int = 2) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
            process.arguments = ["worker", "--db", url, "--name", name, "--concurrency", "1", "--lease", String(lease), "--quiet"]
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            processes[name] = process
        }

        func kill(_ name: String, signal: Int32 = SIGKILL) {
            guard let process = processes[name] else { return }
            Glibc.kill(process.processIdentifier, signal)
            let deadline = Date().addingTimeInterval(30)
            while process.isRunning && Date() < deadline { usleep(10_000) }
        }

        /// Restarts every worker that died (a supervisor, as systemd would be).
        func restartDead(lease: Int = 2) throws {
            for (name, process) in processes where !process.isRunning { try start(name, lease: lease) }
        }

        func stopAll() {
            for name in processes.keys { kill(name, signal: SIGTERM) }
        }
    }

    /// `share ingest --db` in the background, waiting for the manifest; its stdout
    /// goes to a file (workers started meanwhile must not hold a pipe of it open).
    static func startIngest(_ arguments: [String]) throws -> (Process, String) {
        let outputPath = NSTemporaryDirectory() + "/ingest-\(UUID().uuidString).out"
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
        process.arguments = ["ingest"] + arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, outputPath)
    }

    static func finish(_ ingest: (Process, String), workers: Workers, timeout: Double = 120, lease: Int = 2) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while ingest.0.isRunning && Date() < deadline {
            try workers.restartDead(lease: lease)
            usleep(100_000)
        }
        if ingest.0.isRunning { kill(ingest.0.processIdentifier, SIGKILL) }
        workers.stopAll()
        defer { try? FileManager.default.removeItem(atPath: ingest.1) }
        return (try? String(contentsOfFile: ingest.1, encoding: .utf8)) ?? ""
    }

    /// Slows each stage down a little, so "mid-batch" lasts long enough to be seen.
    static let throttle = ["SHARE_TEST_THROTTLE_MS": "2"]

    /// Waits until a batch is visibly under way (20 copies in the container, no
    /// manifest yet) while `ingest` still waits for it. Generous deadline.
    static func waitForMidBatch(_ ingest: Process, container: String) -> Bool {
        CrashSafetyTests.wait(for: ingest) {
            let progress = CrashSafetyTests.Progress(container: container)
            return progress.copies >= 20 && !progress.manifest
        }
    }

    static func workerCounts(_ url: String) throws -> [String: Int] {
        let status = try ShareProcess.run(["status", "--db", url, "--json"])
        let lines = status.stdout.split(separator: "\n")
        guard let last = lines.last, let object = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any] else { return [:] }
        return object["workers"] as? [String: Int] ?? [:]
    }

    @Test func threeWorkersShareOneBatchAndDeliverEachItemOnce() throws {
        let server = try PostgresServer()
        let drop = try CrashSafetyTests.makeDrop(count: 200)
        let work = TemporaryDirectory("dist")
        let container = work.path + "/container"
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = Workers(url: server.url)
        for name in ["a", "b", "c"] { try workers.start(name) }
        let output = try Self.finish(try Self.startIngest(["--db", server.url, "--container", container, drop.path]), workers: workers)
        #expect(output.hasPrefix("ShareMedia://dataUrl="), "\(output)")
        try CrashSafetyTests.verify(container: container, drop: drop, count: 200, localJournal: false)
        let counts = try Self.workerCounts(server.url)
        let names: Set<String> = Set(counts.keys.map { String($0.split(separator: "/")[0]) })
        #expect(names == ["a", "b", "c"], "work was not spread: \(counts)")
        let jobs: Int = counts.values.reduce(0, +)
        #expect(jobs == 200 * 4 + 1)
    }

    @Test func aKilledWorkersJobsAreRetriedAfterTheirLease() throws {
        let server = try PostgresServer()
        let drop = try CrashSafetyTests.makeDrop(count: 200)
        let work = TemporaryDirectory("dist-kill")
        let container = work.path + "/container"
        let workers = Workers(url: server.url, environment: Self.throttle)
        try workers.start("victim")
        try workers.start("survivor")
        let ingest = try Self.startIngest(["--db", server.url, "--container", container, drop.path])
        #expect(Self.waitForMidBatch(ingest.0, container: container))
        workers.kill("victim")
        workers.processes["victim"] = nil
        let output = try Self.finish(ingest, workers: workers)
        #expect(output.hasPrefix("ShareMedia://"), "\(output)")
        try CrashSafetyTests.verify(container: container, drop: drop, count: 200, localJournal: false)
    }

    @Test func aPoisonItemFailsAfterMaxAttemptsAndTheBatchCompletes() throws {
        let server = try PostgresServer()
        let drop = TemporaryDirectory("poison-drop")
        for i in 0..<10 { try drop.add("photo-\(i).jpg", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg")))) + Array("\(i)".utf8)) }
        try drop.add("poison.jpg", copying: Fixtures.media("photo.jpg"))
        let work = TemporaryDirectory("dist-poison")
        let container = work.path + "/container"
        // Every worker dies (SIGKILL) when it thumbnails poison.jpg.
        let workers = Workers(url: server.url, environment: ["SHARE_CRASH_POINT": "thumbnail:poison.jpg"])
        try workers.start("a", lease: 1)
        try workers.start("b", lease: 1)
        let report = work.path + "/report.json"
        let output = try Self.finish(
            try Self.startIngest(["--db", server.url, "--container", container, "--max-attempts", "3", drop.path]), workers: workers, lease: 1)
        #expect(output.hasPrefix("ShareMedia://"), "\(output)")
        _ = report
        let manifest = try #require(try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").first { $0.hasSuffix(".json") })
        let entries = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: container + "/manifests/" + manifest))) as! [[String: Any]]
        #expect(entries.count == 10)
        #expect(!entries.contains { $0["fileName"] as? String == "poison.jpg" })
        let stored = try String(contentsOfFile: container + "/.share-ingest/reports/" + manifest, encoding: .utf8)
        #expect(stored.contains("gave up after 3 attempts at thumbnail"))
        #expect(stored.contains("attemptsExhausted"))
    }

    @Test func watchEnqueuesEachDropForTheWorkers() throws {
        let server = try PostgresServer()
        let work = TemporaryDirectory("dist-watch")
        let inbox = work.path + "/inbox"
        for i in 0..<3 {
            try FileManager.default.createDirectory(atPath: "\(inbox)/drop-\(i)", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: "\(inbox)/drop-\(i)/photo.jpg")
            try Data("note \(i)".utf8).write(to: URL(fileURLWithPath: "\(inbox)/drop-\(i)/note.txt"))
            FileManager.default.createFile(atPath: "\(inbox)/drop-\(i)/.ready", contents: nil)
        }
        let workers = Workers(url: server.url)
        try workers.start("a")
        try workers.start("b")
        defer { workers.stopAll() }
        let watch = try ShareProcess.run(["watch", inbox, "--db", server.url, "--container", work.path + "/container", "--once"])
        #expect(watch.status == 0, "\(watch.stderr)")
        let lines = watch.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix("ShareMedia://") && $0.contains("ingested=2 failed=0") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: inbox + "/.done").count == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path + "/container/manifests").filter { $0.hasSuffix(".json") }.count == 3)
    }

    @Test func workersReconnectWhenTheDatabaseRestarts() throws {
        let server = try PostgresServer()
        let drop = try CrashSafetyTests.makeDrop(count: 200)
        let work = TemporaryDirectory("dist-restart")
        let container = work.path + "/container"
        let workers = Workers(url: server.url, environment: Self.throttle)
        try workers.start("a")
        try workers.start("b")
        let ingest = try Self.startIngest(["--db", server.url, "--container", container, drop.path])
        #expect(Self.waitForMidBatch(ingest.0, container: container))
        server.stop()
        try server.start()
        let output = try Self.finish(ingest, workers: workers)
        #expect(output.hasPrefix("ShareMedia://"), "\(output)")
        try CrashSafetyTests.verify(container: container, drop: drop, count: 200, localJournal: false)
    }
}
