import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// One claimed unit of distributed work: the next stage of one item (its row
/// moves through the stages), or a batch's manifest.
struct Job: Sendable {
    let id: Int64
    let batchID: UUID
    /// The item's index; -1 for the manifest job.
    let index: Int
    /// The stage to run now.
    let stage: StageName
    /// For the manifest job, the attempts its fan-in has lost (its one counter;
    /// an item's is its ``ItemState/lostAttempts``).
    let attempts: Int
    let maxAttempts: Int
    /// The item as last recorded (``ItemState`` JSON); nil for the manifest job.
    let snapshot: String?
    /// True for an item that must run alone (``ItemState/suspect``).
    let mustRunAlone: Bool

    var isManifest: Bool { index < 0 }

    /// The item as last recorded; an unreadable record is an item that fails with why.
    var item: ItemState { ItemState.decode(snapshot ?? "", index: index, id: nil) }

    /// What a record of this job must match, held by `worker`.
    func lease(worker: Int) -> Lease { Lease(job: id, worker: worker, stage: stage) }
}

/// The jobs of many batches in PostgreSQL, shared by workers on many machines:
/// the distributed mode's ``JobStore``. Every operation on a job is one
/// statement, so one round trip; creating a batch takes one per 2,000 items:
///
/// - create, in three steps, so a drop of any size is never held in memory:
///   ``begin(_:plan:)``, the batch row, `claimed` (no worker takes its jobs
///   yet); ``append(_:to:plan:)``, a row per item, one statement per chunk of
///   ``BatchPlan/chunkSize`` items; ``seal(_:plan:unfinished:)``, the batch
///   running with its fan-in counter, and the manifest job. A plan cut short
///   leaves the batch `claimed`: planned again, or ``abandon(_:)``ed;
/// - claim: up to N ready jobs, costliest first (`FOR UPDATE SKIP LOCKED` in a
///   CTE, then `UPDATE … RETURNING` with the items' records);
/// - record: the item's new state and where it goes next (kept by the same
///   worker when it serves that stage, so the item's stages need no new claim);
///   when the item is finished, the batch's `remaining` counter is decremented
///   in the same statement, and the one record that brings it to 0 queues the
///   manifest job. No lock is held across round trips.
/// - renew: one statement per worker (not per job) extends all its leases.
final class JobQueue {
    /// The connection; made again when it was lost (``reconnect()``).
    private(set) var connection: PostgresConnection
    private let url: String
    private let role: String
    private let interruption: Interruption?
    /// Seconds a job kept by its worker stays leased without a heartbeat.
    var leaseSeconds: Double = ItemLifecycle.defaultLease
    /// True for a connection that holds no lock (an executor's): a statement
    /// after a lost connection (a server restart) connects again first, so a
    /// record kept while the server was away is made once it is back.
    var reconnects = false

    /// Connects as `share-<role>@<host>`; waits end on `interruption`.
    init(url: String, role: String, interruption: Interruption? = nil) throws(PostgresError) {
        self.url = url
        self.role = role
        self.interruption = interruption
        connection = try PostgresConnection(url: url, role: role, interruption: interruption)
    }

    /// A new connection in place of one that was lost (a server restart): the
    /// next statement then runs on it. Not for a connection holding locks.
    func reconnect() throws(PostgresError) {
        connection = try PostgresConnection(url: url, role: role, interruption: interruption)
    }

    /// Runs one statement (see ``reconnects``).
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> [[String: String]] {
        if reconnects && !connection.isConnected { try reconnect() }
        return try connection.query(sql, parameters)
    }

    // MARK: - Rows as JSON

    /// One item's row at planning, or its new state at a record, as the JSON
    /// parameter a statement unpacks (`jsonb_array_elements`).
    struct Row: Encodable {
        let idx: Int
        let stage: StageName
        let state: String
        let priority: Double
        let snapshot: ItemState
        /// The item's ``ItemState/columns``, by name.
        let columns: [String: String?]

        init(idx: Int, stage: StageName, state: String, priority: Double, snapshot: ItemState) {
            (self.idx, self.stage, self.state, self.priority, self.snapshot) = (idx, stage, state, priority, snapshot)
            columns = Dictionary(uniqueKeysWithValues: zip(JobQueue.columnNames, snapshot.columnValues))
        }
    }

    /// The item columns a statement sets from a ``Row`` unpacked as `e`.
    static let columnNames = ItemState.columns.map(\.name)

    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Rows are plain values: encoding cannot fail.
        return String(decoding: try! encoder.encode(value), as: UTF8.self)
    }

    /// The expected decode cost of `item`'s next stage, which orders claims.
    static func priority(of item: ItemState) -> Double { ItemLifecycle.priority(of: item) }

    /// A row's states, as the lifecycle names them.
    typealias State = ItemLifecycle.RowState
}

/// The queue is the distributed mode's store: its members are in the
/// files beside this one, by concern (JobQueue+Claims, +Batches, +FanIn).
extension JobQueue: JobStore {}

extension JobQueue {
    func listen() throws { try connection.query("LISTEN share_jobs") }

    func waitForWork(seconds: Double, wake: Int32) throws -> Bool {
        try connection.waitForNotification(seconds: seconds, wake: wake)
    }

    var isConnected: Bool { connection.isConnected }

    func interrupt(at interruption: Interruption) { connection.interruption = interruption }

    func close() { connection.close() }

    /// A new connection to the same queue, as the same role (without this
    /// one's interruption: what it reads may be read after its holder stopped).
    var opener: StoreOpener { StoreOpener { [url, role] in try JobQueue(url: url, role: role) } }
}

/// A PostgreSQL result row (text format), read by column name.
struct PostgresRow: StoreRow {
    let values: [String: String]
    func text(_ column: String) -> String? { values[column] }
}
