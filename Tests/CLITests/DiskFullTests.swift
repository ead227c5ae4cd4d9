import Foundation
import TestSupport
import Testing

/// A full disk is its own outcome (issue 58): `share` says so and exits 73,
/// never as if it were interrupted; read-only commands still work; after space
/// is freed, the resume it suggests delivers every item once, including those
/// that waited for space. The container is a small tmpfs, with the journal in
/// it (its writes fail first with many small files) and outside it
/// (`SHARE_STATE_DIR`: the copies and thumbnails fail).
@Suite(.serialized) struct DiskFullTests {
    enum Journal: String, CaseIterable, CustomTestStringConvertible {
        case insideTheContainer, outsideTheContainer
        var testDescription: String { rawValue }
    }

    @Test(arguments: Journal.allCases)
    func aFullDiskStopsIngestAsDiskFullAndTheResumeDeliversEveryItemOnce(journal: Journal) throws {
        guard let disk = Tmpfs(kilobytes: 5 * 1024) else { return }
        let drop = try Self.photosAndNotes(photos: 200, notes: 100)
        let container = disk.path + "/c"
        let state = TemporaryDirectory("state")
        let environment = journal == .outsideTheContainer ? ["SHARE_STATE_DIR": state.path] : [:]

        let first = try ShareProcess.run(["ingest", "--container", container, drop.path], environment: environment)
        #expect(first.status == 73, "exit \(first.status): \(first.stderr.suffix(2000))")
        #expect(first.stderr.contains("container disk full"), "\(first.stderr.suffix(2000))")
        #expect(!first.stderr.contains("interrupted"), "a full disk is not a Ctrl-C: \(first.stderr.suffix(2000))")
        #expect(first.stderr.contains("nothing is lost: free some space"), "\(first.stderr.suffix(2000))")
        let batch = try #require(
            Self.batchToResume(in: first.stderr), "no resume suggested: \(first.stderr.suffix(2000))")

        // Read-only commands work while the disk is full.
        let status = try ShareProcess.run(["status", "--container", container], environment: environment)
        #expect(status.status == 0, "share status on a full disk: exit \(status.status): \(status.stderr)")
        #expect(status.stdout.contains(batch.prefix(8)), "the stopped batch is listed: \(status.stdout)")

        try disk.resize(kilobytes: 64 * 1024)
        let resumed = try ShareProcess.run(
            ["ingest", "--resume", batch, "--container", container], environment: environment)
        #expect(
            resumed.status == 0,
            "the resume after space was freed: exit \(resumed.status): \(resumed.stderr.suffix(2000))")
        try Self.expectDeliveredOnce(drop.names, container: container)
    }

    // MARK: - Helpers

    struct Drop {
        let directory: TemporaryDirectory
        let names: [String]
        var path: String { directory.path }
    }

    /// `photos` JPEGs (the fixtures in turn, so some are duplicates) and `notes` short texts.
    static func photosAndNotes(photos: Int, notes: Int) throws -> Drop {
        let directory = TemporaryDirectory("disk-full-drop")
        let fixtures = ["photo.jpg", "exif3.jpg", "exif8.jpg", "gray.jpg", "cmyk.jpg"].map(Fixtures.media)
        var names: [String] = []
        for index in 0..<photos {
            let name = String(format: "photo-%03d.jpg", index)
            try directory.add(name, copying: fixtures[index % fixtures.count])
            names.append(name)
        }
        for index in 0..<notes {
            let name = String(format: "note-%03d.txt", index)
            try directory.add(name, bytes: Array("note \(index)\n".utf8))
            names.append(name)
        }
        return Drop(directory: directory, names: names)
    }

    /// The batch in `share: … finish with  share ingest --resume BATCH --container …`.
    static func batchToResume(in stderr: String) -> String? {
        guard let range = stderr.range(of: "share ingest --resume ") else { return nil }
        return stderr[range.upperBound...].split(separator: " ").first.map(String.init)
    }

    /// One manifest, one entry per name, each its own copy in the container, and
    /// no other copy there (nothing delivered twice, nothing left over).
    static func expectDeliveredOnce(_ names: [String], container: String) throws {
        let manifests = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter {
            $0.hasSuffix(".json")
        }
        try #require(manifests.count == 1, "manifests: \(manifests)")
        let data = try Data(contentsOf: URL(fileURLWithPath: container + "/manifests/" + manifests[0]))
        let entries = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        let delivered = entries.compactMap { $0["fileName"] as? String }
        #expect(delivered.count == names.count, "\(delivered.count) entries for \(names.count) files")
        #expect(Set(delivered) == Set(names), "missing: \(Set(names).subtracting(delivered).sorted().prefix(10))")
        let paths = entries.compactMap { ($0["path"] as? String).flatMap(URL.init(string:))?.path }
        #expect(Set(paths).count == names.count, "each entry its own copy")
        for path in paths where !FileManager.default.fileExists(atPath: path) {
            Issue.record("\(path) is in the manifest, not on disk")
        }
        let copies = try FileManager.default.contentsOfDirectory(atPath: container).filter {
            !$0.hasPrefix(".") && $0 != "manifests" && $0 != "thumbnails"
        }
        #expect(copies.count == names.count, "\(copies.count) copies in the container for \(names.count) files")
    }
}

/// `share ingest --db` with a worker whose container's disk fills: the items
/// wait for space (retried by the workers, never failed for it), and the batch
/// ends with every item delivered once the disk has room.
@Suite(.serialized) struct DistributedDiskFullTests {
    @Test func aWorkerOnAFullDiskRetriesTheItemsOnceThereIsRoom() throws {
        guard let disk = Tmpfs(kilobytes: 3 * 1024) else { return }
        let drop = try DiskFullTests.photosAndNotes(photos: 150, notes: 20)
        let container = disk.path + "/c"
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        defer { workers.stopAll() }
        try workers.start("full")

        let ingest = try DropBoundaryTests.Run(
            ["ingest", "--db", server.url, "--container", container, drop.path], environment: [:])
        // The worker met the full disk: its items wait for space, as `share status --db` says.
        var status = ""
        let waited = eventually(timeout: 300) {
            status = (try? ShareProcess.run(["status", "--db", server.url]).stdout) ?? ""
            return status.contains("container disk full") || !ingest.process.isRunning
        }
        #expect(
            waited && ingest.process.isRunning, "the batch waits while the disk is full: \(status) \(ingest.stderr)")
        #expect(!status.contains(" failed "), "no item failed for want of space: \(status)")
        try disk.resize(kilobytes: 64 * 1024)
        let exit = ingest.finish(timeout: 600)
        #expect(
            exit == 0,
            "every item delivered once there is room: \(String(describing: exit)) \(ingest.stderr.suffix(2000))")
        try DiskFullTests.expectDeliveredOnce(drop.names, container: container)
        withExtendedLifetime(server) {}
    }
}
