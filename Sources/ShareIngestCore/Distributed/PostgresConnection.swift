import CPostgres
import Foundation
import Glibc
import ShareManifest
import Synchronization
import SystemCalls

/// When waits on the server give up: once `flag` is set (SIGINT, SIGTERM), a
/// statement under way may still take `grace` seconds, counted from the first
/// time any connection sharing this noticed the request (a worker's last saves
/// get a moment; a client stops at once with a grace of 0).
final class Interruption: Sendable {
    let flag: CancellationFlag
    let grace: Double
    private let noticed = Mutex<Double?>(nil)

    init(_ flag: CancellationFlag, grace: Double = 0) {
        self.flag = flag
        self.grace = grace
    }

    /// True once the flag is set and the grace has passed.
    var isDue: Bool {
        guard flag.isCancelled else { return false }
        let now = MonotonicClock.now()
        let first = noticed.withLock { noticed in
            if noticed == nil { noticed = now }
            return noticed!
        }
        return now - first >= grace
    }
}

/// One libpq connection (owns a `PGconn*`, closed with `PQfinish`). Not shared
/// between threads: each thread has its own.
///
/// Nothing here blocks without a limit: the connection is made and every
/// statement is waited for with `poll` in short slices, so a server that
/// accepts and never answers costs at most `connect_timeout` (default
/// ``defaultConnectTimeout``, overridable in the URL) or ``statementTimeout``,
/// and an ``Interruption`` (SIGINT, SIGTERM) ends any wait. TCP keepalives are on by default, and every connection
/// names itself (`application_name=share-<role>@<host>`) in `pg_stat_activity`.
final class PostgresConnection {
    let url: String
    private var connection: OpaquePointer?
    /// When waits give up (replaceable: a worker's stop gets a grace of its own).
    var interruption: Interruption?
    private let application: String

    /// Seconds a connection attempt may take unless the URL says otherwise (`?connect_timeout=N`).
    /// `PG_DIAG_SQLSTATE`: the error field that holds the SQLSTATE code.
    private static let sqlStateField: Int32 = 67
    static let defaultConnectTimeout = 10
    /// Seconds to wait for the answer to one statement before the connection is
    /// given up as dead (a hung server, a dropped route).
    static let statementTimeout: Double = 60
    /// libpq settings put before the URL's own, which override them.
    static let defaults: [(String, String)] = [
        ("connect_timeout", String(defaultConnectTimeout)), ("keepalives", "1"), ("keepalives_idle", "10"),
        ("keepalives_interval", "5"), ("keepalives_count", "3"), ("tcp_user_timeout", "30000"),
    ]

    /// Connects to `url` (a libpq URI such as `postgresql://user@host:5432/db`, or
    /// `key=value` settings) as `share-<role>@<host>`.
    init(url: String, role: String, interruption: Interruption? = nil) throws(PostgresError) {
        // libpq itself first: without it nothing below can be read or tried.
        if let why = PostgresClientLibrary.unavailable { throw PostgresError(message: why, connectionLost: false) }
        DatabaseSecrets.remember(url)
        // Never a URL libpq would read as something else (a database name).
        do { try DatabaseURL.check(url) } catch {
            throw PostgresError(message: error.description, connectionLost: false)
        }
        self.url = url
        self.interruption = interruption
        self.application = "share-\(role)@\(FileSystem.hostTag)"
        try connect()
    }

    deinit { PQfinish(connection) }

    /// Drops the connection (the server ends its session and releases its locks).
    func close() {
        PQfinish(connection)
        connection = nil
    }

    private func connect() throws(PostgresError) {
        close()
        prepared = [:]
        let pairs = Self.defaults + [("application_name", application), ("dbname", url)]
        let keywords = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer { for copy in keywords + values { free(copy) } }
        connection = (keywords.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { keys in
            (values.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { vals in
                PQconnectStartParams(keys.baseAddress, vals.baseAddress, 1)
            }
        }
        guard let connection, PQstatus(connection) != CONNECTION_BAD else {
            let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "cannot allocate a connection"
            close()
            throw PostgresError(message: message.trimmingCharacters(in: .whitespacesAndNewlines), connectionLost: true)
        }
        let timeout = Double(max(2, Int(option("connect_timeout") ?? "") ?? Self.defaultConnectTimeout))
        let deadline = MonotonicClock.now() + timeout
        var state = PGRES_POLLING_WRITING
        while state != PGRES_POLLING_OK {
            switch state {
            case PGRES_POLLING_FAILED:
                let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(
                    in: .whitespacesAndNewlines)
                close()
                throw PostgresError(message: message, connectionLost: true)
            case PGRES_POLLING_READING:
                try waitForSocket(
                    .readable, deadline: deadline,
                    what:
                        "no answer from \(endpoint) within \(Int(timeout)) s while connecting (connect_timeout; set ?connect_timeout=N in the URL to change it)"
                )
            default:
                try waitForSocket(
                    .writable, deadline: deadline,
                    what:
                        "could not reach \(endpoint) within \(Int(timeout)) s (connect_timeout; set ?connect_timeout=N in the URL to change it)"
                )
            }
            state = PQconnectPoll(connection)
        }
        // Notices (e.g. "relation already exists, skipping") are not ours to print.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    /// `host:port` as libpq resolved it, for messages.
    private var endpoint: String {
        guard let connection else { return "the server" }
        let host = PQhost(connection).map { String(cString: $0) } ?? "?"
        let port = PQport(connection).map { String(cString: $0) } ?? "?"
        return "\(host):\(port)"
    }

    /// A connection setting as libpq resolved it (defaults, then the URL's).
    private func option(_ keyword: String) -> String? {
        guard let options = PQconninfo(connection) else { return nil }
        defer { PQconninfoFree(options) }
        var pointer = options
        while let name = pointer.pointee.keyword {
            if String(cString: name) == keyword { return pointer.pointee.val.map { String(cString: $0) } }
            pointer += 1
        }
        return nil
    }

    /// Waits until the socket is ready for `events`, in slices of 100 ms, giving
    /// up at `deadline` (the connection is then dropped) or when cancelled.
    private func waitForSocket(_ readiness: Polling.Readiness, deadline: Double, what: String) throws(PostgresError) {
        while true {
            let socket = PQsocket(connection)
            guard socket >= 0 else { throw lost("the connection has no socket") }
            do {
                if try Polling.wait(for: readiness, [socket], milliseconds: 100)[0] { return }
            } catch {
                throw lost("poll: \(error.message)")
            }
            if interruption?.isDue == true {
                close()
                throw PostgresError(
                    message: "interrupted while waiting for the server", connectionLost: true, interrupted: true)
            }
            if MonotonicClock.now() >= deadline { throw lost(what) }
        }
    }

    private func lost(_ message: String) -> PostgresError {
        close()
        return PostgresError(message: message, connectionLost: true)
    }

    var isConnected: Bool { connection != nil && PQstatus(connection) == CONNECTION_OK }

    /// Statements prepared on this session (text → name): a statement is parsed
    /// and planned by the server once per connection, not at every execution.
    private var prepared: [String: String] = [:]

    /// Runs one statement with `$1…` parameters (text format); returns rows by
    /// column name. A statement with parameters is prepared on first use (one
    /// round trip, once per connection) and executed by name afterwards.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> [[String: String]] {
        guard isConnected else { throw PostgresError(message: "not connected", connectionLost: true) }
        var name = prepared[sql]
        if name == nil && !parameters.isEmpty {
            let fresh = "share\(prepared.count)"
            guard PQsendPrepare(connection, fresh, sql, Int32(parameters.count), nil) == 1 else { throw failure(nil) }
            _ = try results()
            prepared[sql] = fresh
            name = fresh
        }
        let cStrings = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { for copy in cStrings { free(copy) } }
        let values = cStrings.map { UnsafePointer<CChar>($0) }
        let sent = values.withUnsafeBufferPointer { buffer in
            if let name {
                PQsendQueryPrepared(connection, name, Int32(parameters.count), buffer.baseAddress, nil, nil, 0)
            } else {
                PQsendQueryParams(connection, sql, 0, nil, nil, nil, nil, 0)
            }
        }
        guard sent == 1 else { throw failure(nil) }
        return try results()
    }

    /// Runs several statements separated by `;` (no parameters), e.g. a migration.
    func execute(_ script: String) throws(PostgresError) {
        guard isConnected else { throw PostgresError(message: "not connected", connectionLost: true) }
        guard PQsendQuery(connection, script) == 1 else { throw failure(nil) }
        _ = try results()
    }

    /// Sends what is buffered and collects every result of the statement(s) sent:
    /// the last one's rows, or the first error.
    private func results() throws(PostgresError) -> [[String: String]] {
        let deadline = MonotonicClock.now() + Self.statementTimeout
        let silence = "no answer from \(endpoint) within \(Int(Self.statementTimeout)) s"
        while true {
            let flushed = PQflush(connection)
            if flushed == 0 { break }
            if flushed < 0 { throw failure(nil) }
            try waitForSocket(.readableOrWritable, deadline: deadline, what: silence)
            guard PQconsumeInput(connection) == 1 else { throw failure(nil) }
        }
        var rows: [[String: String]] = []
        var error: PostgresError?
        while true {
            while PQisBusy(connection) == 1 {
                try waitForSocket(.readable, deadline: deadline, what: silence)
                guard PQconsumeInput(connection) == 1 else { throw failure(nil) }
            }
            guard let result = PQgetResult(connection) else { break }
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                rows = Self.rows(of: result)
            } else if error == nil {
                error = failure(result)
            }
        }
        if let error { throw error }
        return rows
    }

    private static func rows(of result: OpaquePointer) -> [[String: String]] {
        var rows: [[String: String]] = []
        let fields = PQnfields(result)
        let names = (0..<fields).map { String(cString: PQfname(result, $0)) }
        for row in 0..<PQntuples(result) {
            var values: [String: String] = [:]
            for field in 0..<fields where PQgetisnull(result, row, field) == 0 {
                values[names[Int(field)]] = String(cString: PQgetvalue(result, row, field))
            }
            rows.append(values)
        }
        return rows
    }

    private func failure(_ result: OpaquePointer?) -> PostgresError {
        let detail =
            result.map { String(cString: PQresultErrorMessage($0)) } ?? connection.map {
                String(cString: PQerrorMessage($0))
            } ?? "not connected"
        let state = result.flatMap { PQresultErrorField($0, Self.sqlStateField) }.map {
            SQLState(String(cString: $0))
        }
        return PostgresError(
            message: detail.trimmingCharacters(in: .whitespacesAndNewlines), connectionLost: !isConnected,
            sqlState: state)
    }

    /// Runs `body` in a transaction, committing on success and rolling back on error.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try query("BEGIN")
        do {
            let result = try body()
            try query("COMMIT")
            return result
        } catch {
            if isConnected { _ = try? query("ROLLBACK") }
            throw error
        }
    }

    /// Waits up to `seconds` for a NOTIFY on a channel this connection LISTENs to,
    /// or for `wake` (a pipe's read end) to become readable; true when notified.
    /// Returns early when cancelled.
    func waitForNotification(seconds: Double, wake: Int32 = -1) throws(PostgresError) -> Bool {
        guard isConnected else { throw PostgresError(message: "not connected", connectionLost: true) }
        let deadline = MonotonicClock.now() + seconds
        while MonotonicClock.now() < deadline && interruption?.flag.isCancelled != true {
            let milliseconds = Int32(min(100, max(1, (deadline - MonotonicClock.now()) * 1000)))
            guard let ready = try? Polling.wait([PQsocket(connection), wake], milliseconds: milliseconds) else {
                continue
            }
            if ready[0] {
                guard PQconsumeInput(connection) == 1 else { throw failure(nil) }
                if drainNotifications() { return true }
            }
            if ready[1] { return false }
        }
        return false
    }

    /// Consumes the notifications already received; true if there were any.
    @discardableResult
    func drainNotifications() -> Bool {
        var notified = false
        while let notification = PQnotifies(connection) {
            notified = true
            PQfreemem(notification)
        }
        return notified
    }
}

/// The queue reads its own errors (``storeFailure``).
extension PostgresError: StoreError {}
