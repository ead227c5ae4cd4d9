import Foundation
import TestSupport
import Testing

/// The distributed fan-in, seen in the queue's rows on a real PostgreSQL server
/// with real `share worker` processes: each item's completion decrements its
/// batch's `remaining` by one in the same transaction, and the completion that
/// brings it to 0 queues the manifest job, exactly once.
///
/// A test-only audit (triggers the test installs after `share db migrate`)
/// records every change of `remaining` and of a job's state with the id of the
/// transaction that made it, so the tests assert rows and transactions, never
/// the time a batch took: a lost decrement fails at once (not only after
/// `repairCounters`, which a worker runs every 30 s, would have queued the
/// manifest anyway), and so does a fan-in that fires twice, never, too early
/// or apart from the decrement.
@Suite(.serialized) struct FanInTests {
    /// The audit: one row per change of `share_batches.remaining` and per change
    /// of a job's state (and per update that sets the manifest job `queued`,
    /// even from `queued`), each with `txid_current()`.
    static let audit = """
        CREATE TABLE fanin_audit (
            seq bigserial PRIMARY KEY, tx bigint NOT NULL DEFAULT txid_current(), tbl text NOT NULL, batch_id uuid NOT NULL,
            idx integer, old_state text, new_state text, old_remaining integer, new_remaining integer, worker_id integer);
        CREATE FUNCTION fanin_audit_batch() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.remaining IS DISTINCT FROM OLD.remaining THEN
                INSERT INTO fanin_audit (tbl, batch_id, old_remaining, new_remaining) VALUES ('batch', NEW.id, OLD.remaining, NEW.remaining);
            END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER fanin_audit AFTER UPDATE ON share_batches FOR EACH ROW EXECUTE FUNCTION fanin_audit_batch();
        CREATE FUNCTION fanin_audit_job() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                INSERT INTO fanin_audit (tbl, batch_id, idx, new_state, worker_id) VALUES ('job', NEW.batch_id, NEW.idx, NEW.state, NEW.worker_id);
            ELSIF NEW.state IS DISTINCT FROM OLD.state OR (NEW.idx < 0 AND NEW.state = 'queued') THEN
                INSERT INTO fanin_audit (tbl, batch_id, idx, old_state, new_state, worker_id)
                VALUES ('job', NEW.batch_id, NEW.idx, OLD.state, NEW.state, coalesce(NEW.worker_id, OLD.worker_id));
            END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER fanin_audit AFTER INSERT OR UPDATE ON share_jobs FOR EACH ROW EXECUTE FUNCTION fanin_audit_job();
        """

    /// One audit row.
    struct Change: CustomStringConvertible {
        let seq: Int
        let tx: Int64
        let table: String
        let index: Int?
        let oldState: String?
        let newState: String?
        let oldRemaining: Int?
        let newRemaining: Int?
        let worker: Int?

        var isItemFinish: Bool {
            guard table == "job", let index, index >= 0, let oldState, let newState else { return false }
            return ["done", "failed"].contains(newState) && !["done", "failed"].contains(oldState)
        }
        var isManifestQueued: Bool { table == "job" && (index ?? 0) < 0 && oldState != nil && newState == "queued" }

        var description: String {
            table == "batch"
                ? "#\(seq) tx \(tx): remaining \(oldRemaining.map(String.init) ?? "?") → \(newRemaining.map(String.init) ?? "?")"
                : "#\(seq) tx \(tx): job \(index.map(String.init) ?? "?") \(oldState ?? "(new)") → \(newState ?? "?") (worker \(worker.map(String.init) ?? "-"))"
        }
    }

    static func changes(_ server: PostgresServer, batch: String) throws -> [Change] {
        let text = try server.sql(
            """
            SELECT seq, tx, tbl, coalesce(idx::text, ''), coalesce(old_state, ''), coalesce(new_state, ''),
                coalesce(old_remaining::text, ''), coalesce(new_remaining::text, ''), coalesce(worker_id::text, '')
            FROM fanin_audit WHERE batch_id = '\(batch)' ORDER BY seq
            """)
        return text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 9, let seq = Int(f[0]), let tx = Int64(f[1]) else { return nil }
            func text(_ s: String) -> String? { s.isEmpty ? nil : s }
            return Change(
                seq: seq, tx: tx, table: f[2], index: Int(f[3]), oldState: text(f[4]), newState: text(f[5]),
                oldRemaining: Int(f[6]),
                newRemaining: Int(f[7]), worker: Int(f[8]))
        }
    }

    /// What is wrong with a batch's fan-in of `items` items, from its audit
    /// (empty: nothing). Called once every item has finished.
    static func fanInProblems(_ changes: [Change], items: Int) -> [String] {
        var problems: [String] = []
        var decrements = changes.filter { $0.table == "batch" }
        // The end of the plan (the batch goes from claimed to running) sets the
        // counter once, to the items to finish, in the transaction that adds the
        // manifest job; from then on only decrements may change it.
        if let seal = decrements.first, seal.oldRemaining == 0, seal.newRemaining == items,
            changes.contains(where: {
                $0.table == "job" && ($0.index ?? 0) < 0 && $0.oldState == nil && $0.tx == seal.tx
            })
        {
            decrements.removeFirst()
        } else {
            problems.append(
                "remaining was not set to the \(items) items by the end of the plan, with the manifest job: \(decrements.first.map { "\($0)" } ?? "no change")"
            )
        }
        let finishes = changes.filter(\.isItemFinish)
        let fires = changes.filter(\.isManifestQueued)
        // A worker records the items leaving it together: each statement decreases
        // `remaining` by the number of the batch's items it finished.
        for change in decrements {
            let finishedHere = finishes.filter { $0.tx == change.tx }.count
            if change.newRemaining != (change.oldRemaining ?? 0) - finishedHere {
                problems.append(
                    "remaining was changed by other than the \(finishedHere) items finished in its transaction: \(change)"
                )
            }
        }
        if let first = decrements.first, first.oldRemaining != items {
            problems.append("remaining started at \(first.oldRemaining ?? -1), not at the \(items) items")
        }
        if finishes.count != items { problems.append("\(finishes.count) item completions recorded for \(items) items") }
        for finish in finishes {
            let same = decrements.filter { $0.tx == finish.tx }
            if same.count != 1 {
                problems.append(
                    "\(finish): \(same.count) changes of remaining in its transaction, expected one decrease"
                        + (same.isEmpty
                            ? " (a lost decrement: only repairCounters, 30 s later, would queue the manifest)" : ""))
            }
        }
        for change in decrements where !finishes.contains(where: { $0.tx == change.tx }) {
            problems.append(
                "remaining changed outside any item's completion (repairCounters masking a lost decrement?): \(change)")
        }
        if fires.count != 1 {
            problems.append("the manifest job was queued \(fires.count) times (expected exactly once): \(fires)")
        }
        if let fire = fires.first {
            let zero = decrements.first { $0.newRemaining == 0 }
            if fire.tx != zero?.tx {
                problems.append(
                    "the manifest job was queued in transaction \(fire.tx), not in the one that brought remaining to 0 (\(zero.map { "\($0)" } ?? "none")): "
                        + "a fan-in checked apart from the decrement fires twice or never when completions race")
            }
            if fire.oldState != "waiting" {
                problems.append("the manifest job was queued from \(fire.oldState ?? "?"), not from waiting: \(fire)")
            }
        }
        return problems
    }

    /// A migrated server with the audit installed, a drop of `items` text files
    /// enqueued (`ingest --db --no-wait`: no worker yet); its batch id.
    static func enqueue(items: Int) throws -> (server: PostgresServer, work: TemporaryDirectory, batch: String) {
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        try server.sql(audit)
        let work = TemporaryDirectory("fanin")
        try DistributedTests.textDrop(items, in: work.file("drop"))
        let enqueue = try ShareProcess.run([
            "ingest", "--db", server.url, "--container", work.file("container"), "--no-wait", work.file("drop"),
        ])
        #expect(enqueue.status == 0, "\(enqueue.stderr)")
        return (server, work, enqueue.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func value(_ server: PostgresServer, _ sql: String) throws -> String {
        try server.sql(sql).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func unfinishedItems(_ server: PostgresServer, batch: String) throws -> Int {
        Int(
            try value(
                server,
                "SELECT count(*) FROM share_jobs WHERE batch_id = '\(batch)' AND idx >= 0 AND state NOT IN ('done', 'failed')"
            )) ?? -1
    }

    /// After every item finished: the audit is right, `remaining` is 0, and
    /// (only then: a lost fan-in would wait for repairCounters) the manifest job
    /// runs once and the batch ends done with every item in its manifest.
    static func checkFinishedBatch(_ server: PostgresServer, batch: String, items: Int, container: String) throws {
        let changes = try Self.changes(server, batch: batch)
        let problems = fanInProblems(changes, items: items)
        #expect(
            problems.isEmpty,
            "\(problems.joined(separator: "\n"))\naudit:\n\(changes.map(\.description).joined(separator: "\n"))")
        #expect(try value(server, "SELECT remaining FROM share_batches WHERE id = '\(batch)'") == "0")
        guard problems.isEmpty else { return }
        #expect(
            try eventually { try value(server, "SELECT state FROM share_batches WHERE id = '\(batch)'") == "done" },
            "the batch did not end after its manifest job was queued")
        // Done, and no attempt of it lost (claims are not counted: `attempts` is the fan-in's lost attempts).
        #expect(
            try value(
                server, "SELECT state || ' ' || attempts FROM share_jobs WHERE batch_id = '\(batch)' AND idx = -1")
                == "done 0")
        #expect(
            try Self.changes(server, batch: batch).filter(\.isManifestQueued).count == 1, "queued again after it ran")
        #expect(try DistributedTests.manifestEntries(container).count == items)
    }

    /// The sequential case: one worker finishes the items one after another; the
    /// last completion queues the manifest job, once, and leaves `remaining` at 0.
    @Test func theLastItemsCompletionQueuesTheManifestOnce() throws {
        let items = 5
        let (server, work, batch) = try Self.enqueue(items: items)
        #expect(try Self.value(server, "SELECT remaining FROM share_batches WHERE id = '\(batch)'") == String(items))
        #expect(
            try Self.value(server, "SELECT state FROM share_jobs WHERE batch_id = '\(batch)' AND idx = -1") == "waiting"
        )
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("a", lease: 60)
        defer { workers.stopAll() }
        #expect(try eventually { try Self.unfinishedItems(server, batch: batch) == 0 }, "\(workers.log("a"))")
        try Self.checkFinishedBatch(server, batch: batch, items: items, container: work.file("container"))
    }

    /// The race: two connections complete the batch's last two items at the
    /// same moment. A transaction of the test holds the batch row
    /// (`FOR NO KEY UPDATE`, the lock a decrement takes) before any worker
    /// starts; both finishing completions are seen blocked on it at once
    /// (`pg_blocking_pids`), so both are in flight together on every run;
    /// then it lets them go. The manifest job is queued once, by the completion
    /// that brought `remaining` to 0, in that same transaction.
    @Test func twoCompletionsOfTheLastItemsAtOnceQueueTheManifestOnce() throws {
        let items = 2
        let (server, work, batch) = try Self.enqueue(items: items)
        let holder = try PostgresSession(url: server.url, name: "fanin-holder")
        try holder.send("BEGIN;")
        try holder.send("SELECT remaining FROM share_batches WHERE id = '\(batch)' FOR NO KEY UPDATE;")
        let held = try eventually(timeout: 60) {
            try Self.value(
                server,
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'fanin-holder' AND state = 'idle in transaction' AND query LIKE '%FOR NO KEY UPDATE%'"
            ) == "1"
        }
        try #require(held, "the test's transaction never held the batch row: \(holder.output)")

        // Two workers, two executors (connections) each: however the two items
        // are claimed, each is run by its own connection, and a connection
        // blocked in a completion never takes the other item. Long leases: no
        // job is taken back while its completion waits.
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("a", lease: 60, arguments: ["--concurrency", "2"])
        try workers.start("b", lease: 60, arguments: ["--concurrency", "2"])
        defer { workers.stopAll() }
        // Waiting for the batch row: the first waiter on the holder's transaction
        // id, the next ones on the row's tuple lock (queued behind the first).
        let waitingForTheRow = """
            SELECT count(DISTINCT l.pid) FROM pg_locks l
            WHERE NOT l.granted AND (
                (l.locktype = 'tuple' AND l.relation = 'share_batches'::regclass)
                OR (l.locktype = 'transactionid' AND l.transactionid = (SELECT backend_xid FROM pg_stat_activity WHERE application_name = 'fanin-holder')))
            """
        // The workers start and run both items' stages (any speed), then the
        // second completion follows the first within a stage's time: the first
        // must not wait 60 s, the workers' statement deadline.
        let oneWaiting = try eventually { (Int(try Self.value(server, waitingForTheRow)) ?? 0) >= 1 }
        let bothWaiting = try oneWaiting && eventually(timeout: 45) { try Self.value(server, waitingForTheRow) == "2" }
        let waiting = try Self.value(
            server,
            "SELECT string_agg(application_name || ' pid ' || pid || ': ' || left(query, 60), '; ') FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        )
        #expect(
            bothWaiting,
            "the two finishing completions were never blocked together: \(waiting)\n\(workers.log("a"))\(workers.log("b"))"
        )
        // Blocked in their completions: both items' rows are already updated in
        // their transactions, nothing committed; the manifest job still waits.
        #expect(try Self.unfinishedItems(server, batch: batch) == items, "a completion got through the held batch row")
        #expect(
            try Self.value(server, "SELECT state FROM share_jobs WHERE batch_id = '\(batch)' AND idx = -1") == "waiting"
        )

        #expect(try holder.finish("COMMIT;") == 0, "\(holder.output)")
        #expect(
            try eventually { try Self.unfinishedItems(server, batch: batch) == 0 },
            "\(workers.log("a"))\(workers.log("b"))")
        let finishes = try Self.changes(server, batch: batch).filter(\.isItemFinish)
        #expect(
            Set(finishes.map(\.tx)).count == items, "the two items were not completed by two transactions: \(finishes)")
        try Self.checkFinishedBatch(server, batch: batch, items: items, container: work.file("container"))
    }
}
