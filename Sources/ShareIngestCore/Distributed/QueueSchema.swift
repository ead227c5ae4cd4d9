import Foundation

/// The PostgreSQL schema of the distributed mode, changed by named migrations
/// recorded in `share_migrations` (the same kind as the journal's); one this
/// share does not know means a newer share changed it, and is refused.
///
/// Only ``migrate(_:)`` (`share db migrate`, run by a role that may create
/// tables) changes it; every other command only reads the version
/// (``check(_:)``), so workers and clients can run as a role with nothing but
/// SELECT, INSERT, UPDATE and DELETE on the tables.
///
/// The current schema:
/// - `share_batches`: one row per batch (the journal's row model,
///   ``BatchRecord/columns``) with the container every worker writes into, the
///   visibility token, the drop roots, `remaining` (items not yet finished: the
///   fan-in counter) and, for a failed batch, why: the columns ``BatchColumn``
///   declares for the queue (`BatchColumnTests` compares the table these
///   migrations make with the declaration).
/// - `share_jobs`: one row per item, which moves through the stages (`stage` is
///   the next one to run, `snapshot` the item's ``ItemState``, `priority` its
///   expected decode cost: the costliest is claimed first), plus one manifest
///   row (`idx = -1`) per batch, `waiting` until `remaining` reaches 0.
/// - `share_workers`: registered workers; a worker holds the session-level
///   advisory lock (``workerLockSpace``, its id) while it lives.
/// - `share_worker_blocks`: batches a worker refuses (it cannot see or write
///   their container), with the reason.
enum QueueSchema {
    /// The migrations, in order, recorded by name in `share_migrations`.
    static let migrations = SchemaMigrations(
        store: "the database",
        migrations: [
            Migration(name: "1-batches-items-jobs", sql: version1),
            Migration(name: "2-batch-row-model", sql: version2),
            Migration(name: "3-item-rows-and-workers", sql: version3),
            Migration(name: "4-costliest-first-claims", sql: version4),
            Migration(name: "5-content-hash", sql: version5),
            Migration(name: "6-batch-stage-seconds", sql: version6),
            Migration(name: "7-live-photo-keys", sql: version7),
            Migration(name: "8-item-columns", sql: version8),
            Migration(name: "9-export-sidecar-keys", sql: version9),
            Migration(name: "10-burst-identifier", sql: version10),
            Migration(name: "11-perceptual-hash", sql: version11),
        ])
    /// The schema's version: how many migrations this share has.
    static var version: Int { migrations.migrations.count }
    /// The first key of every worker's advisory lock (`pg_advisory_lock(727275, id)`).
    static let workerLockSpace = 727_275
    /// The lock that serializes concurrent migrations.
    static let migrationLock = 727_274

    /// Creates or upgrades the schema; concurrent callers serialize on an advisory lock.
    /// Returns the names of the migrations it applied (none: it was up to date).
    @discardableResult
    static func migrate(_ connection: PostgresConnection) throws -> [String] {
        var made: [String] = []
        try connection.transaction {
            try connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))")
            try connection.query("CREATE TABLE IF NOT EXISTS share_schema (version integer NOT NULL)")
            let applied = try applied(connection)
            try connection.query(
                "CREATE TABLE IF NOT EXISTS share_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            // A database migrated before names: its migrations are recorded by name now.
            for name in applied.sorted() {
                try connection.query("INSERT INTO share_migrations (name) VALUES ($1) ON CONFLICT DO NOTHING", [name])
            }
            for migration in try migrations.pending(applied: applied) {
                try connection.execute(migration.sql)
                try connection.query("INSERT INTO share_migrations (name) VALUES ($1)", [migration.name])
                made.append(migration.name)
            }
            // Shares from before named migrations read only this number: one
            // older than the schema sees it is newer and refuses to run.
            try connection.query("DELETE FROM share_schema")
            try connection.query("INSERT INTO share_schema (version) VALUES (\(version))")
        }
        return made
    }

    /// The migrations applied: recorded by name, or, in a database migrated
    /// before names (only `share_schema`), the first `version` of them.
    static func applied(_ connection: PostgresConnection) throws -> Set<String> {
        let named =
            try connection.query("SELECT to_regclass('share_migrations') IS NOT NULL AS named").first?["named"] == "t"
        if named { return Set(try connection.query("SELECT name FROM share_migrations").compactMap { $0["name"] }) }
        let legacy = Int(try connection.query("SELECT max(version) AS v FROM share_schema").first?["v"] ?? "0") ?? 0
        guard legacy <= version else {
            throw SchemaMismatch(
                description:
                    "the database's share-ingest schema is at version \(legacy), newer than this share understands (\(version)): upgrade share"
            )
        }
        return Set(migrations.migrations.prefix(legacy).map(\.name))
    }

    /// Checks, read-only, that the schema is the one this version uses.
    static func check(_ connection: PostgresConnection) throws {
        let applied: Set<String>
        do {
            applied = try Self.applied(connection)
        } catch let error as PostgresError where error.sqlState == .undefinedTable {
            throw SchemaMismatch(
                description:
                    "the database has no share-ingest schema yet: run  share db migrate --db URL  (as a role that may create tables)"
            )
        }
        let pending = try migrations.pending(applied: applied)
        if !pending.isEmpty {
            throw SchemaMismatch(
                description:
                    "the database's share-ingest schema is at version \(version - pending.count); this share needs \(version): run  share db migrate --db URL  (as the owner role)"
            )
        }
    }

    private static let version1 = """
        CREATE TABLE share_batches (
            id uuid PRIMARY KEY, key text UNIQUE NOT NULL, container text NOT NULL, pipeline text NOT NULL,
            message text, state text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz,
            redirect_url text, manifest_path text, item_count integer NOT NULL DEFAULT 0,
            ingested integer NOT NULL DEFAULT 0, failed integer NOT NULL DEFAULT 0, skipped integer NOT NULL DEFAULT 0);
        CREATE TABLE share_items (
            batch_id uuid NOT NULL REFERENCES share_batches(id) ON DELETE CASCADE, idx integer NOT NULL,
            snapshot jsonb NOT NULL, finished boolean NOT NULL DEFAULT false, PRIMARY KEY (batch_id, idx));
        CREATE TABLE share_jobs (
            id bigserial PRIMARY KEY, batch_id uuid NOT NULL REFERENCES share_batches(id) ON DELETE CASCADE,
            idx integer NOT NULL, stage text NOT NULL, state text NOT NULL DEFAULT 'queued',
            attempts integer NOT NULL DEFAULT 0, max_attempts integer NOT NULL DEFAULT 3,
            not_before timestamptz NOT NULL DEFAULT now(), lease_until timestamptz, worker text, last_error text,
            finished_at timestamptz, UNIQUE (batch_id, idx, stage));
        CREATE INDEX share_jobs_queued ON share_jobs (stage, not_before) WHERE state = 'queued';
        CREATE INDEX share_jobs_running ON share_jobs (lease_until) WHERE state = 'running';
        """

    // The batch row of the journal's row model (ItemStore): times as epoch
    // seconds, the drop's columns.
    private static let version2 = """
        ALTER TABLE share_batches ALTER COLUMN created_at DROP DEFAULT,
            ALTER COLUMN created_at TYPE double precision USING extract(epoch FROM created_at),
            ALTER COLUMN finished_at TYPE double precision USING extract(epoch FROM finished_at),
            ADD COLUMN drop_name text, ADD COLUMN drop_signature text, ADD COLUMN drop_path text
        """

    // One row per item that moves through the stages (its snapshot inside), a
    // fan-in counter, registered workers. Batches in flight are carried over: an
    // item's row takes the stage of its latest job, a batch whose manifest job
    // had run out of attempts (version 2 left it running forever) ends failed.
    private static let version3 = """
        ALTER TABLE share_batches ADD COLUMN remaining integer NOT NULL DEFAULT 0, ADD COLUMN token text,
            ADD COLUMN roots jsonb, ADD COLUMN failure text, ADD COLUMN max_attempts integer NOT NULL DEFAULT 3;
        CREATE TABLE share_tasks (
            id bigserial PRIMARY KEY, batch_id uuid NOT NULL REFERENCES share_batches(id) ON DELETE CASCADE,
            idx integer NOT NULL, stage text NOT NULL, state text NOT NULL,
            attempts integer NOT NULL DEFAULT 0, max_attempts integer NOT NULL DEFAULT 3,
            not_before timestamptz NOT NULL DEFAULT now(), lease_until timestamptz, worker_id integer,
            last_error text, error_at timestamptz, finished_at timestamptz, snapshot jsonb, UNIQUE (batch_id, idx));
        INSERT INTO share_tasks (batch_id, idx, stage, state, attempts, max_attempts, snapshot, last_error, error_at)
            SELECT i.batch_id, i.idx, coalesce(last.stage, 'sniff'),
                CASE WHEN i.finished THEN 'done' ELSE 'queued' END,
                CASE WHEN i.finished THEN 0 ELSE coalesce(last.attempts, 0) END,
                coalesce(last.max_attempts, 3), i.snapshot, last.last_error, CASE WHEN last.last_error IS NOT NULL THEN now() END
            FROM share_items i LEFT JOIN LATERAL (
                SELECT stage, attempts, max_attempts, last_error FROM share_jobs j
                WHERE j.batch_id = i.batch_id AND j.idx = i.idx ORDER BY j.id DESC LIMIT 1) last ON true;
        INSERT INTO share_tasks (batch_id, idx, stage, state, attempts, max_attempts, last_error, error_at)
            SELECT b.id, -1, 'manifest',
                CASE WHEN b.state = 'done' THEN 'done' WHEN m.state = 'failed' THEN 'failed'
                     WHEN m.id IS NOT NULL OR NOT EXISTS (SELECT 1 FROM share_items i WHERE i.batch_id = b.id AND NOT i.finished) THEN 'queued'
                     ELSE 'waiting' END,
                CASE WHEN m.state = 'failed' THEN m.attempts ELSE 0 END, coalesce(m.max_attempts, 3), m.last_error,
                CASE WHEN m.last_error IS NOT NULL THEN now() END
            FROM share_batches b LEFT JOIN share_jobs m ON m.batch_id = b.id AND m.idx = -1;
        UPDATE share_batches b SET remaining = (SELECT count(*) FROM share_tasks t WHERE t.batch_id = b.id AND t.idx >= 0 AND t.state NOT IN ('done', 'failed'));
        UPDATE share_batches b SET state = 'failed', failure = 'the manifest job gave up: ' || coalesce(t.last_error, 'no reason recorded')
            FROM share_tasks t WHERE t.batch_id = b.id AND t.idx = -1 AND t.state = 'failed' AND b.state = 'running';
        DROP TABLE share_jobs;
        DROP TABLE share_items;
        ALTER TABLE share_tasks RENAME TO share_jobs;
        ALTER INDEX share_tasks_pkey RENAME TO share_jobs_pkey;
        ALTER SEQUENCE share_tasks_id_seq RENAME TO share_jobs_id_seq;
        CREATE INDEX share_jobs_ready ON share_jobs (id) WHERE state = 'queued';
        CREATE INDEX share_jobs_running ON share_jobs (worker_id) WHERE state = 'running';
        CREATE INDEX share_jobs_errors ON share_jobs (error_at) WHERE error_at IS NOT NULL;
        CREATE INDEX share_batches_finished ON share_batches (finished_at) WHERE state IN ('done', 'failed');
        CREATE INDEX share_batches_running ON share_batches (created_at) WHERE state = 'running';
        CREATE TABLE share_workers (
            id serial PRIMARY KEY, name text NOT NULL, host text NOT NULL, pid integer NOT NULL, stages text NOT NULL,
            concurrency integer NOT NULL, started_at timestamptz NOT NULL DEFAULT now(), locked_at timestamptz NOT NULL DEFAULT now(),
            last_seen timestamptz NOT NULL DEFAULT now(), stopped_at timestamptz,
            stages_done bigint NOT NULL DEFAULT 0, failures bigint NOT NULL DEFAULT 0);
        CREATE TABLE share_worker_blocks (
            worker_id integer NOT NULL REFERENCES share_workers(id) ON DELETE CASCADE,
            batch_id uuid NOT NULL REFERENCES share_batches(id) ON DELETE CASCADE,
            reason text NOT NULL, since timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (worker_id, batch_id))
        """

    // Claims take the costliest ready job first (its expected decode cost,
    // recorded with each completion), as the local runner's queues do.
    private static let version4 = """
        ALTER TABLE share_jobs ADD COLUMN priority double precision NOT NULL DEFAULT 0;
        DROP INDEX share_jobs_ready;
        CREATE INDEX share_jobs_ready ON share_jobs (priority DESC, id) WHERE state = 'queued';
        """

    // Each copy's SHA-256, so the fan-in finds the same content delivered
    // earlier (in the batch, or in another batch of the container).
    private static let version5 = ItemColumn.additions(by: "5-content-hash", of: .queue, table: "share_jobs")

    // A finished batch's seconds per stage, summed once by its fan-in, so
    // `share status` does not read every item of a large batch again.
    private static let version6 = """
        ALTER TABLE share_batches ADD COLUMN stage_seconds jsonb;
        """

    // Each still's and movie's Live Photo keys (Apple's content identifier; the
    // name a Live Photo's halves share), so the fan-in finds the halves of a
    // batch without reading every item.
    private static let version7 = ItemColumn.additions(by: "7-live-photo-keys", of: .queue, table: "share_jobs")

    // The item's columns of both stores (ItemColumn), so queries need not
    // read a field out of the record (one still does: QueueStatus sums a running
    // batch's seconds per stage from `snapshot->'stageSeconds'`): the last stage completed and the
    // failure reason join the hash and the Live Photo keys. Rows recorded before
    // take theirs from their record.
    private static let version8 =
        ItemColumn.additions(by: "8-item-columns", of: .queue, table: "share_jobs") + """
            UPDATE share_jobs SET \(ItemColumn.completed) = snapshot->>'\(ItemState.CodingKeys.completed.rawValue)',
                \(ItemColumn.reason) = snapshot->'\(ItemState.CodingKeys.failure.rawValue)'->>'reason' WHERE idx >= 0;
            CREATE INDEX share_jobs_failures ON share_jobs (finished_at) WHERE \(ItemColumn.reason) IS NOT NULL;
            """

    // Export sidecars' kinds and the stems they and the media name, so the
    // fan-in found a batch's sidecars and their media without reading every
    // item. Sidecars are matched when a batch is planned now: only
    // `export_stem` is written (ItemState.exportStem), for the groups of
    // shots; `sidecar_kind` stays empty.
    private static let version9 = ItemColumn.additions(by: "9-export-sidecar-keys", of: .queue, table: "share_jobs")

    // Each photo's Apple burst identifier (ItemState.burstKey), so the fan-in
    // finds a burst's frames without reading every item.
    private static let version10 = ItemColumn.additions(by: "10-burst-identifier", of: .queue, table: "share_jobs")

    // Each delivered thumbnail's perceptual hash (ItemState.perceptualHash),
    // so the fan-in reads earlier batches' hashes into its near-duplicate
    // index without decoding every item.
    private static let version11 = ItemColumn.additions(by: "11-perceptual-hash", of: .queue, table: "share_jobs")
}
