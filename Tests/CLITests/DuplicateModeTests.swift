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
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let items = try #require(report["items"] as? [[String: Any]])
        for item in items {
            if let copy = item["path"] as? String, let source = item["source"] as? String {
                sourceOfCopy[copy] = (source as NSString).lastPathComponent
            }
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
        let first = TemporaryDirectory("duplicate-first")
        let second = TemporaryDirectory("duplicate-second")
        let third = TemporaryDirectory("duplicate-third")
        for name in ["a-photo.jpg", "b-again.jpg", "c-and-again.jpg"] {
            try first.add(name, copying: Fixtures.media("photo.jpg"))
        }
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
                let run = try ShareProcess.run(
                    ["ingest"] + database + ["--container", container, "--report", report, drop.path])
                #expect(run.status == 0, "\(mode): \(run.stderr) \(workers.log("duplicates"))")
                let found = try Self.duplicates(inReport: report, sourceOfCopy: &sourceOfCopy)
                if index == 0 {
                    #expect(
                        found == [
                            "a-photo.jpg": "-", "b-again.jpg": "a-photo.jpg", "c-and-again.jpg": "a-photo.jpg",
                            "d-other.png": "-",
                        ], "\(mode): \(found)")
                } else {
                    // Both earlier shares hold the photo: the first delivery is the first share's.
                    let name = index == 1 ? "e-once-more.jpg" : "f-and-once-more.jpg"
                    #expect(
                        found == [name: "a-photo.jpg"],
                        "\(mode): share \(index + 1)'s copy points at the first share's: \(found)")
                }
            }
        }
    }

    /// Runs `share ingest` over `drop` in the mode, its report read back: the
    /// duplicates found, the URL printed and the run.
    static func ingest(
        _ drop: TemporaryDirectory, mode database: [String], container: String, report: String,
        sourceOfCopy: inout [String: String],
        environment: [String: String] = [:]
    ) throws -> (found: [String: String], url: String, run: ShareProcess) {
        let run = try ShareProcess.run(
            ["ingest"] + database + ["--container", container, "--report", report, drop.path], environment: environment)
        let found = try duplicates(inReport: report, sourceOfCopy: &sourceOfCopy)
        let url = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return (found, url, run)
    }

    /// Once the host consumed a share, its copies are the app's: the same photo
    /// shared again is no duplicate of them (while the share was unconsumed, it was).
    @Test func aConsumedShareIsNoOnesOriginalInBothModes() throws {
        let work = TemporaryDirectory("duplicate-consumed")
        let root = (work.path as NSString).standardizingPath
        let first = TemporaryDirectory("consumed-first")
        let second = TemporaryDirectory("consumed-second")
        let third = TemporaryDirectory("consumed-third")
        try first.add("a-photo.jpg", copying: Fixtures.media("photo.jpg"))
        try second.add("b-again.jpg", copying: Fixtures.media("photo.jpg"))
        try third.add("c-after-consuming.jpg", copying: Fixtures.media("photo.jpg"))

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("consumed")
        defer { workers.stopAll() }

        for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
            var sourceOfCopy: [String: String] = [:]
            let container = root + "/c-" + mode
            let one = try Self.ingest(
                first, mode: database, container: container, report: root + "/\(mode)-1.json",
                sourceOfCopy: &sourceOfCopy)
            #expect(one.run.status == 0 && one.found == ["a-photo.jpg": "-"], "\(mode): \(one.run.stderr) \(one.found)")
            let two = try Self.ingest(
                second, mode: database, container: container, report: root + "/\(mode)-2.json",
                sourceOfCopy: &sourceOfCopy)
            #expect(
                two.found == ["b-again.jpg": "a-photo.jpg"],
                "\(mode): the first share is not consumed yet: \(two.found)")
            for url in [one.url, two.url] {
                let open = try ShareProcess.run(["open", url, "--container", container, "--consume"])
                #expect(open.status == 0, "\(mode): \(url): \(open.stderr)")
            }
            let three = try Self.ingest(
                third, mode: database, container: container, report: root + "/\(mode)-3.json",
                sourceOfCopy: &sourceOfCopy)
            #expect(three.run.status == 0, "\(mode): \(three.run.stderr) \(workers.log("consumed"))")
            #expect(
                three.found == ["c-after-consuming.jpg": "-"],
                "\(mode): both earlier shares are consumed: \(three.found)")
        }
    }

    /// An item that failed after its copy was made (its decoder aborted) leaves
    /// nothing behind: the next copy of its content, in its share or a later one,
    /// is no duplicate of it; the first copy that was delivered is the original.
    @Test func aFailedItemIsNoOnesOriginalInBothModes() throws {
        let work = TemporaryDirectory("duplicate-failed")
        let root = (work.path as NSString).standardizingPath
        let first = TemporaryDirectory("failed-first")
        let second = TemporaryDirectory("failed-second")
        let third = TemporaryDirectory("failed-third")
        for name in ["a-aborts.jpg", "b-photo.jpg", "c-again.jpg"] {
            try first.add(name, copying: Fixtures.media("photo.jpg"))
        }
        // A later share whose only copy of the content fails: later shares find the first delivered one.
        try second.add("d-aborts-too.jpg", copying: Fixtures.media("photo.jpg"))
        try third.add("e-later.jpg", copying: Fixtures.media("photo.jpg"))
        let fault = ["SHARE_TEST_HELPER_FAULT": "abort:a-aborts.jpg,abort:d-aborts-too.jpg"]

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url, environment: fault)
        try workers.start("failed")
        defer { workers.stopAll() }

        for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
            var sourceOfCopy: [String: String] = [:]
            let container = root + "/c-" + mode
            let one = try Self.ingest(
                first, mode: database, container: container, report: root + "/\(mode)-1.json",
                sourceOfCopy: &sourceOfCopy, environment: fault)
            #expect(one.run.status == 1, "\(mode): a-aborts.jpg fails: \(one.run.stderr) \(workers.log("failed"))")
            #expect(
                one.found == ["a-aborts.jpg": "-", "b-photo.jpg": "-", "c-again.jpg": "b-photo.jpg"],
                "\(mode): \(one.found)")
            let two = try Self.ingest(
                second, mode: database, container: container, report: root + "/\(mode)-2.json",
                sourceOfCopy: &sourceOfCopy, environment: fault)
            #expect(
                two.run.status == 1 && two.found == ["d-aborts-too.jpg": "-"], "\(mode): \(two.run.stderr) \(two.found)"
            )
            let three = try Self.ingest(
                third, mode: database, container: container, report: root + "/\(mode)-3.json",
                sourceOfCopy: &sourceOfCopy, environment: fault)
            #expect(three.run.status == 0, "\(mode): \(three.run.stderr)")
            #expect(
                three.found == ["e-later.jpg": "b-photo.jpg"],
                "\(mode): the failed copies of the first two shares are no one's originals: \(three.found)")
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
        for index in 1...count {
            _ = try drop.add(String(format: "note-%04d.txt", index), bytes: Array("the same words\n".utf8))
        }

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("pages")
        defer { workers.stopAll() }

        for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
            for policy in ["keep", "skip"] {
                let pipeline = try LocationPrivacyTests.pipeline(in: work, location: false, duplicates: policy)
                let container = root + "/c-\(mode)-\(policy)"
                let report = root + "/\(mode)-\(policy).json"
                let run = try ShareProcess.run(
                    ["ingest"] + database + [
                        "--pipeline", pipeline, "--container", container, "--report", report, drop.path,
                    ])
                let items = try LocationPrivacyTests.reportItems(report)
                #expect(items.count == count, "\(mode) \(policy): \(run.stderr) \(workers.log("pages"))")
                let first = try #require(items["note-0001.txt"]?["path"] as? String, "\(mode) \(policy)")
                let later = items.filter { $0.key != "note-0001.txt" }.map(\.value)
                let copies = try FileManager.default.contentsOfDirectory(atPath: container).filter {
                    $0.hasSuffix(".txt")
                }
                if policy == "keep" {
                    #expect(run.status == 0, "\(mode): \(run.stderr)")
                    #expect(
                        later.allSatisfy { $0["duplicateOf"] as? String == first },
                        "\(mode): every later copy names the first")
                    #expect(copies.count == count, "\(mode): keep leaves every copy")
                } else {
                    #expect(
                        later.allSatisfy { $0["status"] as? String == "skipped" },
                        "\(mode): \(Set(later.compactMap { $0["status"] as? String }))")
                    #expect(
                        copies == [(first as NSString).lastPathComponent],
                        "\(mode): skip leaves the first copy alone: \(copies.count) copies")
                    if mode == "remote" {
                        // The queue holds what the fan-in decided, every page of it (what a
                        // later share's duplicates and `share status` read).
                        let recorded = try server.sql("SELECT count(*) FROM share_jobs WHERE reason = 'duplicate'")
                        #expect(
                            recorded.trimmingCharacters(in: .whitespacesAndNewlines) == String(count - 1),
                            "recorded skips: \(recorded)")
                    }
                }
            }
        }
    }
}
