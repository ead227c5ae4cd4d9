import Foundation
import TestSupport
import Testing

/// Outcomes said as they are (issue 61, findings 2, 3, 4 and 6): what `share`
/// prints and exits with agrees with what it did.
@Suite struct OutcomeWordsTests {
    @Test func aPathThatDoesNotExistIsSaidBeforeTheContainerIsMade() throws {
        let work = TemporaryDirectory("outcome")
        let run = try ShareProcess.run(["ingest", "--container", work.path + "/c", work.path + "/nope"])
        #expect(run.status == 66, "\(run.stderr)")
        #expect(run.stderr.contains("nope: No such file or directory"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.path + "/c"), "no container made for nothing")
    }

    /// One file its user may not read (a root-only file, `share` run as
    /// nobody): exit 66, an input unreadable, said in words, not a call's name.
    @Test func aFileThatCannotBeReadIsSaidInWordsAndIsNoPartialSuccess() throws {
        let work = TemporaryDirectory("outcome")
        chmod(work.path, 0o777)
        let photo = work.path + "/b-unreadable.jpg"
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: photo)
        chmod(photo, 0o600)
        let run = try ShareProcess.run(
            [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", Fixtures.shareBinary, "ingest", "--container",
                work.path + "/c", photo,
            ],
            executable: "/usr/bin/setpriv")
        #expect(run.status == 66, "\(run.stderr)")
        #expect(run.stderr.contains("b-unreadable.jpg: cannot read it: permission denied"), "\(run.stderr)")
        #expect(!run.stderr.contains("openat2"), "no system call's name: \(run.stderr)")
    }

    @Test func anEmptyFolderIsNothingToIngestNotASuccess() throws {
        let work = TemporaryDirectory("outcome")
        try FileManager.default.createDirectory(atPath: work.path + "/empty/.hidden", withIntermediateDirectories: true)
        let run = try ShareProcess.run(["ingest", "--container", work.path + "/c", work.path + "/empty"])
        #expect(run.status == 66, "\(run.stderr)")
        #expect(run.stderr.contains("nothing to ingest: the inputs hold no file"), "\(run.stderr)")
        #expect(run.stdout.isEmpty, "no URL: \(run.stdout)")
    }

    @Test(arguments: [["--no-wait"], ["--timeout", "5"]])
    func databaseOnlyOptionsWithoutADatabaseAreUsageErrors(option: [String]) throws {
        let work = TemporaryDirectory("outcome")
        FileManager.default.createFile(atPath: work.path + "/a.txt", contents: Data("a\n".utf8))
        let run = try ShareProcess.run(["ingest", "--container", work.path + "/c", work.path + "/a.txt"] + option)
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("\(option[0]) is for batches enqueued with --db"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.path + "/c"), "nothing done")
    }

    @Test func dbMigrateSaysWhetherItChangedTheSchema() throws {
        let server = try PostgresServer()
        let first = try ShareProcess.run(["db", "migrate", "--db", server.url])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stderr.contains("share: applied ") && first.stderr.contains("the schema is up to date"),
            "a fresh database: \(first.stderr)")
        let second = try ShareProcess.run(["db", "migrate", "--db", server.url])
        #expect(
            second.status == 0 && second.stderr.contains("the schema was already up to date; nothing changed"),
            "\(second.stderr)")
    }

    /// Suggestions by spelling (issue 61, finding 9): a short option suggests
    /// short options, a long one the nearest name, and a word near no command
    /// suggests none.
    @Test(arguments: [
        (["gc", "-x"], "did you mean --dry-run (-n)?"),
        (["ingest", "-z"], "did you mean --dry-run (-n)?"),
        (["ingest", "--contaner", "x"], "did you mean --container?"),
        (["help", "watc"], "did you mean watch?"),
    ])
    func anUnknownWordSuggestsTheNearestBySpelling(arguments: [String], suggestion: String) throws {
        let run = try ShareProcess.run(arguments)
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains(suggestion), "\(run.stderr)")
    }

    @Test func aWordNearNoCommandSuggestsNone() throws {
        let run = try ShareProcess.run(["help", "nosuch"])
        #expect(run.status == 64 && !run.stderr.contains("did you mean"), "\(run.stderr)")
    }

    /// The same drop twice into one container (issue 61, finding 8): the
    /// summary and the --json batchFinished line count the duplicates.
    @Test func theSummaryCountsDuplicates() throws {
        let work = TemporaryDirectory("outcome-duplicates")
        let drop = work.path + "/drop"
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        for name in ["a.jpg", "b.jpg"] {
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: drop + "/" + name)
        }
        let first = try ShareProcess.run(["ingest", "--container", work.path + "/c", drop])
        #expect(
            first.stderr.contains("2 of 2 items ingested (1 of them a duplicate of an earlier copy: duplicateOf)"),
            "\(first.stderr)")
        let second = try ShareProcess.run(["ingest", "--container", work.path + "/c", "--json", drop])
        let last = try #require(second.stdout.split(separator: "\n").last)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(event["event"] as? String == "batchFinished" && event["duplicates"] as? Int == 2, "\(event)")
    }

    /// `share status --db` right after a batch counts the stages its worker did
    /// (issue 61, finding 10: it said 0, then the real count at the next
    /// heartbeat). The worker's lease is long (a heartbeat every 100 s), so
    /// only the flush when it goes idle can bring the count within a minute.
    @Test func statusCountsAWorkersStagesRightAfterItsBatch() throws {
        let work = TemporaryDirectory("outcome-status")
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        defer { workers.stopAll() }
        try workers.start("counted", lease: 300)
        for index in 1...3 {
            FileManager.default.createFile(atPath: work.path + "/n\(index).txt", contents: Data("note \(index)\n".utf8))
        }
        let ingest = try ShareProcess.run(["ingest", "--db", server.url, "--container", work.path + "/c", work.path])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        var status = ""
        let counted = eventually(timeout: 60) {
            status = (try? ShareProcess.run(["status", "--db", server.url]).stdout) ?? ""
            return status.contains("counted  live") && !status.contains(" 0 stages done")
        }
        #expect(counted, "\(status)")
    }
}
