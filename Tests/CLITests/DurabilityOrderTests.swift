import Foundation
import TestSupport
import Testing

/// The order of the file-system calls that make a batch durable, as the kernel
/// saw them: the built `share ingest` runs under `strace -f -y` (every thread;
/// each descriptor with its path). A power cut cannot be simulated here, but
/// what survives one is decided by this order alone, so the tests assert it:
///
/// - every copy, thumbnail and the manifest gets its final name exactly once,
///   by a link or rename of a temporary file beside it that was fsynced before
///   (never written in place under its final name);
/// - the copies' and thumbnails' folders are fsynced after the last of them is
///   named and before the manifest is, and the manifests folder after the
///   manifest is named (the name itself is then durable);
/// - the journal (SQLite, WAL mode): see ``journalProblems(_:root:copies:manifest:)``.
@Suite struct DurabilityOrderTests {
    /// `root` of a container made at `path` (the name the process uses).
    static func root(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    @Test func copiesThumbnailsManifestAndJournalAreMadeDurableInOrder() throws {
        // A photo, four notes and a clip: copies of both kinds, two thumbnails.
        let drop = try CrashSafetyTests.makeDrop(count: 6)
        let work = TemporaryDirectory("durable")
        let root = Self.root(work.path + "/container")
        // Decoding in-process: the order that matters is the pipeline's own.
        let (run, trace) = try SyscallTrace.share(
            ["ingest", "--quiet", "--isolation", "none", "--container", root, "--key", "Durable", drop.path],
            calls: SyscallTrace.fileCalls + ["write"])
        #expect(run.status == 0, "\(run.stderr)")
        try #require(trace.calls.count > 0)

        // The manifest.
        let manifest = root + "/manifests/Durable.json"
        let (manifestProblems, manifestNaming) = trace.checkAtomicDurableCreation(of: manifest, folderSyncedAfter: true)
        #expect(manifestProblems.isEmpty, "\(manifestProblems.joined(separator: "\n"))")
        let named = try #require(manifestNaming)

        // Copies and thumbnails: each named from a synced temporary, their
        // folders synced after the last and before the manifest was named.
        for (folder, expected) in [(root, 6), (root + "/thumbnails", 2)] {
            let namings = trace.calls.filter {
                guard $0.succeeded, let to = $0.naming?.to else { return false }
                return (to as NSString).deletingLastPathComponent == folder
                    && !(to as NSString).lastPathComponent.hasPrefix(".")
                    && to != manifest
            }
            #expect(namings.count == expected, "\(folder): \(namings)")
            for naming in namings {
                let problems = trace.checkAtomicDurableCreation(of: naming.naming!.to, folderSyncedAfter: false)
                    .problems
                #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
            }
            let lastNamed = namings.map(\.ended).max() ?? 0
            let folderSync = trace.syncs(of: folder).first { $0.started > lastNamed && $0.ended < named.started }
            #expect(
                folderSync != nil,
                "\(folder) was not fsynced between its last file's naming (#\(lastNamed)) and the manifest's (\(named)): \(trace.syncs(of: folder))"
            )
        }

        // The journal.
        let copyTemporaries = trace.calls.filter {
            guard $0.opensForWriting, let path = $0.openedPath else { return false }
            return (path as NSString).deletingLastPathComponent == root && path.hasSuffix(".partial")
        }
        #expect(copyTemporaries.count == 6, "\(copyTemporaries)")
        let problems = Self.journalProblems(trace, root: root, copies: copyTemporaries, manifest: named)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// The redirect URLs written to stdout (`expected` of them) while a WAL
    /// write before them was not synced yet.
    static func reportedBeforeSynced(_ trace: SyscallTrace, root: String, expected: Int) -> [String] {
        let wal = root + "/.share-ingest/journal.sqlite-wal"
        let walWrites = trace.writes(to: wal)
        let walSyncs = trace.syncs(of: wal)
        let reports = trace.calls.filter {
            $0.name == "write" && $0.arguments.hasPrefix("1<") && $0.arguments.contains("ShareMedia://")
        }
        var problems =
            reports.count == expected
            ? [] : ["\(reports.count) redirect URLs were written to stdout, expected \(expected): \(reports)"]
        for report in reports {
            guard let last = walWrites.last(where: { $0.ended < report.started }) else { continue }
            if !walSyncs.contains(where: { $0.started > last.ended && $0.ended < report.started }) {
                problems.append("a redirect URL was printed (\(report)) before the journal's write \(last) was synced")
            }
        }
        return problems
    }

    /// `share watch` keeps its journal open from one drop to the next (no
    /// closing checkpoint between them, unlike `share ingest`): each drop's
    /// URL must still be printed only once its batch's end is synced, and each
    /// manifest is named from a synced temporary file, its folder synced after.
    @Test func watchPrintsEachDropOnlyOnceItsEndIsDurable() throws {
        let work = TemporaryDirectory("durable-watch")
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg")))
        for drop in 0..<2 {
            try work.add("inbox/drop-\(drop)/photo.jpg", bytes: Array(photo) + Array("drop \(drop)".utf8))
            try work.add("inbox/drop-\(drop)/note.txt", bytes: Array("note \(drop)\n".utf8))
            try work.add("inbox/drop-\(drop)/.ready", bytes: [])
        }
        let root = Self.root(work.path + "/container")
        let (run, trace) = try SyscallTrace.share(
            ["watch", work.file("inbox"), "--container", root, "--once", "--isolation", "none"],
            calls: SyscallTrace.fileCalls + ["write"])
        #expect(run.status == 0, "\(run.stderr)")
        let problems = Self.reportedBeforeSynced(trace, root: root, expected: 2)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        let manifests = trace.calls.compactMap { call -> String? in
            guard call.succeeded, let to = call.naming?.to,
                (to as NSString).deletingLastPathComponent == root + "/manifests",
                !(to as NSString).lastPathComponent.hasPrefix(".")
            else { return nil }
            return to
        }
        #expect(manifests.count == 2, "\(manifests)")
        for manifest in manifests {
            let problems = trace.checkAtomicDurableCreation(of: manifest, folderSyncedAfter: true).problems
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        }
    }

    /// What is wrong with the journal's order of writes and syncs (empty: nothing).
    ///
    /// SQLite in WAL mode appends each commit to `journal.sqlite-wal`; with
    /// `synchronous=FULL` it fsyncs (fdatasync) the WAL before the commit
    /// returns, with `NORMAL` it does not (a process crash loses nothing, a power
    /// cut the last commits); a checkpoint copies the WAL into `journal.sqlite`.
    /// So, observably:
    ///
    /// 1. **An item is durable in the journal before its copy starts.** A copy
    ///    is named after its item's UUID, which only the journal holds (drawn at
    ///    planning): the first WAL write that holds the UUID (the planning
    ///    commit) must be synced before the copy's temporary file is created,
    ///    or after a power cut the container holds a file no journaled item
    ///    accounts for. (This is what `synchronous=FULL` on the planning commit
    ///    buys. The per-stage progress commits, such as the sniff's result
    ///    written just before the copy, are `NORMAL` on purpose, redone after a
    ///    power cut: they are not asserted.)
    /// 2. **The batch's end is durable before it is reported.** The batch is
    ///    marked done after the manifest is named (the WAL is written after that
    ///    naming), and when `share` prints the redirect URL no WAL byte is
    ///    unsynced: a script that sees the URL may rely on the batch being done
    ///    after a power cut. (`share ingest` closes its journal, a checkpoint
    ///    that syncs the WAL, before it prints; `share watch` does not, which
    ///    ``watchPrintsEachDropOnlyOnceItsEndIsDurable()`` checks.)
    /// 3. **Checkpoints never outrun the WAL.** Before any write into
    ///    `journal.sqlite`, every WAL write before it has been synced (else a
    ///    crash mid-checkpoint leaves the database with pages whose WAL copy is
    ///    lost), and before the WAL is reset (unlinked, truncated or rewritten
    ///    from its header), the database writes of the checkpoint have been
    ///    synced (else the only durable copy of those pages is discarded). This
    ///    is what any `synchronous` but `OFF` guarantees.
    static func journalProblems(
        _ trace: SyscallTrace, root: String, copies: [SyscallTrace.Call], manifest: SyscallTrace.Call
    ) -> [String] {
        let database = root + "/.share-ingest/journal.sqlite"
        let wal = database + "-wal"
        var problems: [String] = []
        let walWrites = trace.writes(to: wal)
        let walSyncs = trace.syncs(of: wal)
        func synced(after write: SyscallTrace.Call, before limit: Int) -> Bool {
            walSyncs.contains { $0.started > write.ended && $0.ended < limit }
        }
        // 1.
        for copy in copies {
            // .<UUID>.<ext>.<host>-<pid>-<n>.partial
            let name = ((copy.openedPath ?? "") as NSString).lastPathComponent
            let id = String(name.dropFirst().prefix { $0 != "." })
            guard UUID(uuidString: id) != nil else {
                problems.append("\(copy): not a copy's temporary name")
                continue
            }
            guard let planned = walWrites.first(where: { $0.arguments.contains(id) }) else {
                problems.append("item \(id) was never written to \(wal) (its copy: \(copy))")
                continue
            }
            if planned.started > copy.started {
                problems.append("item \(id) was copied (\(copy)) before the journal recorded it (\(planned))")
            } else if !synced(after: planned, before: copy.started) {
                problems.append(
                    "item \(id)'s journal record (\(planned)) was not synced before its copy was created (\(copy)); WAL syncs: \(walSyncs)"
                )
            }
        }
        // 2.
        if !walWrites.contains(where: { $0.started > manifest.ended }) {
            problems.append("nothing was written to the journal after the manifest was named (the batch marked done)")
        }
        problems += reportedBeforeSynced(trace, root: root, expected: 1)
        if let last = walWrites.last, !synced(after: last, before: Int.max) {
            problems.append("the journal's last write (\(last)) was never synced")
        }
        // 3.
        let databaseWrites = trace.writes(to: database)
        let databaseSyncs = trace.syncs(of: database)
        for write in databaseWrites {
            if let last = walWrites.last(where: { $0.ended < write.started }),
                !synced(after: last, before: write.started)
            {
                problems.append("a checkpoint wrote \(database) (\(write)) before the WAL write \(last) was synced")
            }
        }
        let resets = trace.calls.filter { call in
            guard call.succeeded else { return false }
            switch call.name {
            case "unlink", "unlinkat": return call.strings.first == wal
            case "ftruncate": return call.descriptorPaths.first == wal
            case "pwrite64": return call.descriptorPaths.first == wal && call.arguments.hasSuffix(", 0")
            default: return false
            }
        }
        // Not vacuous: the journal is checkpointed (and its WAL removed) when its
        // last connection closes, at the end of the command.
        if !databaseWrites.contains(where: { write in walWrites.contains { $0.ended < write.started } })
            || resets.isEmpty
        {
            problems.append(
                "no checkpoint was seen (a write into \(database) after the WAL's, then a WAL reset): the checkpoint order went unchecked"
            )
        }
        var previous = 0
        for reset in resets {
            if let last = databaseWrites.last(where: { $0.started > previous && $0.ended < reset.started }),
                !databaseSyncs.contains(where: { $0.started > last.ended && $0.ended < reset.started })
            {
                problems.append(
                    "the WAL was reset (\(reset)) before the checkpoint's write \(last) into the database was synced")
            }
            previous = reset.ended
        }
        return problems
    }

    /// An export's sidecars are copied by the fan-in straight to their names
    /// (`<UUID>.<n>.<ext>`), without an fsync each: one `syncfs` of the
    /// container's file system comes after the last of them is closed and
    /// before the manifest is named, so a manifest never names a sidecar a
    /// power cut could lose.
    @Test func sidecarCopiesAreSyncedWithTheirFileSystemBeforeTheManifestNamesThem() throws {
        let drop = TemporaryDirectory("durable-sidecars")
        for n in 1...3 {
            _ = try drop.add("IMG_000\(n).jpg", copying: Fixtures.media("photo.jpg"))
            _ = try drop.add(
                "IMG_000\(n).jpg.json",
                bytes: ExportSidecarTests.takeoutJSON(title: "IMG_000\(n).jpg", taken: 1_562_000_000 + n))
        }
        let work = TemporaryDirectory("durable-sidecars-out")
        let root = Self.root(work.path + "/container")
        let (run, trace) = try SyscallTrace.share(
            ["ingest", "--quiet", "--isolation", "none", "--container", root, "--key", "Sidecars", drop.path],
            calls: SyscallTrace.fileCalls + ["write", "close", "syncfs"])
        #expect(run.status == 0, "\(run.stderr)")
        let manifest = root + "/manifests/Sidecars.json"
        let (manifestProblems, manifestNaming) = trace.checkAtomicDurableCreation(of: manifest, folderSyncedAfter: true)
        #expect(manifestProblems.isEmpty, "\(manifestProblems.joined(separator: "\n"))")
        let named = try #require(manifestNaming)
        // The sidecars' copies: opened for writing under their final names.
        let copies = trace.calls.filter { call in
            guard call.opensForWriting, call.succeeded, let path = call.openedPath else { return false }
            return (path as NSString).deletingLastPathComponent == root && path.hasSuffix(".1.json")
        }
        #expect(copies.count == 3, "\(copies)")
        let lastClosed =
            trace.calls.filter {
                $0.name == "close" && $0.descriptorPaths.first.map { $0.hasSuffix(".1.json") } ?? false
            }.map(\.ended).max() ?? .max
        let sync = trace.calls.first {
            $0.name == "syncfs" && $0.succeeded && $0.started > lastClosed && $0.ended < named.started
        }
        #expect(
            sync != nil,
            "no syncfs between the sidecars' last close (#\(lastClosed)) and the manifest's naming (\(named)): \(trace.calls.filter { $0.name == "syncfs" })"
        )
    }
}
