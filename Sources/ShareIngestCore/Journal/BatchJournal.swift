import Foundation
import Glibc
import MediaFormats
import ShareManifest
import SystemCalls

/// The durable state of batches and items: SQLite in WAL mode at
/// `<container>/.share-ingest/journal.sqlite`.
///
/// Ordering that makes a crash at any instruction safe:
/// 1. a batch's items, each with its UUID, are committed (fsynced) before any copy
///    starts, so every `<UUID>.<ext>` in the container belongs to a journaled item
///    and a re-run reuses the UUID instead of copying twice;
/// 2. each stage's result is recorded after the stage's files are in place (a lost
///    record only means the stage is redone; a copy that already reached its final
///    name is recognised and kept);
/// 3. the manifest is written (atomically, after fsyncing the copies), then the
///    batch is marked done (fsynced); a batch found `manifesting` with its manifest
///    present is simply marked done.
///
/// The schema changes by named migrations (``migrations(path:)``), recorded in
/// the journal; one made by a newer share is refused.
public final class BatchJournal: Sendable {
    let database: SQLiteDatabase
    /// The container whose journal this is.
    public let container: ContainerDirectory

    /// Opens (creating and migrating) the journal of `container`. A journal
    /// changed by a newer share is refused.
    public init(container: ContainerDirectory) throws(ShareIngestError) {
        self.container = container
        let path = container.stateDirectory + "/journal.sqlite"
        try JournalFiles.check(container)
        do {
            database = try SQLiteDatabase(path: path)
            try Self.migrate(database, path: path)
        } catch let error as SchemaMismatch {
            throw .containerUnusable(path: container.root, reason: error.description)
        } catch {
            throw .journal(error, container: container)
        }
    }

    // MARK: - Schema

    /// The first migration's statements: the batch table and the item table,
    /// as the journal's first version made them.
    private static let version1 = """
        CREATE TABLE IF NOT EXISTS batches (
            id TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, state TEXT NOT NULL, pipeline TEXT NOT NULL,
            message TEXT, drop_name TEXT, drop_signature TEXT, drop_path TEXT,
            created_at REAL NOT NULL, finished_at REAL, redirect_url TEXT, manifest_path TEXT,
            item_count INTEGER DEFAULT 0, ingested INTEGER DEFAULT 0, failed INTEGER DEFAULT 0, skipped INTEGER DEFAULT 0);
        CREATE INDEX IF NOT EXISTS batches_state ON batches(state);
        CREATE INDEX IF NOT EXISTS batches_drop ON batches(drop_name);
        CREATE TABLE IF NOT EXISTS items (
            batch_id TEXT NOT NULL REFERENCES batches(id) ON DELETE CASCADE, idx INTEGER NOT NULL,
            uuid TEXT NOT NULL, \(ItemColumn.all.filter { $0.journalMigration == nil }.map { "\($0) TEXT, " }.joined())snapshot TEXT NOT NULL,
            PRIMARY KEY (batch_id, idx));
        """

    /// The journal's migrations, in order, recorded by name in `migrations`.
    static func migrations(path: String) -> SchemaMigrations {
        SchemaMigrations(
            store: "the journal \(path)",
            migrations: [
                Migration(name: "1-batches-and-items", sql: version1),
                // The stage each item waits for (NULL once finished), so a resumed
                // batch reads only its unfinished items. Items recorded before it
                // are marked as possibly unfinished ('?'): their record decides.
                Migration(
                    name: "2-item-next-stage",
                    sql: """
                        ALTER TABLE items ADD COLUMN next TEXT;
                        UPDATE items SET next = '?' WHERE \(ItemColumn.reason) IS NULL
                            AND batch_id IN (SELECT id FROM batches WHERE state IN ('claimed', 'running', 'manifesting'));
                        CREATE INDEX IF NOT EXISTS items_unfinished ON items(batch_id, idx) WHERE next IS NOT NULL;
                        """),
                // Each copy's SHA-256, so the fan-in finds the same content
                // delivered earlier (in the batch, or in a share not yet consumed).
                Migration(
                    name: "3-item-content-hash",
                    sql: ItemColumn.additions(by: "3-item-content-hash", of: .journal, table: "items")),
                // Each still's and movie's Live Photo keys (Apple's content
                // identifier; the name a Live Photo's halves share), so the
                // fan-in finds the halves without reading every item.
                Migration(
                    name: "4-item-live-photo-keys",
                    sql: ItemColumn.additions(by: "4-item-live-photo-keys", of: .journal, table: "items")),
                // Items to run alone (ItemState.suspect), and the attempts a
                // batch's items may lose (`share ingest --max-attempts`, as the
                // distributed mode records it).
                Migration(
                    name: "5-suspects-and-attempts",
                    sql: ItemColumn.additions(by: "5-suspects-and-attempts", of: .journal, table: "items")
                        + "ALTER TABLE batches ADD COLUMN max_attempts INTEGER;"),
                // Export sidecars' kinds and the stems they and the media name,
                // so the fan-in found a batch's sidecars and their media without
                // reading every item. Sidecars are matched when a batch is planned
                // now: only `export_stem` is written (ItemState.exportStem), for
                // the groups of shots; `sidecar_kind` stays empty.
                Migration(
                    name: "6-export-sidecar-keys",
                    sql: ItemColumn.additions(by: "6-export-sidecar-keys", of: .journal, table: "items")),
                // Each photo's Apple burst identifier (ItemState.burstKey), so
                // the fan-in finds a burst's frames without reading every item.
                Migration(
                    name: "7-burst-identifier",
                    sql: ItemColumn.additions(by: "7-burst-identifier", of: .journal, table: "items")),
                // What the queue records of a retry and of the fan-in, kept
                // alike: when an item may run again (a retry's backoff), the
                // attempts the batch's fan-in lost and when it may run again, and
                // why a batch whose fan-in gave up failed.
                Migration(
                    name: "8-retry-delays-and-fan-in",
                    sql: """
                        ALTER TABLE items ADD COLUMN not_before REAL;
                        ALTER TABLE batches ADD COLUMN lost_fan_ins INTEGER NOT NULL DEFAULT 0;
                        ALTER TABLE batches ADD COLUMN fan_in_not_before REAL;
                        ALTER TABLE batches ADD COLUMN failure TEXT;
                        """),
                // Each delivered thumbnail's perceptual hash (ItemState.perceptualHash),
                // so the fan-in reads earlier batches' hashes into its
                // near-duplicate index without decoding every item.
                Migration(
                    name: "9-perceptual-hash",
                    sql: ItemColumn.additions(by: "9-perceptual-hash", of: .journal, table: "items")),
            ])
    }

    /// Brings the schema up to date in one transaction; journals made before
    /// migrations had names (`user_version` 1 or 2) are taken over.
    private static func migrate(_ database: SQLiteDatabase, path: String) throws {
        // A journal already up to date is only read: opening it writes nothing,
        // so `share status` and the other readers work on a full disk.
        if try isUpToDate(database, path: path) { return }
        try database.transaction(durable: true) {
            try database.execute(
                "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
            var applied = Set(try database.query("SELECT name FROM migrations").compactMap { $0.text("name") })
            let legacy = try database.query("PRAGMA user_version").first?.int("user_version") ?? 0
            if applied.isEmpty && legacy > 0 {
                // Version 1 kept items in a form no later version reads: they are
                // dropped and unfinished batches abandoned (as version 2 did).
                if legacy == 1 {
                    try database.execute(
                        "DROP TABLE items; UPDATE batches SET state = 'abandoned' WHERE state IN ('claimed', 'running', 'manifesting')"
                    )
                } else {
                    applied.insert("1-batches-and-items")
                    try record("1-batches-and-items", in: database)
                }
            }
            let all = migrations(path: path)
            for migration in try all.pending(applied: applied) {
                try database.execute(migration.sql)
                try record(migration.name, in: database)
            }
            // Older versions of share read only this number.
            try database.execute("PRAGMA user_version = \(max(legacy, all.migrations.count))")
        }
    }

    /// True when every migration is applied and recorded as older versions read
    /// it (`user_version`); a journal of a newer share is refused here too.
    private static func isUpToDate(_ database: SQLiteDatabase, path: String) throws -> Bool {
        let tables = try database.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'migrations'")
        guard !tables.isEmpty else { return false }
        let applied = Set(try database.query("SELECT name FROM migrations").compactMap { $0.text("name") })
        let version = try database.query("PRAGMA user_version").first?.int("user_version") ?? 0
        let all = migrations(path: path)
        return try all.pending(applied: applied).isEmpty && version >= all.migrations.count
    }

    private static func record(_ name: String, in database: SQLiteDatabase) throws {
        try database.query(
            "INSERT INTO migrations (name, applied_at) VALUES (?, ?)", [.text(name), StoreValue(Date())])
    }

    // MARK: - Batches

    /// The journal's batch columns, as a select list (``BatchColumn/selectList(_:table:)``).
    static let batchColumns = BatchColumn.selectList(.journal)

    /// Claims a dropped folder for a new batch, unless a batch already has it:
    /// one that is not finished, or a finished one of the same content (a kept
    /// drop). Serialized across processes by SQLite's write lock.
    func claim(_ record: BatchRecord) throws -> Bool {
        try database.transaction(durable: true) {
            let existing = try database.query(
                "SELECT id FROM batches WHERE drop_name = ? AND (state NOT IN (\(BatchLifecycle.sql(BatchLifecycle.settled))) OR drop_signature = ?)",
                [StoreValue(record.dropName), StoreValue(record.dropSignature)])
            guard existing.isEmpty else { return false }
            try insert(record)
            return true
        }
    }

    private func insert(_ record: BatchRecord) throws {
        let columns = record.columns
        try database.query(
            "INSERT INTO batches (\(columns.map(\.key).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
            columns.map(\.value))
    }

    func update(_ record: BatchRecord, durable: Bool = true) throws {
        try database.transaction(durable: durable) { try updateRow(record) }
    }

    func updateRow(_ record: BatchRecord) throws {
        let columns = record.mutableColumns
        try database.query(
            "UPDATE batches SET \(columns.map { "\($0.key) = ?" }.joined(separator: ", ")) WHERE id = ?",
            columns.map(\.value) + [.text(record.id.uuidString)])
    }

    func delete(_ id: UUID) throws {
        try database.transaction(durable: true) {
            try database.query("DELETE FROM batches WHERE id = ?", [.text(id.uuidString)])
        }
    }

    /// Every batch, newest first (optionally only those in `states`).
    public func batches(in states: Set<BatchState>? = nil) throws(ShareIngestError) -> [BatchRecord] {
        do {
            return try database.query("SELECT \(Self.batchColumns) FROM batches ORDER BY \(BatchColumn.createdAt) DESC")
                .compactMap {
                    BatchRecord(row: $0)
                }
                .filter { states?.contains($0.state) ?? true }
        } catch {
            throw .journal(error, container: container)
        }
    }

    /// The batch with this id, or this key.
    public func batch(_ idOrKey: String) throws(ShareIngestError) -> BatchRecord? {
        do {
            let rows = try database.query(
                "SELECT \(Self.batchColumns) FROM batches WHERE \(BatchColumn.id) = ? OR \(BatchColumn.key) = ?",
                [.text(idOrKey.uppercased()), .text(idOrKey)])
            return rows.lazy.compactMap { BatchRecord(row: $0) }.first
        } catch {
            throw .journal(error, container: container)
        }
    }

    /// Queue depth by state, for `share status`.
    public func counts() throws(ShareIngestError) -> [BatchState: Int] {
        Dictionary(grouping: try batches(), by: \.state).mapValues(\.count)
    }

    // MARK: - Items

    private func insert(_ item: ItemState, next: NextStep, batch: UUID) throws {
        let columns = ["batch_id", "idx", "uuid", "next", "snapshot"] + ItemState.columns.map(\.name)
        try database.query(
            "INSERT INTO items (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
            [
                .text(batch.uuidString), StoreValue(item.index), .text(item.id.uuidString),
                StoreValue(next.stage?.rawValue), .text(item.encoded()),
            ]
                + item.columnValues.map(StoreValue.init))
    }

    /// The items of a batch as they were last recorded, in order (every one:
    /// for reports of small batches and tests; runners read by cursor).
    func items(of batch: UUID) throws -> [ItemState] {
        var all: [ItemState] = []
        try forEachItem(of: batch) { all.append($0) }
        return all
    }

    /// Up to `limit` items after `index` that were not finished when last
    /// recorded (what a resumed batch still has to do), in order, each with
    /// where and when it runs next.
    func unfinishedItems(of batch: UUID, after index: Int, limit: Int) throws -> [RecordedItem] {
        try page(of: batch, after: index, limit: limit, unfinishedOnly: true)
    }

    /// A page of a batch's items after `index`, in order (only the unfinished ones:
    /// on the index of those).
    private func page(of batch: UUID, after index: Int, limit: Int, unfinishedOnly: Bool) throws -> [RecordedItem] {
        let now = Date().timeIntervalSince1970
        return try database.query(
            "SELECT idx, uuid, snapshot, next, not_before FROM items WHERE batch_id = ? \(unfinishedOnly ? "AND next IS NOT NULL " : "")AND idx > ? ORDER BY idx LIMIT ?",
            [.text(batch.uuidString), StoreValue(index), StoreValue(limit)]
        ).map { row in
            RecordedItem(
                item: Self.item(row), stage: row.text("next").map(StageName.init),
                wait: max(0, (row.real("not_before") ?? now) - now))
        }
    }

    /// The UUIDs of a batch's items (what names their files in the container),
    /// read row by row.
    func itemIDs(of batch: UUID) throws -> Set<UUID> {
        var ids = Set<UUID>()
        try forEachItemID(of: batch) { ids.insert($0) }
        return ids
    }

    /// Calls `body` with the UUID of each item of `batch`, row by row, holding none.
    func forEachItemID(of batch: UUID, _ body: (UUID) -> Void) throws {
        try database.scan("SELECT uuid FROM items WHERE batch_id = ?", [.text(batch.uuidString)]) { row in
            if let id = row.text("uuid").flatMap(UUID.init(uuidString:)) { body(id) }
        }
    }

    /// How many items of a running batch have finished (delivered, failed or
    /// skipped) so far: counted on the journal's index of unfinished items,
    /// without reading any item.
    public func finishedCount(of batch: BatchRecord) throws(ShareIngestError) -> Int {
        do {
            let unfinished =
                try database.query(
                    "SELECT count(*) AS n FROM items WHERE batch_id = ? AND next IS NOT NULL",
                    [.text(batch.id.uuidString)]
                ).first?.int("n") ?? 0
            return max(0, batch.itemCount - unfinished)
        } catch {
            throw .journal(error, container: container)
        }
    }

    /// How a batch's items stand, from the recorded columns alone (no item is
    /// decoded).
    func counts(of batch: UUID) throws -> StoredCounts {
        let skipped = ItemFailure.skipping.sorted { $0.rawValue < $1.rawValue }.map { "'\($0.rawValue)'" }.joined(
            separator: ", ")
        let row = try database.query(
            """
            SELECT count(*) AS items, count(*) FILTER (WHERE next IS NOT NULL) AS unfinished,
                count(*) FILTER (WHERE next IS NULL AND \(ItemColumn.reason) IS NULL) AS ingested,
                count(*) FILTER (WHERE next IS NULL AND \(ItemColumn.reason) IN (\(skipped))) AS skipped,
                count(*) FILTER (WHERE next IS NULL AND \(ItemColumn.reason) NOT IN (\(skipped))) AS failed
            FROM items WHERE batch_id = ?
            """, [.text(batch.uuidString)]
        ).first
        return StoredCounts(
            items: row?.int("items") ?? 0, ingested: row?.int("ingested") ?? 0, failed: row?.int("failed") ?? 0,
            skipped: row?.int("skipped") ?? 0,
            unfinished: row?.int("unfinished") ?? 0)
    }

    func recordedItems(of batch: UUID) throws -> [RecordedItem] {
        try page(of: batch, after: -1, limit: Int(Int32.max), unfinishedOnly: false)
    }

    static func item(_ row: SQLiteRow) -> ItemState {
        let index = row.int("idx") ?? -1
        return ItemState.decode(
            row.text("snapshot") ?? "", index: index, id: row.text("uuid").flatMap(UUID.init(uuidString:)))
    }
}

extension BatchJournal: JournalStore {
    func batch(id: UUID) throws -> BatchRecord? { try batch(id.uuidString) }

    /// The container's journal, opened again.
    var opener: StoreOpener { StoreOpener { [container] in try BatchJournal(container: container) } }

    func batch(key: ShareKey) throws -> BatchRecord? {
        try database.query(
            "SELECT \(Self.batchColumns) FROM batches WHERE \(BatchColumn.key) = ?", [.text(key.rawValue)]
        ).lazy.compactMap {
            BatchRecord(row: $0)
        }.first
    }

    func begin(_ batch: BatchRecord, plan: BatchPlan.Details) throws {
        precondition(plan.container.root == container.root, "a journal records the batches of its own container")
        var record = batch
        record.handle(.claim)
        try database.transaction(durable: true) {
            if try database.query("SELECT id FROM batches WHERE id = ?", [.text(record.id.uuidString)]).isEmpty {
                try insert(record)
            } else {
                try updateRow(record)
                try database.query("DELETE FROM items WHERE batch_id = ?", [.text(record.id.uuidString)])
            }
        }
    }

    func append(_ items: [ItemState], to batch: BatchRecord, plan: BatchPlan.Details) throws {
        guard !items.isEmpty else { return }
        try database.transaction {
            for item in items { try insert(item, next: plan.lifecycle.start(item, stopping: false), batch: batch.id) }
        }
    }

    /// Durable: it syncs the journal, and with it every item appended before.
    func seal(_ batch: BatchRecord, plan: BatchPlan.Details, unfinished: Int) throws {
        try database.transaction(durable: true) { try updateRow(batch) }
    }

    func record(_ item: ItemState, next: NextStep, batch: UUID) throws {
        let recorded = ItemLifecycle.recorded(next, at: next.stage ?? .manifest, holderKeeps: false)
        let columns = ["next", "not_before", "snapshot"] + ItemState.columns.map(\.name)
        try database.query(
            "UPDATE items SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE batch_id = ? AND idx = ?",
            [
                StoreValue(recorded.isFinished ? nil : recorded.stage.rawValue),
                recorded.delay > 0 ? .real(Date().timeIntervalSince1970 + recorded.delay) : .null,
                .text(item.encoded()),
            ] + item.columnValues.map(StoreValue.init) + [.text(batch.uuidString), StoreValue(item.index)])
    }

    func items(of batch: UUID, after index: Int, limit: Int) throws -> [ItemState] {
        try page(of: batch, after: index, limit: limit, unfinishedOnly: false).map(\.item)
    }

}
