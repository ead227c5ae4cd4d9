import Foundation
import MediaFormats
import ShareManifest

// The journal's fan-in: a lost fan-in, reopening, and what the fan-in
// reads and writes (``BatchJournal``).
extension BatchJournal {
    func recordedFanIn(of batch: UUID) throws -> RecordedFanIn? {
        let now = Date().timeIntervalSince1970
        return try database.query(
            "SELECT \(BatchColumn.state), \(BatchColumn.lostFanIns), \(BatchColumn.fanInNotBefore), \(BatchColumn.failure) FROM batches WHERE \(BatchColumn.id) = ?",
            [.text(batch.uuidString)]
        ).first.map { row in
            RecordedFanIn(
                lost: row.int(BatchColumn.lostFanIns.name) ?? 0,
                wait: max(0, (row.real(BatchColumn.fanInNotBefore.name) ?? now) - now),
                state: row.text(BatchColumn.state.name).flatMap(BatchState.init(rawValue:)) ?? .running,
                failure: row.text(BatchColumn.failure.name))
        }
    }

    func loseFanIn(_ batch: UUID, next: NextStep, lost: Int) throws {
        let recorded = ItemLifecycle.recorded(next, at: .manifest, holderKeeps: false)
        try database.transaction(durable: true) {
            if recorded.isFinished {
                try database.query(
                    "UPDATE batches SET state = \(BatchLifecycle.sql(.loseFanIn(next: next))), \(BatchColumn.lostFanIns) = ?, \(BatchColumn.failure) = ?, \(BatchColumn.finishedAt) = ? WHERE \(BatchColumn.id) = ?",
                    [StoreValue(lost), StoreValue(recorded.error), StoreValue(Date()), .text(batch.uuidString)])
            } else {
                try database.query(
                    "UPDATE batches SET state = \(BatchLifecycle.sql(.loseFanIn(next: next))), \(BatchColumn.lostFanIns) = ?, \(BatchColumn.fanInNotBefore) = ? WHERE \(BatchColumn.id) = ?",
                    [StoreValue(lost), .real(Date().timeIntervalSince1970 + recorded.delay), .text(batch.uuidString)])
            }
        }
    }

    func reopen(_ batch: UUID) throws {
        let from = BatchLifecycle.sql(BatchLifecycle.reopenable)
        try database.transaction(durable: true) {
            try database.query(
                "UPDATE batches SET state = \(BatchLifecycle.sql(.resume)), \(BatchColumn.lostFanIns) = ?, \(BatchColumn.fanInNotBefore) = NULL, \(BatchColumn.failure) = NULL, \(BatchColumn.finishedAt) = NULL WHERE \(BatchColumn.id) = ? AND \(BatchColumn.state) IN (\(from))",
                [StoreValue(BatchLifecycle.reopened.lost), .text(batch.uuidString)])
        }
    }

    func earlierCopies(for batch: UUID) throws -> EarlierCopies {
        var found = EarlierCopies()
        var originals: [Int: EarlierCopy?] = [:]
        // The batch's first item of each content that repeats (one grouping of
        // the batch), joined to the items after it.
        try database.scan(
            """
            WITH firsts AS (SELECT \(ItemColumn.sha256), min(idx) AS first FROM items WHERE batch_id = ?1 AND \(ItemColumn.sha256) IS NOT NULL AND \(ItemColumn.reason) IS NULL
                GROUP BY \(ItemColumn.sha256) HAVING count(*) > 1)
            SELECT d.idx AS idx, f.first AS original, o.snapshot AS snapshot FROM firsts f
                JOIN items d ON d.batch_id = ?1 AND d.\(ItemColumn.sha256) = f.\(ItemColumn.sha256) AND d.idx > f.first AND d.\(ItemColumn.reason) IS NULL
                JOIN items o ON o.batch_id = ?1 AND o.idx = f.first
            """, [.text(batch.uuidString)]
        ) { row in
            guard let index = row.int("idx"), let original = row.int("original") else { return }
            found.addInBatch(item: index, original: original, snapshot: { row.text("snapshot") }, cache: &originals)
        }
        // Other finished batches, oldest first: the first copy of each of the
        // batch's contents in each (SQLite takes the bare columns from the row of
        // min(idx)); the unary `+` keeps the lookup on items_sha256.
        try database.scan(
            """
            SELECT o.\(ItemColumn.sha256) AS \(ItemColumn.sha256), min(o.idx) AS original, o.snapshot AS snapshot, b.key AS key, b.created_at AS created
                FROM (SELECT DISTINCT \(ItemColumn.sha256) FROM items WHERE batch_id = ?1 AND \(ItemColumn.sha256) IS NOT NULL AND \(ItemColumn.reason) IS NULL) d
                JOIN items o ON o.\(ItemColumn.sha256) = d.\(ItemColumn.sha256) AND +o.batch_id <> ?1 AND o.\(ItemColumn.reason) IS NULL
                JOIN batches b ON b.id = o.batch_id AND b.state = '\(BatchState.done.rawValue)'
                GROUP BY o.\(ItemColumn.sha256), o.batch_id
                ORDER BY created, original
            """, [.text(batch.uuidString)]
        ) { row in
            guard let sha256 = row.text(ItemColumn.sha256.name), let original = row.int("original") else { return }
            found.addInOtherShare(
                sha256: sha256, original: original, snapshot: row.text("snapshot"), key: row.text("key"))
        }
        return found
    }

    func earlierPerceptualHashes(for batch: UUID) throws -> [EarlierHash] {
        var found: [EarlierHash] = []
        try database.scan(
            """
            SELECT o.\(ItemColumn.perceptualHash) AS hash, o.idx AS idx, o.batch_id AS batch, b.key AS key FROM items o
                JOIN batches b ON b.id = o.batch_id AND b.state = '\(BatchState.done.rawValue)'
                WHERE o.\(ItemColumn.perceptualHash) IS NOT NULL AND o.batch_id <> ?1 AND o.\(ItemColumn.reason) IS NULL
                ORDER BY b.created_at, o.idx
            """, [.text(batch.uuidString)]
        ) { row in
            guard let hash = row.text("hash").flatMap(PerceptualHash.parseRecord), let index = row.int("idx"),
                let id = row.text("batch").flatMap(UUID.init(uuidString:)),
                let key = row.text("key").flatMap({ try? ShareKey($0) })
            else { return }
            found.append(EarlierHash(hash: hash.hash, colours: hash.colours, batch: id, index: index, shareKey: key))
        }
        return found
    }

    func livePhotoCandidates(for batch: UUID) throws -> [ItemState] {
        try database.query(
            """
            SELECT idx, uuid, snapshot FROM items d WHERE d.batch_id = ?1 AND d.\(ItemColumn.reason) IS NULL AND (
                (d.\(ItemColumn.contentIdentifier) IS NOT NULL AND EXISTS (SELECT 1 FROM items o WHERE o.batch_id = d.batch_id
                    AND o.\(ItemColumn.contentIdentifier) = d.\(ItemColumn.contentIdentifier) AND o.idx <> d.idx AND o.\(ItemColumn.reason) IS NULL))
                OR (d.\(ItemColumn.livePhotoName) IS NOT NULL AND EXISTS (SELECT 1 FROM items o WHERE o.batch_id = d.batch_id
                    AND o.\(ItemColumn.livePhotoName) = d.\(ItemColumn.livePhotoName) AND o.idx <> d.idx AND o.\(ItemColumn.reason) IS NULL)))
            ORDER BY idx
            """, [.text(batch.uuidString)]
        ).map(Self.item)
    }

    func exportCandidates(for batch: UUID, after: (stem: String, index: Int), limit: Int) throws -> [(
        stem: String, item: ItemState
    )] {
        try groupCandidates(for: batch, by: .exportStem, after: after, limit: limit).map {
            (stem: $0.key, item: $0.item)
        }
    }

    func burstCandidates(for batch: UUID, after: (burst: String, index: Int), limit: Int) throws -> [(
        burst: String, item: ItemState
    )] {
        try groupCandidates(for: batch, by: .burstID, after: after, limit: limit).map { (burst: $0.key, item: $0.item) }
    }

    /// Up to `limit` of a batch's delivered items whose `column` (a stem, a
    /// burst) another delivered item shares, after `after` in the order of
    /// that column and then the index: the export and burst candidates, one query.
    private func groupCandidates(
        for batch: UUID, by column: ItemColumn, after: (String, Int), limit: Int
    ) throws -> [(key: String, item: ItemState)] {
        try database.query(
            """
            SELECT idx, uuid, snapshot, \(column) FROM items d WHERE d.batch_id = ?1 AND d.\(ItemColumn.reason) IS NULL AND d.\(column) IS NOT NULL
                AND (d.\(column) > ?2 OR (d.\(column) = ?2 AND d.idx > ?3))
                AND EXISTS (SELECT 1 FROM items o WHERE o.batch_id = d.batch_id AND o.\(column) = d.\(column) AND o.idx <> d.idx AND o.\(ItemColumn.reason) IS NULL)
            ORDER BY d.\(column), d.idx LIMIT ?4
            """,
            [
                .text(batch.uuidString), .text(after.0), .integer(Int64(max(after.1, Int(Int32.min)))),
                .integer(Int64(limit)),
            ]
        ).map { (key: $0.text(column.name) ?? "", item: Self.item($0)) }
    }

    func finish(_ batch: BatchRecord, changed: [ItemState]) throws {
        try database.transaction(durable: true) {
            for item in changed { try record(item, next: .finished, batch: batch.id) }
            try updateRow(batch)
        }
    }

    func record(_ changed: [ItemState], batch: UUID) throws {
        try database.transaction(durable: false) {
            for item in changed { try record(item, next: .finished, batch: batch) }
        }
    }
}
