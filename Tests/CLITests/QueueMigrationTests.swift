import Foundation
import TestSupport
import Testing

/// An operator upgrading share with a batch in flight: a PostgreSQL queue at
/// schema version 2, as the last share with that schema left it
/// (testdata/distributed/v2-queue, made by make-v2-queue.sh with a build of
/// 40313a1: one finished batch; one whose thumbnail worker was killed, with
/// thumbnails done, queued, and one running under the dead worker's lease).
/// Today's share refuses it until `share db migrate` upgrades it in place; then
/// today's workers finish the batch.
@Suite struct QueueMigrationTests {
    /// The migrations this share has (QueueSchema.migrations): the schema version it writes and needs.
    // The count of migrations (the last: "11-perceptual-hash").
    static let schemaVersion = 11

    static let fixture = Fixtures.packageRoot.appendingPathComponent("testdata/distributed/v2-queue").path
    /// The folder the fixture's files lived in when it was made.
    static let madeIn = "/tmp/share-v2-queue"

    @Test func aVersion2QueueLeftMidBatchIsMigratedAndFinishedByTodaysWorkers() throws {
        let server = try PostgresServer()
        let work = TemporaryDirectory("v2-queue")
        let root = (work.path as NSString).standardizingPath
        let files = FileManager.default
        // The containers as version 2 left them, and the drops they came from.
        for name in ["container-done", "container-inflight"] {
            try files.copyItem(atPath: Self.fixture + "/" + name, toPath: root + "/" + name)
            // git keeps no empty folder: the container's own are made again (a
            // worker refuses a container it cannot write into).
            for folder in ["thumbnails", "manifests/consumed", ".share-ingest/reports"] {
                try files.createDirectory(atPath: root + "/" + name + "/" + folder, withIntermediateDirectories: true)
            }
        }
        try files.copyItem(
            atPath: Fixtures.packageRoot.appendingPathComponent("testdata/sample-drop").path,
            toPath: root + "/drop-inflight")
        try files.createDirectory(atPath: root + "/drop-done", withIntermediateDirectories: false)
        let dump = try String(contentsOfFile: Self.fixture + "/queue.sql", encoding: .utf8)
        _ = try server.sql(dump.replacingOccurrences(of: Self.madeIn, with: root))
        let doneManifest = try Data(
            contentsOf: URL(fileURLWithPath: root + "/container-done/manifests/ShareKey-done.json"))

        // Not migrated yet: every command says what to do, and does nothing.
        let refused = try ShareProcess.run(["status", "--db", server.url])
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains(
                "schema is at version 2; this share needs \(Self.schemaVersion): run  share db migrate"),
            "\(refused.stderr)")

        let migrate = try ShareProcess.run(["db", "migrate", "--db", server.url])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect(
            try server.sql("SELECT max(version) FROM share_schema").trimmingCharacters(in: .whitespacesAndNewlines)
                == "\(Self.schemaVersion)")
        #expect(
            try server.sql("SELECT count(*) FROM share_migrations").trimmingCharacters(in: .whitespacesAndNewlines)
                == "\(Self.schemaVersion)")

        // Migrated: the finished batch as it was; the other still running, with
        // the items whose thumbnails were made finished and the rest to do.
        let before = DistributedTests.lines(try DistributedTests.status(server.url), type: "batch")
        let done = try #require(before.first { $0["key"] as? String == "ShareKey-done" })
        #expect(
            done["state"] as? String == "done" && done["finished"] as? Int == 3 && done["ingested"] as? Int == 3,
            "\(done)")
        let inflight = try #require(before.first { $0["key"] as? String == "ShareKey-inflight" })
        #expect(inflight["state"] as? String == "running" && inflight["items"] as? Int == 7, "\(inflight)")
        let finishedBefore = try #require(inflight["finished"] as? Int)
        #expect(finishedBefore >= 2 && finishedBefore < 7, "\(inflight)")
        #expect(inflight["manifestJob"] as? String == "waiting", "\(inflight)")

        // Today's worker finishes it: the job the dead worker held included.
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("today")
        let finished = try eventually {
            DistributedTests.lines(try DistributedTests.status(server.url), type: "batch").contains {
                $0["key"] as? String == "ShareKey-inflight" && $0["state"] as? String != "running"
            }
        }
        workers.stopAll()
        #expect(finished, "the migrated batch did not finish: \(workers.log("today"))")
        let after = DistributedTests.lines(try DistributedTests.status(server.url), type: "batch")
        let ended = try #require(after.first { $0["key"] as? String == "ShareKey-inflight" })
        #expect(
            ended["state"] as? String == "done" && ended["ingested"] as? Int == 7 && ended["failed"] as? Int == 0,
            "\(ended)")

        // Its manifest: every item, each copy in the container, and the thumbnails
        // of the pictures and the video (made before and after the upgrade) on disk.
        let entries = try DistributedTests.manifestEntries(root + "/container-inflight")
        #expect(entries.count == 7)
        for entry in entries {
            let path = try #require((entry["path"] as? String).flatMap { URL(string: $0)?.path })
            #expect(path.hasPrefix(root + "/container-inflight/") && files.fileExists(atPath: path), "\(entry)")
            if ["image", "video"].contains(entry["type"] as? String) {
                let thumbnail = try #require(
                    (entry["thumbnail"] as? String).flatMap { URL(string: $0)?.path }, "\(entry)")
                #expect(files.fileExists(atPath: thumbnail), "\(entry)")
            }
        }
        #expect(entries.count { ["image", "video"].contains($0["type"] as? String) } >= 4)
        // The finished batch's manifest was not touched, and its resume says so.
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: root + "/container-done/manifests/ShareKey-done.json"))
                == doneManifest)
        let resume = try ShareProcess.run(["ingest", "--db", server.url, "--resume", "ShareKey-inflight"])
        #expect(resume.status == 0, "\(resume.stderr)")
        #expect(
            resume.stdout.split(separator: "\n").last.map(String.init) == ended["redirectURL"] as? String,
            "\(resume.stdout)")
    }

    /// A database that a newer share migrated further is refused by every
    /// command, with what to do, rather than used half-understood; so is one
    /// whose legacy version number says so (a share from before named migrations).
    @Test func aDatabaseMigratedByANewerShareIsRefused() throws {
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        _ = try server.sql("INSERT INTO share_migrations (name) VALUES ('99-from-the-future')")
        for arguments in [
            ["status", "--db", server.url], ["db", "migrate", "--db", server.url], ["worker", "--db", server.url],
        ] {
            let refused = try ShareProcess.run(arguments)
            #expect(refused.status == 69, "\(arguments): \(refused.stderr)")
            #expect(
                refused.stderr.contains("its migration 99-from-the-future is unknown to this one")
                    && refused.stderr.contains("upgrade share"), "\(refused.stderr)")
        }
        _ = try server.sql(
            "DELETE FROM share_migrations WHERE name = '99-from-the-future'; DROP TABLE share_migrations; UPDATE share_schema SET version = \(Self.schemaVersion + 1)"
        )
        let legacy = try ShareProcess.run(["status", "--db", server.url])
        #expect(legacy.status == 69)
        #expect(
            legacy.stderr.contains(
                "schema is at version \(Self.schemaVersion + 1), newer than this share understands (\(Self.schemaVersion)): upgrade share"
            ), "\(legacy.stderr)")
    }
}
