import Foundation
import ShareManifest
import SystemCalls

/// Runs one stage on one item: the one place where a stage's outcome becomes
/// the item's state, for the local runner (``BatchRunner``) and for remote
/// workers (``StageWorker``) alike. Recording the new state is the caller's:
/// a journal update locally, a leased job's completion in PostgreSQL.
enum ItemExecution {
    /// Runs `stage` on `item`; true when the item may go on to its next stage.
    /// A failed item has its container files removed here, before its failure is
    /// recorded (a crash in between only redoes the item).
    static func run(_ stage: any ItemStage, on item: ItemWork, in context: BatchContext, events: IngestEventSink?) -> Bool {
        CrashPoint.hit("\(stage.name.rawValue):\(item.source.fileName ?? "")")
        let start = MonotonicClock.now()
        do throws(ItemFailure) {
            try stage.process(item, in: context)
            item.completed = stage.name
        } catch {
            item.failure = error
        }
        item.stageSeconds[stage.name] = MonotonicClock.now() - start
        item.decodingInFlight = false
        TestThrottle.pause()
        if item.failure != nil {
            item.pendingThumbnail = nil
            item.removeFiles(in: context.container)
        }
        events?(.stageFinished(stage.name, index: item.index, bytes: stage.name == .copy ? item.size ?? 0 : 0))
        return item.failure == nil
    }
}

/// The fan-in, shared by both modes: once every item of a batch has finished,
/// removes what dead writers left, writes the manifest (once: a run that died
/// after writing it finds it complete), counts the outcomes, stores the batch
/// report and removes the spooled in-memory inputs. The caller records the
/// returned batch as done (journal or queue).
enum BatchCompletion {
    /// - Parameters:
    ///   - started: the monotonic time the batch (or this run of it) started, for
    ///     its wall time; nil when unknown (a remote worker).
    ///   - changed: items whose state the manifest stage changed (text the legacy
    ///     schema cannot hold, a manifest that could not be written), to record.
    static func finish(
        _ batch: BatchRecord, items: [ItemWork], pipeline: PipelineDefinition, container: ContainerDirectory, started: Double?,
        now: Date, changed: (ItemWork) -> Void
    ) -> (record: BatchRecord, report: BatchReport) {
        var batch = batch
        let manifestStart = MonotonicClock.now()
        // Every item has finished: temporary files named after one of them were
        // left by a writer that died mid-write, on whichever machine.
        Recovery.removeTemporaries(of: items.map(\.id), in: container)
        // A failed item leaves nothing behind, also when it was given up on by a
        // worker that could not remove its files (it had died).
        for item in items where item.failure != nil { item.removeFiles(in: container) }
        let manifest = ManifestStage(settings: pipeline.manifest)
        let delivery = manifest.deliver(items, key: batch.key, container: container, message: batch.message, changed: changed)
        CrashPoint.hit("after-manifest")
        TestThrottle.pause()
        batch.manifestPath = delivery.manifestPath
        batch.redirectURL = delivery.redirect?.description
        batch.state = .done
        batch.finishedAt = now
        batch.itemCount = items.count
        batch.ingestedCount = delivery.reports.count { $0.status == .ingested }
        batch.failedCount = delivery.reports.count { $0.status == .failed }
        batch.skippedCount = delivery.reports.count { $0.status == .skipped }
        var totals: [StageName: Double] = [:]
        for item in items { totals.merge(item.stageSeconds, uniquingKeysWith: +) }
        totals[.manifest] = MonotonicClock.now() - manifestStart
        let report = BatchReport(
            batchID: batch.id, key: batch.key, redirectURL: delivery.redirect, manifestPath: delivery.manifestPath,
            schema: pipeline.manifest.schema, pipeline: pipeline.name, items: delivery.reports, stageSeconds: totals,
            wallSeconds: started.map { MonotonicClock.now() - $0 } ?? totals.values.reduce(0, +))
        // Kept beside the manifest for `share report` and `share status` (and beside
        // a failed drop); losing it costs no item, so failing to write it is not
        // the batch's failure.
        let reportPath = container.reportPath(key: batch.key)
        FileSystem.remove(reportPath)
        try? AtomicFile.create(reportPath, bytes: report.json(), syncDirectory: false)
        Spool.remove(batch: batch.id, in: container)
        return (batch, report)
    }
}
