import Foundation
import TestSupport
import Testing

/// An interrupted batch is found again (issue 58, finding 5): before, a plain
/// re-run of the same `share ingest` started a second batch from scratch (498
/// copies for 300 photos) and `share gc` never collected the first one's.
@Suite(.serialized) struct InterruptedBatchTests {
    /// `share ingest` of `drop` into `container`, stopped by SIGINT once its
    /// 5th copy is made (a pause point: no sleep). Returns the batch to resume.
    static func interruptedIngest(of drop: String, into container: String, options: [String] = []) throws -> String {
        try interruptedRun(of: drop, into: container, options: options).batch
    }

    static func interruptedRun(of drop: String, into container: String, options: [String] = []) throws -> (
        batch: String, run: DropBoundaryTests.Run
    ) {
        let gate = PauseGate("copied:p005.jpg")
        let run = try DropBoundaryTests.Run(
            ["ingest", "--container", container, drop] + options, environment: gate.environment)
        let reached = gate.waitUntilReached { run.process.isRunning }
        try #require(reached, "the copy never reached p005.jpg: \(run.stderr)")
        kill(run.process.processIdentifier, SIGINT)
        gate.release()
        #expect(run.finish() == 130, "\(run.stderr)")
        return (try #require(DiskFullTests.batchToResume(in: run.stderr), "\(run.stderr)"), run)
    }

    /// With `--json`, the last line of an interrupted batch says so and how to
    /// finish it (issue 61, finding 5: it was an `item` line, the rest on stderr only).
    @Test func anInterruptedJSONRunEndsWithABatchStoppedLine() throws {
        let work = TemporaryDirectory("interrupted-json")
        let root = (work.path as NSString).standardizingPath
        let drop = try Self.photos(20, in: root + "/drop")
        let (batch, run) = try Self.interruptedRun(of: drop, into: root + "/c", options: ["--json"])
        let last = try #require(run.stdout.split(separator: "\n").last)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "\(last)")
        #expect(event["event"] as? String == "batchStopped" && event["reason"] as? String == "interrupted", "\(event)")
        #expect(event["batch"] as? String == batch)
        #expect(event["resume"] as? String == "share ingest --resume \(batch) --container \(root)/c", "\(event)")
        #expect((event["ingested"] as? Int).map { $0 >= 0 } == true && event["unfinished"] is Int, "\(event)")
    }

    static func photos(_ count: Int, in folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for index in 1...count {
            try FileManager.default.copyItem(
                atPath: Fixtures.media("photo.jpg"), toPath: folder + String(format: "/p%03d.jpg", index))
        }
        return folder
    }

    @Test func aPlainReRunSaysAnUnfinishedBatchWaitsAndResumeUnfinishedFinishesItOnce() throws {
        let work = TemporaryDirectory("interrupted")
        let root = (work.path as NSString).standardizingPath
        let drop = try Self.photos(40, in: root + "/drop")
        let container = root + "/c"
        let batch = try Self.interruptedIngest(of: drop, into: container)

        let again = try ShareProcess.run(["ingest", "--container", container, drop])
        #expect(again.status == 75, "\(again.stderr)")
        #expect(again.stderr.contains("an unfinished batch of these inputs"), "\(again.stderr)")
        #expect(again.stderr.contains("share ingest --resume \(batch) --container \(container)"), "\(again.stderr)")
        #expect(again.stdout.isEmpty, "nothing ingested, no URL")

        // The same inputs named another way (a relative path) are the same inputs.
        let relative = try ShareProcess.run(
            ["ingest", "--container", container, "--resume-unfinished", "drop"], directory: root)
        #expect(relative.status == 0, "\(relative.stderr)")
        #expect(
            relative.lastLine == "ShareMedia://dataUrl=ShareKey-\(batch)#media",
            "the interrupted batch's own key: \(relative.stdout)")
        let names = (1...40).map { String(format: "p%03d.jpg", $0) }
        try DiskFullTests.expectDeliveredOnce(names, container: container)

        // Other inputs are another batch, started without a word.
        let other = try ShareProcess.run(["ingest", "--container", container, drop + "/p001.jpg"])
        #expect(other.status == 0, "\(other.stderr)")
    }

    @Test func gcCollectsTheCopiesOfBatchesLeftUnfinishedLongerThanTheRetention() throws {
        let work = TemporaryDirectory("abandoned")
        let root = (work.path as NSString).standardizingPath
        let drop = try Self.photos(40, in: root + "/drop")
        let container = root + "/c"
        let batch = try Self.interruptedIngest(of: drop, into: container)
        let copies = { SizeLimitTests.copies(in: container) }
        #expect(copies().count >= 5, "copies made before the stop: \(copies())")

        // Recent: kept (still resumable).
        let recent = try ShareProcess.run(["gc", "--container", container, "--older-than", "1d"])
        #expect(recent.status == 0 && !recent.stderr.contains(batch), "\(recent.stderr)")
        let status = try ShareProcess.run(["status", "--container", container])
        #expect(
            status.stdout.contains(batch) && status.stdout.contains("interrupted"),
            "share status lists it: \(status.stdout)")

        let dry = try ShareProcess.run(["gc", "--container", container, "--older-than", "0", "--dry-run"])
        #expect(dry.stderr.contains("would collect the copies of batch \(batch)"), "\(dry.stderr)")
        #expect(copies().count >= 5, "a dry run removes nothing")

        let collected = try ShareProcess.run(["gc", "--container", container, "--older-than", "0"])
        #expect(collected.status == 0, "\(collected.stderr)")
        #expect(collected.stderr.contains("1 abandoned batch"), "\(collected.stderr)")
        #expect(copies().isEmpty, "its copies are gone: \(copies())")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: container + "/thumbnails")) ?? []).isEmpty)
        let after = try ShareProcess.run(["status", "--container", container])
        #expect(after.stdout.contains(batch) && after.stdout.contains("abandoned"), "\(after.stdout)")
        // And a plain re-run starts afresh: the abandoned batch is no longer waiting.
        let fresh = try ShareProcess.run(["ingest", "--container", container, drop])
        #expect(fresh.status == 0, "\(fresh.stderr)")
    }
}
