import Foundation
import TestSupport
import Testing

/// Only what was delivered is ever removed or filed as done (issue 58,
/// finding 2): a drop of a text, a photo, a truncated JPEG with its XMP
/// sidecar and a folder with another broken photo, watched with
/// `--on-success delete` or `move`, locally and through a worker. The
/// delivered files go (deleted, or to `.done/<batch>/`); the broken photos and
/// the sidecar stay, byte for byte, under `.failed/<batch>/` at their place in
/// the drop, beside `report.json`, which says why each failed.
@Suite(.serialized) struct DropSplitTests {
    static let delivered = ["drop/a.txt", "drop/photo.jpg", "drop/nested/fine.jpg"]
    static let undelivered = ["drop/broken.jpg", "drop/broken.jpg.xmp", "drop/nested/cut.jpg"]

    @Test(arguments: ["delete", "move"], [false, true])
    func aPartlyFailedDropKeepsItsUndeliveredFilesUnderFailed(disposition: String, database: Bool) throws {
        let work = TemporaryDirectory("drop-split")
        let root = (work.path as NSString).standardizingPath
        let inbox = root + "/inbox"
        let sources = try Self.makeDrop(in: inbox)
        let mode = try DatabaseMode(database, worker: "split")
        defer { mode.stop() }
        let options = mode.options

        let watch = try ShareProcess.run(
            ["watch", inbox, "--container", root + "/c", "--once", "--settle", "0", "--on-success", disposition]
                + options)
        // The sidecar of a failed photo is delivered as a file of its own, and kept with its photo.
        #expect(watch.stdout.contains("ingested=4 failed=2"), "\(watch.stdout)\n\(watch.stderr)")
        let batches = (try? FileManager.default.contentsOfDirectory(atPath: inbox + "/.failed")) ?? []
        try #require(batches.count == 1, "one batch's undelivered files under .failed: \(batches) \(watch.stderr)")
        let failed = inbox + "/.failed/" + batches[0]

        for name in Self.undelivered {
            let kept = FileManager.default.contents(atPath: failed + "/" + name)
            #expect(kept == sources[name], "\(name) is kept, byte for byte, under .failed/<batch>/")
        }
        let report = try #require(
            FileManager.default.contents(atPath: failed + "/report.json"), "report.json beside them")
        #expect(String(decoding: report, as: UTF8.self).contains("undecodable"), "the report says why")
        for name in Self.delivered {
            #expect(
                !FileManager.default.fileExists(atPath: failed + "/" + name),
                "\(name) was delivered: not filed as failed")
            let done = inbox + "/.done/" + batches[0] + "/" + name
            #expect(
                FileManager.default.fileExists(atPath: done) == (disposition == "move"),
                "\(name) under .done with move only")
        }
        #expect(
            ((try? FileManager.default.contentsOfDirectory(atPath: inbox + "/.processing")) ?? []).isEmpty,
            "nothing left in .processing")
    }

    /// A dropper who can still write in the claimed drop swaps the folder of
    /// an undelivered file for a link to a folder of theirs choosing (holding a
    /// file of the same name) just before the split: nothing outside the drop
    /// is moved, and the drop is neither deleted nor filed as done.
    @Test func aFolderSwappedForALinkBeforeTheSplitMovesNothingFromOutside() throws {
        let work = TemporaryDirectory("drop-split-swap")
        let root = (work.path as NSString).standardizingPath
        let inbox = root + "/inbox"
        let secret = root + "/secret"
        _ = try Self.makeDrop(in: inbox)
        try FileManager.default.createDirectory(atPath: secret, withIntermediateDirectories: true)
        let secretBytes = Data("not the dropper's\n".utf8)
        try secretBytes.write(to: URL(fileURLWithPath: secret + "/cut.jpg"))
        chmod(secret, 0o700)

        let gate = PauseGate("splitting:drop")
        let watch = try DropBoundaryTests.Run(
            ["watch", inbox, "--container", root + "/c", "--once", "--settle", "0", "--on-success", "delete"],
            environment: gate.environment)
        let reached = gate.waitUntilReached { watch.process.isRunning }
        #expect(reached, "the split was never reached: \(watch.stderr)")
        let batch = try #require(try FileManager.default.contentsOfDirectory(atPath: inbox + "/.processing").first)
        if reached {
            let nested = inbox + "/.processing/" + batch + "/drop/nested"
            try FileManager.default.moveItem(atPath: nested, toPath: nested + ".orig")
            try FileManager.default.createSymbolicLink(atPath: nested, withDestinationPath: secret)
            gate.release()
        }
        _ = watch.finish()
        #expect(
            FileManager.default.contents(atPath: secret + "/cut.jpg") == secretBytes,
            "the file outside the drop stays where it is")
        #expect(
            !FileManager.default.fileExists(atPath: inbox + "/.failed/" + batch + "/drop/nested/cut.jpg"),
            "nothing moved through the link")
        #expect(
            FileManager.default.fileExists(atPath: inbox + "/.processing/" + batch + "/drop/nested.orig/cut.jpg"),
            "the drop is kept, not deleted")
        #expect(
            FileManager.default.fileExists(atPath: inbox + "/.failed/" + batch + "/drop/broken.jpg"),
            "what could be moved was")
    }

    /// The drop: three files that are delivered and three that are not (two
    /// truncated JPEGs, and the XMP sidecar the first carries). Returns each file's bytes.
    static func makeDrop(in inbox: String) throws -> [String: Data] {
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg")))
        let xmp = Data(
            """
            <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="4"/></rdf:RDF></x:xmpmeta>
            <?xpacket end="w"?>
            """.utf8)
        let files: [String: Data] = [
            "drop/a.txt": Data("a note\n".utf8),
            "drop/photo.jpg": photo,
            "drop/nested/fine.jpg": try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("exif3.jpg"))),
            "drop/broken.jpg": photo.prefix(3000),
            "drop/broken.jpg.xmp": xmp,
            "drop/nested/cut.jpg": photo.prefix(5000),
        ]
        for (name, bytes) in files {
            let path = inbox + "/" + name
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try bytes.write(to: URL(fileURLWithPath: path))
        }
        FileManager.default.createFile(atPath: inbox + "/drop/.ready", contents: nil)
        return files
    }
}
