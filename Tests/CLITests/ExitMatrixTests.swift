import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 61: the exit table is checked per command. Each command's help lists
/// the statuses it may end with (`share help CMD`, made from the command
/// table); the documents state them per command (the `exit-matrix` block of
/// docs/using-share.md); and each (command, status) pair is made here from a
/// real situation, or by the one named test that already makes it (a signal
/// mid-batch, a full disk). A status a command declares and no situation makes,
/// or a situation a command does not declare, fails.
@Suite struct ExitMatrixTests {
    /// What a situation runs in: a folder of its own, a photo, a damaged one.
    struct Work {
        let directory = TemporaryDirectory("exit-matrix")
        var container: String { directory.file("c") }
        let photo = Fixtures.media("photo.jpg")
        let damaged = Fixtures.media("truncated.jpg")
        /// No server listens on port 1.
        let unreachable = "postgresql://share@127.0.0.1:1/share"

        /// `share ARGUMENTS` run to its end: its status, with its output shown when it is not `expected`.
        func status(_ arguments: [String], environment: [String: String] = [:], saying words: String? = nil) throws
            -> Int32
        {
            let run = try ShareProcess.run(arguments, environment: environment)
            if let words {
                #expect(run.stderr.contains(words) || run.stdout.contains(words), "\(arguments): \(run.stderr)")
            }
            return run.status
        }

        /// A share delivered into the container: its redirect URL and key.
        func delivered(key: String = "Matrix") throws -> String {
            let run = try ShareProcess.run([
                "ingest", "--container", container, "--key", key, "--isolation", "none", "--quiet", photo,
            ])
            try #require(run.status == 0, "\(run.stderr)")
            return try #require(run.lastLine)
        }

        /// `share ARGUMENTS` started; once `ready` says so, `signal` sent; its status.
        func status(
            _ arguments: [String], environment: [String: String] = [:], signal: Int32,
            readyWhen ready: (DropBoundaryTests.Run) -> Bool
        ) throws -> Int32? {
            let run = try DropBoundaryTests.Run(arguments, environment: environment)
            defer { if run.process.isRunning { kill(run.process.processIdentifier, SIGKILL) } }
            try #require(eventually { ready(run) || !run.process.isRunning }, "never ready: \(run.stderr)")
            try #require(run.process.isRunning, "ended before the signal: \(run.stderr)")
            kill(run.process.processIdentifier, signal)
            return run.finish()
        }

        /// An inbox holding one drop of the photo, ready.
        func inbox() throws -> String {
            try directory.add("inbox/drop/photo.jpg", copying: photo)
            try directory.add("inbox/drop/.ready", bytes: [])
            return directory.file("inbox")
        }
    }

    /// One (command, status) pair and how it is made.
    struct Situation: Sendable, CustomTestStringConvertible {
        let command: String
        let status: Int32
        let what: String
        let how: How

        enum How: Sendable {
            /// Made here: the body returns the status `share` ended with.
            case here(@Sendable (Work) throws -> Int32?)
            /// Made here with a throwaway PostgreSQL server (migrated).
            case withDatabase(@Sendable (Work, String) throws -> Int32?)
            /// Made by this test (`Suite.function`), which asserts the status.
            case by(String)
        }

        var testDescription: String { "share \(command) → \(status): \(what)" }
    }

    static let situations: [Situation] = [
        // ingest
        Situation(
            command: "ingest", status: 0, what: "every item delivered",
            how: .here { try $0.status(["ingest", "--container", $0.container, $0.photo]) }),
        Situation(
            command: "ingest", status: 1, what: "one damaged photo beside a good one",
            how: .here { try $0.status(["ingest", "--container", $0.container, $0.photo, $0.damaged]) }),
        Situation(
            command: "ingest", status: 64, what: "an option mistyped",
            how: .here { try $0.status(["ingest", "--containr", "c"], saying: "did you mean --container?") }),
        Situation(
            command: "ingest", status: 66, what: "a path that does not exist",
            how: .here {
                try $0.status(
                    ["ingest", "--container", $0.container, $0.directory.file("nothing.jpg")], saying: "nothing.jpg")
            }),
        Situation(
            command: "ingest", status: 69, what: "the database unreachable",
            how: .here {
                try $0.status(
                    ["ingest", "--db", $0.unreachable, "--container", $0.container, $0.photo],
                    saying: "Connection refused")
            }),
        Situation(
            command: "ingest", status: 73, what: "the key taken",
            how: .here { work in
                _ = try work.delivered(key: "Taken")
                return try work.status(["ingest", "--container", work.container, "--key", "Taken", work.photo])
            }),
        Situation(
            command: "ingest", status: 75, what: "another process holds the batch",
            how: .by("ExitStatusTests.seventyFiveWhileAnotherProcessHoldsTheBatch")),
        Situation(
            command: "ingest", status: 130, what: "SIGINT mid-batch",
            how: .by("ExitStatusTests.aSignalMidBatchExitsWithItsStatusAndTheBatchShowsAsInterrupted")),
        Situation(
            command: "ingest", status: 143, what: "SIGTERM mid-batch",
            how: .by("ExitStatusTests.aSignalMidBatchExitsWithItsStatusAndTheBatchShowsAsInterrupted")),
        // open
        Situation(
            command: "open", status: 0, what: "a share delivered",
            how: .here { try $0.status(["open", try $0.delivered(), "--container", $0.container]) }),
        Situation(
            command: "open", status: 64, what: "not a redirect URL",
            how: .here { work in
                _ = try work.delivered()
                return try work.status(
                    ["open", "https://example.org", "--container", work.container], saying: "not a share redirect URL")
            }),
        Situation(
            command: "open", status: 66, what: "no such share",
            how: .here { work in
                _ = try work.delivered()
                return try work.status(
                    ["open", "ShareMedia://dataUrl=NoSuchKey#media", "--container", work.container],
                    saying: "no manifest for key")
            }),
        // watch
        Situation(
            command: "watch", status: 0, what: "--once: the drop delivered",
            how: .here {
                try $0.status(["watch", try $0.inbox(), "--container", $0.container, "--once", "--settle", "0"])
            }),
        Situation(
            command: "watch", status: 64, what: "a stray argument",
            how: .here { try $0.status(["watch", "inbox", "stray"]) }),
        Situation(
            command: "watch", status: 66, what: "an inbox that does not exist",
            how: .here {
                try $0.status(["watch", $0.directory.file("no-inbox"), "--container", $0.container, "--once"])
            }),
        Situation(
            command: "watch", status: 69, what: "the metrics port taken",
            how: .here { work in
                let taken = try ListeningSocket()
                return try work.status([
                    "watch", try work.inbox(), "--container", work.container, "--once", "--metrics",
                    "127.0.0.1:\(taken.port)",
                ])
            }),
        Situation(
            command: "watch", status: 73, what: "--once on a full disk",
            how: .by("WatchDiskFullTests.watchOnceOnAFullDiskExits73AndTheNextRunFinishesTheDrop")),
        Situation(
            command: "watch", status: 130, what: "SIGINT while watching",
            how: .here { work in
                try FileManager.default.createDirectory(
                    atPath: work.directory.file("quiet"), withIntermediateDirectories: true)
                return try work.status(
                    ["watch", work.directory.file("quiet"), "--container", work.container], signal: SIGINT
                ) { $0.stderr.contains("watching") }
            }),
        Situation(
            command: "watch", status: 143, what: "SIGTERM while watching",
            how: .here { work in
                try FileManager.default.createDirectory(
                    atPath: work.directory.file("quiet"), withIntermediateDirectories: true)
                return try work.status(
                    ["watch", work.directory.file("quiet"), "--container", work.container], signal: SIGTERM
                ) { $0.stderr.contains("watching") }
            }),
        // status
        Situation(
            command: "status", status: 0, what: "a container's batches",
            how: .here { work in
                _ = try work.delivered()
                return try work.status(["status", "--container", work.container], saying: "Matrix")
            }),
        Situation(
            command: "status", status: 64, what: "an unknown option",
            how: .here { try $0.status(["status", "--nosuch"]) }),
        Situation(
            command: "status", status: 66, what: "a container that does not exist",
            how: .here { try $0.status(["status", "--container", $0.directory.file("none")]) }),
        Situation(
            command: "status", status: 69, what: "the database unreachable",
            how: .here { try $0.status(["status", "--db", $0.unreachable]) }),
        // report
        Situation(
            command: "report", status: 0, what: "a batch's summary",
            how: .here { work in
                _ = try work.delivered()
                return try work.status(["report", "Matrix", "--container", work.container])
            }),
        Situation(
            command: "report", status: 64, what: "no batch named",
            how: .here { try $0.status(["report", "--container", $0.container]) }),
        Situation(
            command: "report", status: 66, what: "no such batch",
            how: .here { work in
                _ = try work.delivered()
                return try work.status(["report", "NoSuchKey", "--container", work.container])
            }),
        Situation(
            command: "report", status: 73, what: "the page's folder does not exist",
            how: .here { work in
                _ = try work.delivered()
                return try work.status([
                    "report", "Matrix", "--container", work.container, "--html", work.directory.file("none/page.html"),
                ])
            }),
        // gc
        Situation(
            command: "gc", status: 0, what: "nothing old enough",
            how: .here { work in
                _ = try work.delivered()
                return try work.status(["gc", "--container", work.container])
            }),
        Situation(
            command: "gc", status: 64, what: "a short option it lacks",
            how: .here { try $0.status(["gc", "-x"], saying: "did you mean --dry-run (-n)?") }),
        Situation(
            command: "gc", status: 66, what: "a container that does not exist",
            how: .here { try $0.status(["gc", "--container", $0.directory.file("none")]) }),
        Situation(
            command: "gc", status: 69, what: "the database unreachable",
            how: .here { work in
                _ = try work.delivered()
                return try work.status(["gc", "--container", work.container, "--db", work.unreachable])
            }),
        Situation(
            command: "gc", status: 73, what: "a consumed share it cannot remove (a read-only container)",
            how: .here { work in
                let url = try work.delivered()
                try #require(try work.status(["open", url, "--consume", "--container", work.container]) == 0)
                // Read-only in place: a bind mount of itself, remounted read-only.
                let undo = try FolderIdentityTests.bind(work.container, onto: work.container)
                defer { undo() }
                try #require(try MediaTools.run("/bin/mount", ["-o", "remount,ro,bind", work.container]).status == 0)
                return try work.status(["gc", "--older-than", "0", "--container", work.container])
            }),
        // worker
        Situation(
            command: "worker", status: 0, what: "SIGTERM under systemd",
            how: .withDatabase { work, url in
                try work.status(
                    ["worker", "--db", url, "--log-format", "json"],
                    environment: ["INVOCATION_ID": "0123456789abcdef0123456789abcdef"], signal: SIGTERM
                ) {
                    $0.stderr.contains(#""event":"started""#)
                }
            }),
        Situation(
            command: "worker", status: 64, what: "--db missing",
            how: .here { try $0.status(["worker"], saying: "--db") }),
        Situation(
            command: "worker", status: 69, what: "the database unreachable",
            how: .here { try $0.status(["worker", "--db", $0.unreachable], saying: "Connection refused") }),
        Situation(
            command: "worker", status: 130, what: "SIGINT while serving",
            how: .withDatabase { work, url in
                try work.status(["worker", "--db", url, "--log-format", "json"], signal: SIGINT) {
                    $0.stderr.contains(#""event":"started""#)
                }
            }),
        Situation(
            command: "worker", status: 143, what: "SIGTERM while serving",
            how: .withDatabase { work, url in
                try work.status(["worker", "--db", url, "--log-format", "json"], signal: SIGTERM) {
                    $0.stderr.contains(#""event":"started""#)
                }
            }),
        // db migrate
        Situation(
            command: "db migrate", status: 0, what: "the schema up to date",
            how: .withDatabase { work, url in try work.status(["db", "migrate", "--db", url]) }),
        Situation(
            command: "db migrate", status: 64, what: "--db missing", how: .here { try $0.status(["db", "migrate"]) }),
        Situation(
            command: "db migrate", status: 69, what: "the database unreachable",
            how: .here { try $0.status(["db", "migrate", "--db", $0.unreachable]) }),
        // doctor
        Situation(
            command: "doctor", status: 0, what: "the strongest sandbox this machine offers",
            how: .here { try $0.status(["doctor"]) }),
        Situation(
            command: "doctor", status: 1, what: "a weaker one (Landlock and namespaces hidden)",
            how: .here {
                try $0.status(
                    ["doctor"], environment: ["SHARE_TEST_NO_LANDLOCK": "1", "SHARE_TEST_NO_NAMESPACES": "1"],
                    saying: "chroot into an empty folder")
            }),
        Situation(
            command: "doctor", status: 64, what: "a stray argument", how: .here { try $0.status(["doctor", "stray"]) }),
        Situation(
            command: "doctor", status: 69, what: "no share-helper to start",
            how: .here { try $0.status(["doctor"], environment: ["SHARE_HELPER_PATH": $0.directory.file("no-helper")]) }
        ),
        // completion, man, help, version
        Situation(
            command: "completion", status: 0, what: "bash", how: .here { try $0.status(["completion", "bash"]) }),
        Situation(
            command: "completion", status: 64, what: "a shell it does not know",
            how: .here { try $0.status(["completion", "tcsh"]) }),
        Situation(command: "man", status: 0, what: "the page", how: .here { try $0.status(["man"]) }),
        Situation(
            command: "man", status: 64, what: "a stray argument", how: .here { try $0.status(["man", "ingest"]) }),
        Situation(
            command: "help", status: 0, what: "a command's help", how: .here { try $0.status(["help", "ingest"]) }),
        Situation(
            command: "help", status: 64, what: "no such command", how: .here { try $0.status(["help", "nosuch"]) }),
        Situation(command: "version", status: 0, what: "the version", how: .here { try $0.status(["version"]) }),
        Situation(
            command: "version", status: 64, what: "a stray argument",
            how: .here { try $0.status(["version", "stray"]) }),
    ]

    /// The statuses `share help COMMAND` lists under "exit status:".
    static func declared(_ command: String) throws -> Set<Int32> {
        let help = try ShareProcess.run(["help"] + command.split(separator: " ").map(String.init))
        guard let section = help.stdout.components(separatedBy: "\nexit status:\n").last else { return [] }
        return Set(
            section.split(separator: "\n").compactMap { line in
                line.hasPrefix("  ") ? Int32(line.split(separator: " ").first ?? "") : nil
            })
    }

    /// The commands `share help` lists.
    static func commands() throws -> [String] {
        let help = try ShareProcess.run(["help"]).stdout
        guard let listed = help.components(separatedBy: "\ncommands:\n").last?.components(separatedBy: "\n\n").first
        else { return [] }
        return listed.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = words.first else { return nil }
            return first == "db" && words.count > 1 ? "db \(words[1])" : String(first)
        }
    }

    @Test func everyStatusACommandDeclaresIsMadeAndNoOther() throws {
        let commands = try Self.commands()
        #expect(commands.count >= 13 && commands.contains("db migrate"), "\(commands)")
        var documented: [String] = []
        for command in commands {
            let declared = try Self.declared(command)
            let made = Set(Self.situations.filter { $0.command == command }.map(\.status))
            #expect(!declared.isEmpty, "share help \(command) lists no exit status")
            #expect(made == declared, "share \(command): declared \(declared.sorted()), made here \(made.sorted())")
            documented.append("| `\(command)` | \(declared.sorted().map { "`\($0)`" }.joined(separator: " ")) |")
        }
        #expect(Set(Self.situations.map(\.command)).isSubset(of: commands), "a situation of a command share has not")
        // The documents say the same, per command.
        let marker = "<!-- exit-matrix"
        let page = try ProjectDocs.page(containing: marker)
        let block =
            page.text.components(separatedBy: marker).last?.components(separatedBy: "<!-- /exit-matrix -->").first ?? ""
        let rows = block.split(separator: "\n").filter { $0.hasPrefix("| `") }.map(String.init)
        #expect(
            rows == documented,
            "\(page.path)'s exit-matrix block differs from the commands' help:\n\(documented.joined(separator: "\n"))")
    }

    /// A situation made by another test names one that exists.
    @Test func everySituationMadeElsewhereNamesATestThatExists() throws {
        let sources = Fixtures.packageRoot.appendingPathComponent("Tests/CLITests")
        for situation in Self.situations {
            guard case .by(let name) = situation.how else { continue }
            let parts = name.split(separator: ".")
            try #require(parts.count == 2, "\(name)")
            let text = try String(contentsOf: sources.appendingPathComponent("\(parts[0]).swift"), encoding: .utf8)
            #expect(text.contains("func \(parts[1])("), "\(situation): no test \(name)")
            #expect(text.contains("\(situation.status)"), "\(situation): \(name) never names the status")
        }
    }

    @Test(arguments: situations) func eachSituationEndsWithItsStatus(_ situation: Situation) throws {
        let work = Work()
        let status: Int32?
        switch situation.how {
        case .by: return
        case .here(let body): status = try body(work)
        case .withDatabase(let body):
            let server = try PostgresServer()
            try #require(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
            status = try body(work, server.url)
        }
        #expect(status == situation.status, "\(situation): exited \(status.map(String.init) ?? "never")")
    }
}
