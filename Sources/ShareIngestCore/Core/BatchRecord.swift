import Foundation
import ShareManifest

/// Where a batch is in its life.
public enum BatchState: String, Sendable, Codable, CaseIterable {
    /// A dropped folder was claimed; it is being moved in and planned.
    case claimed
    /// Items are planned (each has its UUID) and being processed.
    case running
    /// Every item finished; the manifest is being written.
    case manifesting
    /// The manifest is written (or nothing could be delivered).
    case done
    /// Given up: a drop that vanished before it was planned (nothing was
    /// taken), or a batch of `share ingest` left unfinished longer than
    /// `share gc --older-than`, whose copies `share gc` removed.
    case abandoned
    /// A consumed share whose files `share gc` removed.
    case collected
    /// Its fan-in (distributed: the manifest job) had all its attempts and gave
    /// up (the reason is recorded with the batch); `share ingest --resume` retries it.
    case failed

    /// The states of a batch that is not finished: a run (or the watcher's
    /// next start, or `--resume`) still has work to do on it (the batch
    /// lifecycle's one set).
    public static let unfinished: Set<BatchState> = BatchLifecycle.unfinished

    /// True for the states of ``unfinished``.
    public var isUnfinished: Bool { Self.unfinished.contains(self) }
}

/// One batch as the journal keeps it.
public struct BatchRecord: Sendable {
    /// The batch's UUID.
    public let id: UUID
    /// The manifest key the batch writes.
    public let key: ShareKey
    /// Where the batch is in its life: its lifecycle's state, changed only
    /// through ``handle(_:)``.
    public var state: BatchState { lifecycle.state }
    /// The batch's lifecycle: replaced nowhere, changed only by its events.
    private(set) var lifecycle: BatchLifecycle
    /// The pipeline, as canonical JSON, so a resumed batch runs with the same settings.
    let pipelineJSON: String
    /// Text that came with the share (v2 `message` of every entry).
    public let message: String?
    /// For dropped folders: the drop's name in the inbox, its tree signature, and
    /// where its files are read from once claimed.
    public internal(set) var dropName: String?
    var dropSignature: String?
    /// Where a claimed drop's files are read from (`INBOX/.processing/<batch>/`).
    public internal(set) var dropPath: String?
    /// When the batch was created, by the ingestor's clock.
    public let createdAt: Date
    /// When the batch was marked done, by the ingestor's clock; nil while unfinished.
    public internal(set) var finishedAt: Date?
    /// The redirect URL, once the manifest is written.
    public internal(set) var redirectURL: String?
    /// The manifest file, once written.
    public internal(set) var manifestPath: String?
    /// Items in the batch (counted when it is done).
    public internal(set) var itemCount = 0
    /// Items delivered (counted when the batch is done).
    public internal(set) var ingestedCount = 0
    /// Items that failed (counted when the batch is done).
    public internal(set) var failedCount = 0
    /// Items skipped (counted when the batch is done).
    public internal(set) var skippedCount = 0
    /// Seconds spent per stage over all items, summed once by the fan-in.
    var stageSeconds: [StageName: Double] = [:]
    /// Attempts each item (and the fan-in) may lose through no fault of its own
    /// before it gives up (`share ingest --max-attempts`), in every mode.
    public internal(set) var maxAttempts = ItemLifecycle.defaultMaxAttempts

    init(
        id: UUID, key: ShareKey, state: BatchState, pipelineJSON: String, message: String?, dropName: String? = nil,
        dropSignature: String? = nil,
        dropPath: String? = nil, createdAt: Date
    ) {
        self.id = id
        self.key = key
        self.lifecycle = BatchLifecycle(state)
        self.pipelineJSON = pipelineJSON
        self.message = message
        self.dropName = dropName
        self.dropSignature = dropSignature
        self.dropPath = dropPath
        self.createdAt = createdAt
    }

    /// Applies `event` to the batch's lifecycle (the only way its state
    /// changes); returns what to do, as ``BatchLifecycle/handle(_:)`` says.
    @discardableResult
    mutating func handle(_ event: BatchLifecycle.Event) -> BatchLifecycle.Action { lifecycle.handle(event) }
}

extension BatchRecord {
    /// The batch's row: the record's columns (``BatchColumn/recorded``), in
    /// their declared order; what each store writes beside them is its own.
    var columns: [(key: String, value: StoreValue)] {
        BatchColumn.recorded.compactMap { column in column.value.map { (column.name, $0(self)) } }
    }

    /// The columns an update writes (``BatchColumn/mutable``; the rest are
    /// fixed when a batch is created).
    var mutableColumns: [(key: String, value: StoreValue)] {
        BatchColumn.recorded.filter(\.mutable).compactMap { column in column.value.map { (column.name, $0(self)) } }
    }

    /// The pipeline the batch started with (a resumed batch keeps it).
    /// `catalog`: the stages the pipeline may name (the caller's own, when it added any).
    func pipeline(catalog: StageCatalog = .builtin) throws(ShareIngestError) -> PipelineDefinition {
        do {
            return try PipelineDefinition.decode(
                Data(pipelineJSON.utf8), file: "pipeline of batch \(id)", catalog: catalog)
        } catch { throw .pipeline(error) }
    }

    /// A batch from its row; nil if the row is not a batch this version can read.
    init?(row: some StoreRow) {
        guard let id = row.text(BatchColumn.id.name).flatMap(UUID.init(uuidString:)),
            let key = row.text(BatchColumn.key.name).flatMap({ try? ShareKey($0) }),
            let state = row.text(BatchColumn.state.name).flatMap(BatchState.init(rawValue:)),
            let pipeline = row.text(BatchColumn.pipeline.name)
        else { return nil }
        self.init(
            id: id, key: key, state: state, pipelineJSON: pipeline, message: row.text(BatchColumn.message.name),
            dropName: row.text(BatchColumn.dropName.name), dropSignature: row.text(BatchColumn.dropSignature.name),
            dropPath: row.text(BatchColumn.dropPath.name),
            createdAt: row.date(BatchColumn.createdAt.name) ?? Date(timeIntervalSince1970: 0))
        finishedAt = row.date(BatchColumn.finishedAt.name)
        redirectURL = row.text(BatchColumn.redirectURL.name)
        manifestPath = row.text(BatchColumn.manifestPath.name)
        itemCount = row.int(BatchColumn.itemCount.name) ?? 0
        ingestedCount = row.int(BatchColumn.ingested.name) ?? 0
        failedCount = row.int(BatchColumn.failed.name) ?? 0
        skippedCount = row.int(BatchColumn.skipped.name) ?? 0
        maxAttempts = row.int(BatchColumn.maxAttempts.name) ?? ItemLifecycle.defaultMaxAttempts
    }
}
