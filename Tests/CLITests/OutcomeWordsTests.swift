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
        #expect(first.stderr.contains("share: applied ") && first.stderr.contains("the schema is up to date"), "a fresh database: \(first.stderr)")
        let second = try ShareProcess.run(["db", "migrate", "--db", server.url])
        #expect(second.status == 0 && second.stderr.contains("the schema was already up to date; nothing changed"), "\(second.stderr)")
    }
}
