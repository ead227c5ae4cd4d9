import Foundation
import Glibc
import TestSupport
import Testing

/// `share watch` and `share worker` as services: `/metrics`, `/healthz` and
/// `/readyz` scraped from real processes during real batches, the counters
/// against the batch's report, `promtool check metrics` on each scrape, and the
/// listener's limits (bad, unknown, huge, endless requests, too many connections).
@Suite(.serialized) struct ServiceTests {
    /// A drop of `notes` one-line files, a JPEG and random bytes named `.jpg`
    /// (fails: its content contradicts its name), made aside and moved into `inbox` whole.
    static func drop(notes: Int, into folder: String) throws -> (path: String, bytes: Int) {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var bytes = 0
        for i in 0..<notes {
            let data = Data("note \(i)\n".utf8)
            try data.write(to: URL(fileURLWithPath: "\(folder)/note-\(i).txt"))
            bytes += data.count
        }
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("cmyk.jpg")))
        try photo.write(to: URL(fileURLWithPath: "\(folder)/photo.jpg"))
        bytes += photo.count
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255) }).write(
            to: URL(fileURLWithPath: "\(folder)/noise.jpg"))
        return (folder, bytes)
    }

    /// The `batchFinished` line of `--json` output, once it is there.
    static func finished(_ stdout: String) -> [String: Any]? {
        stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        .first { $0["event"] as? String == "batchFinished" }
    }

    static func scrape(_ port: Int) throws -> Scrape {
        let (status, body) = try HTTPClient.get(port, "/metrics")
        #expect(status == 200)
        return Scrape(body)
    }

    /// The counters agree with what the batch's report says; the scrape passes promtool.
    static func expectAgreement(_ scrape: Scrape, report: [String: Any], items: Int, sourceBytes: Int) throws {
        let ingested = try #require(report["ingested"] as? Int)
        let failed = try #require(report["failed"] as? Int)
        let skipped = try #require(report["skipped"] as? Int)
        #expect(ingested + failed + skipped == items)
        #expect(scrape[#"share_items_total{outcome="ingested"}"#] == Double(ingested))
        #expect(scrape[#"share_items_total{outcome="failed"}"#] == Double(failed))
        #expect(scrape[#"share_items_total{outcome="skipped"}"#] == Double(skipped))
        // The noise fails because its bytes contradict its name, and the batch is partial.
        #expect(failed == 1)
        #expect(scrape[#"share_item_failures_total{reason="contentMismatch"}"#] == 1, "\(scrape.text)")
        #expect(scrape[#"share_batches_total{outcome="partial"}"#] == 1)
        #expect(scrape[#"share_batches_total{outcome="complete"}"#] == 0)
        // Every item was sniffed once, and timed once in its histogram.
        #expect(scrape[#"share_stage_items_total{stage="sniff",outcome="ran"}"#] == Double(items))
        #expect(scrape[#"share_stage_duration_seconds_count{stage="sniff"}"#] == Double(items))
        // Each copy counted its source's bytes: every item that was copied.
        let copies = try #require(scrape[#"share_stage_items_total{stage="copy",outcome="ran"}"#])
        #expect(copies == Double(items) || copies == Double(items - 1))
        let noise = 4096
        #expect(
            scrape["share_copied_bytes_total"] == Double(copies == Double(items) ? sourceBytes + noise : sourceBytes))
        #expect(
            scrape[#"share_build_info{version="0.32.0",role="watch"}"#] == 1
                || scrape[#"share_build_info{version="0.32.0",role="worker"}"#] == 1)
        let promtool = try scrape.promtool()
        #expect(promtool.status == 0 && promtool.output.isEmpty, "promtool: \(promtool.output)")
    }

    @Test func aWatcherServesMetricsHealthAndReadinessDuringARealBatch() throws {
        let work = TemporaryDirectory("watch-metrics")
        let inbox = work.path + "/inbox"
        let container = work.path + "/container"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        // The throttle makes the batch last long enough to be scraped in the middle.
        let watch = try ServiceProcess(
            ["watch", inbox, "--container", container, "--settle", "0", "--json", "--metrics", "127.0.0.1:0"],
            environment: ["SHARE_TEST_THROTTLE_MS": "20"])
        let port = try #require(watch.metricsPort(), "no metrics line: \(watch.stderr)")
        #expect(try HTTPClient.get(port, "/healthz").status == 200)
        #expect(try eventually(timeout: 60) { try HTTPClient.get(port, "/readyz").status == 200 })
        let ready = try HTTPClient.get(port, "/readyz").body
        #expect(ready.contains("ok container") && ready.contains("ok helper"), "\(ready)")
        #expect(try Self.scrape(port)["share_inbox_drops_waiting"] == 0)

        let drop = try Self.drop(notes: 40, into: work.path + "/staging/drop")
        try FileManager.default.moveItem(atPath: drop.path, toPath: inbox + "/drop")
        // Mid-batch: the scrape is answered while items are still in the pipeline.
        var middle: Scrape?
        #expect(
            try eventually {
                let scrape = try Self.scrape(port)
                guard (scrape[#"share_stage_items_total{stage="copy",outcome="ran"}"#] ?? 0) >= 1 else { return false }
                if Self.finished(watch.stdout) == nil { middle = scrape }
                return true
            })
        let mid = try #require(middle, "the batch finished before a scrape saw it under way")
        #expect((mid[#"share_items_total{outcome="ingested"}"#] ?? 0) < 41)
        let midCheck = try mid.promtool()
        #expect(midCheck.status == 0, "promtool: \(midCheck.output)")
        #expect(try HTTPClient.get(port, "/readyz").status == 200)

        #expect(eventually { Self.finished(watch.stdout) != nil }, "\(watch.stderr)")
        let report = try #require(Self.finished(watch.stdout))
        try Self.expectAgreement(try Self.scrape(port), report: report, items: 42, sourceBytes: drop.bytes)
        #expect(watch.stop() == 143, "\(watch.stderr)")
    }

    @Test func aWorkerServesMetricsThatAgreeWithTheBatchAndFailsReadinessWithoutItsDatabase() throws {
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let work = TemporaryDirectory("worker-metrics")
        let worker = try ServiceProcess(
            ["worker", "--db", server.url, "--name", "w", "--concurrency", "1", "--metrics", "127.0.0.1:0"],
            environment: ["SHARE_TEST_THROTTLE_MS": "20"])
        let port = try #require(worker.metricsPort(), "no metrics line: \(worker.stderr)")
        #expect(try HTTPClient.get(port, "/healthz").status == 200)
        #expect(try eventually(timeout: 60) { try HTTPClient.get(port, "/readyz").status == 200 }, "\(worker.stderr)")
        let ready = try HTTPClient.get(port, "/readyz").body
        #expect(ready.contains("ok database") && ready.contains("ok helper"), "\(ready)")
        let idle = try Self.scrape(port)
        #expect(idle[#"share_jobs_ready{stage="copy"}"#] == 0)

        let drop = try Self.drop(notes: 40, into: work.path + "/drop")
        let ingest = try ServiceProcess([
            "ingest", "--db", server.url, "--container", work.path + "/container", "--json", drop.path,
        ])
        var middle: Scrape?
        #expect(
            try eventually {
                let scrape = try Self.scrape(port)
                guard (scrape[#"share_stage_items_total{stage="copy",outcome="ran"}"#] ?? 0) >= 1 else { return false }
                if ingest.process.isRunning { middle = scrape }
                return true
            })
        let mid = try #require(middle, "the batch finished before a scrape saw it under way")
        let midCheck = try mid.promtool()
        #expect(midCheck.status == 0, "promtool: \(midCheck.output)")

        #expect(eventually { !ingest.process.isRunning })
        #expect(ingest.process.terminationStatus == 0 || ingest.process.terminationStatus == 1, "\(ingest.stderr)")
        let report = try #require(Self.finished(ingest.stdout), "\(ingest.stdout)\n\(ingest.stderr)")
        // The worker counts an item once its record is saved; the batch once its manifest is.
        #expect(try eventually { (try Self.scrape(port)[#"share_batches_total{outcome="partial"}"#] ?? 0) == 1 })
        let end = try Self.scrape(port)
        try Self.expectAgreement(end, report: report, items: 42, sourceBytes: drop.bytes)
        #expect((end["share_helper_starts_total"] ?? 0) >= 1, "\(end.text)")
        #expect(end["share_helper_kills_total"] == 0)

        // Without its database the worker is alive but not ready, and says why.
        server.stop()
        #expect(try eventually(timeout: 60) { try HTTPClient.get(port, "/readyz").status == 503 })
        let unready = try HTTPClient.get(port, "/readyz").body
        #expect(unready.contains("failing database:") && unready.contains("ok helper"), "\(unready)")
        #expect(try HTTPClient.get(port, "/healthz").status == 200)
        worker.stop()
    }

    @Test func theListenerRefusesWhatItDoesNotServeAndAnEndlessRequestDelaysNoBatch() throws {
        let work = TemporaryDirectory("watch-limits")
        let inbox = work.path + "/inbox"
        let container = work.path + "/container"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let watch = try ServiceProcess([
            "watch", inbox, "--container", container, "--settle", "0", "--json", "--metrics", "127.0.0.1:0",
        ])
        let port = try #require(watch.metricsPort(), "no metrics line: \(watch.stderr)")

        #expect(try HTTPClient.get(port, "/nothing-here").status == 404)
        #expect(try HTTPClient.get(port, "/metrics/../etc/passwd").status == 404)
        let garbage = try HTTPClient(port: port)
        garbage.send("\u{01}\u{02} not http at all\r\n\r\n")
        #expect(HTTPClient.parse(garbage.readToEnd()).status == 400)
        let post = try HTTPClient(port: port)
        post.send("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        #expect(HTTPClient.parse(post.readToEnd()).status == 405)
        let huge = try HTTPClient(port: port)
        huge.send("GET /metrics HTTP/1.1\r\nX-Filler: " + String(repeating: "a", count: 100_000) + "\r\n\r\n")
        #expect(HTTPClient.parse(huge.readToEnd()).status == 431)

        // As many idle connections as the listener keeps, the last one a request
        // that never ends: a probe is still answered (it closes the connection
        // idle longest when it needs a slot).
        var idle: [HTTPClient] = []
        for _ in 0..<15 { idle.append(try HTTPClient(port: port)) }
        let endless = try HTTPClient(port: port)
        endless.send("GET /metrics HTTP/1.1\r\nHost: slow")
        #expect(try HTTPClient.get(port, "/healthz").status == 200)

        // Meanwhile a batch runs to its end.
        let drop = try Self.drop(notes: 10, into: work.path + "/staging/drop")
        try FileManager.default.moveItem(atPath: drop.path, toPath: inbox + "/drop")
        #expect(eventually { Self.finished(watch.stdout) != nil }, "\(watch.stderr)")
        #expect(Self.finished(watch.stdout)?["ingested"] as? Int == 11)

        // The endless request gets 408 at its deadline; then the slots are free again.
        #expect(HTTPClient.parse(endless.readToEnd()).status == 408)
        idle.removeAll()
        #expect(try eventually(timeout: 30) { try HTTPClient.get(port, "/healthz").status == 200 })
        #expect(watch.stop() == 143, "\(watch.stderr)")
    }

    /// Finding 6 of issue 51: 16 idle connections held the listener shut
    /// (`/healthz` answered with a reset). Now a new connection closes the one
    /// idle longest without a complete request, so a probe is answered while
    /// a peer holds every slot.
    @Test func idleConnectionsHoldingEverySlotCannotKeepHealthzShut() throws {
        let work = TemporaryDirectory("watch-idle")
        let inbox = work.path + "/inbox"
        let container = work.path + "/container"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let watch = try ServiceProcess([
            "watch", inbox, "--container", container, "--settle", "0", "--json", "--metrics", "127.0.0.1:0",
        ])
        let port = try #require(watch.metricsPort(), "no metrics line: \(watch.stderr)")
        for round in 0..<3 {
            // A peer takes all 16 slots and sends nothing (each would be closed
            // only at its 5 s deadline, and the peer would reconnect).
            var idle: [HTTPClient] = []
            for _ in 0..<16 { idle.append(try HTTPClient(port: port)) }
            let probe = try HTTPClient.get(port, "/healthz")
            #expect(probe.status == 200 && probe.body == "alive\n", "round \(round): \(probe)")
            #expect(try HTTPClient.get(port, "/metrics").body.contains("share_build_info"), "round \(round)")
            withExtendedLifetime(idle) {}
        }
        #expect(watch.stop() == 143, "\(watch.stderr)")
    }

    /// Finding 9 of issue 51: `share_decoder_misbehaved_total`, the one metric
    /// that tells an operator a decoder was taken over, could be deleted with
    /// no test failing. A watcher whose helper lies in its reply (the debug
    /// build's test fault `forge-mime`) counts it, and the helper it killed:
    /// each up by one per lie, in two batches.
    @Test func aHelperThatMisbehavesIsCountedOnceAsMisbehavedAndOnceAsKilled() throws {
        let work = TemporaryDirectory("watch-misbehaved")
        let inbox = work.path + "/inbox"
        let container = work.path + "/container"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let watch = try ServiceProcess(
            ["watch", inbox, "--container", container, "--settle", "0", "--json", "--metrics", "127.0.0.1:0"],
            environment: ["SHARE_TEST_HELPER_FAULT": "forge-mime:lie-1.jpg,forge-mime:lie-2.jpg"])
        let port = try #require(watch.metricsPort(), "no metrics line: \(watch.stderr)")
        var before = try Self.scrape(port)
        #expect(
            before["share_decoder_misbehaved_total"] == 0 && before["share_helper_kills_total"] == 0, "\(before.text)")
        for round in 1...2 {
            let staging = work.path + "/staging-\(round)"
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: staging + "/lie-\(round).jpg")
            try FileManager.default.copyItem(
                atPath: Fixtures.media("cmyk.jpg"), toPath: staging + "/honest-\(round).jpg")
            try FileManager.default.moveItem(atPath: staging, toPath: inbox + "/drop-\(round)")
            #expect(
                eventually {
                    watch.stdout.split(separator: "\n").filter { $0.contains(#""event":"batchFinished""#) }.count
                        == round
                }, "\(watch.stderr)")
            // The counters are read from the pool and the events as they come: wait for them, then compare.
            var after = before
            _ = try eventually(timeout: 30) {
                after = try Self.scrape(port)
                return after["share_decoder_misbehaved_total"] != before["share_decoder_misbehaved_total"]
            }
            #expect(
                after["share_decoder_misbehaved_total"] == (before["share_decoder_misbehaved_total"] ?? -1) + 1,
                "round \(round): \(after.text)")
            #expect(
                after["share_helper_kills_total"] == (before["share_helper_kills_total"] ?? -1) + 1,
                "round \(round): \(after.text)")
            #expect(
                after[#"share_item_failures_total{reason="decoderMisbehaved"}"#] == Double(round),
                "round \(round): \(after.text)")
            #expect(
                after[#"share_items_total{outcome="ingested"}"#] == Double(round), "round \(round): the honest photo")
            before = after
        }
        #expect(watch.stop() == 143, "\(watch.stderr)")
    }
}
