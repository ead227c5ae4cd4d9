import Foundation
import Glibc
import ShareManifest
import Synchronization
import SystemCalls

/// What happens to a drop once its batch is done. Only what was delivered is
/// ever removed or filed as done: with `move` and `delete`, the files of items
/// not delivered (with their sidecars) go to `INBOX/.failed/<batch>/`, beside
/// the batch's `report.json` (the whole drop, when nothing was delivered).
public enum DropDisposition: String, Sendable, CaseIterable {
    /// What was delivered moves to `INBOX/.done/<batch>/`.
    case move
    /// What was delivered is removed.
    case delete
    /// Left where it is; the journal remembers its content so it is not taken again.
    case keep
}

/// An inbox that people and programs drop folders (or single files) into: each
/// top-level entry is one drop, ingested as one batch with its own manifest,
/// exactly once, even across crashes and with several watchers.
///
/// A drop is taken when it is complete: it holds a `.ready` marker, or its tree
/// (names, sizes, mtimes) has not changed for `settle` seconds. inotify wakes the
/// watcher at once; a rescan every second catches what inotify cannot see
/// (changes deep inside a drop, network file systems).
///
/// Claiming: the journal records the batch (serialized across processes by
/// SQLite's write lock), then the drop is renamed into `INBOX/.processing/<batch>/`
/// (unless kept), so a late writer can never add to a batch in progress.
public final class Inbox: Sendable {
    /// The inbox folder (absolute).
    public let path: String
    /// Ingests each drop: its container, pipeline, identifiers and clock.
    public let ingestor: ShareIngestor
    /// Seconds a drop without a `.ready` marker must stay unchanged before it is taken.
    public let settle: Double
    /// What happens to a drop once its batch is done.
    public let disposition: DropDisposition
    /// When set, drops are enqueued for `share worker` processes instead of run here.
    public let distributed: DistributedIngestor?
    let journal: BatchJournal
    let notices: (@Sendable (UUID, DistributedIngestor.WaitNotice) -> Void)?
    /// Each drop's last signature and since when it has been unchanged (settling).
    private let seen = Mutex<[String: (signature: DropSignature, since: Double)]>([:])

    /// Watches the folder `path` (which must exist); drops are ingested by `ingestor`.
    /// - Parameter distributed: when given, drops are enqueued for `share worker`
    ///   processes (PostgreSQL) instead of being run here.
    /// - Parameter notices: with `distributed`, hears while a batch is waited for
    ///   that no live worker can take it (and when workers come back).
    public init(
        path: String, ingestor: ShareIngestor, settle: Double = 3, disposition: DropDisposition = .move,
        distributed: DistributedIngestor? = nil,
        notices: (@Sendable (UUID, DistributedIngestor.WaitNotice) -> Void)? = nil
    ) throws(ShareIngestError) {
        guard (try? FileStatus.of(path))?.type == .directory else {
            throw .inputMissing(path: path, reason: "not a folder")
        }
        self.path = URL(fileURLWithPath: path).standardizedFileURL.path
        try Self.checkInbox(self.path)
        self.ingestor = ingestor
        self.settle = settle
        self.disposition = disposition
        self.distributed = distributed
        self.notices = notices
        self.journal = try BatchJournal(container: ingestor.container)
        for folder in [".processing", ".done", ".failed"] {
            try Self.checkOwnFolder(self.path + "/" + folder)
        }
    }

    /// The inbox's claimed drops go through `.processing`, `.done` and
    /// `.failed` by path: whoever could replace one of them (with a link to a
    /// folder only the watcher may read, or a folder of their own in which they
    /// then swap a claimed drop's holder) would have the watcher ingest, move or
    /// remove what they choose. So the inbox must be the watcher's (or root's),
    /// and an inbox others may write in must have the sticky bit (`chmod +t`:
    /// then only a folder's owner may rename or remove it), as `/tmp` has.
    static func checkInbox(_ path: String) throws(ShareIngestError) {
        guard let status = try? FileStatus.of(path) else { throw .inputMissing(path: path, reason: "not a folder") }
        let me = UInt32(Credentials.effectiveUserID)
        guard status.owner == me || status.owner == 0 else {
            throw .inputMissing(
                path: path,
                reason:
                    "the inbox is owned by user \(status.owner), who could replace the watcher's .processing folder; not watched (give it to the watcher's user, \(me))"
            )
        }
        if status.mode & 0o022 != 0 && status.mode & UInt32(S_ISVTX) == 0 {
            throw .inputMissing(
                path: path,
                reason:
                    "others may write in the inbox and it has no sticky bit: a dropper could replace the watcher's .processing folder; not watched (chmod +t \(path))"
            )
        }
        // A hard link passes every check of a drop (no link is followed: it is
        // the file itself). With fs.protected_hardlinks=1 (systemd's default)
        // one may link only a file one owns or may read and write, so a link in
        // a drop gives its dropper nothing they could not copy; at 0, anyone
        // could link /etc/shadow into a shared inbox for a root watcher to copy.
        if status.mode & 0o022 != 0, protectedHardLinks == false {
            throw .inputMissing(
                path: path,
                reason:
                    "others may write in the inbox and fs.protected_hardlinks is 0: a dropper could hard-link files only the watcher may read into it; not watched (sysctl fs.protected_hardlinks=1)"
            )
        }
    }

    /// `fs.protected_hardlinks` (nil where /proc/sys cannot be read, as under
    /// the shipped units' ProcSubset=pid, whose systemd sets it to 1).
    static var protectedHardLinks: Bool? {
        #if DEBUG
            // Test-only (debug builds): the setting as a test says it is.
            if let forced = ProcessEnvironment.value("SHARE_TEST_PROTECTED_HARDLINKS") { return forced != "0" }
        #endif
        guard let bytes = try? FileSystem.readWholeFile("/proc/sys/fs/protected_hardlinks"), let first = bytes.first
        else { return nil }
        return first != UInt8(ascii: "0")
    }

    /// Makes `path` (owner-only) if it is missing, then checks it is a folder,
    /// not a link, the watcher's own and written by nobody else.
    static func checkOwnFolder(_ path: String) throws(ShareIngestError) {
        if !FileSystem.exists(path) { try? FileSystem.makeDirectory(path) }
        guard let status = try? FileStatus.ofLink(path) else {
            throw .inputMissing(path: path, reason: "cannot be made")
        }
        let me = UInt32(Credentials.effectiveUserID)
        guard status.type == .directory else {
            throw .inputMissing(
                path: path, reason: "\(status.type.phrase), not the watcher's own folder; not watched (remove it)")
        }
        guard status.owner == me, status.mode & 0o022 == 0 else {
            throw .inputMissing(
                path: path,
                reason: status.owner == me
                    ? "others may write in it; not watched (chmod go-w it)"
                    : "owned by user \(status.owner), not the watcher (\(me)): whoever made it could swap the drops claimed into it; not watched (remove it)"
            )
        }
    }

    /// Watches until cancelled; with `once`, processes the drops present at the
    /// start (waiting for each to settle) and returns. Unfinished batches from an
    /// earlier run are finished first. `started` is called once the journal is
    /// read and the inbox listed, before any batch runs (a service is ready).
    ///
    /// A full disk pauses the watcher (``DiskFullPause``): the batch it stopped
    /// keeps its drop in `.processing/`, no new drop is taken, and the batch is
    /// tried again once there is room. With `once`, the run ends there and
    /// throws ``ShareIngestError/diskFull(path:freeBytes:)``: the next run finishes it.
    public func run(
        once: Bool, events: IngestEventSink?, cancellation: CancellationFlag, started: (() -> Void)? = nil,
        finished: (BatchReport) -> Void
    ) throws(ShareIngestError) {
        let watcher = DirectoryWatcher(path)
        var waitingFor = once ? Set(drops()) : []
        var pause: DiskFullPause?
        started?()
        try finishUnfinished(events: events, cancellation: cancellation, pause: &pause, finished: finished)
        let startedAt = MonotonicClock.now()
        while !cancellation.isCancelled {
            if let paused = pause {
                if once { throw .diskFull(path: paused.path, freeBytes: DiskFullPause.free(at: paused.path)) }
                guard paused.isOver(now: MonotonicClock.now()) else {
                    watcher.wait(seconds: 1)
                    continue
                }
                pause = nil
                try finishUnfinished(events: events, cancellation: cancellation, pause: &pause, finished: finished)
                continue
            }
            var ran = false
            for name in drops() where !cancellation.isCancelled && pause == nil {
                guard isSettled(name) else { continue }
                waitingFor.remove(name)
                do {
                    guard let report = try take(name, events: events, cancellation: cancellation) else { continue }
                    pause = Self.pause(after: report)
                    finished(report)
                    ran = true
                } catch .diskFull(let folder, let free) {
                    // The journal could not record the claim: the drop stays where it is.
                    pause = DiskFullPause(path: folder, freeBytes: free, since: MonotonicClock.now())
                    waitingFor.insert(name)
                }
            }
            // Between batches, what the pipeline's threads freed goes back to the
            // kernel (each thread's malloc arena would keep the largest batch's).
            if ran { FreedMemory.release() }
            if once && pause == nil {
                // Drops that never settle (still being written) are left for the next run.
                let patience = max(settle * 4, 10)
                waitingFor = waitingFor.filter { drops().contains($0) }
                if waitingFor.isEmpty || MonotonicClock.now() - startedAt > patience { return }
            }
            if pause == nil { watcher.wait(seconds: 1) }
        }
    }

    /// Finishes the batches an earlier run (or a full disk) left unfinished,
    /// oldest first; stops at the first that a full disk stops again.
    private func finishUnfinished(
        events: IngestEventSink?, cancellation: CancellationFlag, pause: inout DiskFullPause?,
        finished: (BatchReport) -> Void
    ) throws(ShareIngestError) {
        let unfinished = try journal.batches(in: BatchLifecycle.unfinished).reversed()
        for batch in unfinished where !cancellation.isCancelled && pause == nil {
            do {
                guard let report = try resume(batch, events: events, cancellation: cancellation) else { continue }
                pause = Self.pause(after: report)
                finished(report)
            } catch .diskFull(let folder, let free) {
                pause = DiskFullPause(path: folder, freeBytes: free, since: MonotonicClock.now())
            } catch {
                // Told when the batch is taken again; the other batches go on.
                continue
            }
        }
    }

    /// The pause a batch's stop for want of space begins, if it stopped for that.
    private static func pause(after report: BatchReport) -> DiskFullPause? {
        guard report.interrupted, case .diskFull(let path, let free)? = report.stop else { return nil }
        return DiskFullPause(path: path, freeBytes: free, since: MonotonicClock.now())
    }

    /// The inbox's top-level entries that are drops (hidden names are not).
    func drops() -> [String] {
        FileSystem.names(in: path).filter { !$0.hasPrefix(".") }
    }

    private func isSettled(_ name: String) -> Bool {
        let signature = DropSignature.read(path + "/" + name)
        let now = MonotonicClock.now()
        return seen.withLock { seen in
            guard let signature else {
                seen[name] = nil
                return false
            }
            if signature.ready { return true }
            if let previous = seen[name], previous.signature == signature {
                return now - previous.since >= settle
            }
            seen[name] = (signature, now)
            return settle <= 0
        }
    }

    /// Claims and ingests one drop. Nil when another watcher has it.
    private func take(_ name: String, events: IngestEventSink?, cancellation: CancellationFlag) throws(ShareIngestError)
        -> BatchReport?
    {
        guard let signature = DropSignature.read(path + "/" + name) else { return nil }
        var record = try BatchPlan(
            pipeline: ingestor.pipeline, key: nil, message: nil, container: ingestor.container, store: journal,
            identifiers: ingestor.identifiers, now: ingestor.now(), maxAttempts: ingestor.maxAttempts
        ).record
        record.handle(.claim)
        record.dropName = name
        record.dropSignature = signature.text
        do {
            guard try journal.claim(record) else { return nil }
        } catch {
            throw .journal(error, container: ingestor.container)
        }
        seen.withLock { $0[name] = nil }
        return try resume(record, events: events, cancellation: cancellation)
    }

    /// Brings a batch of this inbox to done, in this process or through the workers.
    private func resume(_ record: BatchRecord, events: IngestEventSink?, cancellation: CancellationFlag)
        throws(ShareIngestError) -> BatchReport?
    {
        if let distributed {
            guard let lock = BatchLock(batch: record.id, container: ingestor.container) else { return nil }
            defer { withExtendedLifetime(lock) {} }
            return try enqueue(record, distributed: distributed, events: events, cancellation: cancellation)
        }
        var batch = record
        if batch.state == .claimed {
            // Held while the drop is moved in and planned; released before the run,
            // which takes the batch's lock itself.
            guard let lock = BatchLock(batch: batch.id, container: ingestor.container) else { return nil }
            guard let dropPath = moveIn(&batch) else { return nil }
            CrashPoint.hit("after-claim")
            // The drop is walked through the folder held open, and stays held for the run here.
            batch = try BatchPlan.commit(
                batch, inputs: [.path(dropPath)], into: journal,
                plan: BatchPlan.Details(
                    container: ingestor.container, pipeline: try batch.pipeline(catalog: ingestor.pipeline.catalog),
                    maxAttempts: batch.maxAttempts,
                    sizeLimits: ingestor.sizeLimits, selection: ingestor.selection),
                identifiers: ingestor.identifiers, shownRoot: (dropPath, path + "/" + (batch.dropName ?? "")),
                holdingRoots: true)
            withExtendedLifetime(lock) {}
        }
        defer { HeldDropRoots.release(batch.id) }
        do {
            return try ShareIngestor.resume(
                batch, journal: journal, decoder: ingestor.decoder, events: events, cancellation: cancellation,
                now: ingestor.now,
                catalog: ingestor.pipeline.catalog
            ) { [self] batch in
                dispose(batch, items: try? journal.recordedItems(of: batch.id).map(\.item))
            }
        } catch {
            // Another watcher took it between our claim and here: it is theirs.
            if case .batchBusy = error { return nil }
            if case .batchNotResumable = error { return nil }
            throw error
        }
    }

    /// The distributed path: the drop is moved in and enqueued once (a batch
    /// already in the database after a restart is only waited for), then its
    /// manifest is waited for, the drop disposed of and the batch recorded done
    /// (or failed: the drop goes to `.failed/`) here too. `events` then hears the
    /// batch as a local run tells it (each item, then the batch), as the
    /// workers finished it.
    private func enqueue(
        _ record: BatchRecord, distributed: DistributedIngestor, events: IngestEventSink?,
        cancellation: CancellationFlag
    ) throws(ShareIngestError) -> BatchReport? {
        var batch = record
        do {
            if try distributed.batch(batch.id, cancellation: cancellation) == nil {
                guard let dropPath = batch.dropPath ?? moveIn(&batch) else { return nil }
                CrashPoint.hit("after-claim")
                // Reports name the drop's files by their place in the inbox, not
                // where the workers read them (`.processing/<batch>/`).
                _ = try distributed.enqueue(
                    [.path(dropPath)], key: batch.key, message: batch.message, id: batch.id,
                    shownRoot: (dropPath, path + "/" + (batch.dropName ?? "")),
                    cancellation: cancellation)
                batch.handle(.seal)
                try journal.update(batch)
            }
            let id = batch.id
            let notices = notices.map { sink in
                { @Sendable (notice: DistributedIngestor.WaitNotice) in sink(id, notice) }
            }
            guard let done = try distributed.wait(for: id, cancellation: cancellation, notices: notices) else {
                return nil
            }
            batch.manifestPath = done.manifestPath
            batch.redirectURL = done.redirectURL
            dispose(batch, items: try? distributed.recordedItems(of: batch.id, cancellation: cancellation))
            batch.handle(.endedElsewhere(done.state))
            batch.finishedAt = ingestor.now()
            batch.itemCount = done.itemCount
            batch.ingestedCount = done.ingestedCount
            batch.failedCount = done.failedCount
            batch.skippedCount = done.skippedCount
            try journal.update(batch)
            return try distributed.report(of: done, events: events, cancellation: cancellation)
        } catch let error as ShareIngestError {
            throw error
        } catch {
            throw .storeUnavailable("\(error)")
        }
    }

    /// Moves a claimed drop in: renamed into `.processing/<batch>/<name>` (or left
    /// in place when kept), and recorded. Nil (the batch recorded `abandoned`)
    /// when the drop vanished.
    private func moveIn(_ batch: inout BatchRecord) -> String? {
        guard let name = batch.dropName, let dropPath = claimedPath(of: batch, name: name) else {
            batch.handle(.abandon)
            try? journal.update(batch)
            return nil
        }
        batch.dropPath = dropPath
        try? journal.update(batch)
        return dropPath
    }

    private func claimedPath(of batch: BatchRecord, name: String) -> String? {
        let original = path + "/" + name
        if disposition == .keep { return FileSystem.exists(original) ? original : nil }
        let holder = "\(path)/.processing/\(batch.id.uuidString)"
        let claimed = holder + "/" + name
        if FileSystem.exists(claimed) { return claimed }
        try? FileSystem.makeDirectory(holder)
        do { try FileSystem.rename(original, claimed) } catch {
            FileSystem.removeEmptyDirectory(holder)
            return nil
        }
        try? FileSystem.syncDirectory(path)
        return claimed
    }

    /// After the manifest: what was delivered goes to `.done/<batch>/` (or is
    /// deleted); what was not (``DropSplit``: failed items with their sidecars)
    /// goes to `.failed/<batch>/` beside the batch's report, as the whole drop
    /// does when nothing was delivered. `items` are the batch's final records
    /// (nil when they could not be read: then nothing is deleted, the drop is
    /// filed whole under `.failed/`). A kept drop stays.
    private func dispose(_ batch: BatchRecord, items: [ItemState]?) {
        guard disposition != .keep, let dropPath = batch.dropPath, dropPath.contains("/.processing/") else { return }
        let holder = dropPath.parentPath
        let failed = "\(path)/.failed/\(batch.id.uuidString)"
        defer { try? FileSystem.syncDirectory(path) }
        guard batch.manifestPath != nil, let items else {
            // Nothing delivered (or what was cannot be told): the drop is filed whole.
            try? FileSystem.rename(holder, failed)
            fileReport(of: batch, in: failed)
            return
        }
        let split = DropSplit(items: items, holder: holder)
        CrashPoint.hit("splitting:" + (batch.dropName ?? ""))
        let left = split.move(from: holder, to: failed)
        if !split.undelivered.isEmpty { fileReport(of: batch, in: failed) }
        // A file that could not be moved (swapped for a link meanwhile) keeps
        // the rest where it is: in `.processing/`, neither deleted nor done.
        guard left.isEmpty else { return }
        if disposition == .delete {
            FileSystem.removeTree(holder) { CrashPoint.hit("removing:" + $0) }
        } else {
            try? FileSystem.rename(holder, "\(path)/.done/\(batch.id.uuidString)")
        }
    }

    /// The batch's report beside its undelivered files: it says why each failed.
    private func fileReport(of batch: BatchRecord, in folder: String) {
        let report = ingestor.container.reportPath(key: batch.key)
        _ = FileSystem.copySmallFile(report, to: folder + "/report.json")
    }
}
