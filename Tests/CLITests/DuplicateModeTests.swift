import Foundation
import TestSupport
import Testing

/// Duplicates in both modes: `share ingest` (SQLite journal) and `share ingest
/// --db` with a real `share worker` (PostgreSQL) find the same photo delivered
/// three times in one share, and again in a second and a third share while the
/// earlier ones are not consumed, and point every later copy at the first one.
@Suite(.serialized) struct DuplicateModeTests {
    /// Source name → the source whose copy its `duplicateOf` names ("-" for none).
    static func duplicates(inReport path: String, sourceOfCopy: inout [String: String]) throws -> [String: String] {
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let items = try #require(report["items"] as? [[String: Any]])
        for item in items {
            if let copy = item["path"] as? String, let source = item["source"] as? String { sourceOfCopy[copy] = (source as NSString).lastPathComponent }
        }
        var found: [String: String] = [:]
        for item in items {
            let name = ((item["source"] as? String ?? "?") as NSString).lastPathComponent
            found[name] = (item["duplicateOf"] as? String).map { sourceOfCopy[$0] ?? "unknown \($0)" } ?? "-"
        }
        return found
    }

    @Test func bothModesFindDuplicatesWithinAndAcrossShares() throws {
        let work = TemporaryDirectory("duplicate-modes")
        let root = (work.path as NSString).standardizingPath
        let first = TemporaryDirectory("duplicate-first"), second = TemporaryDirectory("duplicate-second"), third = TemporaryDirectory("duplicate-third")
        for name in ["a-photo.jpg", "b-again.jpg", "c-and-again.jpg"] { try first.add(name, copying: Fixtures.media("photo.jpg")) }
        try first.add("d-other.png", copying: Fixtures.media("screenshot.png"))
        try second.add("e-once-more.jpg", copying: Fixtures.media("photo.jpg"))
        try third.add("f-and-once-more.jpg", copying: Fixtures.media("photo.jpg"))

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("duplicates")
        defer { workers.stopAll() }

        for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
            var sourceOfCopy: [String: String] = [:]
            let container = root + "/c-" + mode
            for (index, drop) in [first, second, third].enumerated() {
                let report = root + "/\(mode)-\(index).json"
                let run = try ShareProcess.run(["ingest"] + database + ["--container", container, "--report", report, drop.path])
                #expect(run.status == 0, "\(mode): \(run.stderr) \(workers.log("duplicates"))")
                let found = try Self.duplicates(inReport: report, sourceOfCopy: &sourceOfCopy)
                if index == 0 {
                    #expect(found == ["a-photo.jpg": "-", "b-again.jpg": "a-photo.jpg", "c-and-again.jpg": "a-photo.jpg", "d-other.png": "-"], "\(mode): \(found)")
                } else {
                    // Both earlier shares hold the photo: the first delivery is the first share's.
                    let name = index == 1 ? "e-once-more.jpg" : "f-and-once-more.jpg"
                    #expect(found == [name: "a-photo.jpg"], "\(mode): share \(index + 1)'s copy points at the first share's: \(found)")
                }
            }
        }
    }

    /// More duplicates than the fan-in reads in a page (it records what it
    /// changed a page at a time): 1,200 copies of one note, in both modes, with
    /// `keep` (every later copy names the first) and `skip` (one delivered, the
    /// other copies gone from the container and the manifest).
    @Test func duplicatesBeyondOnePageOfTheFanInAreAllResolvedInBothModes() throws {
        let work = TemporaryDirectory("duplicate-pages")
        let root = (work.path as NSString).standardizingPath
        let drop = TemporaryDirectory("duplicate-pages-drop")
        let count = 1200
        for index in 1...count { _ = try drop.add(String(format: "note-%04d.txt", index), bytes: Array("the same words\n".utf8)) }

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("pages")
        defer { workers.stopAll() }

        for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
            for policy in ["keep", "skip"] {
                let pipeline = try LocationPrivacyTests.pipeline(in: work, location: false, duplicates: policy)
                let container = root + "/c-\(mode)-\(policy)", report = root + "/\(mode)-\(policy).json"
                let run = try ShareProcess.run(["ingest"] + database + ["--pipeline", pipeline, "--container", container, "--report", report, drop.path])
                let items = try LocationPrivacyTests.reportItems(report)
                #expect(items.count == count, "\(mode) \(policy): \(run.stderr) \(workers.log("pages"))")
                let first = try #require(items["note-0001.txt"]?["path"] as? String, "\(mode) \(policy)")
                let later = items.filter { $0.key != "note-0001.txt" }.map(\.value)
                let copies = try FileManager.default.contentsOfDirectory(atPath: container).filter { $0.hasSuffix(".txt") }
                if policy == "keep" {
                    #expect(run.status == 0, "\(mode): \(run.stderr)")
                    #expect(later.allSatisfy { $0["duplicateOf"] as? String == first }, "\(mode): every later copy names the first")
                    #expect(copies.count == count, "\(mode): keep leaves every copy")
                } else {
                    #expect(later.allSatisfy { $0["status"] as? String == "skipped" }, "\(mode): \(Set(later.compactMap { $0["status"] as? String }))")
                    #expect(copies == [(first as NSString).lastPathComponent], "\(mode): skip leaves the first copy alone: \(copies.count) copies")
                    if mode == "remote" {
                        // The queue holds what the fan-in decided, every page of it (what a
                        // later share's duplicates and `share status` read).
                        let recorded = try server.sql("SELECT count(*) FROM share_jobs WHERE reason = 'duplicate'")
                        #expect(recorded.trimmingCharacters(in: .whitespacesAndNewlines) == String(count - 1), "recorded skips: \(recorded)")
                    }
                }
            }
        }
    }
}
