import Foundation
import TestSupport
import Testing

/// Issue 58, finding 4: a root `share` wrote by name into a container others
/// could write in: a container owned by `nobody` (or mode 0777) was accepted,
/// a `.share-ingest/journal.sqlite` link planted there made root overwrite the
/// root-owned file it pointed to with a database, and a `manifests` link made
/// root write manifests where it pointed. Where `share` runs as root (these
/// tests do), the container and its folders must now be root's own, written
/// by nobody else, and no link: refused otherwise (exit 66, naming the path
/// and the fix), in `ingest` and `watch`, with nothing written outside.
@Suite struct ContainerOwnershipTests {
    static let nobody = (uid: uid_t(65534), gid: gid_t(65534))

    /// Runs `share ingest` of one photo, or `share watch --once` of an inbox
    /// holding one drop of it, into `container`.
    static func deliver(_ mode: String, into container: String, _ work: TemporaryDirectory) throws -> ShareProcess {
        guard mode == "watch" else {
            return try ShareProcess.run([
                "ingest", "--container", container, "--isolation", "none", Fixtures.media("photo.jpg"),
            ])
        }
        let inbox = work.file("inbox")
        if !FileManager.default.fileExists(atPath: inbox + "/drop") {
            try work.add("inbox/drop/photo.jpg", copying: Fixtures.media("photo.jpg"))
            try work.add("inbox/drop/.ready", bytes: [])
        }
        return try ShareProcess.run([
            "watch", inbox, "--container", container, "--once", "--settle", "0", "--isolation", "none",
        ])
    }

    /// A folder `path` owned by root, mode 0755 (what `share` accepts), made with its parents.
    static func folder(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o755)
    }

    @Test(arguments: ["ingest", "watch"])
    func aContainerOfAnotherUserOrWritableByOthersIsRefused(mode: String) throws {
        let work = TemporaryDirectory("container-owner")
        let container = (work.file("c") as NSString).standardizingPath
        try Self.folder(container)
        #expect(chown(container, Self.nobody.uid, Self.nobody.gid) == 0)
        let owned = try Self.deliver(mode, into: container, work)
        #expect(owned.status == 66, "\(owned.stdout) \(owned.stderr)")
        #expect(owned.stderr.contains("\(container): owned by user 65534"), "\(owned.stderr)")
        #expect(owned.stderr.contains("chown root: \(container) && chmod go-w \(container)"), "\(owned.stderr)")
        #expect((try FileManager.default.contentsOfDirectory(atPath: container)).isEmpty, "something was made in it")

        #expect(chown(container, 0, 0) == 0)
        chmod(container, 0o777)
        let open = try Self.deliver(mode, into: container, work)
        #expect(
            open.status == 66 && open.stderr.contains("\(container): group or others may write in it (mode 777)"),
            "\(open.stderr)")
        #expect(open.stderr.contains("chmod go-w \(container)"), "\(open.stderr)")

        // A folder of it another user's: refused alike; once root's, delivered.
        chmod(container, 0o755)
        try Self.folder(container + "/thumbnails")
        #expect(chown(container + "/thumbnails", Self.nobody.uid, Self.nobody.gid) == 0)
        let folder = try Self.deliver(mode, into: container, work)
        #expect(
            folder.status == 66 && folder.stderr.contains("\(container)/thumbnails: owned by user 65534"),
            "\(folder.stderr)")
        #expect((try FileManager.default.contentsOfDirectory(atPath: container + "/thumbnails")).isEmpty)
        #expect(chown(container + "/thumbnails", 0, 0) == 0)
        let delivered = try Self.deliver(mode, into: container, work)
        #expect(delivered.status == 0, "\(delivered.stderr)")
    }

    /// The reporter's attack: root's file at the end of a `journal.sqlite` link.
    @Test(arguments: ["ingest", "watch"])
    func aPlantedJournalLinkIsRefusedAndItsTargetStaysAsItWas(mode: String) throws {
        let work = TemporaryDirectory("container-journal-link")
        let container = (work.file("c") as NSString).standardizingPath
        let precious = try work.add("precious.conf", bytes: Array("root's own settings\n".utf8))
        // An empty file of root's is what SQLite turned into a database.
        let empty = try work.add("root-owned.log", bytes: [])
        try Self.folder(container + "/.share-ingest")
        chmod(container + "/.share-ingest", 0o700)
        try FileManager.default.createSymbolicLink(
            atPath: container + "/.share-ingest/journal.sqlite", withDestinationPath: empty)
        let run = try Self.deliver(mode, into: container, work)
        #expect(run.status == 66, "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("\(container)/.share-ingest/journal.sqlite: is a symbolic link"), "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty, "the link's target was written")
        #expect(
            !FileManager.default.fileExists(atPath: empty + "-wal")
                && !FileManager.default.fileExists(atPath: empty + "-shm"))

        // Its -wal alike (SQLite would write the log through it).
        try FileManager.default.removeItem(atPath: container + "/.share-ingest/journal.sqlite")
        try FileManager.default.createSymbolicLink(
            atPath: container + "/.share-ingest/journal.sqlite-wal", withDestinationPath: precious)
        let wal = try Self.deliver(mode, into: container, work)
        #expect(wal.status == 66 && wal.stderr.contains("journal.sqlite-wal: is a symbolic link"), "\(wal.stderr)")
        #expect(
            try String(contentsOfFile: precious, encoding: .utf8) == "root's own settings\n",
            "the link's target was written")

        // A `.share-ingest` that is itself a link to a folder of root's.
        try FileManager.default.removeItem(atPath: container + "/.share-ingest")
        try Self.folder(work.file("rootstate"))
        try FileManager.default.createSymbolicLink(
            atPath: container + "/.share-ingest", withDestinationPath: work.file("rootstate"))
        let state = try Self.deliver(mode, into: container, work)
        #expect(
            state.status == 66 && state.stderr.contains("\(container)/.share-ingest: is a symbolic link"),
            "\(state.stderr)")
        #expect(
            (try FileManager.default.contentsOfDirectory(atPath: work.file("rootstate"))).isEmpty,
            "something was written through the link")
    }

    @Test(arguments: ["ingest", "watch"])
    func aPlantedManifestsLinkIsRefusedAndNothingIsWrittenWhereItPoints(mode: String) throws {
        let work = TemporaryDirectory("container-manifests-link")
        let container = (work.file("c") as NSString).standardizingPath
        let elsewhere = (work.file("elsewhere") as NSString).standardizingPath
        try Self.folder(container)
        try Self.folder(elsewhere)
        try FileManager.default.createSymbolicLink(atPath: container + "/manifests", withDestinationPath: elsewhere)
        let run = try Self.deliver(mode, into: container, work)
        #expect(run.status == 66, "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("\(container)/manifests: is a symbolic link"), "\(run.stderr)")
        #expect(
            (try FileManager.default.contentsOfDirectory(atPath: elsewhere)).isEmpty,
            "a manifest was written through the link")
        #expect(
            !FileManager.default.fileExists(atPath: container + "/.share-ingest/journal.sqlite"),
            "the container was used")
    }
}

extension ContainerOwnershipTests {
    /// The container's folders are root's, but its parent is not: whoever may
    /// write there swaps the container for a link to a folder of root's while
    /// a batch runs (its one item not copied yet). Everything written
    /// after the swap still goes into the container that was checked, now
    /// under its new name (AnchoredFolders), and nothing into the link's target;
    /// with `--db`, where a worker writes the copy and the thumbnail, alike.
    @Test(arguments: ["ingest", "watch", "distributed"])
    func aContainerSwappedForALinkMidBatchIsStillTheOneWrittenIn(mode: String) throws {
        let work = TemporaryDirectory("container-swapped")
        let parent = (work.file("shared") as NSString).standardizingPath
        let container = parent + "/c"
        let moved = parent + "/c-moved"
        try Self.folder(container)
        chmod(parent, 0o777)  // another user's to rename in
        // Root's folder elsewhere, laid out as a container: where writes by name would land.
        let victim = work.file("victim")
        for folder in ["thumbnails", "manifests/consumed", ".share-ingest/reports"] {
            try Self.folder(victim + "/" + folder)
        }
        let gate = PauseGate("copy:photo.jpg")
        var arguments = ["ingest", "--container", container, "--isolation", "none", Fixtures.media("photo.jpg")]
        if mode == "watch" {
            try work.add("inbox/drop/photo.jpg", copying: Fixtures.media("photo.jpg"))
            try work.add("inbox/drop/.ready", bytes: [])
            arguments = [
                "watch", work.file("inbox"), "--container", container, "--once", "--settle", "0", "--isolation", "none",
            ]
        }
        // With --db the copy is a worker's: the worker stops at the gate, and writes after the swap.
        var server: PostgresServer?
        var worker: DropBoundaryTests.Run?
        if mode == "distributed" {
            let database = try PostgresServer()
            try #require(try ShareProcess.run(["db", "migrate", "--db", database.url]).status == 0)
            worker = try DropBoundaryTests.Run(
                ["worker", "--db", database.url, "--name", "swap", "--concurrency", "1", "--isolation", "none"],
                environment: gate.environment)
            arguments = ["ingest", "--db", database.url, "--container", container, Fixtures.media("photo.jpg")]
            server = database
        }
        defer {
            if let worker, worker.process.isRunning {
                kill(worker.process.processIdentifier, SIGTERM)
                _ = worker.finish(timeout: 60)
            }
            withExtendedLifetime(server) {}
        }
        let share = try DropBoundaryTests.Run(arguments, environment: worker == nil ? gate.environment : [:])
        let holder = worker ?? share
        try #require(
            gate.waitUntilReached { holder.process.isRunning },
            "share never reached the copy stage: \(share.stderr) \(worker?.stderr ?? "")")
        #expect(rename(container, moved) == 0)
        #expect(symlink(victim, container) == 0)
        gate.release()
        let status = share.finish()
        #expect(status == 0, "\(share.stdout) \(share.stderr)")
        for folder in ["thumbnails", "manifests", "manifests/consumed", ".share-ingest/reports"] {
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: victim + "/" + folder).filter { $0 != "consumed" }
                    .isEmpty, "written into the link's target: \(folder)")
        }
        let manifests = try FileManager.default.contentsOfDirectory(atPath: moved + "/manifests").filter {
            $0.hasSuffix(".json")
        }
        #expect(manifests.count == 1, "\(manifests)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: moved + "/thumbnails").count == 1)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: moved).filter { $0.hasSuffix(".jpg") }.count == 1,
            "the copy")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: victim).sorted() == [
                ".share-ingest", "manifests", "thumbnails",
            ])
    }
}
