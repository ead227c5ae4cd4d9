import Foundation
import TestSupport
import Testing

/// Issue 59: `share ingest` starts its helper template (`share-helper`: 183
/// libraries and libvips' set-up) only when an item needs decoding. Observed
/// through the helper's path: `SHARE_HELPER_PATH` names a script that writes
/// its arguments to a log, then runs the real `share-helper`; each exec of the
/// helper executable (the template, or a helper started on its own) is a line.
@Suite struct LazyHelperTests {
    /// A work folder with `share-helper` (the logging script) and the log's path.
    static func loggingHelper() throws -> (work: TemporaryDirectory, helper: String, log: String) {
        let work = TemporaryDirectory("lazy-helper")
        let log = work.file("helper-starts.log")
        let script = "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '\(log)'\nexec '\(Fixtures.helperBinary)' \"$@\"\n"
        try work.add("bin/share-helper", bytes: Array(script.utf8))
        chmod(work.file("bin/share-helper"), 0o755)
        return (work, work.file("bin/share-helper"), log)
    }

    /// The helper executable's starts the log holds (one line each).
    static func starts(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// `share ingest --quiet` of `arguments` (and the drop) into the work folder's
    /// container, with the logging helper: how it exited and its report's items.
    static func ingest(_ work: TemporaryDirectory, helper: String, _ arguments: [String] = []) throws -> (
        result: ShareProcess, items: [[String: Any]]
    ) {
        let reportPath = work.file("report.json")
        let result = try ShareProcess.run(
            ["ingest", "--quiet", "--container", work.file("container"), "--report", reportPath]
                + arguments + [work.file("drop")],
            environment: ["SHARE_HELPER_PATH": helper])
        return (result, try items(reportPath))
    }

    static func items(_ reportPath: String) throws -> [[String: Any]] {
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as? [String: Any]
        )
        return report["items"] as? [[String: Any]] ?? []
    }

    /// Text, a link, a one-line text file and a file the sniff finds no media
    /// in: all ingested, and the helper executable never ran.
    @Test func aBatchWithNothingToDecodeNeverStartsTheHelper() throws {
        let (work, helper, log) = try Self.loggingHelper()
        try work.add("drop/note.txt", bytes: Array("hello\n".utf8))
        try work.add("drop/table.csv", bytes: Array("a,b\n1,2\n".utf8))
        let (result, items) = try Self.ingest(
            work, helper: helper, ["--text", "hello", "--url", "https://example.org/a"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(items.count == 4 && items.allSatisfy { $0["status"] as? String == "ingested" }, "\(items)")
        #expect(Self.starts(log).isEmpty, "the helper was started: \(Self.starts(log))")
    }

    /// Names are a hint, the content decides: a drop whose files are named like
    /// photos starts the template before it is planned (so that it loads its
    /// libraries meanwhile), but the text in them is not decoded: no thumbnail,
    /// and the template is the helper executable's one start.
    @Test func namesThatSayMediaStartOnlyTheTemplateAndTheContentDecides() throws {
        let (work, helper, log) = try Self.loggingHelper()
        try work.add("drop/IMG_0001.JPG", bytes: Array("not a photo\n".utf8))
        try work.add("drop/clip.MOV", bytes: Array("not a film either\n".utf8))
        let (result, items) = try Self.ingest(work, helper: helper)
        // Delivered as the text files they are, without a thumbnail.
        #expect(result.status == 0, "\(result.stderr)")
        #expect(items.count == 2 && items.allSatisfy { $0["status"] as? String == "ingested" }, "\(items)")
        #expect(items.allSatisfy { $0["thumbnail"] == nil }, "\(items)")
        let starts = Self.starts(log)
        #expect(starts.count == 1 && starts.first?.hasSuffix("--template") == true, "helper starts: \(starts)")
    }

    /// The same with photos in it: the template is started once, and every
    /// photo gets its thumbnail (the other items as before).
    @Test func aMixedBatchStartsTheTemplateOnceAndEveryPhotoGetsItsThumbnail() throws {
        let (work, helper, log) = try Self.loggingHelper()
        try work.add("drop/note.txt", bytes: Array("hello\n".utf8))
        let photo = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg"))))
        for index in 0..<4 { try work.add("drop/IMG_\(index).JPG", bytes: photo + Array("unique \(index)".utf8)) }
        let (result, items) = try Self.ingest(work, helper: helper, ["--text", "hello"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(items.count == 6 && items.allSatisfy { $0["status"] as? String == "ingested" }, "\(items)")
        let photos = items.filter { ($0["source"] as? String ?? "").hasSuffix(".JPG") }
        #expect(photos.count == 4 && photos.allSatisfy { $0["thumbnail"] as? String != nil }, "\(photos)")
        let starts = Self.starts(log)
        #expect(starts.count == 1 && starts.first?.hasSuffix("--template") == true, "helper starts: \(starts)")
    }
}
