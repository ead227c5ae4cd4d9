import Foundation
import TestSupport
import Testing

/// A drop of 20,000 entries, as a whole phone backup or a scanner's day would
/// be: stopped part-way by a real SIGINT, shown by `share status`, finished by
/// `--resume`; every item delivered exactly once, the manifest valid. Nothing
/// here is timed: the stop is aimed at observed progress (copies on disk).
@Suite(.serialized) struct LargeDropTests {
    static let count = 20_000

    @Test func twentyThousandItemsAreEachDeliveredOnceAcrossAnInterruption() throws {
        let work = TemporaryDirectory("large-drop")
        let drop = work.path + "/drop"
        // Ten folders of 2,000 one-line files: names, contents and order all differ.
        for folder in 0..<10 {
            try FileManager.default.createDirectory(atPath: "\(drop)/part-\(folder)", withIntermediateDirectories: true)
            for i in 0..<(Self.count / 10) {
                try Data("note \(folder)-\(i)\n".utf8).write(
                    to: URL(fileURLWithPath: "\(drop)/part-\(folder)/note-\(i).txt"))
            }
        }
        let container = work.path + "/container"
        // The default pipeline without the fsync of each copy: this test is about
        // numbers of items, not power cuts (DurabilityOrderTests and
        // CrashSafetyTests are), and 20,000 fsyncs would be most of its time.
        let pipeline = work.path + "/bulk.json"
        var document = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: Fixtures.packageRoot.appendingPathComponent("pipelines/default.json")))
                as? [String: Any])
        var stages = try #require(document["stages"] as? [[String: Any]])
        for (index, stage) in stages.enumerated() where stage["stage"] as? String == "copy" {
            stages[index]["fsync"] = false
        }
        document["stages"] = stages
        document["name"] = "bulk"
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: pipeline))

        // Stopped part-way: once some copies are on disk, a real SIGINT.
        let ingest = Process()
        ingest.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
        ingest.arguments = ["ingest", "--quiet", "--container", container, "--pipeline", pipeline, drop]
        ingest.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        ingest.standardError = errors
        try ingest.run()
        let midway = CrashSafetyTests.wait(for: ingest, timeout: 600) {
            CrashSafetyTests.Progress(container: container).copies >= 1000
        }
        #expect(midway, "the batch finished before it could be stopped")
        kill(ingest.processIdentifier, SIGINT)
        ingest.waitUntilExit()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(ingest.terminationStatus == 130, "\(said)")
        let resume = try #require(said.split(separator: "\n").first { $0.contains("share ingest --resume") }, "\(said)")
        let batch = try #require(
            resume.split(separator: " ").drop { $0 != "--resume" }.dropFirst().first.map(String.init))

        // status: the batch is interrupted (no process works on it), with every item planned.
        let running = try Self.batch(batch, container: container)
        #expect(running["state"] as? String == "interrupted", "\(running)")
        #expect(running["items"] as? Int == Self.count, "\(running)")
        let progress = try #require(running["finishedItems"] as? Int, "\(running)")
        #expect(progress >= 1 && progress < Self.count, "\(running)")

        // --resume finishes it.
        let finished = try ShareProcess.run(["ingest", "--resume", batch, "--container", container, "--quiet"])
        #expect(finished.status == 0, "\(finished.stderr)")
        let url = try #require(finished.lastLine)
        #expect(url.hasPrefix("ShareMedia://dataUrl=") && url.hasSuffix("#file"), "\(url)")

        // The manifest: valid JSON, one entry per file, each copy exactly its source.
        let manifests = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter {
            $0.hasSuffix(".json")
        }
        #expect(manifests.count == 1)
        let data = try Data(
            contentsOf: URL(fileURLWithPath: container + "/manifests/" + (try #require(manifests.first))))
        let entries = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(entries.count == Self.count)
        var paths = Set<String>()
        var sources = Set<String>()
        for entry in entries {
            let path = try #require((entry["path"] as? String).flatMap { URL(string: $0)?.path }, "\(entry)")
            paths.insert(path)
            let content = try String(contentsOfFile: path, encoding: .utf8)
            sources.insert(content)
            #expect(entry["type"] as? String == "file" && entry["size"] as? Int == content.utf8.count, "\(entry)")
        }
        #expect(paths.count == Self.count, "copies named twice")
        #expect(sources.count == Self.count, "the same source delivered twice, or one missing")
        // Nothing else in the container: no copy twice, no temporary file left.
        let copies = try FileManager.default.contentsOfDirectory(atPath: container).filter {
            $0.hasSuffix(".txt") || $0.hasSuffix(".partial")
        }
        #expect(copies.count == Self.count, "\(copies.count) files in the container")

        // status: done, with its counts; --resume again changes nothing.
        let done = try Self.batch(batch, container: container)
        #expect(
            done["state"] as? String == "done" && done["ingested"] as? Int == Self.count && done["failed"] as? Int == 0,
            "\(done)")
        let again = try ShareProcess.run(["ingest", "--resume", batch, "--container", container, "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        // With --json, the same lines as the run: every item (read back from the
        // stored report one at a time), then the batch with its URL.
        let lines = again.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let itemLines = lines.filter { $0["event"] as? String == "item" }
        #expect(itemLines.count == Self.count)
        #expect(
            itemLines.allSatisfy { $0["status"] as? String == "ingested" },
            "\(itemLines.first { $0["status"] as? String != "ingested" } ?? [:])")
        #expect(Set(itemLines.compactMap { $0["source"] as? String }).count == Self.count)
        #expect(
            lines.last?["event"] as? String == "batchFinished" && lines.last?["redirectURL"] as? String == url,
            "\(lines.last ?? [:])")
        #expect(try Data(contentsOf: URL(fileURLWithPath: container + "/manifests/" + manifests[0])) == data)
    }

    /// The batch's line in `share status --json`.
    static func batch(_ id: String, container: String) throws -> [String: Any] {
        let status = try ShareProcess.run(["status", "--container", container, "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let lines = status.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return try #require(
            lines.first { ($0["id"] as? String)?.lowercased() == id.lowercased() || $0["batch"] as? String == id },
            "\(status.stdout)")
    }
}
