import Testing

@testable import ShareIngestCore

/// How each store reads its own errors as a ``StoreFailure`` (issue 53,
/// difference 3; issue 60: each store maps its own errors). The lifecycle
/// decides from the reading alone: a record the store refuses costs its item an
/// attempt, while the store's own trouble (away, unavailable, full) parks the
/// item and stops its holder. So a server's trouble read as the record's fault
/// would fail items that a restart or more room would have delivered.
@Suite struct StoreFailureReadingTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let sqlState: String?
        let connectionLost: Bool
        let reading: StoreFailure
        var testDescription: String { "\(sqlState ?? "no SQLSTATE")\(connectionLost ? ", connection lost" : "")" }
    }

    static let rows: [Row] = [
        Row(sqlState: nil, connectionLost: true, reading: .unreachable),
        Row(sqlState: nil, connectionLost: false, reading: .unavailable),
        Row(sqlState: "08006", connectionLost: false, reading: .unreachable),  // connection failure
        Row(sqlState: "57P01", connectionLost: false, reading: .unreachable),  // admin shutdown
        Row(sqlState: "57014", connectionLost: false, reading: .unavailable),  // query canceled (a timeout)
        Row(sqlState: "53100", connectionLost: false, reading: .full),  // disk full
        Row(sqlState: "53200", connectionLost: false, reading: .unavailable),  // out of memory
        Row(sqlState: "58030", connectionLost: false, reading: .unavailable),  // I/O error
        Row(sqlState: "40001", connectionLost: false, reading: .unavailable),  // serialization failure
        Row(sqlState: "40P01", connectionLost: false, reading: .unavailable),  // deadlock
        Row(sqlState: "22P05", connectionLost: false, reading: .refused),  // untranslatable character
        Row(sqlState: "23505", connectionLost: false, reading: .refused),  // unique violation
        Row(sqlState: "54000", connectionLost: false, reading: .refused),  // program limit exceeded (too big)
    ]

    @Test(arguments: rows) func postgreSQLReadsItsOwnErrors(_ row: Row) {
        let error = PostgresError(
            message: "injected", connectionLost: row.connectionLost, sqlState: row.sqlState.map { SQLState($0) })
        #expect(StoreFailure(error) == row.reading, "\(row.testDescription) read as \(StoreFailure(error))")
    }
}
