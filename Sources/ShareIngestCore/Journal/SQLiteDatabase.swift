import CSQLite
import Foundation
import SystemCalls

/// An error from SQLite: the call, its extended result code and `sqlite3_errmsg`.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// SQLite's extended result code (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_IOERR_FSYNC`,
    /// …; the connection asks for them with `sqlite3_extended_result_codes`). Its
    /// low byte is the primary code (``Code/primary``).
    public let code: Int32
    /// `sqlite3_errmsg` and the statement or call it came from.
    public let message: String
    /// `SQLite error <code> (<name>): <message>`.
    public var description: String { "SQLite error \(code) (\(result.name)): \(message)" }

    /// The code, named.
    var result: Code { Code(code) }

    /// An SQLite result code, primary or extended, with its C name. The
    /// extended codes are macros Swift does not import (`(SQLITE_IOERR | (4<<8))`):
    /// they are spelled here from sqlite3.h, each with its name.
    struct Code: Hashable, Sendable {
        let rawValue: Int32
        init(_ rawValue: Int32) { self.rawValue = rawValue }
        private init(_ primary: Int32, _ extended: Int32) { rawValue = primary | (extended << 8) }

        /// The primary result code (`SQLITE_IOERR` for `SQLITE_IOERR_FSYNC`).
        var primary: Code { Code(rawValue & 0xFF) }

        static let busy = Code(SQLITE_BUSY)
        static let locked = Code(SQLITE_LOCKED)
        static let noMemory = Code(SQLITE_NOMEM)
        static let readOnly = Code(SQLITE_READONLY)
        static let ioError = Code(SQLITE_IOERR)
        static let corrupt = Code(SQLITE_CORRUPT)
        static let full = Code(SQLITE_FULL)
        static let cannotOpen = Code(SQLITE_CANTOPEN)
        static let tooBig = Code(SQLITE_TOOBIG)
        static let constraint = Code(SQLITE_CONSTRAINT)
        static let mismatch = Code(SQLITE_MISMATCH)
        /// `SQLITE_IOERR_READ`
        static let ioErrorRead = Code(SQLITE_IOERR, 1)
        /// `SQLITE_IOERR_SHORT_READ`
        static let ioErrorShortRead = Code(SQLITE_IOERR, 2)
        /// `SQLITE_IOERR_WRITE`
        static let ioErrorWrite = Code(SQLITE_IOERR, 3)
        /// `SQLITE_IOERR_FSYNC`
        static let ioErrorFsync = Code(SQLITE_IOERR, 4)
        /// `SQLITE_BUSY_SNAPSHOT`
        static let busySnapshot = Code(SQLITE_BUSY, 2)
        /// `SQLITE_READONLY_DBMOVED`
        static let readOnlyMoved = Code(SQLITE_READONLY, 4)
        /// `SQLITE_CONSTRAINT_FOREIGNKEY`
        static let constraintForeignKey = Code(SQLITE_CONSTRAINT, 3)
        /// `SQLITE_CONSTRAINT_NOTNULL`
        static let constraintNotNull = Code(SQLITE_CONSTRAINT, 5)
        /// `SQLITE_CONSTRAINT_PRIMARYKEY`
        static let constraintPrimaryKey = Code(SQLITE_CONSTRAINT, 6)
        /// `SQLITE_CONSTRAINT_UNIQUE`
        static let constraintUnique = Code(SQLITE_CONSTRAINT, 8)

        private static let names: [Code: String] = [
            busy: "SQLITE_BUSY", locked: "SQLITE_LOCKED", noMemory: "SQLITE_NOMEM", readOnly: "SQLITE_READONLY",
            ioError: "SQLITE_IOERR",
            corrupt: "SQLITE_CORRUPT", full: "SQLITE_FULL", cannotOpen: "SQLITE_CANTOPEN", tooBig: "SQLITE_TOOBIG",
            constraint: "SQLITE_CONSTRAINT",
            mismatch: "SQLITE_MISMATCH", ioErrorRead: "SQLITE_IOERR_READ", ioErrorShortRead: "SQLITE_IOERR_SHORT_READ",
            ioErrorWrite: "SQLITE_IOERR_WRITE",
            ioErrorFsync: "SQLITE_IOERR_FSYNC", busySnapshot: "SQLITE_BUSY_SNAPSHOT",
            readOnlyMoved: "SQLITE_READONLY_DBMOVED",
            constraintForeignKey: "SQLITE_CONSTRAINT_FOREIGNKEY", constraintNotNull: "SQLITE_CONSTRAINT_NOTNULL",
            constraintPrimaryKey: "SQLITE_CONSTRAINT_PRIMARYKEY", constraintUnique: "SQLITE_CONSTRAINT_UNIQUE",
        ]

        /// Its C name; an extended code without one here is named by its primary code's.
        var name: String {
            if let name = Self.names[self] { return name }
            if let name = Self.names[primary] { return "\(name) (extended \(rawValue >> 8))" }
            return String(cString: sqlite3_errstr(rawValue))
        }
    }

    /// What the error means for a record (``StoreFailure``): the journal is a
    /// local file, never unreachable; it refuses a record for what it holds
    /// (too big, a constraint, a type it cannot keep); its disk may be full;
    /// any other error is its own (I/O, locked, damaged).
    var storeFailure: StoreFailure {
        if result.primary == .full { return .full }
        return [Code.tooBig, .constraint, .mismatch].contains(result.primary) ? .refused : .unavailable
    }
}

/// `SQLITE_TRANSIENT` is a macro (a cast of -1): SQLite copies bound values.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// One SQLite connection (owns a `sqlite3*`, closed with `sqlite3_close_v2`),
/// used by many threads one at a time: every call takes the connection's lock.
///
/// Statements are prepared once per connection and kept (``statement(_:)``):
/// a batch runs the same few statements for every item, and parsing and
/// planning one each time cost more than running it.
final class SQLiteDatabase: @unchecked Sendable {
    private var handle: OpaquePointer?
    /// Prepared statements by their SQL, and each one's column names.
    private var prepared: [String: (statement: OpaquePointer, columns: [String])] = [:]
    /// More distinct statements than a journal runs: a cache this full is
    /// emptied of all but the running ones (a statement built for one call,
    /// such as a list of values spelled out, is not kept for ever).
    static let preparedLimit = 64
    /// Recursive: a transaction holds it across the statements it runs, which
    /// take it too (Mutex is not reentrant).
    private let lock = NSRecursiveLock()

    /// Opens (creating) the database at `path` in WAL mode, waiting up to
    /// `busyTimeout` ms for other processes' locks.
    init(path: String, busyTimeout: Int32 = 30_000) throws(SQLiteError) {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        // Created owner-only here (SQLite would make it 0644); its -wal and -shm
        // files take the database's mode.
        _ = try? FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(handle)
            throw SQLiteError(
                code: handle.map { sqlite3_extended_errcode($0) } ?? status, message: "\(path): \(message)")
        }
        sqlite3_busy_timeout(handle, busyTimeout)
        // Errors name what failed (SQLITE_IOERR_FSYNC, not SQLITE_IOERR).
        sqlite3_extended_result_codes(handle, 1)
        // Switching a new database to WAL needs an exclusive lock, and SQLite
        // reports SQLITE_BUSY for it at once, without calling the busy handler:
        // two processes creating the same journal would fail. Retry instead.
        let deadline = MonotonicClock.now() + Double(busyTimeout) / 1000
        while true {
            do {
                try execute("PRAGMA journal_mode=WAL")
                break
            } catch
                where [SQLiteError.Code.busy, .locked].contains(error.result.primary) && MonotonicClock.now() < deadline
            {
                MonotonicClock.sleep(0.005)
            }
        }
        try execute("PRAGMA foreign_keys=ON")
        // 512 KiB of pages cached per connection, not SQLite's 2 MiB: the journal's
        // pages are in the kernel's cache anyway (a miss is one pread), and the
        // parent's peak is 1 MiB lower on 1,000 small files (BENCHMARKS.md, "The
        // parent's peak under 40 MiB"), with the same CPU on 20,000.
        try execute("PRAGMA cache_size=-512")
        try setDurable(false)
    }

    deinit {
        for (statement, _) in prepared.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// The prepared statement for `sql` and its column names, prepared the
    /// first time it is asked for, and whether it is the cached one. Called
    /// with the lock held; the caller resets a cached statement after use and
    /// finalizes one that is not (the same statement asked for again while
    /// it runs, from the body of its own scan, is prepared anew).
    private func statement(_ sql: String) throws(SQLiteError) -> (
        statement: OpaquePointer, columns: [String], cached: Bool
    ) {
        let cached = prepared[sql]
        if let cached, sqlite3_stmt_busy(cached.statement) == 0 { return (cached.statement, cached.columns, true) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            let error = lastError()
            sqlite3_finalize(statement)
            throw error
        }
        let columns = (0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) }
        if cached != nil { return (statement, columns, false) }
        if prepared.count >= Self.preparedLimit {
            // A statement still running (its scan's body is preparing this one) is kept.
            for (key, old) in prepared where sqlite3_stmt_busy(old.statement) == 0 {
                sqlite3_finalize(old.statement)
                prepared[key] = nil
            }
        }
        prepared[sql] = (statement, columns)
        return (statement, columns, true)
    }

    /// `synchronous=FULL` (each commit fsynced: used for the commits a crash must
    /// never lose) or `NORMAL` (WAL: a process crash loses nothing; a power loss
    /// may lose the last progress records, which are then redone).
    func setDurable(_ durable: Bool) throws(SQLiteError) {
        try scan(durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL") { _ in }
    }

    func execute(_ sql: String) throws(SQLiteError) {
        lock.lock()
        defer { lock.unlock() }
        var error: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &error)
        if status != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "unknown"
            sqlite3_free(error)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message)
        }
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE`: the write lock is taken at
    /// once, so two processes' claims are serialized), committing on success.
    @discardableResult
    func transaction<T>(durable: Bool = false, _ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if durable { try setDurable(true) }
        defer { if durable { try? setDurable(false) } }
        try scan("BEGIN IMMEDIATE") { _ in }
        do {
            let result = try body()
            try scan("COMMIT") { _ in }
            return result
        } catch {
            try? scan("ROLLBACK") { _ in }
            throw error
        }
    }

    /// Runs a statement with bound values; returns the rows.
    @discardableResult
    func query(_ sql: String, _ values: [StoreValue] = []) throws(SQLiteError) -> [SQLiteRow] {
        var rows: [SQLiteRow] = []
        try scan(sql, values) { rows.append($0) }
        return rows
    }

    /// Runs a statement with bound values and hands `body` each row as SQLite
    /// steps to it, holding none: a million rows in constant memory.
    func scan(_ sql: String, _ values: [StoreValue] = [], _ body: (SQLiteRow) -> Void) throws(SQLiteError) {
        lock.lock()
        defer { lock.unlock() }
        let (statement, columns, cached) = try statement(sql)
        // Ready for its next use, whatever this one ends with (its bound text
        // is SQLite's own copy, released here).
        defer {
            if cached {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            } else {
                sqlite3_finalize(statement)
            }
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(statement, index)
            case .integer(let v): status = sqlite3_bind_int64(statement, index, v)
            case .real(let v): status = sqlite3_bind_double(statement, index, v)
            case .text(let v): status = sqlite3_bind_text(statement, index, v, -1, transient)
            }
            guard status == SQLITE_OK else { throw lastError() }
        }
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw lastError() }
            var values: [String: StoreValue] = [:]
            values.reserveCapacity(columns.count)
            for (offset, name) in columns.enumerated() {
                let column = Int32(offset)
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: values[name] = .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: values[name] = .real(sqlite3_column_double(statement, column))
                case SQLITE_TEXT: values[name] = .text(String(cString: sqlite3_column_text(statement, column)))
                default: values[name] = .null
                }
            }
            body(SQLiteRow(columns: values))
        }
    }

    private func lastError() -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// One result row, by column name.
struct SQLiteRow: StoreRow {
    let columns: [String: StoreValue]

    func text(_ name: String) -> String? { columns[name]?.text }
}

/// The journal reads its own errors (``storeFailure``).
extension SQLiteError: StoreError {}
