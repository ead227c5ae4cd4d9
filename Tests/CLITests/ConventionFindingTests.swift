import Foundation
import TestSupport
import Testing

/// The findings of issue 52 that are not about the parser itself, each as a
/// user meets it: defaults that follow the platform, the legacy pipeline's
/// text, what `--db` may be and how its password is masked, a pipeline file
/// that is not JSON, `--dry-run`, and help that says what the parser takes.
@Suite struct ConventionFindingTests {
    /// Observed: `HOME=$(mktemp -d) share ingest` wrote to /root/.local/share.
    @Test func theDefaultContainerFollowsHOMEAndXDGDataHome() throws {
        let work = TemporaryDirectory("defaults")
        let home = URL(fileURLWithPath: work.file("home")).standardizedFileURL.path
        let run = try ShareProcess.run(
            ["ingest", "--text", "hi"], environment: ["HOME": home, "XDG_DATA_HOME": "", "SHARE_CONTAINER": ""])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("container:  \(home)/.local/share/share-ingest/container"), "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/share-ingest/container/manifests"))
        let data = URL(fileURLWithPath: work.file("xdg")).standardizedFileURL.path
        let xdg = try ShareProcess.run(
            ["ingest", "--text", "hi"], environment: ["HOME": home, "XDG_DATA_HOME": data, "SHARE_CONTAINER": ""])
        #expect(xdg.status == 0 && xdg.stderr.contains("container:  \(data)/share-ingest/container"), "\(xdg.stderr)")
        // A relative XDG_DATA_HOME is invalid (the XDG base directory rules): HOME's is used.
        let relative = try ShareProcess.run(
            ["ingest", "--text", "hi"], environment: ["HOME": home, "XDG_DATA_HOME": "relative", "SHARE_CONTAINER": ""])
        #expect(
            relative.stderr.contains("container:  \(home)/.local/share/share-ingest/container"), "\(relative.stderr)")
        // The help says so.
        #expect(
            try ShareProcess.run(["ingest", "--help"]).stdout.contains(
                "$XDG_DATA_HOME/share-ingest/container, else $HOME/.local/share/share-ingest/container"))
    }

    /// Observed: `--text hi --pipeline share-extension` beside a photo printed
    /// "ingested: text:hi" while the summary and the report said skipped.
    @Test func theLegacyPipelinesTextIsSkippedEverywhere() throws {
        let work = TemporaryDirectory("legacy-text")
        let arguments = ["ingest", "--pipeline", "share-extension", Fixtures.media("photo.jpg"), "--text", "hi"]
        let plain = try ShareProcess.run(
            arguments + ["--container", work.file("c"), "--report", work.file("r.json"), "--verbose"])
        #expect(plain.status == 1, "\(plain.stderr)")
        #expect(!plain.stderr.contains("ingested: text:hi"), "\(plain.stderr)")
        #expect(
            plain.stderr.contains("skipped: text:hi: the legacy manifest cannot hold text next to files"),
            "\(plain.stderr)")
        #expect(plain.stderr.contains("1 of 2 items ingested, 1 skipped"), "\(plain.stderr)")
        let json = try ShareProcess.run(arguments + ["--container", work.file("c"), "--json"])
        let items = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        .filter { $0["event"] as? String == "item" }
        #expect(items.count == 2, "one item event per input: \(json.stdout)")
        let text = try #require(items.first { $0["source"] as? String == "text:hi" })
        #expect(text["status"] as? String == "skipped" && text["reason"] as? String == "unsupportedBySchema", "\(text)")
        let report =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work.file("r.json"))))
            as? [String: Any]
        let reported = (report?["items"] as? [[String: Any]])?.first { $0["source"] as? String == "text:hi" }
        #expect(reported?["status"] as? String == "skipped")
        // Text alone is delivered (an array of strings), and said so (--verbose: a line per item delivered).
        let alone = try ShareProcess.run([
            "ingest", "--pipeline", "share-extension", "--text", "hi", "--verbose", "--container", work.file("c"),
        ])
        #expect(alone.status == 0 && alone.stderr.contains("ingested: text:hi"), "\(alone.stderr)")
    }

    /// Observed: both were read as a database name and reported as a failure to reach /var/run/postgresql/.s.PGSQL.5432.
    @Test(arguments: ["http://127.0.0.1:55871/share", "postgres:/oops", "share", "mysql://u@h/db"])
    func aDatabaseThatIsNoPostgreSQLURLIsAUsageErrorNamingIt(url: String) throws {
        for arguments in [
            ["status", "--db", url], ["worker", "--db", url], ["ingest", "--db", url, "--text", "x"],
            ["db", "migrate", "--db", url],
        ] {
            let run = try ShareProcess.run(arguments)
            #expect(run.status == 64, "\(arguments): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("--db \"\(url)\": not a PostgreSQL database"), "\(run.stderr)")
            #expect(!run.stderr.contains(".s.PGSQL"), "\(run.stderr)")
        }
        // In a --db-file too.
        let work = TemporaryDirectory("db-file")
        let file = try work.add("db", bytes: Array("\(url)\n".utf8))
        let fromFile = try ShareProcess.run(["status", "--db-file", file])
        #expect(fromFile.status == 64 && fromFile.stderr.contains("not a PostgreSQL database"), "\(fromFile.stderr)")
    }

    /// Observed with the password `on`: "c****necti**** refused … running **** that host".
    @Test func thePasswordIsMaskedAsAToken() throws {
        let refused = try ShareProcess.run(["status", "--db", "postgresql://share:on@127.0.0.1:1/share"])
        #expect(refused.status == 69, "\(refused.stderr)")
        #expect(
            refused.stderr.contains("Connection refused") && refused.stderr.contains("running on that host"),
            "\(refused.stderr)")
        #expect(!refused.stderr.contains("****"), "\(refused.stderr)")
        // Where a URL or a setting is shown, its password is masked, and only it.
        let unreadable = try ShareProcess.run([
            "status", "--db", "postgresql://share:on@127.0.0.1:1/share?connect_timeout=2&bogus=1",
        ])
        #expect(unreadable.status == 64, "\(unreadable.stderr)")
        #expect(
            unreadable.stderr.contains("postgresql://share:****@127.0.0.1:1/share?connect_timeout=2&bogus=1"),
            "\(unreadable.stderr)")
        let settings = try ShareProcess.run(["status", "--db", "host=127.0.0.1 port=1 password=on bogus=1"])
        #expect(
            settings.status == 64 && settings.stderr.contains("host=127.0.0.1 port=1 password=**** bogus=1"),
            "\(settings.stderr)")
        #expect(!settings.stderr.contains("=on"), "\(settings.stderr)")
        // A longer password that libpq echoes whole (a bad percent-escape) is masked where it is quoted.
        let secret = "Se%zzcret-\(UUID().uuidString.prefix(6))"
        let escaped = try ShareProcess.run(["status", "--db", "postgresql://share:\(secret)@127.0.0.1:1/share"])
        #expect(
            escaped.status == 64 && !escaped.stderr.contains(secret) && escaped.stderr.contains("libpq cannot read it"),
            "\(escaped.stderr)")
    }

    /// Observed: a trailing comma was accepted, then reported as "the copy stage is required".
    @Test func aPipelineFileWithATrailingCommaIsNotJSON() throws {
        let work = TemporaryDirectory("trailing")
        let pipeline = try work.add(
            "p.json",
            bytes: Array(
                #"{"name": "p", "stages": [{"stage": "sniff"}, {"stage": "copy", "fsync": true,}, {"stage": "manifest"}]}"#
                    .utf8))
        let run = try ShareProcess.run(["ingest", "--pipeline", pipeline, "--container", work.file("c"), "--text", "x"])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "p.json: (document): not valid JSON: a comma before a closing bracket or brace at line 1, column 77"),
            "\(run.stderr)")
        // A comma inside a string is no trailing comma.
        let fine = try work.add(
            "q.json",
            bytes: Array(
                #"{"name": "q,]", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "manifest"}]}"#.utf8))
        #expect(
            try ShareProcess.run(["ingest", "--pipeline", fine, "--container", work.file("c"), "--text", "x"]).status
                == 0)
    }

    /// The help lists what the parser accepts (observed: `--isolation process|none`
    /// though process-weaker was accepted, no `--db-file`, 5 of the 8 stages).
    @Test func helpListsEveryStageEveryIsolationAndDbFile() throws {
        let worker = try ShareProcess.run(["worker", "--help"]).stdout
        #expect(
            worker.contains("--stages LIST")
                && worker.contains("sniff, copy, location, probe, thumbnail, motion, compatible, manifest"), "\(worker)"
        )
        for command in ["ingest", "watch", "worker"] {
            let help = try ShareProcess.run([command, "--help"]).stdout
            #expect(help.contains("process-weaker") && help.contains("--db-file FILE"), "\(command): \(help)")
        }
        let bad = try ShareProcess.run(["worker", "--db", "postgresql://x@127.0.0.1:1/x", "--stages", "nope"])
        #expect(
            bad.stderr.contains(
                "allowed, comma-separated: sniff, copy, location, probe, thumbnail, motion, compatible, manifest"),
            "\(bad.stderr)")
    }

    /// `--dry-run` (`-n`): the plan of a drop, nothing copied, decoded or made.
    @Test func aDryRunPlansADropAndTouchesNothing() throws {
        let work = TemporaryDirectory("dry-run")
        let exports = Fixtures.packageRoot.appendingPathComponent("testdata/exports/takeout").path
        let drop = work.file("drop")
        try work.add("drop/IMG_0001.CR2", copying: Fixtures.media("photo.jpg"))
        try work.add("drop/IMG_0001.JPG", copying: Fixtures.media("photo.jpg"))
        try work.add("drop/notes.txt", bytes: Array("hello".utf8))
        mkfifo(work.file("drop/pipe"), 0o600)
        try FileManager.default.createSymbolicLink(atPath: work.file("drop/passwd"), withDestinationPath: "/etc/passwd")
        let container = work.file("c")
        let run = try ShareProcess.run(["ingest", "-n", "--container", container, drop, exports, "--text", "hi"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: container), "a container was made")
        let out = run.stdout
        #expect(out.hasPrefix("plan of "), "\(out)")
        #expect(out.contains("\(drop)/passwd  would be skipped (symbolicLink): "), "\(out)")
        #expect(out.contains("\(drop)/pipe  would be skipped (notRegularFile): "), "\(out)")
        #expect(
            out.contains("carries \(exports)/Takeout/Google Photos/Holiday in Paris/IMG_20190701_165320.jpg.json"),
            "\(out)")
        #expect(
            out.contains("IMG_0001.CR2 + ") && out.contains(" IMG_0001.JPG"),
            "a RAW and its JPEG may be grouped: \(out)")
        #expect(out.contains("text:hi"), "\(out)")
        // --json: one planned event per item, then the plan.
        let json = try ShareProcess.run(["ingest", "--dry-run", "--json", "--container", container, drop])
        let events = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(events.filter { $0["event"] as? String == "planned" }.count == 5, "\(json.stdout)")
        #expect(events.last?["event"] as? String == "plan" && events.last?["skipped"] as? Int == 2, "\(json.stdout)")
        // A missing input is said at once.
        let missing = try ShareProcess.run(["ingest", "-n", work.file("nothing")])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: container))
    }
}
