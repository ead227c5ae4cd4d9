import Foundation
import Glibc
import MediaFormats
import ShareManifest

/// The library's entry point: ingests what a person shares into a container
/// and writes the manifest a host app reads after the redirect.
///
/// ```swift
/// let container = try ContainerDirectory("/tmp/container")
/// let report = try ShareIngestor(container: container).ingest([.path("/drops/holiday"), .text("Look!")])
/// print(report.redirectURL!)   // ShareMedia://dataUrl=ShareKey-…#media
/// ```
///
/// Every batch is journaled in the container's state directory (inside it
/// unless ``ContainerDirectory/init(_:stateDirectory:)`` puts it
/// elsewhere): an interrupted one (a signal, a crash, a power cut) is finished
/// by ``resume(_:events:cancellation:)``.
public struct ShareIngestor: Sendable {
    /// The container batches are written into.
    public var container: ContainerDirectory
    /// The pipeline new batches run with (a resumed batch keeps the one it started with).
    public var pipeline: PipelineDefinition
    /// Where batch and item UUIDs come from; ``IdentifierSource/random`` unless a
    /// test needs reproducible names.
    public var identifiers: IdentifierSource
    /// The clock for the timestamps the journal records (`createdAt`, `finishedAt`).
    public var now: @Sendable () -> Date
    /// What decodes the shared media (the untrusted bytes): MediaKit's
    /// `InProcessDecoder` through the `ShareIngest` module's initialiser, or
    /// DecoderIsolation's `ProcessIsolatedDecoder` (sandboxed helpers, as `share` uses).
    public var decoder: any MediaDecoder
    /// Attempts an item may lose through no fault of its own (its process died
    /// while decoding it alone; the journal refused its record) before it gives
    /// up, recorded with each new batch (3 unless set; `share ingest --max-attempts`).
    public var maxAttempts = ItemLifecycle.defaultMaxAttempts
    /// Files (and the inputs of a batch together) past these sizes fail with
    /// `tooLarge` before anything is copied; no limit unless set
    /// (`share ingest --max-item-size`, `--max-drop-size`; `share watch` sets
    /// ``SizeLimits/watchDefaults`` for each drop).
    public var sizeLimits = SizeLimits.none
    /// Which files of the inputs are taken (``DropSelection``: globs, hidden
    /// files); every file but hidden ones unless set (`share ingest
    /// --include`, `--exclude`, `--hidden`; `share watch` the same for each drop).
    public var selection = DropSelection.all

    /// An ingestor for `container`.
    ///
    /// - Parameters:
    ///   - pipeline: the `default` pipeline unless given (``PipelineDefinition/load(_:)``
    ///     by name, or built in code).
    ///   - identifiers: ``IdentifierSource/sequential(startingAt:)`` or
    ///     ``IdentifierSource/seeded(_:)`` make manifests reproducible.
    ///   - now: the clock for recorded timestamps.
    public init(
        container: ContainerDirectory, pipeline: PipelineDefinition = .standard,
        identifiers: IdentifierSource = .random, now: @escaping @Sendable () -> Date = { Date() },
        decoder: any MediaDecoder
    ) {
        self.container = container
        self.pipeline = pipeline
        self.identifiers = identifiers
        self.now = now
        self.decoder = decoder
    }

    /// Runs one batch, blocking the calling thread (work happens on the pipeline's
    /// own threads). Throws only when nothing can be done; item failures are in the report.
    ///
    /// - Parameters:
    ///   - key: the manifest key; default: the pipeline's, else unique per batch.
    ///   - message: text that came with the share (v2 `message` of every entry).
    ///   - events: progress and per-item outcomes, called from worker threads.
    ///   - cancellation: when set, items in flight finish their current stage and the
    ///     batch stops, resumable; the report says `interrupted`.
    public func ingest(
        _ inputs: [ShareInput], key: ShareKey? = nil, message: String? = nil,
        events: IngestEventSink? = nil, cancellation: CancellationFlag = CancellationFlag()
    ) throws(ShareIngestError) -> BatchReport {
        try BatchPlan.check(inputs)
        prepareDecoder(for: inputs)
        let journal = try BatchJournal(container: container)
        Recovery.sweep(container)
        let plan = try BatchPlan(
            pipeline: pipeline, key: key, message: message, container: container, store: journal,
            identifiers: identifiers, now: now(),
            maxAttempts: maxAttempts)
        var batch = plan.record
        // So a plain re-run of the same inputs finds this batch if it is left unfinished.
        batch.dropSignature = InputsSignature.of(inputs)
        guard let lock = BatchLock(batch: batch.id, container: container) else {
            throw .containerUnusable(path: container.root, reason: "cannot lock batch \(batch.id)")
        }
        defer { withExtendedLifetime(lock) {} }
        // The folders the plan walked stay open for this run (``HeldDropRoots``).
        defer { HeldDropRoots.release(batch.id) }
        batch = try BatchPlan.commit(
            batch, inputs: inputs, into: journal,
            plan: BatchPlan.Details(
                container: container, pipeline: pipeline, maxAttempts: batch.maxAttempts, sizeLimits: sizeLimits,
                selection: selection),
            identifiers: identifiers, holdingRoots: true)
        CrashPoint.hit("after-plan")
        let runner = try BatchRunner(
            batch, container: container, journal: journal, decoder: decoder, events: events, cancellation: cancellation,
            now: now, catalog: pipeline.catalog)
        return try runner.run(&batch)
    }

    /// Starts the decoder's slow part ahead (``MediaDecoder/mayDecode()``: the
    /// helper template loading its libraries) when the pipeline decodes and the
    /// inputs are named like media (``MediaNameHint``), without waiting for it.
    /// ``ingest(_:key:message:events:cancellation:)`` calls it; a caller with
    /// work of its own before that (`share ingest` looks for an unfinished batch
    /// of the same inputs, which opens the journal) calls it sooner. A hint:
    /// what is decoded, each item's content decides.
    public func prepareDecoder(for inputs: [ShareInput]) {
        if pipeline.decodes, MediaNameHint.namesMedia(inputs) { decoder.mayDecode() }
    }

    /// Refuses inputs that cannot make a batch before anything is made: none
    /// given, or a path that does not exist (``ShareIngestError/inputMissing(path:reason:)``).
    public static func checkInputs(_ inputs: [ShareInput]) throws(ShareIngestError) {
        try BatchPlan.check(inputs)
    }

    /// The batches of exactly these inputs (``InputsSignature``) that an
    /// interruption, a full disk or a crash left unfinished in the container,
    /// oldest first, and whether a process works on each now: a plain re-run
    /// of the same command finds them instead of copying everything again.
    public func unfinishedBatches(of inputs: [ShareInput]) throws(ShareIngestError) -> [(
        batch: BatchRecord, held: Bool
    )] {
        try BatchJournal(container: container).unfinishedBatches(of: inputs)
    }

    /// Finishes an interrupted batch (by id or key), redoing only unfinished stages,
    /// with the pipeline it started with.
    ///
    /// Idempotent, so a script can retry until it succeeds: resuming a batch that
    /// is already done changes nothing and returns its report (the stored one, as
    /// `share report` shows it), with the same redirect URL.
    public func resume(
        _ idOrKey: String, events: IngestEventSink? = nil, cancellation: CancellationFlag = CancellationFlag()
    ) throws(ShareIngestError) -> BatchReport {
        let journal = try BatchJournal(container: container)
        guard let batch = try journal.batch(idOrKey) else { throw .unknownBatch(idOrKey) }
        if batch.state == .done {
            return try Self.replay(
                Self.finishedReport(of: batch, store: journal, container: journal.container, catalog: pipeline.catalog),
                to: events)
        }
        do {
            return try Self.resume(
                batch, journal: journal, decoder: decoder, events: events, cancellation: cancellation, now: now,
                catalog: pipeline.catalog)
        } catch .batchNotResumable(let id, .done) {
            // Another process finished it while we waited for its lock.
            guard let finished = try journal.batch(id.uuidString) else { throw .unknownBatch(idOrKey) }
            return Self.replay(
                try Self.finishedReport(
                    of: finished, store: journal, container: journal.container, catalog: pipeline.catalog), to: events)
        }
    }

    /// Tells `events` what a finished batch's run told it: each item, then the batch.
    static func replay(_ report: BatchReport, to events: IngestEventSink?) -> BatchReport {
        guard let events else { return report }
        events(.batchStarted(batchID: report.batchID, key: report.key, itemCount: report.items.count))
        report.items.visit { events(.itemFinished($0)) }
        events(.batchFinished(report))
        return report
    }

    /// The report of a batch that is done (or failed): the one stored beside its
    /// manifest, or, if there is none, one rebuilt from the store's final record
    /// of each item. The same for local and distributed batches.
    static func finishedReport(
        of batch: BatchRecord, store: any ItemStore, container: ContainerDirectory, catalog: StageCatalog = .builtin
    ) throws(ShareIngestError) -> BatchReport {
        if let stored = try? BatchReport.stored(key: batch.key, in: container), stored.batchID == batch.id {
            return stored
        }
        let pipeline = try batch.pipeline(catalog: catalog)
        let manifest = ManifestStage(settings: pipeline.manifest)
        var items: [ItemReport] = []
        do {
            try store.forEachItem(of: batch.id) {
                items += manifest.reports(for: $0, finished: true, message: batch.message)
            }
        } catch {
            throw .storeUnavailable("\(error)")
        }
        return BatchReport(
            batchID: batch.id, key: batch.key,
            redirectURL: batch.redirectURL.flatMap { try? RedirectURL.parse($0).url },
            manifestPath: batch.manifestPath, schema: pipeline.manifest.schema, pipeline: pipeline.name,
            items: items, stageSeconds: [:], wallSeconds: 0)
    }

    /// Finishes every unfinished batch of the container that no other process is
    /// working on; returns their reports.
    public func resumeUnfinished(events: IngestEventSink? = nil, cancellation: CancellationFlag = CancellationFlag())
        throws(ShareIngestError) -> [BatchReport]
    {
        let journal = try BatchJournal(container: container)
        Recovery.sweep(container)
        var reports: [BatchReport] = []
        for batch in try journal.batches(in: BatchLifecycle.planned).reversed() where !cancellation.isCancelled {
            if let report = try? Self.resume(
                batch, journal: journal, decoder: decoder, events: events, cancellation: cancellation, now: now,
                catalog: pipeline.catalog)
            {
                reports.append(report)
            }
        }
        return reports
    }

    static func resume(
        _ record: BatchRecord, journal: BatchJournal, decoder: any MediaDecoder, events: IngestEventSink?,
        cancellation: CancellationFlag,
        now: @escaping @Sendable () -> Date, catalog: StageCatalog, dispose: ((BatchRecord) -> Void)? = nil
    ) throws(ShareIngestError) -> BatchReport {
        if record.state == .claimed, record.dropName == nil {
            try abandonPlan(record, journal: journal)
        }
        guard BatchLifecycle.resumable.contains(record.state) else { throw .batchNotResumable(record.id, record.state) }
        guard let lock = BatchLock(batch: record.id, container: journal.container) else { throw .batchBusy(record.id) }
        defer { withExtendedLifetime(lock) {} }
        Recovery.sweep(journal.container)
        // Re-read under the lock: another process may have finished it meanwhile.
        guard var batch = try journal.batch(record.id.uuidString), BatchLifecycle.resumable.contains(batch.state) else {
            throw .batchNotResumable(record.id, .done)
        }
        if batch.handle(.resume) == .reopen {
            // Its fan-in gave up: reopened as the lifecycle says (``BatchLifecycle/reopened``).
            do { try journal.reopen(batch.id) } catch { throw .journal(error, container: journal.container) }
        }
        let runner = try BatchRunner(
            batch, container: journal.container, journal: journal, decoder: decoder, events: events,
            cancellation: cancellation, now: now, catalog: catalog)
        return try runner.run(&batch, dispose: dispose)
    }

    /// A batch of `share ingest` whose planning was cut short (the process died
    /// before its items were all recorded): nothing was copied, and its inputs
    /// were known only to that process, so it is recorded abandoned (its spooled
    /// in-memory inputs removed) and the caller is told to share again.
    static func abandonPlan(_ record: BatchRecord, journal: BatchJournal) throws(ShareIngestError) -> Never {
        guard let lock = BatchLock(batch: record.id, container: journal.container) else { throw .batchBusy(record.id) }
        var abandoned = record
        abandoned.handle(.abandon)
        do { try journal.update(abandoned) } catch { throw .journal(error, container: journal.container) }
        Spool.remove(batch: record.id, in: journal.container)
        withExtendedLifetime(lock) {}
        throw .planInterrupted(record.id)
    }

    /// The same, for async callers: the batch runs on its own threads and the
    /// cooperative pool is not blocked.
    public func ingest(
        _ inputs: [ShareInput], key: ShareKey? = nil, message: String? = nil,
        events: IngestEventSink? = nil, cancellation: CancellationFlag = CancellationFlag()
    ) async throws(ShareIngestError) -> BatchReport {
        try await Self.onOwnThread(cancelling: cancellation) { () throws(ShareIngestError) in
            try self.ingest(inputs, key: key, message: message, events: events, cancellation: cancellation)
        }
    }

    /// ``resume(_:events:cancellation:)`` for async callers: the batch runs on its
    /// own threads and the cooperative pool is not blocked.
    public func resume(
        _ idOrKey: String, events: IngestEventSink? = nil, cancellation: CancellationFlag = CancellationFlag()
    ) async throws(ShareIngestError) -> BatchReport {
        try await Self.onOwnThread(cancelling: cancellation) { () throws(ShareIngestError) in
            try self.resume(idOrKey, events: events, cancellation: cancellation)
        }
    }

    /// Runs blocking pipeline work on a thread of its own (with room for libvips'
    /// and libav's stacks), so no thread of Swift's cooperative pool waits on it.
    /// Cancelling the calling Task sets `cancellation`: items in flight finish
    /// their stage and the batch stops, resumable (its report says `interrupted`).
    private static func onOwnThread<T: Sendable>(
        cancelling cancellation: CancellationFlag, _ work: @escaping @Sendable () throws(ShareIngestError) -> T
    ) async throws(ShareIngestError) -> T {
        let result: Result<T, ShareIngestError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    do throws(ShareIngestError) {
                        continuation.resume(returning: .success(try work()))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
                thread.stackSize = 8 << 20
                thread.start()
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }
}
