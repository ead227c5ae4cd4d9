import Foundation
import Glibc
import TestSupport
import Testing

/// The units in deploy/systemd, and the notification protocol spoken by a real
/// `share watch` and a real `share worker` to a datagram socket this test reads.
@Suite(.serialized) struct SystemdTests {
    /// The socket a service manager would listen on: the messages, in order.
    final class NotifySocket {
        let directory = TemporaryDirectory("notify")
        let path: String
        let fd: Int32
        private(set) var messages: [String] = []

        init() throws {
            path = directory.file("notify")
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { target in
                for (index, byte) in path.utf8.enumerated() { target[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            #expect(bound == 0, "bind \(path): \(String(cString: strerror(errno)))")
            var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        /// Reads datagrams until one holds `assignment` (e.g. `READY=1`); false after a minute without.
        func wait(for assignment: String) -> Bool {
            let deadline = Date().addingTimeInterval(60)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline {
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n > 0 else { continue }
                let message = String(decoding: buffer.prefix(n), as: UTF8.self)
                messages.append(message)
                if message.split(separator: "\n").contains(Substring(assignment)) { return true }
            }
            return false
        }

        /// The index of the first message holding `assignment`.
        func first(_ assignment: String) -> Int? {
            messages.firstIndex { $0.split(separator: "\n").contains(Substring(assignment)) }
        }
    }

    /// READY=1, then watchdog pings (with a status line), then STOPPING=1 on SIGTERM, in that order.
    static func expectLifecycle(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let notify = try NotifySocket()
        // A 0.2 s watchdog: a ping every 0.1 s.
        let service = try ServiceProcess(
            arguments, environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"])
        #expect(
            notify.wait(for: "READY=1"), "no READY=1: \(notify.messages) \(service.stderr)",
            sourceLocation: sourceLocation)
        #expect(notify.wait(for: "WATCHDOG=1"), "no watchdog ping: \(notify.messages)", sourceLocation: sourceLocation)
        #expect(
            notify.wait(for: "WATCHDOG=1"), "one watchdog ping only: \(notify.messages)", sourceLocation: sourceLocation
        )
        kill(service.process.processIdentifier, SIGTERM)
        #expect(notify.wait(for: "STOPPING=1"), "no STOPPING=1: \(notify.messages)", sourceLocation: sourceLocation)
        #expect(service.stop() == 0, "\(service.stderr)", sourceLocation: sourceLocation)
        let ready = try #require(notify.first("READY=1"))
        let ping = try #require(notify.first("WATCHDOG=1"))
        let stopping = try #require(notify.first("STOPPING=1"))
        #expect(ready < ping && ping < stopping, "\(notify.messages)", sourceLocation: sourceLocation)
        #expect(
            notify.messages[ping].contains("STATUS=items ingested 0"), "\(notify.messages[ping])",
            sourceLocation: sourceLocation)
    }

    @Test func aWatcherTellsTheServiceManagerReadyWatchdogAndStopping() throws {
        let work = TemporaryDirectory("notify-watch")
        try FileManager.default.createDirectory(atPath: work.path + "/inbox", withIntermediateDirectories: true)
        try Self.expectLifecycle(["watch", work.path + "/inbox", "--container", work.path + "/container"])
    }

    @Test func aWorkerTellsTheServiceManagerReadyWatchdogAndStopping() throws {
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        try Self.expectLifecycle(["worker", "--db", server.url, "--name", "n", "--concurrency", "1"])
    }

    /// `systemd-analyze verify` on both units, alone and with each drop-in of
    /// deploy/systemd appended (as systemd reads a drop-in: more assignments),
    /// silent (it exits 0 even on an unknown key, only warning): the units name
    /// the built share instead of /usr/local/bin/share, which verify requires to exist.
    @Test func theUnitsPassSystemdAnalyzeVerify() throws {
        let analyze = "/usr/bin/systemd-analyze"
        guard FileManager.default.isExecutableFile(atPath: analyze) else {
            Issue.record("systemd-analyze is not installed (scripts/setup.sh installs systemd)")
            return
        }
        let units = TemporaryDirectory("units")
        var paths: [String] = []
        for name in ["share-watch", "share-worker"] {
            let text = try String(
                contentsOfFile: Fixtures.packageRoot.appendingPathComponent("deploy/systemd/\(name)@.service").path,
                encoding: .utf8)
            #expect(text.contains("ExecStart=/usr/local/bin/share "))
            for setting in [
                "Type=notify", "WatchdogSec=", "ProtectSystem=strict", "PrivateTmp=yes", "ProtectHome=yes",
                "RestrictAddressFamilies=",
                "SystemCallArchitectures=native", "LockPersonality=yes", "CapabilityBoundingSet=\n",
                "User=share-ingest", "SystemCallFilter=@system-service ",
                "MemoryDenyWriteExecute=yes", "IPAddressDeny=any", "IPAddressAllow=localhost", "ProtectProc=invisible",
                "ProcSubset=pid", "PrivateMounts=yes",
            ] {
                #expect(text.contains("\n" + setting), "\(name): \(setting)")
            }
            for dropIn in ["", "database.conf", "no-landlock.conf", "mount-namespace.conf"] {
                let extra =
                    dropIn.isEmpty
                    ? ""
                    : "\n"
                        + (try String(
                            contentsOfFile: Fixtures.packageRoot.appendingPathComponent("deploy/systemd/" + dropIn)
                                .path, encoding: .utf8))
                let path = units.file(
                    "\(name)\(dropIn.isEmpty ? "" : "-" + dropIn.replacingOccurrences(of: ".conf", with: ""))@test.service"
                )
                try (text + extra).replacingOccurrences(of: "/usr/local/bin/share", with: Fixtures.shareBinary).write(
                    toFile: path, atomically: true, encoding: .utf8)
                paths.append(path)
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: analyze)
        process.arguments = ["verify"] + paths
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && said.isEmpty, "systemd-analyze verify: \(said)")
    }
}
