import Foundation

/// A throwaway PostgreSQL cluster for one test (`scripts/pg-throwaway.sh`):
/// initdb into a temporary folder, served on a loopback port; stopped and
/// removed when released.
public final class PostgresServer: @unchecked Sendable {
    public let directory: TemporaryDirectory
    public private(set) var port: Int
    public private(set) var url = ""

    /// Starts a new cluster, or throws (with the script's output) if it cannot.
    /// The port is random, below Linux's ephemeral range (32768–60999), where no
    /// client connection of another test can hold it; if another server of a
    /// test running at the same time took it first, another port is tried.
    public init() throws {
        directory = TemporaryDirectory("postgres")
        port = Self.randomPort()
        var attempts = 1
        while true {
            do throws(ServerError) {
                try start()
                return
            } catch {
                guard attempts < 5, error.output.contains("Address already in use") else { throw error }
                attempts += 1
                port = Self.randomPort()
            }
        }
    }

    private static func randomPort() -> Int { 20_000 + Int.random(in: 0..<12_000) }

    deinit { stop() }

    public func start() throws(ServerError) {
        let result: (status: Int32, output: String)
        do { result = try Self.script(["start", directory.path, String(port)]) } catch {
            throw ServerError(action: "start", output: "\(error)")
        }
        guard result.status == 0 else { throw ServerError(action: "start", output: result.output) }
        url = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func stop() { _ = try? Self.script(["stop", directory.path]) }

    /// The URL of `database` on this server as `role` (trust authentication: no password).
    public func url(role: String, database: String) -> String { "postgresql://\(role)@127.0.0.1:\(port)/\(database)" }

    /// Runs `sql` (several statements allowed) as the superuser in `database`;
    /// returns psql's output, or throws with it.
    @discardableResult
    public func sql(_ sql: String, database: String = "postgres") throws -> String {
        let result = try Self.script(["sql", String(port), database, sql])
        guard result.status == 0 else { throw ServerError(action: "run SQL on", output: result.output) }
        return result.output
    }

    public struct ServerError: Error, CustomStringConvertible {
        let action: String
        let output: String
        public var description: String { "cannot \(action) PostgreSQL: \(output)" }
    }

    /// Runs the script with its output in a file: the server it starts outlives it
    /// and would keep a pipe open forever.
    static func script(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let log = TemporaryDirectory("pg-script")
        let outputPath = log.file("output")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Fixtures.packageRoot.appendingPathComponent("scripts/pg-throwaway.sh").path] + arguments
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return (process.isRunning ? -1 : process.terminationStatus, text)
    }

    /// A server on which the role `pwuser` must give `password` over TCP
    /// (scram-sha-256, IPv4 and IPv6), owning the empty database `pwdb`.
    public static func requiringPassword(_ password: String) throws -> PostgresServer {
        let server = try PostgresServer()
        try server.sql("CREATE ROLE pwuser LOGIN PASSWORD '\(password)';")
        try server.sql("CREATE DATABASE pwdb OWNER pwuser;")
        let hba = server.directory.path + "/data/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("host all pwuser 127.0.0.1/32 scram-sha-256\nhost all pwuser ::1/128 scram-sha-256\n" + rules)
            .write(toFile: hba, atomically: false, encoding: .utf8)
        try server.sql("SELECT pg_reload_conf();")
        return server
    }
}
