import Foundation
import TestSupport
import Testing

/// A dropped name with a bidirectional override (`d\u{202E}gpj.exe` reads
/// "dexe.jpg"), NEL or a line separator is shown escaped wherever people read
/// it, not only in log lines: `share ingest --dry-run`'s plan, `share status`'s
/// batches (a watched drop's folder name), and the HTML report. One function
/// escapes them all (DisplayText.escaped); JSON output names them as they are.
@Suite struct DisplayEscapeTests {
    static let names = ["d\u{202E}gpj.exe", "ls\u{2028}line.jpg", "nel\u{0085}line.txt", "ps\u{2029}zw\u{200B}.txt"]
    static let escapedNames = [
        #"d\u{202E}gpj.exe"#, #"ls\u{2028}line.jpg"#, #"nel\u{0085}line.txt"#, #"ps\u{2029}zw\u{200B}.txt"#,
    ]

    /// Characters that change how a line reads (newline and tab aside).
    static func unsafe(_ text: String) -> [String] {
        text.unicodeScalars.filter { scalar in
            guard scalar != "\n", scalar != "\t" else { return false }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator: return true
            default: return false
            }
        }.map { String(format: "U+%04X", $0.value) }
    }

    static func makeDrop(_ drop: String) throws {
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        for name in names where name.hasSuffix(".jpg") || name.hasSuffix(".exe") {
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: drop + "/" + name)
        }
        for name in names where name.hasSuffix(".txt") {
            try Data("a note\n".utf8).write(to: URL(fileURLWithPath: drop + "/" + name))
        }
    }

    @Test func dryRunStatusAndTheHTMLReportShowNamesEscaped() throws {
        let work = TemporaryDirectory("display-escape")
        let drop = work.file("drop")
        try Self.makeDrop(drop)

        let plan = try ShareProcess.run(["ingest", "--dry-run", "--container", work.file("container"), drop])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(Self.unsafe(plan.stdout).isEmpty, "raw in the plan: \(plan.stdout.debugDescription)")
        for name in Self.escapedNames { #expect(plan.stdout.contains(name), "\(name) not in: \(plan.stdout)") }
        // JSON lines name the files as they are.
        let json = try ShareProcess.run(["ingest", "--dry-run", "--json", "--container", work.file("container"), drop])
        #expect(json.status == 0, "\(json.stderr)")
        let sources = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.compactMap { $0["source"] as? String }
        #expect(sources.contains { $0.hasSuffix("/d\u{202E}gpj.exe") }, "\(json.stdout)")

        let run = try ShareProcess.run(["ingest", "--container", work.file("container"), drop])
        #expect(run.status == 0, "\(run.stderr)")
        let url = try #require(run.stdout.split(separator: "\n").last.map(String.init))
        let html = work.file("report.html")
        let report = try ShareProcess.run(["report", "--container", work.file("container"), "--html", html, url])
        #expect(report.status == 0, "\(report.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(Self.unsafe(page).isEmpty, "raw in the report: \(Self.unsafe(page))")
        for name in Self.escapedNames { #expect(page.contains(name), "\(name) not in the report") }

        // A watched drop whose folder is so named, in share status.
        let folder = "trip\u{202E}gpj.exe"
        try Self.makeDrop(work.file("inbox/" + folder))
        FileManager.default.createFile(atPath: work.file("inbox/" + folder + "/.ready"), contents: nil)
        let watch = try ShareProcess.run(["watch", work.file("inbox"), "--container", work.file("watched"), "--once"])
        #expect(watch.status == 0, "\(watch.stderr)")
        let status = try ShareProcess.run(["status", "--container", work.file("watched")])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(Self.unsafe(status.stdout).isEmpty, "raw in status: \(status.stdout.debugDescription)")
        #expect(status.stdout.contains(#"trip\u{202E}gpj.exe"#), "\(status.stdout)")
    }
}
