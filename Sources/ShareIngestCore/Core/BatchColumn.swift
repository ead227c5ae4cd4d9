import Foundation

/// One column of the stores' batch tables (the journal's `batches`, the
/// queue's `share_batches`): declared once, here, as ``ItemColumn`` does for
/// items, with which stores have it, how its value comes from the batch's
/// record and whether an update writes it. Both stores write a batch's row
/// from this list (``BatchRecord/columns``), select it through it
/// (``selectList(_:table:)``) and name its columns in their statements through it
/// (`\(BatchColumn.failure)`). The tables themselves are their migrations'
/// (history: the journal's `1-batches-and-items`, `5-…` and `8-…`, the
/// queue's `1-…`, `2-…`, `3-…` and `6-…`), and `BatchColumnTests` reads both
/// stores' real tables and compares them with this declaration.
struct BatchColumn: Sendable, CustomStringConvertible {
    /// Which store's batch table has a column.
    enum Store: Sendable, Hashable, CaseIterable { case journal, queue }

    /// The column's name (the same in every store that has it).
    let name: String
    /// The stores whose batch table has it.
    let stores: Set<Store>
    /// Its value in the batch's row (``BatchRecord/columns``); nil for a
    /// column a store writes beside the record (the queue's container, the
    /// fan-in's lost attempts…).
    let value: (@Sendable (BatchRecord) -> StoreValue)?
    /// True when an update of the record writes it (the record's other
    /// columns are fixed when a batch is created).
    let mutable: Bool

    var description: String { name }

    /// A column of the batch's record, in both stores.
    private static func record(
        _ name: String, mutable: Bool = false, _ value: @escaping @Sendable (BatchRecord) -> StoreValue
    ) -> BatchColumn {
        BatchColumn(name: name, stores: [.journal, .queue], value: value, mutable: mutable)
    }

    /// A column a store writes beside the record.
    private static func beside(_ name: String, in stores: Set<Store>) -> BatchColumn {
        BatchColumn(name: name, stores: stores, value: nil, mutable: false)
    }

    // MARK: - The record's columns, in both stores

    static let id = record("id") { .text($0.id.uuidString) }
    static let key = record("key") { .text($0.key.rawValue) }
    static let state = record("state", mutable: true) { .text($0.state.rawValue) }
    static let pipeline = record("pipeline") { .text($0.pipelineJSON) }
    static let message = record("message") { StoreValue($0.message) }
    static let dropName = record("drop_name") { StoreValue($0.dropName) }
    static let dropSignature = record("drop_signature") { StoreValue($0.dropSignature) }
    static let dropPath = record("drop_path", mutable: true) { StoreValue($0.dropPath) }
    static let createdAt = record("created_at") { StoreValue($0.createdAt) }
    static let finishedAt = record("finished_at", mutable: true) { StoreValue($0.finishedAt) }
    static let redirectURL = record("redirect_url", mutable: true) { StoreValue($0.redirectURL) }
    static let manifestPath = record("manifest_path", mutable: true) { StoreValue($0.manifestPath) }
    static let itemCount = record("item_count", mutable: true) { StoreValue($0.itemCount) }
    static let ingested = record("ingested", mutable: true) { StoreValue($0.ingestedCount) }
    static let failed = record("failed", mutable: true) { StoreValue($0.failedCount) }
    static let skipped = record("skipped", mutable: true) { StoreValue($0.skippedCount) }
    static let maxAttempts = record("max_attempts") { StoreValue($0.maxAttempts) }

    // MARK: - Beside the record

    /// Why a batch whose fan-in gave up failed.
    static let failure = beside("failure", in: [.journal, .queue])
    /// The attempts the batch's fan-in lost, and when it may run again (the
    /// queue keeps both on the manifest job).
    static let lostFanIns = beside("lost_fan_ins", in: [.journal])
    static let fanInNotBefore = beside("fan_in_not_before", in: [.journal])
    /// The container every worker writes into, the token planning wrote into
    /// it, and the folders and files given at planning (JSON).
    static let container = beside("container", in: [.queue])
    static let token = beside("token", in: [.queue])
    static let roots = beside("roots", in: [.queue])
    /// Items not finished yet: the fan-in's counter.
    static let remaining = beside("remaining", in: [.queue])
    /// A finished batch's seconds per stage (JSON), summed once by its fan-in.
    static let stageSeconds = beside("stage_seconds", in: [.queue])

    /// Every batch column: the record's, in the order its row lists them, then the others.
    static let all: [BatchColumn] = [
        id, key, state, pipeline, message, dropName, dropSignature, dropPath, createdAt, finishedAt, redirectURL,
        manifestPath, itemCount, ingested, failed, skipped, maxAttempts, failure, lostFanIns, fanInNotBefore,
        container, token, roots, remaining, stageSeconds,
    ]

    /// The columns of the batch's record (``BatchRecord/columns``), in order.
    static let recorded = all.filter { $0.value != nil }

    /// The columns `store`'s batch table has.
    static func columns(of store: Store) -> [BatchColumn] { all.filter { $0.stores.contains(store) } }

    /// `store`'s batch columns as a select list (`t` a table alias or empty).
    static func selectList(_ store: Store, table alias: String = "") -> String {
        columns(of: store).map { alias.isEmpty ? $0.name : "\(alias).\($0.name)" }.joined(separator: ", ")
    }
}
