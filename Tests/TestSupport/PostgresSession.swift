import Foundation

/// One psql session kept open across statements: a test holds a transaction
/// (and its row locks) in it while the code under test runs, so two of the
/// code's statements are made to wait for the same moment (observed through
/// `pg_blocking_pids`, never guessed with a sleep), then lets them go.
public final class PostgresSession: @unchecked Sendable {
    /// The `application_name` the session connects with, to find it in `pg_stat_activity`.
    public let name: String
    private let process = Process()
    private let input: FileHandle
    private let files = TemporaryDirectory("psql-session")

    /// Connects to `url` (a `postgresql://` URL without query) as `name`.
    public init(url: String, name: String) throws {
        self.name = name
        let binaries = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
            .map { "/usr/lib/postgresql/\($0)/bin/psql" }
            .filter { FileManager.default.isExecutableFile(atPath: $0) }
        process.executableURL = URL(fileURLWithPath: binaries.last ?? "/usr/bin/psql")
        // ON_ERROR_STOP: a failed statement ends the session (and so its
        // transaction), which the test sees as a lock never held.
        process.arguments = ["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", url + "?application_name=" + name]
        let pipe = Pipe()
        input = pipe.fileHandleForWriting
        process.standardInput = pipe
        let log = files.file("output")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
    }

    deinit {
        try? input.close()
        guard process.processIdentifier != 0 else { return }  // never started
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Sends statements (psql runs each as soon as it has read it).
    public func send(_ sql: String) throws {
        try input.write(contentsOf: Data((sql + "\n").utf8))
    }

    /// True while psql runs (it stops at the first error).
    public var isRunning: Bool { process.isRunning }

    /// What psql printed so far (results and errors).
    public var output: String { (try? String(contentsOfFile: files.file("output"), encoding: .utf8)) ?? "" }

    /// Ends the session: sends `last` (e.g. `COMMIT;`), closes its input and waits
    /// for psql to exit; returns its exit status.
    @discardableResult
    public func finish(_ last: String = "") throws -> Int32 {
        if !last.isEmpty { try send(last) }
        try input.close()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
