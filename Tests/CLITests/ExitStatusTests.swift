import Foundation
import Glibc
import TestSupport
import Testing

/// Every row of the README's exit-status table, each from a real situation:
/// what happened, the status, and what the user is told.
@Suite(.serialized) struct ExitStatusTests {
    /// The table as `share --help` prints it: every status these tests produce is a row of it.
    @Test func theHelpListsEveryStatusTestedHere() throws {
        let help = try ShareProcess.run(["--help"]).stdout
        for status in [0, 1, 64, 66, 69, 73, 75, 130, 143] { #expect(help.contains("\n  \(status) "), "\(status)") }
    }

    @Test func zeroWhenEveryItemIsDelivered() throws {
        let work = TemporaryDirectory("exit-0")
        let run = try ShareProcess.run(["ingest", "--container", work.file("c"), Fixtures.media("photo.jpg")])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lastLine?.hasPrefix("ShareMedia://") == true)
    }

    @Test func oneWhenSomeItemsFailAndTheRestAreDelivered() throws {
        let work = TemporaryDirectory("exit-1")
        let run = try ShareProcess.run([
            "ingest", "--container", work.file("c"), Fixtures.media("photo.jpg"), Fixtures.media("truncated.jpg"),
        ])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.lastLine?.hasPrefix("ShareMedia://") == true, "the rest is delivered")
    }

    @Test func sixtyFourForAMistakeInTheCommandLine() throws {
        let run = try ShareProcess.run(["ingest", "--containr", "c", Fixtures.media("photo.jpg")])
        #expect(
            run.status == 64
                && run.stderr
                    == "share ingest: unknown option --containr; did you mean --container? (see share ingest --help)\n",
            "\(run.stderr)")
    }

    @Test func sixtySixForAMissingInput() throws {
        let work = TemporaryDirectory("exit-66")
        let run = try ShareProcess.run(["ingest", "--container", work.file("c"), work.file("no-such-photo.jpg")])
        #expect(run.status == 66, "\(run.stderr)")
        #expect(run.stderr.contains("no-such-photo.jpg"), "\(run.stderr)")
        let open = try ShareProcess.run(["ingest", "--container", work.file("c"), "--text", "x"])
        let url = try #require(open.lastLine).replacingOccurrences(of: "ShareKey-", with: "Unknown-")
        let unknown = try ShareProcess.run(["open", url, "--container", work.file("c")])
        #expect(unknown.status == 66 && unknown.stderr.contains("no manifest for key"), "\(unknown.stderr)")
    }

    /// The database: unreachable (nothing listens on port 1).
    @Test func sixtyNineWhenTheDatabaseCannotBeReached() throws {
        let url = "postgresql://share@127.0.0.1:1/share"
        for arguments in [["status", "--db", url], ["worker", "--db", url], ["db", "migrate", "--db", url]] {
            let run = try ShareProcess.run(arguments)
            #expect(run.status == 69, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains("Connection refused"), "\(arguments): \(run.stderr)")
        }
    }

    /// Finding 12 of issue 51: a report that cannot be written was reported and exited 0.
    @Test func seventyThreeWhenTheReportCannotBeWrittenAndTheBatchIsStillDelivered() throws {
        let work = TemporaryDirectory("exit-73")
        let run = try ShareProcess.run([
            "ingest", "--container", work.file("c"), "--report", work.file("missing/r.json"),
            Fixtures.media("photo.jpg"),
        ])
        #expect(run.status == 73, "\(run.stderr)")
        #expect(run.stderr.contains("cannot write the report to \(work.file("missing/r.json"))"), "\(run.stderr)")
        let url = try #require(run.lastLine)
        #expect(url.hasPrefix("ShareMedia://"), "the batch is delivered: \(run.stdout)")
        #expect(try ShareProcess.run(["open", url, "--container", work.file("c")]).status == 0)
        // So is a container that cannot be made (a file is in its way).
        let file = try work.add("in-the-way", bytes: [1])
        #expect(try ShareProcess.run(["ingest", "--container", file, Fixtures.media("photo.jpg")]).status == 73)
    }

    /// Another process holds the batch: try again later.
    @Test func seventyFiveWhileAnotherProcessHoldsTheBatch() throws {
        let work = TemporaryDirectory("exit-75")
        let drop = try CrashSafetyTests.makeDrop(count: 60)
        let container = work.file("c")
        let first = try CrashSafetyTests.start(
            ["ingest", "--container", container, "--key", "Held", drop.path],
            environment: ["SHARE_TEST_THROTTLE_MS": "20"])
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        #expect(
            CrashSafetyTests.wait(for: first) { CrashSafetyTests.Progress(container: container).copies >= 2 },
            "the batch ended before it was seen")
        let second = try ShareProcess.run(["ingest", "--container", container, "--resume", "Held"])
        #expect(second.status == 75, "\(second.stderr)")
        #expect(second.stderr.contains("is being worked on by another process"), "\(second.stderr)")
        kill(first.processIdentifier, SIGTERM)
        first.waitUntilExit()
    }

    /// SIGINT and SIGTERM mid-batch: 130 and 143, `share status` says
    /// `interrupted` (not `running`), and `--resume` finishes the batch.
    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func aSignalMidBatchExitsWithItsStatusAndTheBatchShowsAsInterrupted(signal: Int32, status: Int32) throws {
        let work = TemporaryDirectory("exit-signal")
        let drop = try CrashSafetyTests.makeDrop(count: 60)
        let container = work.file("c")
        let process = try CrashSafetyTests.start(
            ["ingest", "--container", container, "--key", "Stopped", drop.path],
            environment: ["SHARE_TEST_THROTTLE_MS": "20"])
        #expect(
            CrashSafetyTests.wait(for: process) { CrashSafetyTests.Progress(container: container).copies >= 2 },
            "the batch ended before it was seen")
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == status)
        let listed = try ShareProcess.run(["status", "--container", container])
        #expect(listed.status == 0 && listed.stdout.contains(" interrupted "), "\(listed.stdout)")
        let json = try ShareProcess.run(["status", "--json", "--container", container]).stdout
        #expect(json.contains(#""state":"interrupted""#), "\(json)")
        let resumed = try ShareProcess.run(["ingest", "--container", container, "--resume", "Stopped", "--quiet"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(
            try ShareProcess.run(["status", "--json", "--container", container]).stdout.contains(#""state":"done""#))
    }

    /// A batch running in another process is `running`, not `interrupted`.
    @Test func aBatchAProcessWorksOnIsRunning() throws {
        let work = TemporaryDirectory("exit-running")
        let drop = try CrashSafetyTests.makeDrop(count: 60)
        let container = work.file("c")
        let process = try CrashSafetyTests.start(
            ["ingest", "--container", container, "--key", "Busy", drop.path],
            environment: ["SHARE_TEST_THROTTLE_MS": "20"])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(
            CrashSafetyTests.wait(for: process) { CrashSafetyTests.Progress(container: container).copies >= 2 },
            "the batch ended before it was seen")
        let json = try ShareProcess.run(["status", "--json", "--container", container]).stdout
        #expect(json.contains(#""state":"running""#) && !json.contains("interrupted"), "\(json)")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Killed outright: nobody holds it any more.
        #expect(
            try ShareProcess.run(["status", "--json", "--container", container]).stdout.contains(
                #""state":"interrupted""#))
    }

    /// A watcher stopped by SIGTERM: 143 on its own, 0 under a service manager
    /// (systemd sets INVOCATION_ID for every unit, NOTIFY_SOCKET for Type=notify).
    @Test func aWatcherStoppedBySIGTERMExits143OutsideAndZeroUnderSystemd() throws {
        for (environment, expected) in [
            ([String: String](), Int32(143)), (["INVOCATION_ID": "0123456789abcdef0123456789abcdef"], 0),
        ] {
            let work = TemporaryDirectory("exit-watch")
            try FileManager.default.createDirectory(atPath: work.file("inbox"), withIntermediateDirectories: true)
            let errors = work.file("stderr")
            FileManager.default.createFile(atPath: errors, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
            process.arguments = ["watch", work.file("inbox"), "--container", work.file("c"), "--isolation", "none"]
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardError = FileHandle(forWritingAtPath: errors)
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            #expect(eventually { (try? String(contentsOfFile: errors, encoding: .utf8))?.contains("watching") == true })
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            #expect(process.terminationStatus == expected, "\(environment): \(process.terminationStatus)")
        }
    }
}
