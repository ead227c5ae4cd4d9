import Foundation
import ShareManifest

/// Where batches and their items are kept: the embedded SQLite journal
/// (``BatchJournal``) or the distributed mode's PostgreSQL queue (`JobQueue`).
///
/// Both keep the same rows: a batch is mapped to and from its row in one place
/// (``BatchRecord/columns`` and ``BatchRecord/init(row:)``), an item is its
/// ``ItemSnapshot`` JSON. Planning (``BatchPlan``) and reading go through this
/// protocol; recording a finished stage is each store's own (a journal update
/// here, a leased job's completion there).
protocol BatchStore: AnyObject {
    /// The batch with this id, if recorded.
    func batch(id: UUID) throws -> BatchRecord?
    /// The batch that used `key`, if any: a key belongs to one batch, ever.
    func batch(key: ShareKey) throws -> BatchRecord?
    /// Records a planned batch and its items (each with its UUID) in one durable
    /// transaction, before any copy starts. `container` is where its items go
    /// (the journal's own; for PostgreSQL, the one every worker writes into).
    func create(_ batch: BatchRecord, items: [ItemWork], container: ContainerDirectory) throws
    /// The batch's items as last recorded, in order.
    func items(of batch: UUID) throws -> [ItemWork]
}

/// A value bound to, or read from, a row of either store.
enum StoreValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    init(_ value: Double?) { self = value.map { .real($0) } ?? .null }
    init(_ value: Date?) { self = value.map { .real($0.timeIntervalSince1970) } ?? .null }

    /// The value as SQL text, for a text-format parameter (PostgreSQL); nil for NULL.
    var text: String? {
        switch self {
        case .null: nil
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): value
        }
    }
}

/// A row of either store, read by column name.
protocol StoreRow {
    func text(_ column: String) -> String?
}

extension StoreRow {
    func int(_ column: String) -> Int? { text(column).flatMap { Int($0) ?? Double($0).map { Int($0) } } }
    func real(_ column: String) -> Double? { text(column).flatMap(Double.init) }
    func date(_ column: String) -> Date? { real(column).map(Date.init(timeIntervalSince1970:)) }
}

extension BatchRecord {
    /// The batch's row: every column, in the order both stores' tables declare them.
    var columns: KeyValuePairs<String, StoreValue> {
        [
            "id": .text(id.uuidString), "key": .text(key.rawValue), "state": .text(state.rawValue), "pipeline": .text(pipelineJSON),
            "message": StoreValue(message), "drop_name": StoreValue(dropName), "drop_signature": StoreValue(dropSignature),
            "drop_path": StoreValue(dropPath), "created_at": StoreValue(createdAt), "finished_at": StoreValue(finishedAt),
            "redirect_url": StoreValue(redirectURL), "manifest_path": StoreValue(manifestPath), "item_count": StoreValue(itemCount),
            "ingested": StoreValue(ingestedCount), "failed": StoreValue(failedCount), "skipped": StoreValue(skippedCount),
        ]
    }

    /// The columns an update may change (the rest are fixed when a batch is created).
    static let mutableColumns: Set<String> = [
        "state", "drop_path", "finished_at", "redirect_url", "manifest_path", "item_count", "ingested", "failed", "skipped",
    ]

    /// A batch from its row; nil if the row is not a batch this version can read.
    init?(row: some StoreRow) {
        guard let id = row.text("id").flatMap(UUID.init(uuidString:)), let key = row.text("key").flatMap({ try? ShareKey($0) }),
            let state = row.text("state").flatMap(BatchState.init(rawValue:)), let pipeline = row.text("pipeline")
        else { return nil }
        self.init(
            id: id, key: key, state: state, pipelineJSON: pipeline, message: row.text("message"), dropName: row.text("drop_name"),
            dropSignature: row.text("drop_signature"), dropPath: row.text("drop_path"), createdAt: row.date("created_at") ?? Date(timeIntervalSince1970: 0))
        finishedAt = row.date("finished_at")
        redirectURL = row.text("redirect_url")
        manifestPath = row.text("manifest_path")
        itemCount = row.int("item_count") ?? 0
        ingestedCount = row.int("ingested") ?? 0
        failedCount = row.int("failed") ?? 0
        skippedCount = row.int("skipped") ?? 0
    }
}
