import Foundation
import TestSupport
import Testing

/// Moments in both modes: the motion stage and the Live Photo pairing of the
/// fan-in run the same through `share ingest` (sandboxed helpers, SQLite
/// journal) and `share ingest --db` with a real `share worker` (PostgreSQL):
/// the same videos extracted from the same photos, the same halves linked.
@Suite(.serialized) struct MomentModeTests {
    /// Every motion-photo layout and the Live Photo folder of testdata/motion.
    static func makeDrop(at folder: String) throws {
        let files = FileManager.default
        try files.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in [
            "google-container.jpg", "microvideo.jpg", "samsung-trailer.jpg", "appended.jpg", "motion.heic",
            "truncated-playable.jpg",
            "truncated-unplayable.jpg", "video-removed.jpg",
        ] {
            try files.copyItem(atPath: Fixtures.motion(name), toPath: folder + "/" + name)
        }
        try files.copyItem(atPath: Fixtures.motion("live"), toPath: folder + "/live")
    }

    /// What a report says of each item's moment, with container paths replaced
    /// by the source they came from (two containers name copies differently).
    static func moments(ofReport path: String, drop: String) throws -> [String: String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let items = try #require(report["items"] as? [[String: Any]])
        var sourceOfPath: [String: String] = [:]
        for item in items {
            if let copy = item["path"] as? String, let source = item["source"] as? String {
                sourceOfPath[copy] = source.replacingOccurrences(of: drop, with: "<drop>")
            }
        }
        var described: [String: String] = [:]
        for item in items {
            let source = (item["source"] as? String ?? "?").replacingOccurrences(of: drop, with: "<drop>")
            var parts = ["status=\(item["status"] ?? "?")"]
            if let video = item["motionVideo"] as? [String: Any] {
                parts.append(
                    "motionVideo=\(video["duration"] ?? "?")ms \(video["width"] ?? "?")x\(video["height"] ?? "?") \(video["size"] ?? "?")B poster=\(video["thumbnail"] != nil)"
                )
            }
            if let live = item["livePhoto"] as? [String: Any] {
                let photo = sourceOfPath[live["photo"] as? String ?? ""] ?? "?"
                let movie = sourceOfPath[live["video"] as? String ?? ""] ?? "?"
                parts.append(
                    "livePhoto=\(photo)+\(movie) by \(live["pairedBy"] ?? "?") \(live["contentIdentifier"] ?? "-")")
            }
            let warnings = (item["warnings"] as? [String] ?? []).map {
                $0.replacingOccurrences(of: drop, with: "<drop>")
            }
            if !warnings.isEmpty { parts.append("warnings=\(warnings.joined(separator: " | "))") }
            described[source] = parts.joined(separator: "; ")
        }
        return described
    }

    @Test func bothModesExtractAndPairAlike() throws {
        let work = TemporaryDirectory("moments")
        let root = (work.path as NSString).standardizingPath
        let drop = root + "/drop"
        try Self.makeDrop(at: drop)
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("moments")
        defer { workers.stopAll() }

        let local = try ShareProcess.run([
            "ingest", "--container", root + "/c-local", "--report", root + "/local.json", drop,
        ])
        #expect(local.status == 0, "\(local.stderr)")
        let remote = try ShareProcess.run([
            "ingest", "--db", server.url, "--container", root + "/c-remote", "--report", root + "/remote.json", drop,
        ])
        #expect(remote.status == 0, "\(remote.stderr) \(workers.log("moments"))")

        let here = try Self.moments(ofReport: root + "/local.json", drop: drop)
        let there = try Self.moments(ofReport: root + "/remote.json", drop: drop)
        #expect(here.count == 16, "\(here.keys.sorted())")
        for source in Set(here.keys).union(there.keys).sorted() where here[source] != there[source] {
            Issue.record(
                "\(source): ingest says \(here[source] ?? "nothing"), ingest --db says \(there[source] ?? "nothing")")
        }
        // What both say.
        for name in [
            "google-container.jpg", "microvideo.jpg", "samsung-trailer.jpg", "appended.jpg", "motion.heic",
            "truncated-playable.jpg",
        ] {
            #expect(
                here["<drop>/\(name)"]?.contains("motionVideo=") == true, "\(name): \(here["<drop>/\(name)"] ?? "")")
        }
        #expect(here["<drop>/truncated-unplayable.jpg"]?.contains("motionVideo=") == false)
        #expect(here["<drop>/video-removed.jpg"] == "status=ingested")
        #expect(
            here["<drop>/live/IMG_0001.MOV"]?.contains(
                "livePhoto=<drop>/live/IMG_0001.JPG+<drop>/live/IMG_0001.MOV by contentIdentifier 5A8B1D0E") == true)
        #expect(
            here["<drop>/live/IMG_0002.JPG"]?.contains(
                "livePhoto=<drop>/live/IMG_0002.JPG+<drop>/live/IMG_0002_HEVC.MOV by nameAndTime") == true)
        for name in ["IMG_0003.JPG", "IMG_0003.MOV", "IMG_0004.JPG", "IMG_0004.MOV"] {
            #expect(here["<drop>/live/\(name)"]?.contains("livePhoto") == false, "\(name)")
        }
        // The remote container holds the same files: each photo, each extracted video.
        for container in [root + "/c-local", root + "/c-remote"] {
            let videos = try FileManager.default.contentsOfDirectory(atPath: container).filter { $0.hasSuffix(".mp4") }
            #expect(videos.count == 6, "\(container): \(videos)")
        }
    }
}
