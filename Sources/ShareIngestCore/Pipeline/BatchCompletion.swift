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

    /// The manifest (or the sidecars' copies) could not be written for want
    /// of space: nothing is delivered yet, nothing is failed, and what was
    /// written of it is removed. The fan-in runs again once there is room
    /// (``ItemLifecycle/afterFanInWantsSpace(lostBefore:reason:)``).
    struct WantsSpace: Error, CustomStringConvertible {
        let error: SystemError
        var description: String {
            "container disk full: the manifest could not be written (\(error.message) while writing \(error.path)\(SniffStage.freeSpace(at: error.path.parentPath)))"
        }
    }

    /// Items of a batch read per page, and changed items recorded per page: a
    /// page, its settled copy and the changed ones are what the fan-in holds
    /// (about 7 KB an item at the peak: 1000 of them were 7 MiB of heap).
    static let pageSize = 250

    /// Export candidates (stems, bursts) and items with their sidecars read
    /// per page: ``pageSize``, or in debug and test builds
    /// `SHARE_TEST_EXPORT_PAGE_SIZE`, so that a small drop is enough for a
    /// test to see the fan-in page over many stems and deliver sidecars page
    /// after page.
    static let exportPageSize: Int = {
        #if DEBUG
            if let size = ProcessEnvironment.value("SHARE_TEST_EXPORT_PAGE_SIZE").flatMap(Int.init), size > 0 {
                return size
            }
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
        _ batch: BatchRecord, context: BatchContext, store: any ItemStore, wallSeconds: Double?, now: Date,
        events: IngestEventSink? = nil,
        beforeRecording: (BatchRecord) -> Void = { _ in },
        recordChanged: ([ItemState]) throws -> Bool, recordEnd: (BatchRecord, [ItemState]) throws -> Bool
    ) throws -> Outcome? {
        try withoutActuallyEscaping(recordChanged) { recordChanged in
            var fanIn = try FanIn(batch, context: context, store: store, events: events, recordChanged: recordChanged)
            try fanIn.relateItems()
            try fanIn.deliverItems()
            fanIn.commitManifest()
            if let writeError = fanIn.writeError {
                // A full disk fails nothing: the manifest waits for room.
                if writeError.isDiskFull { throw WantsSpace(error: writeError) }
                try fanIn.failUndelivered(writeError)
            }
            CrashPoint.hit("after-manifest")
            TestThrottle.pause()
            return try fanIn.recordEnd(
                wallSeconds: wallSeconds, now: now, beforeRecording: beforeRecording, recordEnd: recordEnd)
        }
    }

    /// One run of the fan-in, in the steps ``finish(_:context:store:wallSeconds:now:events:beforeRecording:recordChanged:recordEnd:)``
    /// takes: what it knows of the batch, the manifest and report it writes as
    /// it reads the items, and the items it changed.
    struct FanIn {
        let batch: BatchRecord
        let context: BatchContext
        let store: any ItemStore
        let events: IngestEventSink?
        let recordChanged: ([ItemState]) throws -> Bool
        let stage: ManifestStage
        let started = MonotonicClock.now()
        let temporaries: [UUID: [String]]
        let manifestPath: String
        /// A run that died after writing it finds the manifest complete: it is not written again.
        let alreadyWritten: Bool
        /// The batch delivers files (a legacy manifest of entries, not of strings).
        private(set) var hasFiles = false
        /// Only text and links are delivered: a legacy manifest of strings.
        private(set) var textOnly = false
        private(set) var duplicates: DuplicateContent
        private(set) var similar: SimilarPictures
        private(set) var livePhotos = LivePhotoPairing(candidates: [], final: { $0 })
        private(set) var groups = ShotGrouping()
        /// Items changed and not recorded yet (at most a page).
        private(set) var changed: [ItemState] = []
        /// False once the batch is no longer the caller's: nothing more is recorded.
        private(set) var stillOurs = true
        private var writer: ManifestWriter?
        /// Why the manifest could not be written, if it could not.
        private(set) var writeError: SystemError?
        private var copiesSynced = false
        /// Sidecars copied here (without an fsync each): the file system is synced before the manifest.
        private var sidecarsCopied = false
        private var types: Set<SharedMediaType> = []
        private var totals: [StageName: Double] = [:]
        private let reportPath: String
        private var reportWriter: StoredReportWriter?
        private var counts = BatchReport.Counts(items: 0, ingested: 0, failed: 0, skipped: 0)
        /// Small batches' reports, kept (a large batch's are read back from the stored report when needed).
        private var held: [ItemReport]? = []

        var container: ContainerDirectory { context.container }
        var lifecycle: ItemLifecycle { context.lifecycle }

        /// The fan-in of `batch`, with what it must know of the whole batch
        /// before writing a first entry: whether a legacy manifest holds
        /// entries or strings (which depends on every item), and the copies
        /// delivered before.
        init(
            _ batch: BatchRecord, context: BatchContext, store: any ItemStore, events: IngestEventSink?,
            recordChanged: @escaping ([ItemState]) throws -> Bool
        ) throws {
            (self.batch, self.context, self.store, self.events, self.recordChanged) = (
                batch, context, store, events, recordChanged
            )
            stage = ManifestStage(settings: context.pipeline.manifest)
            temporaries = context.container.temporaries()
            manifestPath = context.container.manifestPath(key: batch.key)
            alreadyWritten = FileSystem.exists(manifestPath)
            reportPath = context.container.reportPath(key: batch.key)
            // The stored report is written as the items are read (in bounded
            // memory); if it cannot be, the report is still returned (rebuilt
            // from the store when read), and losing it costs no item.
            reportWriter = try? StoredReportWriter(path: reportPath)
            if stage.needsWholeBatch {
                var deliversAny = false
                var hasFiles = false
                try store.forEachItem(of: batch.id, pageSize: pageSize) { item in
                    guard item.failure == nil else { return }
                    deliversAny = true
                    if item.isFileLike { hasFiles = true }
                }
                // Without files, only text and links are delivered: an array of strings.
                (self.hasFiles, textOnly) = (hasFiles, deliversAny && !hasFiles)
            }
            duplicates = DuplicateContent(
                earlier: try store.earlierCopies(for: batch.id), container: context.container,
                policy: context.pipeline.manifest.duplicates)
            let earlierHashes =
                context.pipeline.manifest.schema == .v2 ? try store.earlierPerceptualHashes(for: batch.id) : []
            similar = SimilarPictures(earlier: earlierHashes, container: context.container) { [store] batch, index in
                (try? store.items(of: batch, after: index - 1, limit: 1))?.first.flatMap {
                    $0.index == index && $0.failure == nil ? $0.copyPath : nil
                }
            }
        }

        /// What an item will be once the fan-in settled it, without touching its
        /// files (nil: it will not be delivered).
        private func final(_ candidate: ItemState) -> ItemState? {
            var final = candidate
            if final.failure == nil, stage.outsideDateRange(final) != nil { return nil }
            _ = duplicates.resolve(&final, removingFiles: false, lifecycle: lifecycle)
            return final.failure == nil ? final : nil
        }

        /// The relations between items, formed as they will be delivered before
        /// any entry is written (a member may come after another): Live Photo
        /// halves (a duplicate the pipeline skips pairs with nothing; a linked
        /// one by its new path), then groups of shots (Apple bursts first, by
        /// `BurstUUID`: their frames join no group by name; then a RAW and its
        /// JPEG, an edit: the stems the store's index gives, one at a time).
        mutating func relateItems() throws {
            let final = self.final
            if let motion = context.pipeline.motion, motion.livePhotos, stage.settings.schema == .v2 {
                livePhotos = LivePhotoPairing(candidates: try store.livePhotoCandidates(for: batch.id), final: final)
            }
            if stage.settings.schema == .v2 {
                var groups = ShotGrouping()
                try store.forEachBurst(of: batch.id, pageSize: exportPageSize) { frames in
                    groups.addBurst(frames, final: final)
                }
                try store.forEachExportStem(of: batch.id, pageSize: exportPageSize) { stem in
                    groups.add(stem, final: final)
                }
                self.groups = groups
            }
        }

        /// Reads the items a page at a time, settles each (``settle(_:)``) and
        /// the sidecars it carries, reports it and adds its entry to the manifest.
        mutating func deliverItems() throws {
            var fanIn = self
            try store.forEachPage(of: batch.id, pageSize: exportPageSize) { page in
                var items = page
                var changes = [Bool](repeating: false, count: items.count)
                for position in items.indices { changes[position] = fanIn.settle(&items[position]) }
                // Their sidecars, now that they are final: copied two at a time.
                for (position, settled) in SidecarDelivery.settle(
                    &items, in: fanIn.context, writing: !fanIn.alreadyWritten)
                {
                    if settled.changed { changes[position] = true }
                    if settled.copied { fanIn.sidecarsCopied = true }
                }
                for (item, itemChanged) in zip(items, changes) {
                    if itemChanged { try fanIn.keep(item) }
                    fanIn.totals.merge(item.stageSeconds, uniquingKeysWith: +)
                    // A delivered item's report holds its entry (``ManifestStage/report(for:finished:message:)``).
                    if let entry = fanIn.report(item).entry { fanIn.deliver(entry) }
                    for sidecar in item.reportedSidecars {
                        let sidecarReport = fanIn.report(sidecar)
                        if let entry = sidecarReport.entry { fanIn.deliver(entry) }
                        fanIn.events?(.itemFinished(sidecarReport))
                    }
                }
            }
            self = fanIn
        }

        /// An item as the fan-in delivers it: what dead writers left of it
        /// removed (temporary files named after it, by a writer that died
        /// mid-write on whichever machine; a failed item's files, also when its
        /// holder died before it could remove them), its group and Live Photo,
        /// and what the lifecycle makes of it when the manifest's schema cannot
        /// carry it, it was taken outside the capture-date range asked, or it is
        /// a duplicate the pipeline skips. True when it changed.
        private mutating func settle(_ item: inout ItemState) -> Bool {
            for path in (temporaries[item.id] ?? []) + (temporaries[item.motionVideoID] ?? []) {
                FileSystem.remove(path)
            }
            if item.failure != nil { item.removeFiles(in: container) }
            var changed = false
            if item.failure == nil, let group = groups.groups[item.index], item.group != group {
                item.group = group
                changed = true
            }
            if item.failure == nil, let failure = stage.unsupportedBySchema(item, batchHasFiles: hasFiles) {
                _ = lifecycle.fail(&item, failure)
                changed = true
            }
            // Outside the capture-date range asked: skipped, and its copies removed.
            if item.failure == nil, let outside = stage.outsideDateRange(item) {
                _ = lifecycle.fail(&item, outside)
                item.removeFiles(in: container)
                changed = true
            }
            if item.failure == nil, duplicates.resolve(&item, lifecycle: lifecycle) { changed = true }
            if stage.settings.schema == .v2, similar.resolve(&item) { changed = true }
            if item.failure == nil, let link = livePhotos.links[item.index], item.livePhoto != link {
                item.livePhoto = link
                changed = true
            }
            return changed
        }

        /// Keeps a changed item, recording a page of them once it is full.
        private mutating func keep(_ item: ItemState) throws {
            guard stillOurs else { return }
            changed.append(item)
            if changed.count >= pageSize { try recordPage() }
        }

        private mutating func recordPage() throws {
            guard stillOurs, !changed.isEmpty else { return }
            stillOurs = try recordChanged(changed)
            changed.removeAll(keepingCapacity: true)
        }

        /// Counts an item's report and writes it to the stored report.
        @discardableResult
        private mutating func report(_ item: ItemState) -> ItemReport {
            let itemReport = stage.report(for: item, finished: true, message: context.message)
            counts.add(itemReport.status)
            if counts.items <= BatchReport.itemsHeldInMemory { held?.append(itemReport) } else { held = nil }
            do throws(SystemError) { try reportWriter?.append(itemReport) } catch { reportWriter = nil }
            return itemReport
        }

        /// Adds `entry` (an item delivered) to the manifest.
        private mutating func deliver(_ entry: SharedMediaFile) {
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
                    writer = try ManifestStore(container: container).writer(
                        key: batch.key, schema: context.pipeline.manifest.schema, textOnly: textOnly)
                }
                try writer?.append(entry)
            } catch {
                writeError = error
            }
        }

        /// Makes the sidecars copied here durable (one sync of the container's
        /// file system), then the manifest, atomically.
        mutating func commitManifest() {
            if sidecarsCopied, writeError == nil {
                do throws(SystemError) { try FileSystem.syncFileSystem(containing: container.root) } catch {
                    writeError = error
                }
            }
            if let writer, writeError == nil {
                do throws(SystemError) {
                    try writer.commit { CrashPoint.hit("manifest-temporary-written") }
                } catch {
                    writeError = error
                }
            }
        }

        /// The manifest could not be written: nothing is delivered, and the
        /// items that would have been say why (their reports are written again).
        mutating func failUndelivered(_ writeError: SystemError) throws {
            types = []
            counts = BatchReport.Counts(items: 0, ingested: 0, failed: 0, skipped: 0)
            held = []
            reportWriter = try? StoredReportWriter(path: reportPath)
            let unsupported = Dictionary(changed.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
            var fanIn = self
            try store.forEachItem(of: batch.id, pageSize: pageSize) { stored in
                var item = unsupported[stored.index] ?? stored
                for (position, sidecar) in item.carriedSidecars.enumerated() {
                    if let copy = sidecar.copyPath(carriedBy: item, n: position + 1, root: fanIn.container.root) {
                        FileSystem.remove(copy)
                    }
                }
                let sidecars = item.carriedSidecars
                BatchLifecycle.failCarriedSidecars(of: &item, .manifestUnwritten(writeError))
                var failed = item.carriedSidecars != sidecars
                if item.failure == nil {
                    let failure = ItemFailure(
                        .manifest, writing: writeError,
                        "\(item.label): the manifest could not be written: \(writeError)")
                    _ = fanIn.lifecycle.fail(&item, failure)
                    item.removeFiles(in: fanIn.container)
                    failed = true
                }
                if failed { try fanIn.keep(item) }
                fanIn.report(item)
                for sidecar in item.reportedSidecars { fanIn.report(sidecar) }
            }
            self = fanIn
        }

        /// The batch as the manifest left it (done, its counts, its manifest and
        /// redirect URL), its report stored beside the manifest, then recorded
        /// done with the last items it changed.
        func recordEnd(
            wallSeconds: Double?, now: Date, beforeRecording: (BatchRecord) -> Void,
            recordEnd: (BatchRecord, [ItemState]) throws -> Bool
        ) throws -> Outcome? {
            var record = batch
            let delivered = counts.ingested > 0
            record.manifestPath = delivered ? manifestPath : nil
            let redirect = delivered ? stage.redirect(for: types, key: batch.key) : nil
            record.redirectURL = redirect?.description
            record.handle(.end)
            record.finishedAt = now
            record.itemCount = counts.items
            record.ingestedCount = counts.ingested
            record.failedCount = counts.failed
            record.skippedCount = counts.skipped
            var totals = totals
            totals[.manifest] = MonotonicClock.now() - started
            record.stageSeconds = totals
            let report = self.report(record: record, redirect: redirect, totals: totals, wallSeconds: wallSeconds)
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

        /// The batch's report: its items held (a small batch), or read back
        /// (or gone through) from the stored report, else rebuilt from the
        /// batch's store, opened again (``StoreOpener``), when needed.
        private func report(
            record: BatchRecord, redirect: RedirectURL?, totals: [StageName: Double], wallSeconds: Double?
        ) -> BatchReport {
            // Read later, on whichever thread: the store opened again (its own
            // connection), not the one at hand.
            let (batchID, key, container, message, pipeline, reportPath, opener) = (
                batch.id, batch.key, container, context.message, context.pipeline, reportPath, store.opener
            )
            return BatchReport(
                batchID: batch.id, key: batch.key, redirectURL: redirect, manifestPath: record.manifestPath,
                schema: context.pipeline.manifest.schema, pipeline: context.pipeline.name,
                items: held.map(ItemReports.init)
                    ?? ItemReports(
                        count: counts.items,
                        load: {
                            (try? BatchReport.stored(key: key, in: container)).flatMap {
                                $0.batchID == batchID ? Array($0.items) : nil
                            }
                                ?? ItemReports.rebuilt(
                                    batch: batchID, opening: opener, pipeline: pipeline, message: message)
                        },
                        visit: { whole, body, skimmed in
                            // Its stored report gone (or another batch's): as `load`, from the batch's store.
                            guard (try? BatchReport.stored(key: key, in: container))?.batchID == batchID else {
                                let items = ItemReports.rebuilt(
                                    batch: batchID, opening: opener, pipeline: pipeline, message: message)
                                for item in items { body(item) }
                                return
                            }
                            try? StoredReportReader.forEachItem(in: reportPath, whole: whole, body, skimmed: skimmed)
                        }),
                counts: counts, stageSeconds: totals, wallSeconds: wallSeconds ?? totals.values.reduce(0, +))
        }
    }
}
