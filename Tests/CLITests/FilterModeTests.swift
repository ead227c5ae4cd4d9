import Foundation
import TestSupport
import Testing

/// The choices users of vipsthumbnail, exiftool and immich-go expect (issue
/// 61): `--size`, `--format`, `--quality` over the thumbnail stage;
/// `--include`, `--exclude`, `--hidden`; `--taken-after`, `--taken-before`.
/// The same drop and the same options through `share ingest`, `ingest --db`
/// (a real worker), `watch --once` and `watch --once --db` deliver the same
/// items and skip the same, each skip with its reason; nothing left out by a
/// date (nor the sidecar its photo carries) is left in the container.
@Suite(.serialized) struct FilterModeTests {
    /// Capture times (the manifest's `capturedAt`): a.jpg 2024-05-17T10:30:00+02:00
    /// (EXIF), sub/gps.jpg 2024-06-01T09:15:00+02:00 (its place's offset),
    /// .hid/pixel.jpg 2023-10-06T22:53:51+02:00, .x.jpg 2015-04-10T20:12:23.
    static func makeDrop(at folder: String) throws {
        let files = FileManager.default
        for sub in ["sub", "raw", ".hid"] {
            try files.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
        }
        for (name, source) in [
            ("a.jpg", Fixtures.media("photo.jpg")), ("sub/gps.jpg", Fixtures.privacy("exif6-gps.jpg")),
            ("raw/r.jpg", Fixtures.media("photo.jpg")),
            ("notes.txt", Fixtures.media("notes.txt")), (".hid/pixel.jpg", Fixtures.privacy("exiftool-pixel8pro.jpg")),
            (".x.jpg", Fixtures.privacy("iphone6-gps.jpg")),
        ] {
            try files.copyItem(atPath: source, toPath: folder + "/" + name)
        }
        // An XMP sidecar, carried by its photo: left out with it.
        try Data(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"></x:xmpmeta>"#.utf8).write(
            to: URL(fileURLWithPath: folder + "/sub/gps.jpg.xmp"))
    }

    /// Each bound is met exactly: a.jpg at the lower one (kept: at or after),
    /// sub/gps.jpg at the upper one (left out: before it, the bound excluded).
    static let choices = [
        "--include", "*.jpg", "--include", "*.xmp", "--exclude", "raw/**", "--hidden", "--taken-after",
        "2024-05-17T10:30:00+02:00", "--taken-before", "2024-06-01T09:15:00+02:00",
        "--size", "200,400", "--format", "webp", "--quality", "70",
    ]

    /// What a user reads of each item: its status, reason and message (`root` shown as `<drop>`).
    static func items(ofReport path: String, root: String) throws -> [String: [String: String]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let items = try #require(report["items"] as? [[String: Any]])
        var bySource: [String: [String: String]] = [:]
        for item in items {
            let source = (item["source"] as? String ?? "").replacingOccurrences(of: root, with: "<drop>")
            var fields: [String: String] = [:]
            for key in ["status", "reason", "error", "capturedAt"] {
                if let value = item[key] as? String {
                    fields[key] = value.replacingOccurrences(of: root, with: "<drop>")
                }
            }
            let previews = item["previews"] as? [[String: Any]] ?? []
            fields["previews"] = previews.map {
                "\($0["mimeType"] ?? "?") \($0["width"] ?? "?")x\($0["height"] ?? "?")"
            }.joined(separator: ", ")
            bySource[source] = fields
        }
        return bySource
    }

    @Test func theSameChoicesLeaveOutTheSameItemsInEveryMode() throws {
        let work = TemporaryDirectory("filters")
        let root = (work.path as NSString).standardizingPath
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("filters")
        defer { workers.stopAll() }

        let drop = root + "/drop"
        try Self.makeDrop(at: drop)
        var reports: [String: [String: [String: String]]] = [:]
        var containers: [String: String] = [:]
        for (mode, database) in [("ingest", [String]()), ("ingest --db", ["--db", server.url])] {
            let container = root + "/c-" + mode.replacingOccurrences(of: " ", with: "")
            let run = try ShareProcess.run(
                ["ingest", "--container", container, "--report", root + "/\(mode).json", drop] + database + Self.choices
            )
            // What was left out was asked for: the rest delivered, exit 0.
            #expect(run.status == 0, "\(mode): \(run.status) \(run.stderr) \(workers.log("filters"))")
            // One line per item left out, with its reason.
            for line in [
                "share: skipped: drop/notes.txt: matches no --include (\"*.jpg\", \"*.xmp\")",
                "share: skipped: drop/raw/r.jpg: left out by --exclude \"raw/**\"",
                "share: skipped: drop/sub/gps.jpg: taken 2024-06-01T09:15:00+02:00",
            ] {
                #expect(
                    run.stderr.contains(line.replacingOccurrences(of: "drop/", with: drop + "/")),
                    "\(mode): no \(line) in \(run.stderr)")
            }
            #expect(run.stderr.contains("share: 1 of 7 items ingested, 6 skipped"), "\(mode): \(run.stderr)")
            reports[mode] = try Self.items(ofReport: root + "/\(mode).json", root: drop)
            containers[mode] = container
        }
        for mode in ["watch", "watch --db"] {
            let inbox = root + "/inbox-" + mode.replacingOccurrences(of: " ", with: "")
            try Self.makeDrop(at: inbox + "/holiday")
            _ = FileManager.default.createFile(atPath: inbox + "/holiday/.ready", contents: nil)
            let container = root + "/c-" + mode.replacingOccurrences(of: " ", with: "")
            let database = mode == "watch --db" ? ["--db", server.url] : []
            let watch = try ShareProcess.run(
                ["watch", inbox, "--container", container, "--once"] + database + Self.choices)
            #expect(watch.status == 0, "\(mode): \(watch.stderr)")
            let line = try #require(watch.stdout.split(separator: "\n").first, "\(mode): \(watch.stderr)")
            #expect(line.contains(" ingested=1 failed=0 skipped=6 "), "\(mode): \(line)")
            reports[mode] = try Self.items(
                ofReport: try ModeAgreementTests.reportPath(ofWatchLine: line), root: inbox + "/holiday")
            containers[mode] = container
        }

        let reference = try #require(reports["ingest"])
        // The marker is the inbox's, never an item; hidden files are (--hidden).
        #expect(
            Set(reference.keys) == [
                "<drop>/a.jpg", "<drop>/sub/gps.jpg", "<drop>/sub/gps.jpg.xmp", "<drop>/raw/r.jpg", "<drop>/notes.txt",
                "<drop>/.hid/pixel.jpg", "<drop>/.x.jpg",
            ], "\(reference.keys.sorted())")
        #expect(reference["<drop>/a.jpg"]?["status"] == "ingested", "\(reference)")
        #expect(reference["<drop>/a.jpg"]?["capturedAt"] == "2024-05-17T10:30:00+02:00", "\(reference)")
        // --size 200,400 --format webp: a 400 px WebP preview (the 640×480 photo).
        #expect(reference["<drop>/a.jpg"]?["previews"] == "image/webp 400x300", "\(reference)")
        for (source, reason) in [
            ("<drop>/notes.txt", "filtered"), ("<drop>/raw/r.jpg", "filtered"),
            ("<drop>/sub/gps.jpg", "outsideDateRange"),
            ("<drop>/.hid/pixel.jpg", "outsideDateRange"), ("<drop>/.x.jpg", "outsideDateRange"),
            ("<drop>/sub/gps.jpg.xmp", "outsideDateRange"),
        ] {
            #expect(
                reference[source]?["status"] == "skipped" && reference[source]?["reason"] == reason,
                "\(source): \(reference[source] ?? [:])")
        }
        #expect(
            reference["<drop>/sub/gps.jpg"]?["error"]?.contains("not before 2024-06-01T09:15:00+02:00 (--taken-before)")
                == true, "\(reference)")
        #expect(
            reference["<drop>/.x.jpg"]?["error"]?.contains("before 2024-05-17T10:30:00+02:00 (--taken-after)") == true,
            "\(reference)")
        for (mode, items) in reports where mode != "ingest" {
            for source in Set(items.keys).union(reference.keys) where items[source] != reference[source] {
                Issue.record("\(mode), \(source): \(items[source] ?? [:]), ingest says \(reference[source] ?? [:])")
            }
        }
        // --quality 70: the same 200 px thumbnail is smaller than at the pipeline's 80.
        let reference80 = try ShareProcess.run([
            "ingest", "--container", root + "/c-quality80", "--size", "200", drop + "/a.jpg",
        ])
        #expect(reference80.status == 0, "\(reference80.stderr)")
        let at80 = try FileManager.default.contentsOfDirectory(atPath: root + "/c-quality80/thumbnails")
        let bytesAt80 = try #require(
            try FileManager.default.attributesOfItem(atPath: root + "/c-quality80/thumbnails/" + (at80.first ?? ""))[
                .size] as? Int)
        // Nothing of an item left out stays in the container: one copy, its thumbnail and preview.
        for (mode, container) in containers {
            let copies = try FileManager.default.contentsOfDirectory(atPath: container).filter {
                !$0.hasPrefix(".") && $0 != "manifests" && $0 != "thumbnails"
            }
            let thumbnails = try FileManager.default.contentsOfDirectory(atPath: container + "/thumbnails")
            #expect(copies.count == 1 && thumbnails.count == 2, "\(mode): \(copies) \(thumbnails)")
            if let thumbnail = thumbnails.first(where: { $0.hasSuffix(".jpg") }) {
                let size = try MediaTools.run(
                    "/usr/bin/exiftool", ["-s3", "-ImageSize", container + "/thumbnails/" + thumbnail]
                ).output
                #expect(size.trimmingCharacters(in: .whitespacesAndNewlines) == "200x150", "\(mode): \(size)")
                let bytes =
                    try FileManager.default.attributesOfItem(atPath: container + "/thumbnails/" + thumbnail)[.size]
                    as? Int ?? 0
                #expect(bytes > 0 && bytes < bytesAt80, "\(mode): \(bytes) bytes at quality 70, \(bytesAt80) at 80")
            }
        }
    }

    /// `--json`: each item left out is an `item` event with its status and reason.
    @Test func eachItemLeftOutIsAnItemEvent() throws {
        let work = TemporaryDirectory("filters-json")
        try Self.makeDrop(at: work.path + "/drop")
        let run = try ShareProcess.run(
            ["ingest", "--container", work.path + "/c", "--json", work.path + "/drop"] + Self.choices)
        #expect(run.status == 0, "\(run.stderr)")
        let events = run.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let items = events.filter { $0["event"] as? String == "item" }
        #expect(items.count == 7, "\(run.stdout)")
        let skipped = items.filter { $0["status"] as? String == "skipped" }.compactMap { $0["reason"] as? String }
            .sorted()
        #expect(
            skipped == [
                "filtered", "filtered", "outsideDateRange", "outsideDateRange", "outsideDateRange", "outsideDateRange",
            ], "\(run.stdout)")
    }

    /// Without `--hidden`, hidden files and folders are no items (as ever); every
    /// file left out by a filter: exit 66, no manifest.
    @Test func hiddenFilesOnlyByChoiceAndNothingLeftIsNoInput() throws {
        let work = TemporaryDirectory("filters-hidden")
        try Self.makeDrop(at: work.path + "/drop")
        let report = work.path + "/report.json"
        let run = try ShareProcess.run([
            "ingest", "--container", work.path + "/c", "--report", report, work.path + "/drop",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let items = try Self.items(ofReport: report, root: work.path + "/drop")
        #expect(
            Set(items.keys) == [
                "<drop>/a.jpg", "<drop>/sub/gps.jpg", "<drop>/sub/gps.jpg.xmp", "<drop>/raw/r.jpg", "<drop>/notes.txt",
            ], "\(items.keys.sorted())")

        let none = try ShareProcess.run([
            "ingest", "--container", work.path + "/c2", "--exclude", "*", work.path + "/drop",
        ])
        #expect(none.status == 66, "\(none.status) \(none.stderr)")
        #expect(none.stderr.contains("nothing to ingest: every file was left out"), "\(none.stderr)")
        #expect(none.stdout.isEmpty)
    }

    /// `--dry-run` shows what the selection leaves out; `--resume` takes none of
    /// the choices (a batch keeps those it was started with).
    @Test func theDryRunShowsTheSelectionAndAResumeKeepsItsChoices() throws {
        let work = TemporaryDirectory("filters-plan")
        try Self.makeDrop(at: work.path + "/drop")
        let plan = try ShareProcess.run([
            "ingest", "--dry-run", "--json", "--exclude", "raw/**", "--hidden", work.path + "/drop",
        ])
        #expect(plan.status == 0, "\(plan.stderr)")
        let planned = plan.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let skipped = planned.filter { $0["status"] as? String == "skipped" }.compactMap {
            "\($0["source"] ?? "") \($0["reason"] ?? "")"
        }
        #expect(skipped == [work.path + "/drop/raw/r.jpg filtered"], "\(plan.stdout)")
        #expect(planned.contains { ($0["source"] as? String)?.hasSuffix("/.hid/pixel.jpg") == true }, "\(plan.stdout)")
        #expect(!FileManager.default.fileExists(atPath: work.path + "/c"))

        let resume = try ShareProcess.run([
            "ingest", "--resume", "nosuch", "--container", work.path + "/c", "--taken-after", "2024-01-01",
        ])
        #expect(resume.status == 64, "\(resume.stderr)")
        #expect(
            resume.stderr.contains(
                "--taken-after chooses for a new batch; a resumed batch keeps the choices it was started with"),
            "\(resume.stderr)")
    }

    /// What cannot be meant is refused before anything is made (exit 64), with
    /// what is allowed or the nearest option.
    @Test(arguments: [
        (["--size", "0"], "--size must be a whole number from 16 to 4096"),
        (["--size", "100000"], "--size must be a whole number from 16 to 4096"),
        (["--size", "360,360"], "none twice"),
        (["--format", "jpg"], "--format must be jpeg or webp, not \"jpg\"; did you mean jpeg?"),
        (["--format", "webp"], "with one size (360 px) there is no preview"),
        (["--quality", "101"], "--quality must be a whole number from 1 to 100"),
        (["--include", ""], "--include: the pattern \"\" is empty"),
        (["--exclude", "/.."], "--exclude: the pattern \"/..\" starts with /"),
        (["--include", "a/../b"], "has a . or .. component"),
        (["--include", "a\u{1B}[31m"], "holds a control character"),
        (["--taken-after", "2024-02-30"], "--taken-after \"2024-02-30\" is not a date"),
        (
            ["--taken-after", "2025-01-01", "--taken-before", "2024-01-01"],
            "--taken-before 2024-01-01 is not later than --taken-after 2025-01-01"
        ),
        (["--taken-befor", "2024-01-01"], "unknown option --taken-befor; did you mean --taken-before?"),
        (["--exlude", "x"], "did you mean --exclude?"),
        (
            ["--pipeline", "share-extension", "--taken-after", "2024-01-01"],
            "writes a legacy manifest, which states no capture dates"
        ),
    ])
    func aChoiceThatCannotBeMeantIsRefused(arguments: [String], message: String) throws {
        let work = TemporaryDirectory("filters-refused")
        try Self.makeDrop(at: work.path + "/drop")
        for command in [["ingest", work.path + "/drop"], ["watch", work.path + "/drop", "--once"]] {
            let run = try ShareProcess.run(command + ["--container", work.path + "/c"] + arguments)
            #expect(run.status == 64, "\(command[0]) \(arguments): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains(message), "\(command[0]) \(arguments): \(run.stderr)")
            #expect(
                !FileManager.default.fileExists(atPath: work.path + "/c"),
                "\(command[0]) \(arguments): the container was made")
        }
    }
}
