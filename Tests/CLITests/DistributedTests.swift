import Foundation
import TestSupport
import Testing

/// Several `share worker` processes on one PostgreSQL server (a real one, started
/// for each test), killed and restarted for real; what an operator sees: exit
/// statuses, messages, `share status --db`, manifests and reports.
@Suite(.serialized) struct DistributedTests {
    /// Worker processes, each restartable; each one's stderr (its log) in a file.
    final class Workers {
        let url: String
        /// The latest process of each worker name.
        var processes: [String: Process] = [:]
        /// Every process started, restarted ones included: none outlives the test.
        private var started: [Process] = []
        /// The arguments each worker name was started with (a restart keeps them).
        private var arguments: [String: [String]] = [:]
        let environment: [String: String]
        /// What runs a worker: `share` unless a test gives another program that
        /// takes `worker --db URL --name NAME --concurrency N --lease S` (InProcessIngest).
        let executable: String
        let logs = TemporaryDirectory("worker-logs")

        init(url: String, environment: [String: String] = [:], executable: String = Fixtures.shareBinary) {
            self.url = url
            self.environment = environment
            self.executable = executable
        }

        deinit {
            for process in started where process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        }

        /// Starts worker `name`; `user` runs it as another user (setpriv), `arguments` are added.
        func start(
            _ name: String, lease: Int = 2, user: String? = nil, arguments: [String] = [], directory: String? = nil
        ) throws {
            let process = Process()
            self.arguments[name] = arguments
            let share =
                ["worker", "--db", url, "--name", name, "--concurrency", "1", "--lease", String(lease)] + arguments
            if let user {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                process.arguments = ["--reuid=\(user)", "--regid=nogroup", "--clear-groups", "--", executable] + share
            } else {
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = share
            }
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
            let log = logs.file(name)
            if !FileManager.default.fileExists(atPath: log) {
                _ = FileManager.default.createFile(atPath: log, contents: nil)
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            handle.seekToEndOfFile()
            process.standardOutput = arguments.contains("--json") ? handle : FileHandle.nullDevice
            process.standardError = handle
            process.standardInput = FileHandle.nullDevice
            try process.run()
            processes[name] = process
            started.append(process)
        }

        /// What worker `name` logged so far (all its runs).
        func log(_ name: String) -> String { (try? String(contentsOfFile: logs.file(name), encoding: .utf8)) ?? "" }

        func kill(_ name: String, signal: Int32 = SIGKILL) {
            guard let process = processes[name] else { return }
            Glibc.kill(process.processIdentifier, signal)
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning && Date() < deadline { usleep(10_000) }
        }

        /// Restarts every worker that died (a supervisor, as systemd would be).
        func restartDead(lease: Int = 2) throws {
            for (name, process) in processes where !process.isRunning {
                try start(name, lease: lease, arguments: arguments[name] ?? [])
            }
        }

        /// SIGTERM to every worker still running (any started, not only the
        /// latest of each name); each must finish its stage and exit within a
        /// minute (a worker once went on serving after SIGTERM), else it is killed
        /// and the test fails.
        func stopAll(sourceLocation: SourceLocation = #_sourceLocation) {
            let running = started.filter(\.isRunning)
            for process in running { Glibc.kill(process.processIdentifier, SIGTERM) }
            let deadline = Date().addingTimeInterval(60)
            while running.contains(where: \.isRunning) && Date() < deadline { usleep(10_000) }
            let stuck = running.filter(\.isRunning)
            guard !stuck.isEmpty else { return }
            Issue.record(
                "workers \(stuck.map(\.processIdentifier)) did not stop within 60 s of SIGTERM",
                sourceLocation: sourceLocation)
            for process in stuck { Glibc.kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// A `share ingest` in the background; its stdout and stderr go to files
    /// (workers started meanwhile must not hold a pipe of it open).
    final class Ingest {
        let process = Process()
        let files = TemporaryDirectory("ingest")

        init(_ arguments: [String], directory: String? = nil) throws {
            process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
            process.arguments = ["ingest"] + arguments
            if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
            for name in ["out", "err"] { _ = FileManager.default.createFile(atPath: files.file(name), contents: nil) }
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: files.file("out")))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: files.file("err")))
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        var stdout: String { (try? String(contentsOfFile: files.file("out"), encoding: .utf8)) ?? "" }
        var stderr: String { (try? String(contentsOfFile: files.file("err"), encoding: .utf8)) ?? "" }

        /// Waits for the exit (restarting dead workers meanwhile); nil if it did not end in time.
        @discardableResult
        func finish(workers: Workers? = nil, lease: Int = 2, timeout: Double = 180) throws -> Int32? {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline {
                try workers?.restartDead(lease: lease)
                usleep(50_000)
            }
            if process.isRunning {
                Glibc.kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return nil
            }
            return process.terminationStatus
        }
    }

    /// `share status --db URL --json`, line by line.
    static func status(_ url: String) throws -> [[String: Any]] {
        let result = try ShareProcess.run(["status", "--db", url, "--json"])
        return result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static func lines(_ status: [[String: Any]], type: String) -> [[String: Any]] {
        status.filter { $0["type"] as? String == type }
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

    /// A folder of `count` one-line text files, readable by any user.
    static func textDrop(_ count: Int, in folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for i in 0..<count { try Data("note \(i)\n".utf8).write(to: URL(fileURLWithPath: "\(folder)/note-\(i).txt")) }
    }

    static func manifestEntries(_ container: String) throws -> [[String: Any]] {
        let manifests = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter {
            $0.hasSuffix(".json")
        }
        #expect(manifests.count == 1, "manifests: \(manifests)")
        let data = try Data(
            contentsOf: URL(fileURLWithPath: container + "/manifests/" + (try #require(manifests.first))))
        return try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
    }

    // MARK: - The normal case

    @Test func threeWorkersShareOneBatchAndDeliverEachItemOnce() throws {
        let server = try PostgresServer()
        let drop = try CrashSafetyTests.makeDrop(count: 200)
        let work = TemporaryDirectory("dist")
        let container = work.path + "/container"
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = Workers(url: server.url)
        for name in ["a", "b", "c"] { try workers.start(name) }
        let report = work.file("report.json")
        let ingest = try Ingest(["--db", server.url, "--container", container, "--json", "--report", report, drop.path])
        #expect(try ingest.finish(workers: workers) == 0, "\(ingest.stderr)")
        // Each connection names itself.
        let names = try server.sql(
            "SELECT application_name FROM pg_stat_activity WHERE application_name LIKE 'share-%'")
        #expect(names.contains("share-worker@"), "\(names)")
        workers.stopAll()

        // --json with --db: the same lines as a local run (an item per input, then batchFinished).
        let lines = ingest.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(lines.count { $0["event"] as? String == "item" } == 200)
        let finished = try #require(lines.last)
        #expect(finished["event"] as? String == "batchFinished" && finished["ingested"] as? Int == 200)
        #expect((finished["redirectURL"] as? String)?.hasPrefix("ShareMedia://dataUrl=") == true)
        // --report with --db: the batch's report, with stage timings.
        let stored =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        #expect((stored?["items"] as? [Any])?.count == 200)
        #expect(
            ((stored?["stageSeconds"] as? [String: Double])?["copy"] ?? 0) > 0, "\(stored?["stageSeconds"] ?? "none")")
        try CrashSafetyTests.verify(container: container, drop: drop, count: 200, localJournal: false)

        // Status: the batch with its stage timings; the work spread over the three
        // workers (now stopped); every stage of every item once, and the manifest.
        let status = try Self.status(server.url)
        let batch = try #require(Self.lines(status, type: "batch").first)
        #expect(
            batch["state"] as? String == "done" && batch["finished"] as? Int == 200 && batch["retried"] as? Int == 0)
        #expect(((batch["stageSeconds"] as? [String: Double])?["thumbnail"] ?? 0) > 0)
        // The fan-in's own time is in the batch's totals, summed once when it finished.
        #expect(((batch["stageSeconds"] as? [String: Double])?["manifest"] ?? 0) > 0, "\(batch)")
        let workerLines = Self.lines(status, type: "worker")
        #expect(Set(workerLines.compactMap { $0["name"] as? String }) == ["a", "b", "c"])
        #expect(
            workerLines.allSatisfy {
                ($0["stagesDone"] as? Int ?? 0) > 0 && $0["live"] as? Bool == false && $0["stopped"] as? Bool == true
            }, "\(workerLines)")
        // sniff, copy, probe, thumbnail, motion; the fan-in
        #expect(workerLines.reduce(0) { $0 + ($1["stagesDone"] as? Int ?? 0) } == 200 * 5 + 1)

        // gc --db: the finished batch, its jobs and the stopped workers go.
        let dry = try ShareProcess.run(["gc", "--db", server.url, "--older-than", "0", "--dry-run"])
        #expect(
            dry.status == 0 && dry.stderr.contains("would remove 1 finished batches (201 jobs) and 3 gone workers"),
            "\(dry.stderr)")
        let gc = try ShareProcess.run(["gc", "--db", server.url, "--older-than", "0"])
        #expect(
            gc.status == 0 && gc.stderr.contains("removed 1 finished batches (201 jobs) and 3 gone workers"),
            "\(gc.stderr)")
        let after = try Self.status(server.url)
        #expect(Self.lines(after, type: "batch").isEmpty && Self.lines(after, type: "worker").isEmpty)
    }

    /// Observed: `ingest --db --container c drop` from another folder than the
    /// worker's failed every item ("vanished before it could be read").
    @Test func relativePathsAreMadeAbsoluteAtPlanning() throws {
        let server = try PostgresServer()
        let work = TemporaryDirectory("dist-relative")
        try Self.textDrop(12, in: work.file("drop"))
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let elsewhere = TemporaryDirectory("worker-cwd")
        let workers = Workers(url: server.url)
        try workers.start("a", directory: elsewhere.path)
        let ingest = try Ingest(["--db", server.url, "--container", "c", "--verbose", "drop"], directory: work.path)
        let status = try ingest.finish(workers: workers)
        workers.stopAll()
        #expect(status == 0, "\(ingest.stderr)")
        #expect(ingest.stdout.hasPrefix("ShareMedia://dataUrl="))
        #expect(ingest.stderr.contains("12 of 12 items ingested"), "\(ingest.stderr)")
        let root = URL(fileURLWithPath: work.path).standardizedFileURL.path
        #expect(
            ingest.stderr.contains("share: ingested: drop/note-0.txt -> file://\(root)/c/"),
            "sources are shown as given: \(ingest.stderr)")
        #expect(try Self.manifestEntries(work.file("c")).count == 12)
        #expect(
            !FileManager.default.fileExists(atPath: elsewhere.file("c")),
            "nothing was written relative to the worker's folder")
    }

    // MARK: - Visibility

    /// Observed: a worker whose container is read-only claimed and dropped jobs;
    /// items failed with a false reason and the batch hung.
    @Test func aWorkerThatCannotWriteTheContainerTakesNoJobsAndSaysWhy() throws {
        let server = try PostgresServer()
        let work = TemporaryDirectory("dist-readonly")
        chmod(work.path, 0o755)
        try Self.textDrop(20, in: work.file("drop"))
        let container = URL(fileURLWithPath: work.file("container")).standardizedFileURL.path
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = Workers(url: server.url)
        // Root writes anywhere: the bad worker runs as nobody, for whom the
        // container (root's, owner-only, here opened up to be read: 0755) is
        // read-only. Not root: the container is made read-only.
        let asRoot = getuid() == 0
        let enqueue = try ShareProcess.run([
            "ingest", "--db", server.url, "--container", container, "--no-wait", work.file("drop"),
        ])
        #expect(enqueue.status == 0, "\(enqueue.stderr)")
        let batch = enqueue.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        if !asRoot { for folder in ["", "/thumbnails", "/manifests"] { chmod(container + folder, 0o555) } }
        if asRoot {
            for folder in ["", "/thumbnails", "/manifests", "/.share-ingest", "/.share-ingest/visibility"] {
                chmod(container + folder, 0o755)
            }
            chmod(container + "/.share-ingest/visibility/" + batch, 0o644)
        }
        try workers.start("bad", user: asRoot ? "nobody" : nil)
        defer { workers.stopAll() }

        // The bad worker says why, once, and status shows it.
        #expect(
            eventually { workers.log("bad").contains("not taking the jobs of batch \(batch)") }, "\(workers.log("bad"))"
        )
        #expect(workers.log("bad").contains("cannot write the container: \(container)"), "\(workers.log("bad"))")
        let blocked = try Self.lines(Self.status(server.url), type: "worker").first { $0["name"] as? String == "bad" }
        let reasons = (blocked?["blocked"] as? [[String: String]]) ?? []
        #expect(
            reasons.first?["batch"] == batch
                && reasons.first?["reason"]?.contains("cannot write the container") == true, "\(reasons)")
        let human = try ShareProcess.run(["status", "--db", server.url]).stdout
        #expect(human.contains("not working on batch \(batch): cannot write the container"), "\(human)")
        // It never claimed one of the batch's jobs.
        let touched = try server.sql(
            "SELECT count(*) FROM share_jobs WHERE attempts > 0 OR worker_id IS NOT NULL OR last_error IS NOT NULL")
        #expect(touched.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(touched)")

        // Waiting for the batch: told within seconds that no live worker can work on it.
        let waiting = try ShareProcess.run(["ingest", "--resume", batch, "--db", server.url, "--timeout", "15"])
        #expect(waiting.status == 75, "\(waiting.stderr)")
        #expect(
            waiting.stderr.contains("no live worker can work on this batch: bad: cannot write the container"),
            "\(waiting.stderr)")
        #expect(waiting.stderr.contains("not finished after 15 s (--timeout)"), "\(waiting.stderr)")

        // A good worker takes everything; nothing was lost or failed.
        if !asRoot { for folder in ["", "/thumbnails", "/manifests"] { chmod(container + folder, 0o755) } }
        try workers.start("good")
        let done = try ShareProcess.run(["ingest", "--resume", batch, "--db", server.url, "--timeout", "300"])
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stderr.contains("20 of 20 items ingested"), "\(done.stderr)")
        #expect(try Self.manifestEntries(container).count == 20)
        if asRoot {
            let log = workers.log("bad")
            #expect(
                log.components(separatedBy: "not taking the jobs of batch \(batch)").count == 2, "logged once: \(log)")
        }
    }

    // MARK: - No endless waits

    /// Observed: with no worker, `ingest --db` waited silently forever and Ctrl-C exited 0.
    @Test func withNoWorkerIngestSaysSoAndCtrlCSaysHowToGoOn() throws {
        let server = try PostgresServer()
        let work = TemporaryDirectory("dist-noworker")
        try Self.textDrop(5, in: work.file("drop"))
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let started = Date()
        let ingest = try Ingest(["--db", server.url, "--container", work.file("container"), work.file("drop")])
        #expect(
            eventually { ingest.stderr.contains("no live worker is connected to the database") }, "\(ingest.stderr)")
        #expect(Date().timeIntervalSince(started) < 60)
        kill(ingest.process.processIdentifier, SIGINT)
        #expect(try ingest.finish() == 130)
        #expect(ingest.stderr.contains("interrupted: batch "), "\(ingest.stderr)")
        #expect(ingest.stderr.contains("stays with the workers"), "\(ingest.stderr)")
        let batch = try #require(ingest.stderr.components(separatedBy: "enqueued batch ").dropFirst().first?.prefix(36))
            .description

        // A worker comes; `--resume --db` waits for the batch and reports it.
        let workers = Workers(url: server.url)
        try workers.start("late")
        defer { workers.stopAll() }
        let resumed = try ShareProcess.run(["ingest", "--resume", batch, "--db", server.url, "--timeout", "300"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.lastLine?.hasPrefix("ShareMedia://") == true)
    }

    /// A socket that accepts connections and never answers (a hung server, a
    /// black-holing proxy).
    final class SilentServer: @unchecked Sendable {
        let socket: Int32
        let port: Int
        private let lock = NSLock()
        private var accepted: [Int32] = []

        init() {
            let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            listen(fd, 64)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            socket = fd
            port = Int(UInt16(bigEndian: address.sin_port))
            let thread = Thread { [self] in
                while true {
                    let connection = accept(socket, nil, nil)
                    if connection < 0 { return }
                    lock.lock()
                    accepted.append(connection)
                    lock.unlock()
                }
            }
            thread.start()
        }

        var connections: Int {
            lock.lock()
            defer { lock.unlock() }
            return accepted.count
        }

        deinit {
            shutdown(socket, Int32(SHUT_RDWR))
            close(socket)
            for connection in accepted { close(connection) }
        }
    }

    /// Observed: a server that accepts and never answers hung ingest, worker and
    /// status with no limit, and SIGTERM was ignored.
    @Test func aSilentServerTimesOutAndSignalsAreHonoured() throws {
        let silent = SilentServer()
        let url = "postgresql://share@127.0.0.1:\(silent.port)/share"
        // A connect timeout set in the URL.
        let started = Date()
        let status = try ShareProcess.run(["status", "--db", url + "?connect_timeout=2"])
        #expect(status.status == 69)
        #expect(
            status.stderr.contains("no answer from 127.0.0.1:\(silent.port) within 2 s while connecting"),
            "\(status.stderr)")
        #expect(Date().timeIntervalSince(started) < 60)
        // The default connect timeout (10 s) also ends a wait.
        let defaulted = try ShareProcess.run(["status", "--db", url])
        #expect(defaulted.status == 69 && defaulted.stderr.contains("within 10 s"), "\(defaulted.stderr)")

        // SIGTERM and SIGINT while hung in the connection: exit at once.
        let work = TemporaryDirectory("dist-silent")
        try Self.textDrop(2, in: work.file("drop"))
        for (arguments, signal) in [
            (["worker", "--db", url], SIGTERM),
            (["ingest", "--db", url, "--container", work.file("c"), work.file("drop")], SIGINT),
        ] {
            let before = silent.connections
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            #expect(eventually { silent.connections > before }, "\(arguments[0]) never connected")
            let signalled = Date()
            kill(process.processIdentifier, signal)
            #expect(eventually(timeout: 60) { !process.isRunning })
            #expect(
                Date().timeIntervalSince(signalled) < 8,
                "\(arguments[0]) took \(Date().timeIntervalSince(signalled)) s after the signal (the connect timeout is 10 s)"
            )
            // Interrupted by the signal: 128 + its number.
            #expect(process.terminationStatus == 128 + signal, "\(arguments[0])")
        }
    }

    /// Observed: a batch whose manifest job failed stayed `running` forever and
    /// nothing could recover it.
    @Test func aManifestJobOutOfAttemptsFailsTheBatchAndResumeRetriesIt() throws {
        let server = try PostgresServer()
        let work = TemporaryDirectory("dist-manifest")
        try Self.textDrop(6, in: work.file("drop"))
        let container = work.file("container")
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        // Every worker dies (SIGKILL) when it starts a manifest job; a supervisor restarts them.
        let dying = Workers(url: server.url, environment: ["SHARE_CRASH_POINT": "manifest-job"])
        try dying.start("a")
        try dying.start("b")
        let report = work.file("report.json")
        let ingest = try Ingest([
            "--db", server.url, "--container", container, "--max-attempts", "2", "--report", report, work.file("drop"),
        ])
        #expect(try ingest.finish(workers: dying) == 75, "\(ingest.stderr)")
        dying.stopAll()
        #expect(
            ingest.stderr.contains("failed: the manifest job gave up after 2 attempts: worker "), "\(ingest.stderr)")
        #expect(ingest.stderr.contains("is gone (its database session ended)"), "\(ingest.stderr)")
        #expect(ingest.stderr.contains("--db URL retries it"), "\(ingest.stderr)")
        let logs = dying.log("a") + dying.log("b")
        #expect(logs.contains("failed: the manifest job gave up after 2 attempts"), "\(logs)")
        // A report, with every item; no manifest.
        let written =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        #expect((written?["items"] as? [Any])?.count == 6)
        let manifests = (try? FileManager.default.contentsOfDirectory(atPath: container + "/manifests")) ?? []
        #expect(manifests.allSatisfy { !$0.hasSuffix(".json") }, "\(manifests)")
        let status = try Self.lines(Self.status(server.url), type: "batch").first
        #expect(
            status?["state"] as? String == "failed"
                && (status?["failure"] as? String)?.contains("gave up after 2 attempts") == true, "\(status ?? [:])")
        let batch = try #require(status?["batch"] as? String)

        // Resume retries it with healthy workers.
        let healthy = Workers(url: server.url)
        try healthy.start("c")
        defer { healthy.stopAll() }
        let resumed = try ShareProcess.run(["ingest", "--resume", batch, "--db", server.url, "--timeout", "300"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.lastLine?.hasPrefix("ShareMedia://") == true)
        #expect(try Self.manifestEntries(container).count == 6)
    }

    // MARK: - Liveness, restarts, crashes

    /// Observed: a killed worker's jobs waited out the whole lease.
    @Test func aKilledWorkersJobsAreReleasedWithoutWaitingForTheLease() throws {
        let server = try PostgresServer()
        let drop = try CrashSafetyTests.makeDrop(count: 200)
        let work = TemporaryDirectory("dist-kill")
        let container = work.path + "/container"
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = Workers(url: server.url, environment: Self.throttle)
        let lease = 600  // far longer than the test may take
        try workers.start("victim", lease: lease)
        try workers.start("survivor", lease: lease)
        let ingest = try Ingest(["--db", server.url, "--container", container, drop.path])
        #expect(Self.waitForMidBatch(ingest.process, container: container))
        // Live progress while it runs.
        let running = try Self.lines(Self.status(server.url), type: "batch").first
        #expect(
            running?["state"] as? String == "running" && (running?["finished"] as? Int ?? -1) < 200, "\(running ?? [:])"
        )
        workers.kill("victim")
        workers.processes["victim"] = nil
        // Released at once: the victim holds nothing and status calls it gone.
        #expect(
            try eventually(timeout: 60) {
                let victim = try Self.lines(Self.status(server.url), type: "worker").first {
                    $0["name"] as? String == "victim"
                }
                return victim?["live"] as? Bool == false && victim?["stopped"] as? Bool == false
                    && victim?["holding"] as? Int == 0
            })
        #expect(try ingest.finish(workers: workers, lease: lease) == 0, "\(ingest.stderr)")
        workers.stopAll()
        #expect(ingest.stdout.hasPrefix("ShareMedia://"))
        try CrashSafetyTests.verify(container: container, drop: drop, count: 200, localJournal: false)
        #expect(
            workers.log("survivor").contains("is gone (its database session ended); queued again"),
            "\(workers.log("survivor"))")
        let human = try ShareProcess.run(["status", "--db", server.url]).stdout
        #expect(
            human.contains("workers: 0 live, 2 gone") && human.contains("victim  gone")
                && human.contains("survivor  stopped"), "\(human)")
    }

    @Test func aPoisonItemFailsAfterMaxAttemptsAndTheBatchCompletes() throws {
        let server = try PostgresServer()
        let drop = TemporaryDirectory("poison-drop")
        for i in 0..<10 {
            try drop.add(
                "photo-\(i).jpg",
                bytes: Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg"))))
                    + Array("\(i)".utf8))
        }
        try drop.add("poison.jpg", copying: Fixtures.media("photo.jpg"))
        let work = TemporaryDirectory("dist-poison")
        let container = work.path + "/container"
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        // Every worker dies (SIGKILL) when it probes poison.jpg, as a crash in a
        // decoding library would: decoding in-process (a host app's StageWorker
        // with the library's default decoder, InProcessIngest), so that the
        // worker records the decode first and its death can be the item's (with
        // sandboxed helpers, as `share worker` decodes, a decoder crash ends a
        // helper, never the worker).
        let workers = Workers(
            url: server.url, environment: ["SHARE_CRASH_POINT": "probe:poison.jpg"],
            executable: Fixtures.inProcessIngestBinary)
        try workers.start("a", lease: 1)
        try workers.start("b", lease: 1, arguments: ["--json"])
        let ingest = try Ingest(["--db", server.url, "--container", container, "--max-attempts", "3", drop.path])
        #expect(try ingest.finish(workers: workers, lease: 1) == 1, "\(ingest.stderr)")
        workers.stopAll()
        #expect(ingest.stdout.hasPrefix("ShareMedia://"), "\(ingest.stdout)")
        // Given up as locally: its worker died three times while decoding it
        // alone (a worker records the decode before it starts, so a worker's
        // death costs redoing the stages it kept since its last record).
        #expect(
            ingest.stderr.contains("share: failed: poison.jpg")
                || ingest.stderr.contains("died 3 times while decoding this file alone"), "\(ingest.stderr)")
        let entries = try Self.manifestEntries(container)
        #expect(entries.count == 10)
        #expect(!entries.contains { $0["fileName"] as? String == "poison.jpg" })
        let manifest = try #require(
            try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").first {
                $0.hasSuffix(".json")
            })
        let stored = try String(contentsOfFile: container + "/.share-ingest/reports/" + manifest, encoding: .utf8)
        #expect(stored.contains("the process died 3 times while decoding this file alone"), "\(stored)")
        #expect(stored.contains("crashedRepeatedly"))
        // One log line per retry and give-up; JSON lines with --json.
        let logs = workers.log("a") + workers.log("b")
        #expect(logs.contains("retry: batch") && logs.contains("gave up: batch"), "\(logs)")
        let json = workers.log("b").split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(
            json.contains { $0["event"] as? String == "started" && $0["worker"] as? String == "b" },
            "\(workers.log("b"))")
        // Recent failures, with their reasons, in status.
        let failures = try Self.lines(Self.status(server.url), type: "failure")
        #expect(
            failures.contains { ($0["error"] as? String)?.contains("is gone (its database session ended)") == true },
            "\(failures)")
    }

    @Test func watchEnqueuesEachDropForTheWorkers() throws {
        let server = try PostgresServer()
        let work = TemporaryDirectory("dist-watch")
        let inbox = work.path + "/inbox"
        for i in 0..<3 {
            try FileManager.default.createDirectory(atPath: "\(inbox)/drop-\(i)", withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: Fixtures.media("photo.jpg"), toPath: "\(inbox)/drop-\(i)/photo.jpg")
            try Data("note \(i)".utf8).write(to: URL(fileURLWithPath: "\(inbox)/drop-\(i)/note.txt"))
            _ = FileManager.default.createFile(atPath: "\(inbox)/drop-\(i)/.ready", contents: nil)
        }
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = Workers(url: server.url)
        try workers.start("a")
        try workers.start("b")
        defer { workers.stopAll() }
        let watch = try ShareProcess.run([
            "watch", inbox, "--db", server.url, "--container", work.path + "/container", "--once",
        ])
        #expect(watch.status == 0, "\(watch.stderr)")
        let lines = watch.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix("ShareMedia://") && $0.contains("ingested=2 failed=0") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: inbox + "/.done").count == 3)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: work.path + "/container/manifests").filter {
                $0.hasSuffix(".json")
            }.count == 3)
    }

    /// Observed: a finished stage that could not be saved while the server
    /// restarted was thrown away and redone after the lease, as "worker died".
    @Test func workersReconnectWhenTheDatabaseRestartsAndRedoNothing() throws {
        let server = try PostgresServer()
        let drop = try CrashSafetyTests.makeDrop(count: 200)
        let work = TemporaryDirectory("dist-restart")
        let container = work.path + "/container"
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = Workers(url: server.url, environment: Self.throttle)
        try workers.start("a", lease: 60)
        try workers.start("b", lease: 60)
        let ingest = try Ingest(["--db", server.url, "--container", container, drop.path])
        #expect(Self.waitForMidBatch(ingest.process, container: container))
        server.stop()
        try server.start()
        #expect(try ingest.finish(workers: workers, lease: 60) == 0, "\(ingest.stderr)")
        workers.stopAll()
        #expect(ingest.stdout.hasPrefix("ShareMedia://"), "\(ingest.stdout)")
        try CrashSafetyTests.verify(container: container, drop: drop, count: 200, localJournal: false)
        let logs = workers.log("a") + workers.log("b")
        #expect(logs.contains("lost the database connection") && logs.contains("reconnected"), "\(logs)")
        // No job was taken from its worker and run again.
        let batch = try Self.lines(Self.status(server.url), type: "batch").first
        #expect(batch?["retried"] as? Int == 0, "\(logs)")
        #expect(!logs.contains("retry:"), "\(logs)")
    }

    // MARK: - Least privilege

    /// Observed: a role without CREATE could not even run `status`.
    @Test func aWorkerRoleWithoutDDLRunsEverythingButMigrate() throws {
        let server = try PostgresServer()
        // As in the README: an owner role that owns the database, a worker role.
        try server.sql("CREATE ROLE share_owner LOGIN; CREATE ROLE share_worker LOGIN")
        try server.sql("CREATE DATABASE share OWNER share_owner")
        let owner = server.url(role: "share_owner", database: "share")
        let worker = server.url(role: "share_worker", database: "share")

        let early = try ShareProcess.run(["status", "--db", worker])
        #expect(
            early.status == 69 && early.stderr.contains("no share-ingest schema yet: run  share db migrate"),
            "\(early.stderr)")
        let refused = try ShareProcess.run(["db", "migrate", "--db", worker])
        #expect(
            refused.status == 69 && refused.stderr.contains("permission denied")
                && refused.stderr.contains("run share db migrate as the owner role"), "\(refused.stderr)")
        #expect(try ShareProcess.run(["db", "migrate", "--db", owner]).status == 0)
        try server.sql(
            """
            SET ROLE share_owner;
            GRANT CONNECT ON DATABASE share TO share_worker;
            GRANT USAGE ON SCHEMA public TO share_worker;
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO share_worker;
            GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO share_worker;
            """, database: "share")

        let work = TemporaryDirectory("dist-roles")
        try Self.textDrop(8, in: work.file("drop"))
        let workers = Workers(url: worker)
        try workers.start("w")
        let ingest = try Ingest(["--db", worker, "--container", work.file("c"), work.file("drop")])
        #expect(try ingest.finish(workers: workers) == 0, "\(ingest.stderr)")
        workers.stopAll()
        #expect(ingest.stdout.hasPrefix("ShareMedia://"))
        let status = try ShareProcess.run(["status", "--db", worker])
        #expect(status.status == 0 && status.stdout.contains("8/8 ingested"), "\(status.stdout)\(status.stderr)")
        let gc = try ShareProcess.run(["gc", "--db", worker, "--older-than", "0"])
        #expect(gc.status == 0 && gc.stderr.contains("removed 1 finished batches"), "\(gc.stderr)")
        // Still not allowed to change the schema.
        let tables = try server.sql(
            "SELECT count(*) FROM pg_tables WHERE tableowner = 'share_worker'", database: "share")
        #expect(tables.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}
