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
}
