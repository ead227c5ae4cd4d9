import Foundation
import ShareManifest
import SystemCalls

/// The fan-in, the same in every mode: once every item of a batch has
/// finished, it reads them from the store in order (a page at a time), removes
/// what dead writers left, writes the manifest entry by entry (once: a run that
/// died after writing it finds it complete), counts the outcomes, stores the
/// batch report and records the batch done in the store.
enum BatchCompletion {
    /// What the fan-in produced.
    struct Outcome {
        let record: BatchRecord
        let report: BatchReport
    }

    /// The manifest is written but the store could not record the batch done:
    /// what was written stands (the next run finds the manifest complete and
    /// only records the end).
    struct NotRecorded: Error {
        let outcome: Outcome
        let error: any Error
    }

    /// Items of a batch read per page.
    static let pageSize = 1000

    /// Export candidates (stems, bursts) and items with their sidecars read
    /// per page: ``pageSize``, or in debug and test builds
    /// `SHARE_TEST_EXPORT_PAGE_SIZE`, so that a small drop is enough for a
    /// test to see the fan-in page over many stems and deliver sidecars page
    /// after page.
    static let exportPageSize: Int = {
        #if DEBUG
        if let size = ProcessEnvironment.value("SHARE_TEST_EXPORT_PAGE_SIZE").flatMap(Int.init), size > 0 { return size }
        #endif
        return pageSize
    }()

    /// Finishes `batch`, reading its items from `store`. `wallSeconds`: how
    /// long the batch took (nil: the stage times' sum). `beforeRecording` runs
    /// once the manifest and the report are written, before the batch is
    /// recorded done (a watched drop is moved away there); `recordEnd` records
    /// the end (the batch done and the last items the fan-in changed) and says
    /// whether it was this caller's to record. Nil when it was not (a manifest
    /// job no longer held, a batch another process finished).
    ///
    /// `recordChanged` records a page of the items the fan-in changed (each
    /// ``pageSize`` of them, before the end), so that a batch of a hundred
    /// thousand duplicates is never held, nor encoded into one statement: what
    /// the fan-in changes follows from the stored items alone (a duplicate's
    /// original, a Live Photo's pair, a schema's refusal), so a fan-in run again
    /// after a crash between two pages finds the recorded ones already changed
    /// and makes the same manifest. It says false when the batch is no longer
    /// the caller's (a manifest job's lease lost): nothing more is recorded.
    ///
    /// The sidecars each item carries are delivered here (``SidecarDelivery``):
    /// read and copied, attached to a delivered photo or video, else
    /// delivered as files of their own, all made durable by one sync of the
    /// container's file system before the manifest names them; `events` hears
    /// each of their reports (their media's was heard when it finished).
    static func finish(
        _ batch: BatchRecord, context: BatchContext, store: any ItemStore, wallSeconds: Double?, now: Date, events: IngestEventSink? = nil,
        beforeRecording: (BatchRecord) -> Void = { _ in },
        recordChanged: ([ItemState]) throws -> Bool, recordEnd: (BatchRecord, [ItemState]) throws -> Bool
    ) throws -> Outcome? {
        let manifestStart = MonotonicClock.now()
        let container = context.container
        let stage = ManifestStage(settings: context.pipeline.manifest)
        let temporaries = Recovery.temporaries(in: container)
        let manifestPath = container.manifestPath(key: batch.key)
        let alreadyWritten = FileSystem.exists(manifestPath)

        // A legacy manifest holds either entries or strings: which, and whether
        // text items can be carried at all, depends on the whole batch.
        var hasFiles = false
        var textOnly = false
        if stage.needsWholeBatch {
            var deliversAny = false
            try store.forEachItem(of: batch.id, pageSize: pageSize) { item in
                guard item.failure == nil else { return }
                deliversAny = true
                if item.isFileLike { hasFiles = true }
            }
            // Without files, only text and links are delivered: an array of strings.
            textOnly = deliversAny && !hasFiles
        }

        let duplicates = DuplicateContent(earlier: try store.earlierCopies(for: batch.id), container: container, policy: context.pipeline.manifest.duplicates)
        // Live Photo halves, paired as they will be delivered (a duplicate the
        // pipeline skips pairs with nothing; a linked one by its new path).
        var livePhotos = LivePhotoPairing(candidates: [], final: { $0 })
        if let motion = context.pipeline.motion, motion.livePhotos, stage.settings.schema == .v2 {
            livePhotos = LivePhotoPairing(candidates: try store.livePhotoCandidates(for: batch.id)) { candidate in
                var final = candidate
                _ = duplicates.resolve(&final, removingFiles: false)
                return final.failure == nil ? final : nil
            }
        }

        var changed: [ItemState] = []
        var stillOurs = true
        func recordPage() throws {
            guard stillOurs, !changed.isEmpty else { return }
            stillOurs = try recordChanged(changed)
            changed.removeAll(keepingCapacity: true)
        }
        func keep(_ item: ItemState) throws {
            guard stillOurs else { return }
            changed.append(item)
            if changed.count >= pageSize { try recordPage() }
        }

        // Groups of shots (a RAW and its JPEG, a burst, an edit), formed as
        // they will be delivered before any entry is written, as a member may
        // come after another: the stems the store's index gives, one at a time.
        var groups = ShotGrouping()
        if stage.settings.schema == .v2 {
            let final = { (candidate: ItemState) -> ItemState? in
                var final = candidate
                _ = duplicates.resolve(&final, removingFiles: false)
                return final.failure == nil ? final : nil
            }
            // Apple bursts first (by `BurstUUID`): their frames join no group by name.
            try store.forEachBurst(of: batch.id, pageSize: exportPageSize) { frames in groups.addBurst(frames, final: final) }
            try store.forEachExportStem(of: batch.id, pageSize: exportPageSize) { stem in groups.add(stem, final: final) }
        }

        var writer: ManifestWriter?
        var writeError: SystemError?
        var copiesSynced = false
        // Sidecars copied here (without an fsync each): the file system is synced before the manifest.
        var sidecarsCopied = false
        var types: Set<SharedMediaType> = []
        var totals: [StageName: Double] = [:]
        // The stored report is written as the items are read (in bounded memory);
        // if it cannot be, the report is still returned (rebuilt from the store
        // when read), and losing it costs no item.
        let reportPath = container.reportPath(key: batch.key)
        var reportWriter = try? StoredReportWriter(path: reportPath)
        var counts = BatchReport.Counts(items: 0, ingested: 0, failed: 0, skipped: 0)
        // Small batches' reports are kept (they outlive the container); a large
        // batch's are read back from the stored report when needed.
        var held: [ItemReport]? = []
        @discardableResult
        func report(_ item: ItemState) -> ItemReport {
            let itemReport = stage.report(for: item, finished: true, message: context.message)
            counts.add(itemReport.status)
            if counts.items <= BatchReport.itemsHeldInMemory { held?.append(itemReport) } else { held = nil }
            do throws(SystemError) { try reportWriter?.append(itemReport) } catch { reportWriter = nil }
            return itemReport
        }
        /// Adds `entry` (an item delivered) to the manifest.
        func deliver(_ entry: SharedMediaFile) {
            types.insert(entry.type)
            guard !alreadyWritten, writeError == nil else { return }
            do throws(SystemError) {
                // Every copy is in place (all items finished): one fsync of
                // their folders makes them durable before a manifest names them.
                if entry.fileURL != nil, !copiesSynced {
                    try stage.syncCopies(in: container)
                    copiesSynced = true
                }
                if writer == nil {
                    CrashPoint.hit("before-manifest")
                    writer = try ManifestStore(container: container).writer(key: batch.key, schema: context.pipeline.manifest.schema, textOnly: textOnly)
                }
                try writer?.append(entry)
            } catch {
                writeError = error
            }
        }
        try store.forEachPage(of: batch.id, pageSize: exportPageSize) { page in
            var items = page
            var changes = [Bool](repeating: false, count: items.count)
            for position in items.indices {
                var item = items[position]
                // Temporary files named after it were left by a writer that died
                // mid-write, on whichever machine; a failed item leaves nothing behind,
                // also when its worker died before it could remove its files.
                for path in (temporaries[item.id] ?? []) + (temporaries[item.motionVideoID] ?? []) { FileSystem.remove(path) }
                if item.failure != nil { item.removeFiles(in: container) }
                var itemChanged = false
                if item.failure == nil, let group = groups.groups[item.index], item.group != group {
                    item.group = group
                    itemChanged = true
                }
                if item.failure == nil, let failure = stage.unsupportedBySchema(item, batchHasFiles: hasFiles) {
                    item.failure = failure
                    itemChanged = true
                }
                if item.failure == nil, duplicates.resolve(&item) { itemChanged = true }
                if item.failure == nil, let link = livePhotos.links[item.index], item.livePhoto != link {
                    item.livePhoto = link
                    itemChanged = true
                }
                (items[position], changes[position]) = (item, itemChanged)
            }
            // Their sidecars, now that they are final: copied two at a time.
            for (position, settled) in SidecarDelivery.settle(&items, in: context, writing: !alreadyWritten) {
                if settled.changed { changes[position] = true }
                if settled.copied { sidecarsCopied = true }
            }
            for (item, itemChanged) in zip(items, changes) {
                if itemChanged { try keep(item) }
                totals.merge(item.stageSeconds, uniquingKeysWith: +)
                // A delivered item's report holds its entry (``ManifestStage/report(for:finished:message:)``).
                if let entry = report(item).entry { deliver(entry) }
                for sidecar in item.reportedSidecars {
                    let sidecarReport = report(sidecar)
                    if let entry = sidecarReport.entry { deliver(entry) }
                    events?(.itemFinished(sidecarReport))
                }
            }
        }
        if sidecarsCopied, writeError == nil {
            do throws(SystemError) { try FileSystem.syncFileSystem(containing: container.root) } catch { writeError = error }
        }
        if let writer, writeError == nil {
            do throws(SystemError) {
                try writer.commit { CrashPoint.hit("manifest-temporary-written") }
            } catch {
                writeError = error
            }
        }
        if let writeError {
            // The manifest could not be written: nothing is delivered, and the
            // items that would have been say why (their reports are written again).
            types = []
            counts = BatchReport.Counts(items: 0, ingested: 0, failed: 0, skipped: 0)
            held = []
            reportWriter = try? StoredReportWriter(path: reportPath)
            let unsupported = Dictionary(changed.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
            try store.forEachItem(of: batch.id, pageSize: pageSize) { stored in
                var item = unsupported[stored.index] ?? stored
                var failed = false
                for position in item.carriedSidecars.indices {
                    var sidecar = item.carriedSidecars[position]
                    if let copy = sidecar.copyPath(carriedBy: item, n: position + 1, root: container.root) { FileSystem.remove(copy) }
                    if sidecar.failure == nil {
                        let label = sidecar.label(carriedBy: item)
                        sidecar.failure = ItemFailure(.manifest, writing: writeError, "\(label): the manifest could not be written: \(writeError)")
                    }
                    failed = failed || sidecar != item.carriedSidecars[position]
                    item.carriedSidecars[position] = sidecar
                }
                if item.failure == nil {
                    item.failure = ItemFailure(.manifest, writing: writeError, "\(item.label): the manifest could not be written: \(writeError)")
                    item.removeFiles(in: container)
                    failed = true
                }
                if failed { try keep(item) }
                report(item)
                for sidecar in item.reportedSidecars { report(sidecar) }
            }
        }
        CrashPoint.hit("after-manifest")
        TestThrottle.pause()

        var record = batch
        let delivered = counts.ingested > 0
        record.manifestPath = delivered ? manifestPath : nil
        let redirect = delivered ? stage.redirect(for: types, key: batch.key) : nil
        record.redirectURL = redirect?.description
        record.state = .done
        record.finishedAt = now
        record.itemCount = counts.items
        record.ingestedCount = counts.ingested
        record.failedCount = counts.failed
        record.skippedCount = counts.skipped
        totals[.manifest] = MonotonicClock.now() - manifestStart
        record.stageSeconds = totals
        let batchID = batch.id
        let key = batch.key
        let message = context.message
        let pipeline = context.pipeline
        let report = BatchReport(
            batchID: batch.id, key: batch.key, redirectURL: redirect, manifestPath: record.manifestPath,
            schema: context.pipeline.manifest.schema, pipeline: context.pipeline.name,
            items: held.map(ItemReports.init)
                ?? ItemReports(
                    count: counts.items,
                    load: {
                        (try? BatchReport.stored(key: key, in: container)).flatMap { $0.batchID == batchID ? Array($0.items) : nil }
                            ?? ItemReports.rebuilt(batch: batchID, container: container, pipeline: pipeline, message: message)
                    },
                    visit: { whole, body, skimmed in try? StoredReportReader.forEachItem(in: reportPath, whole: whole, body, skimmed: skimmed) }),
            counts: counts, stageSeconds: totals, wallSeconds: wallSeconds ?? totals.values.reduce(0, +))
        // Kept beside the manifest for `share report` and `share status` (and beside
        // a failed drop); losing it costs no item, so failing to write it is not
        // the batch's failure.
        try? reportWriter?.commit(report)
        // Every item is copied: nothing reads the spooled in-memory inputs any more.
        Spool.remove(batch: batch.id, in: container)
        beforeRecording(record)
        let outcome = Outcome(record: record, report: report)
        do {
            guard stillOurs, try recordEnd(record, changed) else { return nil }
        } catch {
            throw NotRecorded(outcome: outcome, error: error)
        }
        return outcome
    }
}

extension ItemReports {
    /// The reports of a batch's items, rebuilt from the container's journal
    /// (when its stored report is gone): empty when the journal does not have it.
    static func rebuilt(batch: UUID, container: ContainerDirectory, pipeline: PipelineDefinition, message: String?) -> [ItemReport] {
        guard let journal = try? BatchJournal(container: container) else { return [] }
        let lifecycle = ItemLifecycle(pipeline: pipeline)
        let stage = ManifestStage(settings: pipeline.manifest)
        var reports: [ItemReport] = []
        try? journal.forEachItem(of: batch) { reports += stage.reports(for: $0, finished: lifecycle.isFinished($0), message: message) }
        return reports
    }
}

/// Content already delivered: an item whose SHA-256 an earlier item of its
/// batch has, or a copy in a share not yet consumed (then still in the
/// container), is a duplicate, and the pipeline's policy decides what it becomes.
struct DuplicateContent {
    let earlier: EarlierCopies
    let container: ContainerDirectory
    let policy: PipelineDefinition.DuplicatePolicy

    /// The copy `item` duplicates: one in an earlier share first (the first
    /// delivery of the content, while that share is unconsumed and its copy is
    /// there), else the earliest in its own batch.
    func original(of item: ItemState) -> EarlierCopy? {
        let manifests = ManifestStore(container: container)
        let elsewhere = item.sha256.flatMap { earlier.inOtherShares[$0] } ?? []
        let delivered = elsewhere.lazy.filter { copy in
            guard let key = copy.shareKey else { return false }
            return manifests.exists(key) && FileSystem.exists(copy.path)
        }
        return delivered.first ?? earlier.inBatch[item.index]
    }

    /// Applies the policy to `item` if it is a duplicate; true when it changed.
    /// An empty file is no one's duplicate: all empty files have the same hash.
    /// `removingFiles` false: only work out what the item will become.
    func resolve(_ item: inout ItemState, removingFiles: Bool = true) -> Bool {
        guard (item.size ?? 0) > 0, let original = original(of: item), original.path != item.copyPath else { return false }
        let from = original.shareKey.map { "share \($0)" } ?? "this share"
        switch policy {
        case .keep:
            // Reported by its entry's `duplicateOf` (a fact, not something that went wrong).
            item.duplicateOf = original.path
        case .link:
            if removingFiles, let own = item.copyPath, own != original.path { FileSystem.remove(own) }
            item.copyPath = original.path
            item.duplicateOf = original.path
        case .skip:
            item.failure = ItemFailure(
                .manifest, .duplicate, "\(item.label): the same content as \(original.label) was already delivered (in \(from)); skipped")
            if removingFiles { item.removeFiles(in: container) }
        }
        return true
    }
}
