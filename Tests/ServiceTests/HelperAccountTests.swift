import Foundation
import Glibc
import TestSupport
import Testing

/// Helpers of their own (issue 58, finding 10): the decoder helpers of a root
/// `share` ran as `nobody`, so any other `nobody` process could stop or kill
/// them, and after `kill -STOP` on one an item failed at its time limit (62 s)
/// while `/healthz` and `/readyz` still said "ok". Now they run under a uid
/// and gid that no account and no other process has, `share doctor` says so,
/// and a helper stopped by a signal is named by `/readyz` and replaced.
@Suite(.serialized) struct HelperAccountTests {
    /// Where helpers' own uids come from (`HelperAccount.reservedRange`).
    static let reserved: ClosedRange<Int> = 0x7E00_0000...0x7E00_FFFF

    /// The fields of /proc/PID/stat after the name: state, ppid, …; nil when it is gone.
    static func stat(_ pid: Int32) -> (name: String, state: String, parent: Int32)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 2, let parent = Int32(fields[1]) else { return nil }
        return (String(text[text.index(after: open)..<close]), String(fields[0]), parent)
    }

    /// The four user ids of /proc/PID/status's `Uid:` line.
    static func uids(_ pid: Int32) -> [Int] {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Uid:") } ?? ""
        return line.dropFirst(4).split(whereSeparator: { $0 == "\t" || $0 == " " }).compactMap { Int($0) }
    }

    static func allProcesses() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
    }

    /// True when `pid` is a child, grandchild, … of `root`.
    static func descends(_ pid: Int32, from root: Int32) -> Bool {
        var current = pid
        for _ in 0..<8 {
            guard let parent = stat(current)?.parent, parent > 1 else { return false }
            if parent == root { return true }
            current = parent
        }
        return false
    }

    /// The decoder helpers of `share` process `root`: its template's children, sandboxed (no longer root).
    static func helpers(of root: Int32) -> [Int32] {
        let processes = allProcesses()
        let templates = Set(processes.filter { stat($0)?.parent == root })
        return processes.filter { pid in
            guard let found = stat(pid), templates.contains(found.parent) else { return false }
            let ids = uids(pid)
            return ids.count == 4 && !ids.contains(0)
        }
    }

    static func run(_ command: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let said = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: said, as: UTF8.self))
    }

    /// `share doctor` as root: its helper runs as a uid and gid of its own from
    /// the reserved range (its /proc/PID/status), and doctor says so in both forms.
    @Test(.enabled(if: geteuid() == 0, "needs root")) func doctorSaysTheHelpersOfARootShareRunUnderAUidOfTheirOwn()
        throws
    {
        let json = try ShareProcess.run(["doctor", "--json"])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any],
            "\(json.stdout)\(json.stderr)")
        let account = report["helperAccount"] as? [String: Any] ?? [:]
        let helper = report["helper"] as? [String: Any] ?? [:]
        #expect(account["ofTheirOwn"] as? Bool == true && account["fallback"] is NSNull, "\(report)")
        let uid = try #require(helper["uid"] as? Int, "\(report)")
        #expect(
            Self.reserved.contains(uid) && account["uid"] as? Int == uid && account["gid"] as? Int == uid, "\(report)")
        #expect(getpwuid(uid_t(uid)) == nil, "uid \(uid) has an account")
        let text = try ShareProcess.run(["doctor"])
        let line = text.stdout.split(separator: "\n").first { $0.contains("running as:") } ?? ""
        #expect(line.contains("root: helpers switch to uid ") && line.contains("of their own"), "\(text.stdout)")
        // (Each root share gets a uid of its own: this one's, as its helper's status shows it.)
        let own = try #require(
            line.components(separatedBy: "switch to uid ").last?.split(separator: " ").first.flatMap { Int($0) },
            "\(line)")
        #expect(
            Self.reserved.contains(own) && text.stdout.contains("Uid:\t\(own)\t\(own)\t\(own)\t\(own)"),
            "\(text.stdout)")
    }

    /// A root `share watch`: its helpers' uid is of the reserved range and no
    /// other process's; a process of the old shared user `nobody` cannot stop
    /// one; another root `share` (doctor) gets another uid. Then a helper
    /// stopped by root's SIGSTOP is named by `/readyz` (503), killed and
    /// replaced, `/readyz` passes again, and a drop is delivered whole.
    @Test(.enabled(if: geteuid() == 0, "needs root"))
    func aStoppedHelperIsNamedByReadyzAndReplacedAndNobodyCannotSignalIt() throws {
        let work = TemporaryDirectory("helper-account")
        try FileManager.default.createDirectory(atPath: work.file("inbox"), withIntermediateDirectories: true)
        let watch = try ServiceProcess([
            "watch", work.file("inbox"), "--container", work.file("container"), "--settle", "0", "--metrics",
            "127.0.0.1:0",
        ])
        let port = try #require(watch.metricsPort(), "\(watch.stderr)")
        let shareID = watch.process.processIdentifier
        var helpers: [Int32] = []
        #expect(
            eventually(timeout: 60) {
                helpers = Self.helpers(of: shareID)
                return !helpers.isEmpty
            }, "no helper: \(watch.stderr)")
        let helper = try #require(helpers.first)
        let ids = Self.uids(helper)
        let uid = try #require(ids.first)
        #expect(ids.allSatisfy { $0 == uid } && Self.reserved.contains(uid), "helper \(helper): Uid \(ids)")
        // Helpers this watcher forks meanwhile are its own: only other processes count.
        let others = Self.allProcesses().filter { !Self.descends($0, from: shareID) && Self.uids($0).contains(uid) }
        #expect(others.isEmpty, "other processes with uid \(uid): \(others)")

        // The old shared user cannot signal it.
        let nobody = try Self.run(["/usr/sbin/runuser", "-u", "nobody", "--", "/bin/kill", "-STOP", String(helper)])
        #expect(nobody.status != 0 && nobody.output.contains("Operation not permitted"), "\(nobody)")
        #expect(Self.stat(helper)?.state != "T")
        // Another root share's helpers get a uid of their own too, not this one.
        let doctor = try ShareProcess.run(["doctor", "--json"])
        let other =
            (try? JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any])?["helper"]
            as? [String: Any]
        #expect(
            other?["uid"] as? Int != uid && (other?["uid"] as? Int).map(Self.reserved.contains) == true,
            "\(doctor.stdout)")

        // Stopped (by root: no one else can): named, replaced, ready again.
        #expect(try HTTPClient.get(port, "/readyz").status == 200, "\(watch.stderr)")
        kill(helper, SIGSTOP)
        var named = ""
        #expect(
            try eventually(timeout: 60) {
                let ready = try HTTPClient.get(port, "/readyz")
                named = ready.body
                return ready.status == 503
                    && ready.body.contains(
                        "failing helpers: the decoder helper (pid \(helper)) was stopped by a signal")
            }, "/readyz: \(named)")
        #expect(eventually(timeout: 60) { (try? HTTPClient.get(port, "/readyz").status) == 200 }, "\(watch.stderr)")
        // It was killed (gone, or a zombie its template has yet to reap), and another took its place.
        #expect(
            Self.stat(helper) == nil || Self.stat(helper)?.state == "Z",
            "the stopped helper \(helper) lives on: \(String(describing: Self.stat(helper)))")
        #expect(
            eventually(timeout: 60) { !Self.helpers(of: shareID).filter { $0 != helper }.isEmpty },
            "no helper replaced \(helper)")

        // A drop after it: delivered, nothing failed.
        let staging = work.file("staging")
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: staging + "/photo.jpg")
        try FileManager.default.moveItem(atPath: staging, toPath: work.file("inbox/drop"))
        var scrape = Scrape("")
        #expect(
            try eventually(timeout: 120) {
                scrape = Scrape(try HTTPClient.get(port, "/metrics").body)
                return (scrape[#"share_items_total{outcome="ingested"}"#] ?? 0)
                    + (scrape[#"share_items_total{outcome="failed"}"#] ?? 0) >= 1
            }, "\(watch.stderr)")
        #expect(
            scrape[#"share_items_total{outcome="ingested"}"#] == 1
                && scrape[#"share_items_total{outcome="failed"}"#] == 0, "\(scrape.text)\(watch.stderr)")
        // (128 + SIGTERM: stopped outside a service manager.)
        #expect(watch.stop() == 128 + SIGTERM, "\(watch.stderr)")
    }

    /// A helper stopped while it decodes (here one that stalls on `stalled.jpg`,
    /// a debug build's test fault) is not waited for until the item's time
    /// limit: it is killed and the item read again in a fresh helper, up to
    /// twice; stopped a third time, the item fails saying so (not `timeLimit`),
    /// and the rest of the drop (a note, which no helper reads) is delivered.
    @Test(.enabled(if: geteuid() == 0, "needs root")) func aHelperStoppedWhileDecodingIsKilledAndItsItemReadAgain()
        throws
    {
        let work = TemporaryDirectory("helper-stopped")
        try FileManager.default.createDirectory(atPath: work.file("drop"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: work.file("drop/stalled.jpg"))
        try Data("a note\n".utf8).write(to: URL(fileURLWithPath: work.file("drop/note.txt")))
        let container = work.file("container")
        let ingest = try ServiceProcess(
            ["ingest", work.file("drop"), "--container", container],
            environment: ["SHARE_TEST_HELPER_FAULT": "stall:stalled.jpg"])
        let shareID = ingest.process.processIdentifier
        let copies = URL(fileURLWithPath: container).standardizedFileURL.path + "/"
        /// Whether helper `pid` holds a copy in the container open (the item it was sent).
        func decodingACopy(_ pid: Int32) -> Bool {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            return fds.contains {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")).map {
                    $0.hasPrefix(copies)
                } == true
            }
        }
        var stopped: Set<Int32> = []
        #expect(
            eventually(timeout: 120) {
                for helper in Self.helpers(of: shareID)
                where !stopped.contains(helper) && Self.stat(helper)?.state != "T" && decodingACopy(helper) {
                    kill(helper, SIGSTOP)
                    stopped.insert(helper)
                }
                return !ingest.process.isRunning
            }, "\(ingest.stderr)")
        #expect(stopped.count == 3, "stopped \(stopped.sorted()): \(ingest.stderr)")
        #expect(ingest.stderr.contains("kept being stopped by a signal from outside"), "\(ingest.stderr)")
        #expect(!ingest.stderr.contains("took longer than"), "\(ingest.stderr)")
        #expect(ingest.stderr.contains("1 of 2 items ingested, 1 failed"), "\(ingest.stderr)")
        for pid in stopped { #expect(Self.stat(pid) == nil || Self.stat(pid)?.state == "Z", "helper \(pid) lives on") }
    }
}
