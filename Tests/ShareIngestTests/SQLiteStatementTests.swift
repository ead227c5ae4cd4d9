import Foundation
import ShareIngest
import TestSupport
import Testing

@testable import ShareIngestCore

/// The journal's connection keeps its prepared statements: each one gives the
/// same rows as a fresh one would, whatever ran before it, including the same
/// statement run again inside its own scan, a statement that failed, and more
/// distinct statements than the cache holds.
@Suite struct SQLiteStatementTests {
    func database(in directory: TemporaryDirectory) throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: directory.path + "/test.sqlite")
        try database.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
        try database.transaction {
            for k in 1...5 {
                try database.query("INSERT INTO t (k, v) VALUES (?, ?)", [.integer(Int64(k)), .text("v\(k)")])
            }
        }
        return database
    }

    @Test func aStatementRunAgainGivesItsRowsWithItsNewValues() throws {
        let directory = TemporaryDirectory()
        let database = try database(in: directory)
        let sql = "SELECT v FROM t WHERE k >= ? ORDER BY k"
        #expect(try database.query(sql, [.integer(4)]).map { $0.text("v") } == ["v4", "v5"])
        #expect(try database.query(sql, [.integer(2)]).map { $0.text("v") } == ["v2", "v3", "v4", "v5"])
        // A scan stopped by nothing but its rows' end leaves no read open: a
        // write from the same connection afterwards is committed and seen.
        try database.transaction { try database.query("UPDATE t SET v = 'w5' WHERE k = 5") }
        #expect(try database.query(sql, [.integer(5)]).map { $0.text("v") } == ["w5"])
    }

    @Test func theSameStatementInsideItsOwnScanRunsApart() throws {
        let directory = TemporaryDirectory()
        let database = try database(in: directory)
        let sql = "SELECT k, v FROM t WHERE k >= ? ORDER BY k"
        var pairs: [String] = []
        try database.scan(sql, [.integer(4)]) { outer in
            let inner = (try? database.query(sql, [.integer(5)]).compactMap { $0.text("v") }) ?? ["failed"]
            pairs.append("\(outer.text("v") ?? "?"):\(inner.joined(separator: ","))")
        }
        #expect(pairs == ["v4:v5", "v5:v5"])
        #expect(try database.query(sql, [.integer(1)]).count == 5)
    }

    @Test func aFailedStatementLeavesTheNextOneWhole() throws {
        let directory = TemporaryDirectory()
        let database = try database(in: directory)
        let insert = "INSERT INTO t (k, v) VALUES (?, ?)"
        #expect(throws: SQLiteError.self) { try database.query(insert, [.integer(1), .text("again")]) }
        try database.query(insert, [.integer(6), .text("v6")])
        #expect(try database.query("SELECT v FROM t WHERE k = ?", [.integer(6)]).map { $0.text("v") } == ["v6"])
        #expect(throws: SQLiteError.self) { try database.query("SELECT nothing FROM nowhere") }
    }

    /// Errors carry SQLite's extended code, named, and say what they mean for
    /// a record: a row the journal refuses (a key it has) is the record's, a
    /// journal that cannot be written (read-only) is the journal's trouble.
    @Test func errorsCarryTheirExtendedCodeAndWhatTheyMeanForARecord() throws {
        let directory = TemporaryDirectory()
        let database = try database(in: directory)
        do {
            try database.query("INSERT INTO t (k, v) VALUES (?, ?)", [.integer(1), .text("again")])
            Issue.record("a duplicate key was accepted")
        } catch {
            #expect(error.result == .constraintPrimaryKey && error.result.primary == .constraint)
            #expect(error.description.hasPrefix("SQLite error 1555 (SQLITE_CONSTRAINT_PRIMARYKEY): "), "\(error)")
            #expect(StoreFailure(error) == .refused)
        }
        try database.execute("PRAGMA query_only = 1")
        do {
            try database.query("INSERT INTO t (k, v) VALUES (?, ?)", [.integer(9), .text("v9")])
            Issue.record("a read-only connection wrote")
        } catch {
            #expect(error.result.primary == .readOnly, "\(error)")
            #expect(StoreFailure(error) == .unavailable)
        }
    }

    @Test func moreStatementsThanTheCacheHoldsAllRun() throws {
        let directory = TemporaryDirectory()
        let database = try database(in: directory)
        for round in 0..<2 {
            for k in 0..<(SQLiteDatabase.preparedLimit * 2) {
                let rows = try database.query("SELECT v, \(k) AS n FROM t WHERE k = ?", [.integer(Int64(1 + k % 5))])
                #expect(rows.map { $0.text("v") } == ["v\(1 + k % 5)"], "round \(round), statement \(k)")
                #expect(rows.first?.columns["n"] == .integer(Int64(k)))
            }
        }
    }
}
