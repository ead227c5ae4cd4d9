import Foundation
import TestSupport
import Testing

/// No password on the command line: `--db` takes a URL without one, and
/// libpq's own `PGPASSWORD`, `PGPASSFILE` and `PGSERVICE` supply it (each tried
/// against a real server that demands a password); `--db-file FILE` reads the
/// URL from a file; a `--db` URL with a password gets a warning; and no message
/// shows the password, not even libpq's echo of a URL it cannot parse.
@Suite(.serialized) struct DatabasePasswordTests {
    static let password = "Pw-\(UUID().uuidString.prefix(8))"

    /// A server on which `pwuser` must give its password over TCP (scram), owning `pwdb`.
    static func server() throws -> PostgresServer { try PostgresServer.requiringPassword(password) }

    static func url(_ server: PostgresServer, password: String? = nil) -> String {
        "postgresql://pwuser\(password.map { ":\($0)" } ?? "")@127.0.0.1:\(server.port)/pwdb"
    }

    @Test func libpqSuppliesThePasswordFromItsOwnEnvironment() throws {
        let server = try Self.server()
        let work = TemporaryDirectory("pgpass")
        let url = Self.url(server)
        // Without one, the server refuses, and says so without any password.
        let refused = try ShareProcess.run(
            ["db", "migrate", "--db", url], environment: ["PGPASSWORD": "", "PGPASSFILE": "/nonexistent"])
        #expect(refused.status != 0, "\(refused.stderr)")
        #expect(refused.stderr.contains("password"), "\(refused.stderr)")
        // PGPASSWORD.
        let migrated = try ShareProcess.run(["db", "migrate", "--db", url], environment: ["PGPASSWORD": Self.password])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(!migrated.stderr.contains("warning"), "\(migrated.stderr)")
        // PGPASSFILE.
        let passfile = work.file("pgpass")
        try "127.0.0.1:\(server.port):pwdb:pwuser:\(Self.password)\n".write(
            toFile: passfile, atomically: true, encoding: .utf8)
        chmod(passfile, 0o600)
        let status = try ShareProcess.run(["status", "--db", url], environment: ["PGPASSFILE": passfile])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(!status.stdout.contains(Self.password) && !status.stderr.contains(Self.password))
        // PGSERVICE (a service file that holds the whole connection).
        let services = work.file("services")
        try "[share]\nhost=127.0.0.1\nport=\(server.port)\ndbname=pwdb\nuser=pwuser\npassword=\(Self.password)\n".write(
            toFile: services, atomically: true, encoding: .utf8)
        let service = try ShareProcess.run(
            ["status", "--db", "postgresql://"], environment: ["PGSERVICEFILE": services, "PGSERVICE": "share"])
        #expect(service.status == 0, "\(service.stderr)")
        let named = try ShareProcess.run(["status", "--db", "service=share"], environment: ["PGSERVICEFILE": services])
        #expect(named.status == 0, "\(named.stderr)")
    }

    @Test func theURLComesFromAFileAndOneOnTheCommandLineIsWarnedAbout() throws {
        let server = try Self.server()
        let work = TemporaryDirectory("dbfile")
        let file = work.file("db-url")
        try "# the share database\n\(Self.url(server, password: Self.password))\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let migrated = try ShareProcess.run(["db", "migrate", "--db-file", file])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let status = try ShareProcess.run(["status", "--db-file", file, "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(
            !status.stderr.contains("warning") && !status.stdout.contains(Self.password),
            "\(status.stdout)\(status.stderr)")

        let onCommandLine = try ShareProcess.run(["status", "--db", Self.url(server, password: Self.password)])
        #expect(onCommandLine.status == 0, "\(onCommandLine.stderr)")
        #expect(
            onCommandLine.stderr.contains(
                "warning: the --db URL holds a password, which every local user can read in /proc/PID/cmdline"),
            "\(onCommandLine.stderr)")
        #expect(!onCommandLine.stderr.contains(Self.password) && !onCommandLine.stdout.contains(Self.password))

        let both = try ShareProcess.run(["status", "--db", Self.url(server), "--db-file", file])
        #expect(both.status == 64 && both.stderr.contains("give one of them"), "\(both.stderr)")
        let missing = try ShareProcess.run(["status", "--db-file", work.file("nothing")])
        #expect(
            missing.status == 64 && missing.stderr.contains("--db-file \(work.file("nothing")): "), "\(missing.stderr)")
    }

    /// Wrong passwords and URLs libpq cannot parse (it echoes the bad piece):
    /// the password is in no message.
    @Test func noMessageShowsThePassword() throws {
        let server = try Self.server()
        let wrong = try ShareProcess.run(["status", "--db", Self.url(server, password: "Wrong-\(Self.password)")])
        #expect(wrong.status != 0 && wrong.stderr.contains("password authentication failed"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains(Self.password), "\(wrong.stderr)")
        let garbled = "Pw%zz\(Self.password)"
        let unparsable = try ShareProcess.run([
            "status", "--db", "postgresql://pwuser:\(garbled)@127.0.0.1:\(server.port)/pwdb",
        ])
        #expect(unparsable.status != 0, "\(unparsable.stderr)")
        #expect(
            !unparsable.stderr.contains(Self.password) && !unparsable.stderr.contains(garbled), "\(unparsable.stderr)")
        let settings = try ShareProcess.run([
            "status", "--db",
            "host=127.0.0.1 port=\(server.port) dbname=pwdb user=pwuser password=\(Self.password) bogus=1",
        ])
        #expect(settings.status != 0, "\(settings.stderr)")
        #expect(!settings.stderr.contains(Self.password), "\(settings.stderr)")
    }
}
