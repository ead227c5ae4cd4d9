import Foundation
import Glibc
import TestSupport
import Testing

/// `--log-format json`: every line of stderr one JSON object with the log's
/// keys; plain text the default; no password in either, whether it came in a
/// `--db` URL or in PGPASSWORD.
@Suite(.serialized) struct LogFormatTests {
    static let keys: Set<String> = ["time", "level", "event", "batch", "item", "stage", "reason", "message"]
    static let urlSecret = "hunter2-in-the-url"
    static let environmentSecret = "s3cret-in-the-environment"

    /// Each line of `log` as a JSON object with exactly the log's keys (failing the test otherwise).
    static func objects(_ log: String, sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        log.split(separator: "\n").compactMap { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line)", sourceLocation: sourceLocation)
            if let object { #expect(Set(object.keys) == keys, "keys of \(line)", sourceLocation: sourceLocation) }
            return object
        }
    }

    static func expectNoSecret(_ texts: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        for text in texts {
            #expect(
                !text.contains(urlSecret) && !text.contains(environmentSecret), "a password in: \(text)",
                sourceLocation: sourceLocation)
        }
    }

    @Test func aWorkersLogIsOneJSONObjectPerLineAndHoldsNoPassword() throws {
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        // Trust authentication: the server ignores the password, share must still hide it.
        let withPassword = server.url.replacingOccurrences(of: "@127.0.0.1", with: ":\(Self.urlSecret)@127.0.0.1")
        let environment = ["PGPASSWORD": Self.environmentSecret]
        for format in ["json", "plain"] {
            let work = TemporaryDirectory("log-\(format)")
            let worker = try ServiceProcess(
                [
                    "worker", "--db", withPassword, "--name", "log-\(format)", "--concurrency", "1", "--log-format",
                    format,
                ], environment: environment)
            let drop = try ServiceTests.drop(notes: 3, into: work.path + "/drop")
            let ingest = try ServiceProcess([
                "ingest", "--db", server.url, "--container", work.path + "/container", drop.path,
            ])
            #expect(eventually { !ingest.process.isRunning })
            // The noise's failure is logged by the worker that ran its stage.
            #expect(eventually { worker.stderr.contains("noise.jpg") }, "\(worker.stderr)")
            #expect(worker.stop() == 143)
            Self.expectNoSecret(worker.stderr, worker.stdout)
            if format == "json" {
                let lines = Self.objects(worker.stderr)
                #expect(lines.contains { $0["event"] as? String == "started" && $0["level"] as? String == "info" })
                #expect(
                    lines.contains {
                        $0["level"] as? String == "warning" && ($0["message"] as? String ?? "").contains("password")
                    }, "\(worker.stderr)")
                // The noise's own line (on a loaded machine another item may fail too, as a decode out of time).
                let failure = try #require(
                    lines.first {
                        $0["event"] as? String == "failed" && ($0["message"] as? String ?? "").contains("noise.jpg")
                    }, "\(worker.stderr)")
                #expect(
                    failure["level"] as? String == "error" && failure["reason"] as? String == "contentMismatch",
                    "\(failure)")
                #expect(
                    failure["batch"] is String && failure["item"] as? Int != nil && failure["stage"] is String,
                    "\(failure)")
                #expect(
                    ISO8601DateFormatter().date(
                        from: (failure["time"] as? String ?? "").replacingOccurrences(
                            of: #"\.\d+"#, with: "", options: .regularExpression)) != nil)
            } else {
                #expect(worker.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("share: ") }, "\(worker.stderr)")
                #expect(worker.stderr.contains("share: worker: "))
            }
        }
        // A worker that cannot start says why, in either format, without the password.
        let unreachable = withPassword.replacingOccurrences(of: ":\(server.port)/", with: ":1/")
        for format in ["json", "plain"] {
            let failed = try ShareProcess.run(
                ["worker", "--db", unreachable, "--log-format", format], environment: environment)
            #expect(failed.status != 0)
            Self.expectNoSecret(failed.stderr, failed.stdout)
            if format == "json" {
                #expect(
                    Self.objects(failed.stderr).contains {
                        $0["level"] as? String == "error"
                            && ($0["message"] as? String ?? "").contains("cannot start the worker")
                    })
            }
        }
    }

    @Test func aWatchersLogNamesTheBatchItemStageAndReasonOfAFailure() throws {
        let work = TemporaryDirectory("log-watch")
        try FileManager.default.createDirectory(atPath: work.path + "/inbox", withIntermediateDirectories: true)
        _ = try ServiceTests.drop(notes: 2, into: work.path + "/inbox/drop")
        let watch = try ShareProcess.run(
            [
                "watch", work.path + "/inbox", "--container", work.path + "/container", "--settle", "0", "--once",
                "--log-format", "json",
            ],
            environment: ["PGPASSWORD": Self.environmentSecret])
        #expect(watch.status == 0, "\(watch.stderr)")
        let lines = Self.objects(watch.stderr)
        let failure = try #require(lines.first { $0["event"] as? String == "itemFailed" }, "\(watch.stderr)")
        #expect(failure["reason"] as? String == "contentMismatch" && failure["level"] as? String == "error")
        #expect(
            failure["batch"] is String && failure["item"] as? Int != nil && failure["stage"] is String, "\(failure)")
        #expect(lines.filter { $0["event"] as? String == "itemIngested" }.count == 3)
        Self.expectNoSecret(watch.stderr, watch.stdout)
        // Plain text stays the default.
        let plain = try ShareProcess.run(["watch", "--log-format", "xml", work.path + "/inbox"])
        #expect(
            plain.status == 64 && plain.stderr.hasPrefix("share watch: --log-format must be plain or json"),
            "\(plain.stderr)")
    }

    /// Finding 8 of issue 51: a name holding U+202E (`d\u{202E}gpj.exe` reads
    /// "dexe.jpg"), NEL, U+2028 or U+2029 was printed raw in plain logs. Every
    /// control and format character and line or paragraph separator of a name
    /// or message is escaped in a plain line, in `ingest`'s and `watch`'s
    /// output alike; JSON lines carry the name itself.
    @Test func plainLinesEscapeEveryControlFormatAndSeparatorCharacterOfANameOrMessage() throws {
        let work = TemporaryDirectory("log-escapes")
        let names = [
            "d\u{202E}gpj.exe", "nel\u{0085}line.txt", "ls\u{2028}line.txt", "ps\u{2029}line.txt",
            "zw\u{200B}space.txt", "esc\u{1B}[31mred.txt",
        ]
        func makeDrop(_ drop: String) throws {
            try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
            for name in names { try Data("a note\n".utf8).write(to: URL(fileURLWithPath: drop + "/" + name)) }
            // A photo with the override in its name, and an empty file (a warning line).
            try FileManager.default.copyItem(
                atPath: Fixtures.media("photo.jpg"), toPath: drop + "/photo\u{202E}gpj.jpg")
            FileManager.default.createFile(atPath: drop + "/empty\u{2028}.txt", contents: Data())
        }
        let drop = work.path + "/drop"
        try makeDrop(drop)
        try makeDrop(work.path + "/inbox/drop")
        func unsafe(_ text: String) -> [String] {
            text.unicodeScalars.filter { scalar in
                guard scalar != "\n" else { return false }
                switch scalar.properties.generalCategory {
                case .control, .format, .lineSeparator, .paragraphSeparator: return true
                default: return false
                }
            }.map { String(format: "U+%04X", $0.value) }
        }
        // --verbose: a line per item delivered, each naming its file.
        let ingest = try ShareProcess.run(["ingest", "--verbose", "--container", work.path + "/container", drop])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        #expect(unsafe(ingest.stderr).isEmpty, "raw in: \(ingest.stderr.debugDescription)")
        for escaped in [
            #"d\u{202E}gpj.exe"#, #"nel\u{0085}line.txt"#, #"ls\u{2028}line.txt"#, #"ps\u{2029}line.txt"#,
            #"zw\u{200B}space.txt"#, #"photo\u{202E}gpj.jpg"#,
        ] {
            #expect(ingest.stderr.contains(escaped), "\(escaped) not in: \(ingest.stderr)")
        }
        #expect(ingest.stderr.contains("empty\\u{2028}.txt") && ingest.stderr.contains("warning:"), "\(ingest.stderr)")
        let watch = try ShareProcess.run([
            "watch", work.path + "/inbox", "--container", work.path + "/watched", "--settle", "0", "--once",
        ])
        #expect(watch.status == 0, "\(watch.stderr)")
        #expect(unsafe(watch.stderr).isEmpty, "raw in: \(watch.stderr.debugDescription)")
        #expect(watch.stderr.contains(#"d\u{202E}gpj.exe"#), "\(watch.stderr)")
        // JSON lines name the file as it is (JSON's own escaping is enough for a parser).
        try makeDrop(work.path + "/inbox/again")
        let json = try ShareProcess.run([
            "watch", work.path + "/inbox", "--container", work.path + "/watched", "--settle", "0", "--once",
            "--log-format", "json",
        ])
        #expect(json.status == 0, "\(json.stderr)")
        let messages = Self.objects(json.stderr).compactMap { $0["message"] as? String }
        #expect(messages.contains { $0.contains("d\u{202E}gpj.exe") }, "\(json.stderr)")
    }
}
