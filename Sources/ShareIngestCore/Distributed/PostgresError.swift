import CPostgres
import Foundation
import Glibc
import ShareManifest
import Synchronization
import SystemCalls

/// An error from PostgreSQL or libpq (`PQerrorMessage`, `PQresultErrorMessage`).
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What the server or libpq said.
    public let message: String
    /// True when the connection itself is gone (server restarted, network, no
    /// answer in time): reconnect and retry.
    public let connectionLost: Bool
    /// The server's SQLSTATE, when it sent one.
    let sqlState: SQLState?
    /// The wait was given up because the process was asked to stop (SIGINT, SIGTERM).
    let interrupted: Bool

    init(message: String, connectionLost: Bool, sqlState: SQLState? = nil, interrupted: Bool = false) {
        self.message = DatabaseSecrets.scrub(Self.oneLine(message))
        self.connectionLost = connectionLost
        self.sqlState = sqlState
        self.interrupted = interrupted
    }

    /// libpq's lines (`…failed: Connection refused\n\tIs the server running…`)
    /// as one sentence of parts: each trimmed, joined by `; `, so no tab or
    /// line break reaches a log line (where it would be shown escaped).
    static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }.joined(separator: "; ")
    }

    /// The message, prefixed with "PostgreSQL".
    public var description: String { "PostgreSQL: \(message)" }

    /// What the error means for a record (``StoreFailure``): a lost connection
    /// or a server shutting down is the server away; a value the server cannot
    /// keep (a data exception, a constraint, a limit) is the record's; a full
    /// disk is the server's want of space; anything else (out of memory, I/O,
    /// a timeout, a conflict) is the server's trouble, not the record's.
    var storeFailure: StoreFailure {
        if connectionLost { return .unreachable }
        guard let sqlState else { return .unavailable }
        if sqlState == .queryCanceled { return .unavailable }
        if sqlState == .diskFull { return .full }
        switch sqlState.errorClass {
        case "08", "57": return .unreachable
        case "22", "23", "54": return .refused
        default: return .unavailable
        }
    }
}

/// A PostgreSQL SQLSTATE (Appendix A of its manual): the codes share reads by
/// name, any other by its five characters.
enum SQLState: Hashable, Sendable, CustomStringConvertible {
    /// `42P01` undefined_table: the schema is not there (`share db migrate`).
    case undefinedTable
    /// `42501` insufficient_privilege: the role may not do it.
    case insufficientPrivilege
    /// `23505` unique_violation
    case uniqueViolation
    /// `22P05` untranslatable_character (a `\u0000` in a `jsonb` value)
    case untranslatableCharacter
    /// `54000` program_limit_exceeded (a value too large to keep)
    case programLimitExceeded
    /// `53100` disk_full
    case diskFull
    /// `53200` out_of_memory
    case outOfMemory
    /// `57014` query_canceled (a statement timeout)
    case queryCanceled
    /// `57P01` admin_shutdown (the server is stopping)
    case adminShutdown
    /// `40001` serialization_failure
    case serializationFailure
    /// `40P01` deadlock_detected
    case deadlockDetected
    /// Any other code.
    case other(String)

    private static let named: [(SQLState, String)] = [
        (.undefinedTable, "42P01"), (.insufficientPrivilege, "42501"), (.uniqueViolation, "23505"),
        (.untranslatableCharacter, "22P05"),
        (.programLimitExceeded, "54000"), (.diskFull, "53100"), (.outOfMemory, "53200"), (.queryCanceled, "57014"),
        (.adminShutdown, "57P01"),
        (.serializationFailure, "40001"), (.deadlockDetected, "40P01"),
    ]

    /// The state the server sent as `code`.
    init(_ code: String) { self = Self.named.first { $0.1 == code }?.0 ?? .other(code) }

    /// Its five characters.
    var code: String {
        if case .other(let code) = self { return code }
        return Self.named.first { $0.0 == self }?.1 ?? ""
    }

    /// Its class: the first two characters (`22` data exception, `23` integrity
    /// constraint violation, `53` insufficient resources, …).
    var errorClass: String { String(code.prefix(2)) }

    var description: String { code }
}
