import Foundation
import TestSupport
import Testing

/// Every place issue 58 found a position written (IPTC Extension's GPS in a
/// photo's XMP and a sidecar, Photoshop APP13's EXIF and XMP, IPTC IIM's and
/// XMP's place names, a JSON's coordinates, as numbers and as texts; a
/// TIFF's and a PSD's Photoshop resources and IIM, a movie's place keys) goes in every mode: `share
/// ingest`, `share ingest --db` with a real `share worker` (the `remove`
/// setting travels with the pipeline to the worker), and `share watch`. After
/// each, exiftool's check prints nothing of any delivered file, the JSON is
/// its source less its coordinates, and no file of the container holds a zone name.
@Suite(.serialized) struct PositionModeTests {
    /// A drop of one file for each place (built once in `work`, copied to `drop`).
    static func makeDrop(at drop: String, sources: [String: String]) throws {
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        for (name, source) in sources { try FileManager.default.copyItem(atPath: source, toPath: drop + "/" + name) }
    }

    /// The files of the drop, made with exiftool: name → path in `work`.
    static func sources(in work: TemporaryDirectory) throws -> [String: String] {
        let packet = work.file("iptc.xmp")
        try Data(IPTCLocationTests.packet.utf8).write(to: URL(fileURLWithPath: packet))
        let iptc = work.file("iptc.jpg")
        let named = work.file("named.jpg")
        let json = work.file("visits.json")
        try FileManager.default.copyItem(atPath: Fixtures.media("gray.jpg"), toPath: iptc)
        #expect(
            try MediaTools.run("/usr/bin/exiftool", ["-q", "-overwrite_original", "-xmp<=" + packet, iptc]).status == 0)
        try FileManager.default.copyItem(atPath: Fixtures.media("gray.jpg"), toPath: named)
        let tags = PlaceNameTests.names + LocationPrivacyTests.gpsArguments + ["-DateTimeOriginal=2024:07:15 12:00:00"]
        #expect(try MediaTools.run("/usr/bin/exiftool", ["-q", "-overwrite_original"] + tags + [named]).status == 0)
        try JSONSerialization.data(withJSONObject: JSONCoordinateTests.source, options: [.sortedKeys]).write(
            to: URL(fileURLWithPath: json))
        let texts = work.file("texts.json")
        try JSONSerialization.data(withJSONObject: JSONCoordinateTests.textSource, options: [.sortedKeys]).write(
            to: URL(fileURLWithPath: texts))
        return [
            "iptc.jpg": iptc, "IMG_2.jpg": Fixtures.media("gray.jpg"), "IMG_2.jpg.xmp": packet,
            "photoshop.jpg": try PhotoshopLocationTests.photoshopJPEG(in: work),
            "named.jpg": named, "visits.json": json, "texts.json": texts,
        ].merging(ResourceLocationTests.files.mapValues { Fixtures.privacy($0) }) { first, _ in first }
    }

    /// What a user sees of one mode's run: nothing exiftool's check prints, the JSON stripped, no zone name.
    static func check(report: String, container: String, mode: String) throws {
        let items = try LocationPrivacyTests.reportItems(report)
        #expect(items.count == 11, "\(mode): \(items.keys.sorted())")
        let left = try PositionCheck.positionsLeft(in: container)
        #expect(left.isEmpty, "\(mode): exiftool finds \(left)")
        let copy = try #require((items["visits.json"]?["path"] as? String).flatMap { URL(string: $0)?.path }, "\(mode)")
        let read = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: copy))) as? NSDictionary
        #expect(read == JSONCoordinateTests.stripped as NSDictionary, "\(mode): \(read ?? [:])")
        let texts = try #require((items["texts.json"]?["path"] as? String).flatMap { URL(string: $0)?.path }, "\(mode)")
        let readTexts =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: texts))) as? NSDictionary
        #expect(readTexts == JSONCoordinateTests.textStripped as NSDictionary, "\(mode): \(readTexts ?? [:])")
        let enumerator = try #require(FileManager.default.enumerator(atPath: container))
        while let relative = enumerator.nextObject() as? String {
            guard let bytes = FileManager.default.contents(atPath: container + "/" + relative) else { continue }
            #expect(bytes.range(of: Data("Europe/Paris".utf8)) == nil, "\(mode): \(relative) holds the zone's name")
        }
    }

    @Test func everyPlaceAPositionIsWrittenGoesInEveryMode() throws {
        let work = TemporaryDirectory("position-modes")
        let root = (work.path as NSString).standardizingPath
        let sources = try Self.sources(in: work)
        let stages = [
            #"{"stage": "sniff"}"#, #"{"stage": "copy"}"#,
            #"{"stage": "location", "remove": "coordinatesAndPlaceNames"}"#, #"{"stage": "probe"}"#,
            #"{"stage": "thumbnail"}"#, #"{"stage": "manifest"}"#,
        ]
        let pipeline = work.file("pipeline.json")
        try Data(#"{"name": "every-position", "stages": [\#(stages.joined(separator: ", "))]}"#.utf8).write(
            to: URL(fileURLWithPath: pipeline))
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("positions")
        defer { workers.stopAll() }
        for (mode, database) in [("ingest", [String]()), ("ingest --db", ["--db", server.url])] {
            let drop = root + "/drop-" + mode.replacingOccurrences(of: " ", with: "")
            try Self.makeDrop(at: drop, sources: sources)
            let container = drop + "-container"
            let report = drop + "-report.json"
            let run = try ShareProcess.run(
                ["ingest"] + database + ["--pipeline", pipeline, "--container", container, "--report", report, drop])
            #expect(run.status == 0, "\(mode): \(run.stderr) \(workers.log("positions"))")
            try Self.check(report: report, container: container, mode: mode)
        }
        let inbox = root + "/inbox"
        try Self.makeDrop(at: inbox + "/drop", sources: sources)
        FileManager.default.createFile(atPath: inbox + "/drop/.ready", contents: nil)
        let container = root + "/watch-container"
        let run = try ShareProcess.run([
            "watch", inbox, "--pipeline", pipeline, "--container", container, "--once", "--on-success", "keep",
        ])
        #expect(run.status == 0, "watch: \(run.stderr)")
        let reports = try FileManager.default.contentsOfDirectory(atPath: container + "/.share-ingest/reports").filter {
            $0.hasSuffix(".json")
        }
        try #require(reports.count == 1)
        try Self.check(report: container + "/.share-ingest/reports/" + reports[0], container: container, mode: "watch")
    }
}
