import Foundation
import TestSupport
import Testing

/// One item lifecycle for every mode: the same mixed drop through `share ingest`,
/// `ingest --db` (a real worker), `watch --once` and `watch --once --db` gives
/// the same report, item by item: what each item became, why, and under which
/// name it is shown (the drop's place as the user knows it, never a worker's
/// `.processing/<batch>/` path).
@Suite(.serialized) struct ModeAgreementTests {
    /// Good, broken, mislabelled, video, audio, renamed, empty, nested and
    /// not-a-file entries, a panorama, a stereo pair and a gain map.
    static func makeDrop(at folder: String) throws {
        let files = FileManager.default
        try files.createDirectory(atPath: folder + "/nested/deeper", withIntermediateDirectories: true)
        for (name, source) in [
            ("photo.jpg", "photo.jpg"), ("broken.jpg", "truncated.jpg"), ("random.jpg", "random.jpg"),
            ("clip.mp4", "clip-h264.mp4"),
            ("voice.mp3", "audio.mp3"), ("renamed.png", "jpeg-named.png"), ("no-extension", "no-extension-jpeg"),
            ("empty.jpg", "empty.jpg"),
            ("nested/notes.txt", "notes.txt"), ("nested/deeper/document.pdf", "document.pdf"),
            ("truncated.mp4", "truncated.mp4"),
        ] {
            try files.copyItem(atPath: Fixtures.media(source), toPath: folder + "/" + name)
        }
        // How a picture is meant to be shown (a 360° panorama, a stereo pair, a gain map) survives every mode too.
        for name in ["pano-360.jpg", "spatial.heic", "ultrahdr.jpg", "apple-hdr-tmap.heic", "sdr-tmap.avif"] {
            try files.copyItem(atPath: Fixtures.testdata("spatial/" + name), toPath: folder + "/" + name)
        }
        // A capture time without an offset, at a position: the place's offset (issue 54).
        try files.copyItem(atPath: Fixtures.privacy("exif6-gps.jpg"), toPath: folder + "/exif6-gps.jpg")
        #expect(mkfifo(folder + "/pipe", 0o644) == 0)
        try Data("hidden".utf8).write(to: URL(fileURLWithPath: folder + "/.hidden"))
    }

    /// The fields of a report that must agree across modes; `root` (where the
    /// drop was, as shown) is replaced by `<drop>`.
    static func items(ofReport path: String, root: String) throws -> [[String: String]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let items = try #require(report["items"] as? [[String: Any]])
        return items.map { item in
            var fields: [String: String] = [:]
            for key in [
                "source", "status", "type", "mimeType", "size", "width", "height", "duration", "stage", "reason",
                "error", "fileName", "thumbhash",
            ] {
                if let value = item[key] { fields[key] = "\(value)".replacingOccurrences(of: root, with: "<drop>") }
            }
            // Facts with structure, written with sorted keys so that equal values read the same.
            for key in [
                "projection", "stereo", "hdr", "thumbnailHdr", "capturedAt", "capturedAtSource",
                "capturedAtOffsetSource", "capturedAtOffsetKnown", "video",
            ] {
                if let value = item[key],
                    let json = try? JSONSerialization.data(
                        withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
                {
                    fields[key] = String(decoding: json, as: UTF8.self)
                }
            }
            // A file time is when the drop's copy was made, different for each drop.
            if item["capturedAtSource"] as? String == "fileTime" { fields["capturedAt"] = "<file time>" }
            if let path = item["path"] as? String { fields["extension"] = URL(string: path)?.pathExtension ?? path }
            if let warnings = item["warnings"] as? [String] {
                fields["warnings"] = warnings.map { $0.replacingOccurrences(of: root, with: "<drop>") }.joined(
                    separator: " | ")
            }
            fields["thumbnail"] = item["thumbnail"] == nil ? "no" : "yes"
            return fields
        }
    }

    /// The report path a `watch` line names (`… report=<path>`).
    static func reportPath(ofWatchLine line: Substring) throws -> String {
        let field = try #require(line.split(separator: " ").first { $0.hasPrefix("report=") })
        return String(field.dropFirst("report=".count))
    }

    @Test func theSameDropGivesTheSameReportInEveryMode() throws {
        let work = TemporaryDirectory("modes")
        let root = (work.path as NSString).standardizingPath
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("agreement")
        defer { workers.stopAll() }

        // ingest, locally and through the worker.
        let drop = root + "/drop"
        try Self.makeDrop(at: drop)
        let local = try ShareProcess.run([
            "ingest", "--container", root + "/c-local", "--report", root + "/local.json", drop,
        ])
        #expect(local.status == 1, "\(local.stderr)")  // some items fail, the rest are delivered
        let remote = try ShareProcess.run([
            "ingest", "--db", server.url, "--container", root + "/c-remote", "--report", root + "/remote.json", drop,
        ])
        #expect(remote.status == 1, "\(remote.stderr) \(workers.log("agreement"))")

        // watch --once, locally and through the worker: each inbox holds one drop.
        var watched: [String: String] = [:]
        for mode in ["watch-local", "watch-remote"] {
            let inbox = root + "/inbox-" + mode
            try Self.makeDrop(at: inbox + "/holiday")
            _ = FileManager.default.createFile(atPath: inbox + "/holiday/.ready", contents: nil)
            let database = mode == "watch-remote" ? ["--db", server.url] : []
            let watch = try ShareProcess.run(["watch", inbox, "--container", root + "/c-" + mode, "--once"] + database)
            #expect(watch.status == 0, "\(watch.stderr)")
            let line = try #require(watch.stdout.split(separator: "\n").first, "\(watch.stderr)")
            watched[mode] = try Self.reportPath(ofWatchLine: line)
        }

        let reports = [
            "ingest": try Self.items(ofReport: root + "/local.json", root: drop),
            "ingest --db": try Self.items(ofReport: root + "/remote.json", root: drop),
            "watch --once": try Self.items(
                ofReport: try #require(watched["watch-local"]), root: root + "/inbox-watch-local/holiday"),
            "watch --once --db": try Self.items(
                ofReport: try #require(watched["watch-remote"]), root: root + "/inbox-watch-remote/holiday"),
        ]
        let reference = try #require(reports["ingest"])
        // Every entry of the drop, hidden ones excepted, and a mix of outcomes.
        #expect(reference.count == 18, "\(reference.map { $0["source"] ?? "" })")
        #expect(
            reference.contains {
                $0["source"] == "<drop>/exif6-gps.jpg" && $0["capturedAt"] == "\"2024-06-01T09:15:00+02:00\""
                    && $0["capturedAtOffsetSource"] == "\"position\""
            },
            "\(reference)")
        #expect(
            reference.contains {
                $0["source"] == "<drop>/pano-360.jpg" && $0["projection"]?.contains("equirectangular") == true
            }, "\(reference)")
        #expect(reference.contains { $0["source"] == "<drop>/spatial.heic" && $0["stereo"] == "true" }, "\(reference)")
        #expect(
            reference.contains {
                $0["source"] == "<drop>/ultrahdr.jpg" && $0["hdr"] == "\"gainMap\""
                    && $0["thumbnailHdr"] == "\"gainMap\""
            }, "\(reference)")
        #expect(
            reference.contains {
                $0["source"] == "<drop>/apple-hdr-tmap.heic" && $0["hdr"] == "\"gainMap\""
                    && $0["thumbnailHdr"] == "\"gainMap\""
            }, "\(reference)")
        #expect(
            reference.contains {
                $0["source"] == "<drop>/sdr-tmap.avif" && $0["hdr"] == "\"gainMap\""
                    && $0["thumbnailHdr"] == "\"gainMap\""
            }, "\(reference)")
        #expect(reference.contains { $0["source"] == "<drop>/clip.mp4" && $0["video"] != nil }, "\(reference)")
        #expect(Set(reference.compactMap { $0["status"] }) == ["ingested", "failed", "skipped"], "\(reference)")
        #expect(
            reference.contains { $0["source"] == "<drop>/nested/deeper/document.pdf" && $0["status"] == "ingested" })
        // Every thumbnail has its ThumbHash, the same in every mode (it survives the worker's ItemState round trip).
        #expect(reference.allSatisfy { ($0["thumbnail"] == "yes") == ($0["thumbhash"] != nil) }, "\(reference)")
        #expect(
            reference.allSatisfy { $0["source"]?.hasPrefix("<drop>/") == true },
            "\(reference.map { $0["source"] ?? "" })")
        for (mode, items) in reports where mode != "ingest" {
            #expect(items.count == reference.count, "\(mode): \(items.count) items, ingest \(reference.count)")
            for (index, (item, expected)) in zip(items, reference).enumerated() {
                for key in Set(item.keys).union(expected.keys) where item[key] != expected[key] {
                    Issue.record(
                        "\(mode), item \(index) (\(expected["source"] ?? "?")): \(key) is \(item[key] ?? "absent"), ingest says \(expected[key] ?? "absent")"
                    )
                }
            }
        }
    }
}
