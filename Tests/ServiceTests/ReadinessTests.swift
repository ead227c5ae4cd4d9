import Foundation
import Glibc
import TestSupport
import Testing

/// Readiness that is true (issue 52): `share watch --db` checks the database
/// (reachable, the password accepted, the schema at this share's version)
/// before it tells the service manager READY=1, and fails at start, exit 69,
/// as `share worker` does; observed on 68f4c5d: READY=1 and watchdog pings
/// while /readyz said "password authentication failed", and exit 2 only when
/// the first drop came.
@Suite(.serialized) struct ReadinessTests {
    static let password = "Pw-\(UUID().uuidString.prefix(8))"

    /// A server on which `pwuser` must give its password over TCP (scram), owning `pwdb`.
    static func server() throws -> PostgresServer { try PostgresServer.requiringPassword(password) }

    /// Every datagram the socket has received by now.
    static func drain(_ socket: SystemdTests.NotifySocket) -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(socket.fd, &buffer, buffer.count, 0)
            guard n > 0 else { return messages }
            messages.append(String(decoding: buffer.prefix(n), as: UTF8.self))
        }
    }

    @Test func aWatcherWithAWrongPasswordFailsAtStartAndIsNeverReady() throws {
        let server = try Self.server()
        let url = "postgresql://pwuser@127.0.0.1:\(server.port)/pwdb"
        #expect(
            try ShareProcess.run(["db", "migrate", "--db", url], environment: ["PGPASSWORD": Self.password]).status == 0
        )
        let work = TemporaryDirectory("ready-watch")
        try FileManager.default.createDirectory(atPath: work.file("inbox/drop"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: work.file("inbox/drop/photo.jpg"))
        let notify = try SystemdTests.NotifySocket()
        let arguments = [
            "watch", work.file("inbox"), "--container", work.file("c"), "--db", url, "--isolation", "none",
        ]
        let watch = try ShareProcess.run(
            arguments, environment: ["PGPASSWORD": "wrong-\(Self.password)", "NOTIFY_SOCKET": notify.path])
        #expect(watch.status == 69, "\(watch.stderr)")
        #expect(watch.stderr.contains("password authentication failed"), "\(watch.stderr)")
        #expect(!watch.stderr.contains(Self.password), "\(watch.stderr)")
        let messages = Self.drain(notify)
        #expect(!messages.contains { $0.contains("READY=1") }, "READY=1 was sent: \(messages)")
        // Nothing was touched: the drop is where it was, no container was made.
        #expect(FileManager.default.fileExists(atPath: work.file("inbox/drop/photo.jpg")))
        #expect(
            !FileManager.default.fileExists(atPath: work.file("inbox/.processing"))
                && !FileManager.default.fileExists(atPath: work.file("c")))
        // As the worker does with the same password.
        let worker = try ShareProcess.run(
            ["worker", "--db", url], environment: ["PGPASSWORD": "wrong-\(Self.password)"])
        #expect(worker.status == 69 && worker.stderr.contains("password authentication failed"), "\(worker.stderr)")
        // A database without the schema is refused at start too, saying what to run.
        try server.sql("CREATE DATABASE empty OWNER pwuser;")
        let empty = try ShareProcess.run(
            [
                "watch", work.file("inbox"), "--container", work.file("c"), "--db",
                "postgresql://pwuser@127.0.0.1:\(server.port)/empty", "--once",
            ],
            environment: ["PGPASSWORD": Self.password])
        #expect(empty.status == 69 && empty.stderr.contains("share db migrate"), "\(empty.stderr)")
        // The right password: ready, and the drop is enqueued.
        let good = try ServiceProcess(
            arguments, environment: ["PGPASSWORD": Self.password, "NOTIFY_SOCKET": notify.path])
        #expect(notify.wait(for: "READY=1"), "no READY=1: \(good.stderr)")
        #expect(good.stop() == 0)
    }
}
