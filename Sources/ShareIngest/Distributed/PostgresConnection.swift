import CPostgres
import Foundation
import Glibc

/// An error from PostgreSQL or libpq (`PQerrorMessage`, `PQresultErrorMessage`).
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What the server or libpq said.
    public let message: String
    /// True when the connection itself is gone (server restarted, network): reconnect and retry.
    public let connectionLost: Bool
    /// The message, prefixed with "PostgreSQL".
    public var description: String { "PostgreSQL: \(message)" }
}

/// One libpq connection (owns a `PGconn*`, closed with `PQfinish`). Not shared
/// between threads: each worker thread has its own.
final class PostgresConnection {
    let url: String
    private var connection: OpaquePointer?

    /// Connects to `url` (a libpq URI such as `postgresql://user@host:5432/db`).
    init(url: String) throws(PostgresError) {
        self.url = url
        try connect()
    }

    deinit { PQfinish(connection) }

    private func connect() throws(PostgresError) {
        PQfinish(connection)
        connection = PQconnectdb(url)
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "cannot allocate a connection"
            throw PostgresError(message: message.trimmingCharacters(in: .whitespacesAndNewlines), connectionLost: true)
        }
        // Notices (e.g. "relation already exists, skipping") are not ours to print.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    /// Reconnects after the server went away, retrying for up to `seconds`.
    func reconnect(for seconds: Double = 60) throws(PostgresError) {
        let deadline = Date().addingTimeInterval(seconds)
        var lastError = PostgresError(message: "not connected", connectionLost: true)
        while Date() < deadline {
            do {
                try connect()
                return
            } catch {
                lastError = error
                usleep(250_000)
            }
        }
        throw lastError
    }

    var isConnected: Bool { PQstatus(connection) == CONNECTION_OK }

    /// Runs one statement with `$1…` parameters (text format); returns rows by column name.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> [[String: String]] {
        let cStrings = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { cStrings.forEach { free($0) } }
        let values = cStrings.map { UnsafePointer<CChar>($0) }
        let result = values.withUnsafeBufferPointer { buffer in
            PQexecParams(connection, sql, Int32(parameters.count), nil, buffer.baseAddress, nil, nil, 0)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let detail = result.map { String(cString: PQresultErrorMessage($0)) } ?? String(cString: PQerrorMessage(connection))
            throw PostgresError(message: detail.trimmingCharacters(in: .whitespacesAndNewlines), connectionLost: !isConnected)
        }
        var rows: [[String: String]] = []
        let fields = PQnfields(result)
        for row in 0..<PQntuples(result) {
            var values: [String: String] = [:]
            for field in 0..<fields where PQgetisnull(result, row, field) == 0 {
                values[String(cString: PQfname(result, field))] = String(cString: PQgetvalue(result, row, field))
            }
            rows.append(values)
        }
        return rows
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

    /// Waits up to `seconds` for a NOTIFY on a channel this connection LISTENs to.
    func waitForNotification(seconds: Double) -> Bool {
        let socket = PQsocket(connection)
        guard socket >= 0 else {
            usleep(useconds_t(seconds * 1_000_000))
            return false
        }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(seconds * 1000))
        PQconsumeInput(connection)
        var notified = false
        while let notification = PQnotifies(connection) {
            notified = true
            PQfreemem(notification)
        }
        return notified
    }
}
