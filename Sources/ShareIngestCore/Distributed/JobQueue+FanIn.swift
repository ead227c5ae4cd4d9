import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

// The queue's fan-in: the counter, a lost manifest job, and what the
// fan-in reads and writes (``JobQueue``).
extension JobQueue {
    /// A manifest job lost an attempt (`lost` now), guarded by `lease`:
    /// `next` runs it again after its backoff (queued, with the attempts it has
    /// lost: the fan-in's one counter), or gives up: the job and its batch end
    /// failed, with why. As the lifecycle records it (``ItemLifecycle/recorded(_:at:holderKeeps:)``).
    func loseFanIn(_ job: Job, lease: Lease, next: NextStep, lost: Int) throws {
        let recorded = ItemLifecycle.recorded(next, at: .manifest, holderKeeps: false)
        if recorded.isFinished {
            try query(
                """
                WITH job AS (
                    UPDATE share_jobs SET state = '\(recorded.state)', attempts = $4, finished_at = now(), lease_until = NULL, last_error = $3,
                        error_at = now()
                    WHERE id = $1 AND worker_id = $2 AND state = '\(State.running)' RETURNING batch_id)
                UPDATE share_batches b SET state = \(BatchLifecycle.sql(.loseFanIn(next: next))), failure = $3,
                    finished_at = extract(epoch FROM now())
                FROM job WHERE b.id = job.batch_id AND b.state = '\(BatchState.running.rawValue)'
                RETURNING b.id, pg_notify('share_batches', b.id::text)
                """,
                [String(job.id), String(lease.worker), recorded.error ?? "", String(lost)])
            return
        }
        try query(
            """
            UPDATE share_jobs SET state = '\(recorded.state)', worker_id = NULL, lease_until = NULL, last_error = $3, error_at = now(), attempts = $5,
                not_before = now() + make_interval(secs => $4::double precision)
            WHERE id = $1 AND worker_id = $2 AND state = '\(State.running)'
            RETURNING id, pg_notify('share_jobs', '')
            """,
            [String(job.id), String(lease.worker), recorded.error ?? "", String(recorded.delay), String(lost)])
    }
    /// Running batches whose fan-in counter (`remaining`) is not 0, with how
    /// many of their items are in fact unfinished (a lost decrement cannot
    /// happen in one statement, but a batch must never wait forever): the
    /// reaper asks the lifecycle whether their fan-in is due (``ItemLifecycle/fanInDue(unfinished:)``).
    func stuckBatches() throws -> [(batch: UUID, unfinished: Int)] {
        try query(
            """
            SELECT b.id, (SELECT count(*) FROM share_jobs j WHERE j.batch_id = b.id AND j.idx >= 0
                    AND j.state NOT IN ('\(State.done)', '\(State.failed)')) AS unfinished
            FROM share_batches b WHERE b.state = '\(BatchState.running.rawValue)' AND b.remaining <> 0
            """
        ).compactMap { row in
            guard let id = row["id"].flatMap(UUID.init(uuidString:)),
                let unfinished = row["unfinished"].flatMap(Int.init)
            else { return nil }
            return (id, unfinished)
        }
    }
    /// The fan-in of `batch` is due: its counter set to 0 and its manifest job,
    /// waiting, queued at once.
    func queueFanIn(of batch: UUID) throws {
        try query(
            """
            WITH counter AS (UPDATE share_batches SET remaining = 0 WHERE id = $1::uuid AND state = '\(BatchState.running.rawValue)' RETURNING id)
            UPDATE share_jobs m SET state = '\(BatchLifecycle.fanInJob.due)', not_before = now() FROM counter
            WHERE m.batch_id = counter.id AND m.idx = -1 AND m.state = '\(BatchLifecycle.fanInJob.waiting)'
            RETURNING m.id, pg_notify('share_jobs', '')
            """, [batch.uuidString])
    }
    func recordedFanIn(of batch: UUID) throws -> RecordedFanIn? {
        try query(
            """
            SELECT b.\(BatchColumn.state), b.\(BatchColumn.failure), m.attempts, greatest(0, extract(epoch FROM m.not_before - now())) AS wait
            FROM share_batches b LEFT JOIN share_jobs m ON m.batch_id = b.id AND m.idx = -1 WHERE b.id = $1::uuid
            """, [batch.uuidString]
        ).first.map { row in
            RecordedFanIn(
                lost: row["attempts"].flatMap(Int.init) ?? 0, wait: row["wait"].flatMap(Double.init) ?? 0,
                state: row[BatchColumn.state.name].flatMap(BatchState.init(rawValue:)) ?? .running,
                failure: row[BatchColumn.failure.name])
        }
    }
    func earlierPerceptualHashes(for batch: UUID) throws -> [EarlierHash] {
        var found: [EarlierHash] = []
        for row in try query(
            """
            SELECT o.\(ItemColumn.perceptualHash) AS hash, o.idx AS idx, o.batch_id AS batch, b.key AS key FROM share_jobs o
                JOIN share_batches b ON b.id = o.batch_id AND b.state = '\(BatchState.done.rawValue)'
                    AND b.container = (SELECT container FROM share_batches WHERE id = $1::uuid)
                WHERE o.\(ItemColumn.perceptualHash) IS NOT NULL AND o.batch_id <> $1::uuid AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL
                ORDER BY b.created_at, o.idx
            """, [batch.uuidString])
        {
            guard let hash = row["hash"].flatMap(PerceptualHash.parseRecord), let index = row["idx"].flatMap(Int.init),
                let id = row["batch"].flatMap(UUID.init(uuidString:)),
                let key = row["key"].flatMap({ try? ShareKey($0) })
            else { continue }
            found.append(EarlierHash(hash: hash.hash, colours: hash.colours, batch: id, index: index, shareKey: key))
        }
        return found
    }
    func earlierCopies(for batch: UUID) throws -> EarlierCopies {
        var found = EarlierCopies()
        var originals: [Int: EarlierCopy?] = [:]
        // The batch's first item of each content that repeats (one grouping of
        // the batch), joined to the items after it: never a join of every item
        // with the earlier ones, which a fresh table without statistics may plan
        // as a scan of the batch per item (past the statement timeout at 10,000).
        // The original's snapshot comes only on the first row of its copies (rows
        // in order of the original, which is when the cache reads it): a batch of
        // one photo 20,000 times held 20,000 snapshots at once in the result
        // (40 MB under heaptrack; issue 32, item 6).
        for row in try query(
            """
            WITH firsts AS MATERIALIZED (
                SELECT \(ItemColumn.sha256), min(idx) AS first FROM share_jobs WHERE batch_id = $1::uuid AND idx >= 0 AND \(ItemColumn.sha256) IS NOT NULL
                    AND \(ItemColumn.reason) IS NULL GROUP BY \(ItemColumn.sha256) HAVING count(*) > 1)
            SELECT d.idx AS idx, f.first AS original,
                    CASE WHEN row_number() OVER (PARTITION BY f.first ORDER BY d.idx) = 1 THEN o.snapshot END AS snapshot
                FROM firsts f
                JOIN share_jobs d ON d.batch_id = $1::uuid AND d.\(ItemColumn.sha256) = f.\(ItemColumn.sha256) AND d.idx > f.first AND d.\(ItemColumn.reason) IS NULL
                JOIN share_jobs o ON o.batch_id = $1::uuid AND o.idx = f.first
                ORDER BY f.first, d.idx
            """, [batch.uuidString])
        {
            guard let index = row["idx"].flatMap(Int.init), let original = row["original"].flatMap(Int.init) else {
                continue
            }
            found.addInBatch(item: index, original: original, snapshot: { row["snapshot"] }, cache: &originals)
        }
        // Other finished batches of the same container, oldest first: the first
        // copy of each of the batch's contents in each.
        for row in try query(
            """
            SELECT * FROM (
                SELECT DISTINCT ON (o.\(ItemColumn.sha256), o.batch_id) o.\(ItemColumn.sha256) AS \(ItemColumn.sha256), o.idx AS original, o.snapshot AS snapshot, b.key AS key,
                    b.created_at AS created
                FROM share_jobs o
                JOIN share_batches b ON b.id = o.batch_id AND b.state = '\(BatchState.done.rawValue)'
                    AND b.container = (SELECT container FROM share_batches WHERE id = $1::uuid)
                WHERE o.\(ItemColumn.sha256) IN (SELECT \(ItemColumn.sha256) FROM share_jobs WHERE batch_id = $1::uuid AND idx >= 0 AND \(ItemColumn.sha256) IS NOT NULL
                        AND \(ItemColumn.reason) IS NULL)
                    AND o.batch_id <> $1::uuid AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL
                ORDER BY o.\(ItemColumn.sha256), o.batch_id, o.idx) firsts
            ORDER BY created, original
            """, [batch.uuidString])
        {
            guard let sha256 = row[ItemColumn.sha256.name], let original = row["original"].flatMap(Int.init) else {
                continue
            }
            found.addInOtherShare(sha256: sha256, original: original, snapshot: row["snapshot"], key: row["key"])
        }
        return found
    }
    func livePhotoCandidates(for batch: UUID) throws -> [ItemState] {
        try query(
            """
            SELECT d.idx AS idx, d.snapshot AS snapshot FROM share_jobs d WHERE d.batch_id = $1::uuid AND d.idx >= 0 AND d.\(ItemColumn.reason) IS NULL AND (
                (d.\(ItemColumn.contentIdentifier) IS NOT NULL AND EXISTS (SELECT 1 FROM share_jobs o WHERE o.batch_id = d.batch_id
                    AND o.\(ItemColumn.contentIdentifier) = d.\(ItemColumn.contentIdentifier) AND o.idx <> d.idx AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL))
                OR (d.\(ItemColumn.livePhotoName) IS NOT NULL AND EXISTS (SELECT 1 FROM share_jobs o WHERE o.batch_id = d.batch_id
                    AND o.\(ItemColumn.livePhotoName) = d.\(ItemColumn.livePhotoName) AND o.idx <> d.idx AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL)))
            ORDER BY d.idx
            """, [batch.uuidString]
        ).map { row in ItemState.decode(row["snapshot"] ?? "", index: row["idx"].flatMap(Int.init) ?? -1, id: nil) }
    }
    /// A page of the items the fan-in changed, before its end, while `lease`
    /// holds the manifest job (false when it no longer does: nothing changed).
    func record(_ changed: [ItemState], batch: BatchRecord, lease: Lease) throws -> Bool {
        let changes = changed.map {
            Row(idx: $0.index, stage: .manifest, state: State.done.rawValue, priority: 0, snapshot: $0)
        }
        let held = "SELECT 1 FROM share_jobs WHERE id = $1 AND worker_id = $2 AND state = '\(State.running)'"
        let rows = try query(
            """
            WITH items AS (\(Self.fanInChanges(parameter: 4, batch: 3, guardedBy: held)))
            SELECT EXISTS (\(held)) AS owned, (SELECT count(*) FROM items) AS n
            """,
            [String(lease.job), String(lease.worker), batch.id.uuidString, Self.json(changes)])
        return rows.first?["owned"] == "t"
    }
    /// The update of a batch's items to the fan-in's changes (a JSON array of
    /// rows in parameter `parameter`), while `guardedBy` finds a row.
    private static func fanInChanges(parameter: Int, batch: Int, guardedBy condition: String) -> String {
        """
        UPDATE share_jobs j SET snapshot = c->'snapshot', \(columnNames.map { "\($0) = c->'columns'->>'\($0)'" }.joined(separator: ", "))
            FROM jsonb_array_elements($\(parameter)::jsonb) c
            WHERE j.batch_id = $\(batch)::uuid AND j.idx = (c->>'idx')::integer AND EXISTS (\(condition)) RETURNING j.id
        """
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
    /// that column (bytewise) and then the index: the export and burst
    /// candidates, one query.
    private func groupCandidates(
        for batch: UUID, by column: ItemColumn, after: (String, Int), limit: Int
    ) throws -> [(key: String, item: ItemState)] {
        try query(
            """
            SELECT d.idx AS idx, d.snapshot AS snapshot, d.\(column) AS \(column) FROM share_jobs d WHERE d.batch_id = $1::uuid AND d.idx >= 0
                AND d.\(ItemColumn.reason) IS NULL AND d.\(column) IS NOT NULL AND (d.\(column) COLLATE "C" > $2 OR (d.\(column) = $2 AND d.idx > $3::integer))
                AND EXISTS (SELECT 1 FROM share_jobs o WHERE o.batch_id = d.batch_id AND o.\(column) = d.\(column)
                    AND o.idx <> d.idx AND o.idx >= 0 AND o.\(ItemColumn.reason) IS NULL)
            ORDER BY d.\(column) COLLATE "C", d.idx LIMIT $4::integer
            """, [batch.uuidString, after.0, String(max(after.1, -1)), String(limit)]
        ).map { row in
            (
                key: row[column.name] ?? "",
                item: ItemState.decode(row["snapshot"] ?? "", index: row["idx"].flatMap(Int.init) ?? -1, id: nil)
            )
        }
    }
    /// The manifest job's end, in one statement: the batch marked done (its
    /// manifest, counts and the items the manifest stage changed) and the job
    /// completed. False if the job was no longer the lease's holder's, or the
    /// batch was not running (done already: only the job is completed).
    func finish(_ batch: BatchRecord, changed: [ItemState], lease: Lease) throws -> Bool {
        var columns = batch.mutableColumns.map { ($0.key, $0.value) }
        columns.append(
            (
                BatchColumn.stageSeconds.name,
                .text(
                    Self.json(Dictionary(uniqueKeysWithValues: batch.stageSeconds.map { ($0.key.rawValue, $0.value) })))
            ))
        let changes = changed.map {
            Row(idx: $0.index, stage: .manifest, state: State.done.rawValue, priority: 0, snapshot: $0)
        }
        let n = columns.count
        let row = try query(
            """
            WITH job AS (
                UPDATE share_jobs SET state = '\(State.done)', finished_at = now(), lease_until = NULL
                WHERE id = $1 AND worker_id = $2 AND state = '\(State.running)' RETURNING batch_id),
            items AS (\(Self.fanInChanges(parameter: n + 4, batch: 3, guardedBy: "SELECT 1 FROM job"))),
            batch AS (
                UPDATE share_batches b SET \(columns.enumerated().map { "\($1.0) = $\($0 + 4)\($1.0 == BatchColumn.stageSeconds.name ? "::jsonb" : "")" }.joined(separator: ", ")), \(BatchColumn.failure) = NULL
                FROM job WHERE b.id = job.batch_id AND b.state = '\(BatchState.running.rawValue)' RETURNING b.id)
            SELECT (SELECT count(*) FROM job) AS owned, (SELECT count(*) FROM batch) AS finished,
                pg_notify('share_batches', coalesce((SELECT batch_id::text FROM job), '')) AS notified
            """,
            [String(lease.job), String(lease.worker), batch.id.uuidString] + columns.map(\.1.text) + [
                Self.json(changes)
            ])
        return row.first?["owned"] == "1" && row.first?["finished"] == "1"
    }
}
