import Foundation
import TestSupport
import Testing

/// The built `share` binary, run like a user runs it.
@Suite struct IngestCommandTests {
    @Test func ingestPrintsTheRedirectURLLastAndExitsZero() throws {
        let container = TemporaryDirectory()
        let result = try ShareProcess.run([
            "ingest", "--container", container.path, Fixtures.media("photo.jpg"), "--text", "hello",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let url = try #require(result.lastLine)
        #expect(url.hasPrefix("ShareMedia://dataUrl=ShareKey-"))
        #expect(url.hasSuffix("#media"))
        #expect(result.stderr.contains("2 of 2 items ingested"))
        #expect(result.stderr.contains("manifest:"))
    }

    @Test func partialBatchExitsOneAndReportsEveryInput() throws {
        let container = TemporaryDirectory()
        let reportFile = container.file("report.json")
        let result = try ShareProcess.run([
            "ingest", "--container", container.path + "/c", "--report", reportFile,
            Fixtures.media("photo.jpg"), Fixtures.media("truncated.jpg"), Fixtures.media("empty.jpg"),
        ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("truncated.jpg: cannot decode JPEG image"))
        #expect(result.stderr.contains("empty.jpg: is empty (0 bytes): delivered as a file"))
        #expect(result.lastLine?.hasSuffix("#media") == true)
        let report =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportFile))) as! [String: Any]
        let items = report["items"] as! [[String: Any]]
        #expect(items.map { $0["status"] as? String } == ["ingested", "failed", "ingested"])
        #expect((items[0]["path"] as? String)?.hasPrefix("file://") == true)
        #expect(
            Set(((items[0]["stageSeconds"] as? [String: Double]) ?? [:]).keys) == [
                "sniff", "copy", "probe", "thumbnail", "motion",
            ])
        #expect(items[1]["error"] as? String != nil)
        #expect((report["counts"] as? [String: Int])?["ingested"] == 2)
        #expect((items[2]["path"] as? String)?.hasSuffix(".jpg") == true)
    }

    @Test(arguments: [
        (["ingest", "--bogus", "x"], "unknown option --bogus", 64),
        (["ingest", "--pipeline", "fancy", "x"], "no built-in pipeline", 64),
        (["ingest", "--key", "../x", "x"], "starts with a dot", 64),
        (["ingest", "--scheme", "1bad", "x"], "not a valid URL scheme", 64),
        (["ingest", "/does/not/exist"], "/does/not/exist", 66),
        (["ingest"], "nothing to ingest", 64),
        (["frobnicate"], "unknown command", 64),
    ])
    func nothingCanBeDoneExitsWithWhy(arguments: [String], message: String, status: Int32) throws {
        let container = TemporaryDirectory()
        let result = try ShareProcess.run(arguments, environment: ["SHARE_CONTAINER": container.path])
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func containerThatIsAFileExitsCannotCreate() throws {
        let temporary = TemporaryDirectory()
        let file = try temporary.add("not-a-dir", bytes: [1])
        let result = try ShareProcess.run(["ingest", "--container", file, Fixtures.media("photo.jpg")])
        #expect(result.status == 73)
        #expect(result.stderr.contains("not usable"))
    }

    @Test func jsonModeEmitsOneEventPerLine() throws {
        let container = TemporaryDirectory()
        let result = try ShareProcess.run([
            "ingest", "--json", "--container", container.path, Fixtures.media("photo.jpg"), Fixtures.media("empty.jpg"),
        ])
        let events = result.stdout.split(separator: "\n").map {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(events.allSatisfy { $0 != nil })
        #expect(events.first??["event"] as? String == "batchStarted")
        #expect(events.last??["event"] as? String == "batchFinished")
        #expect((events.last??["redirectURL"] as? String)?.hasPrefix("ShareMedia://") == true)
        #expect(events.filter { $0?["event"] as? String == "item" }.count == 2)
    }

    @Test func customSchemeAndKey() throws {
        let container = TemporaryDirectory()
        let result = try ShareProcess.run([
            "ingest", "--container", container.path, "--scheme", "MyApp", "--key", "Drop-1", "--text", "hi",
        ])
        #expect(result.lastLine == "MyApp://dataUrl=Drop-1#text")
    }
}

@Suite struct OpenCommandTests {
    @Test func openPrintsTheManifestAndConsumeTakesItOnce() throws {
        let container = TemporaryDirectory()
        let ingest = try ShareProcess.run(["ingest", "--container", container.path, Fixtures.media("clip-h264.mp4")])
        let url = try #require(ingest.lastLine)
        let open = try ShareProcess.run(["open", url, "--container", container.path])
        #expect(open.status == 0)
        let entries = try JSONSerialization.jsonObject(with: Data(open.stdout.utf8)) as? [[String: Any]]
        #expect(entries?.first?["type"] as? String == "video")
        #expect(try ShareProcess.run(["open", url, "--container", container.path, "--consume"]).status == 0)
        let again = try ShareProcess.run(["open", url, "--container", container.path, "--consume"])
        #expect(again.status == 66)
        #expect(again.stderr.contains("no manifest") || again.stderr.contains("already consumed"))
    }

    @Test(arguments: ["ShareMedia://dataUrl=../../etc#media", "garbage", "ShareMedia://dataUrl=Unknown#media"])
    func badURLsGetAClearErrorAndNonZeroStatus(url: String) throws {
        let container = TemporaryDirectory()
        let result = try ShareProcess.run(["open", url, "--container", container.path])
        #expect(result.status != 0)
        #expect(result.stderr.hasPrefix("share: "))
        #expect(result.stdout.isEmpty)
    }
}

@Suite struct StatusAndGCTests {
    @Test func statusListsBatchesAndGCRemovesOnlyConsumedShares() throws {
        let container = TemporaryDirectory()
        let kept = try ShareProcess.run([
            "ingest", "--container", container.path, "--key", "Kept", Fixtures.media("photo.jpg"),
        ])
        let taken = try ShareProcess.run([
            "ingest", "--container", container.path, "--key", "Taken", Fixtures.media("clip-h264.mp4"),
        ])
        #expect(kept.status == 0 && taken.status == 0)
        let status = try ShareProcess.run(["status", "--container", container.path])
        #expect(status.stdout.contains("ShareMedia://dataUrl=Kept#media"))
        #expect(status.stdout.contains("ShareMedia://dataUrl=Taken#media"))
        #expect(status.stdout.contains("done"))
        #expect(
            try ShareProcess.run([
                "open", "ShareMedia://dataUrl=Taken#media", "--container", container.path, "--consume",
            ]).status == 0)

        // Not old enough yet: nothing goes.
        let young = try ShareProcess.run(["gc", "--container", container.path])
        #expect(young.stdout.isEmpty)
        // --verbose lists each path (here of a dry run: nothing goes yet).
        let listed = try ShareProcess.run([
            "gc", "--container", container.path, "--older-than", "0", "--dry-run", "--verbose",
        ])
        #expect(listed.status == 0)
        let removed = listed.stdout.split(separator: "\n")
        #expect(removed.count == 4)  // copy, thumbnail, consumed manifest, report
        #expect(removed.allSatisfy { $0.hasPrefix("would remove ") && !$0.contains("Kept") })
        #expect(listed.stderr.contains("would collect 1 consumed share, 4 files"), "\(listed.stderr)")
        // Without it, a summary alone.
        let gc = try ShareProcess.run(["gc", "--container", container.path, "--older-than", "0"])
        #expect(gc.status == 0)
        #expect(gc.stdout.isEmpty, "\(gc.stdout)")
        #expect(gc.stderr.contains("share: collected 1 consumed share, 4 files"), "\(gc.stderr)")
        for path in removed {
            #expect(!FileManager.default.fileExists(atPath: String(path.dropFirst("would remove ".count))))
        }
        let open = try ShareProcess.run(["open", "ShareMedia://dataUrl=Kept#media", "--container", container.path])
        #expect(open.status == 0)
        let json = try ShareProcess.run(["status", "--json", "--container", container.path])
        #expect(json.stdout.contains(#""state":"collected""#))
    }
}

/// Linux file names are bytes: a path argument that is not UTF-8 names its file exactly.
@Suite struct RawPathArgumentTests {
    @Test func aPathArgumentThatIsNotUTF8IsIngested() throws {
        let work = TemporaryDirectory("latin1")
        // `caf\351.jpg`: "café" in Latin-1, invalid as UTF-8. Made and passed by a
        // shell, since Foundation can only pass valid strings.
        let script =
            #"cp "$1" "$(printf "$2/caf\351.jpg")" && exec "$0" ingest --container "$2/c" --report "$2/r.json" "$(printf "$2/caf\351.jpg")""#
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, Fixtures.shareBinary, Fixtures.media("photo.jpg"), work.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        let report =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work.path + "/r.json")))
            as? [String: Any]
        let item = try #require((report?["items"] as? [[String: Any]])?.first)
        #expect(item["status"] as? String == "ingested")
        #expect(item["type"] as? String == "image")
        // Shown with U+FFFD where the name is not UTF-8.
        #expect(item["fileName"] as? String == "caf\u{FFFD}.jpg")
    }
}
