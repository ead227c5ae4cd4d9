import Foundation
import TestSupport
import Testing

/// What `share ingest` says on stderr when it is not a terminal (issue 61,
/// finding 7): as the README's first example says, one line per failed or
/// skipped item, then a summary; no line per item delivered unless
/// `--verbose` asks for them.
@Suite struct ItemLinesTests {
    /// A drop of two photos and a FIFO (skipped: never opened).
    static func drop(in work: TemporaryDirectory) throws -> String {
        let drop = work.path + "/drop"
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: drop + "/a.jpg")
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: drop + "/b.jpg")
        #expect(mkfifo(drop + "/pipe", 0o600) == 0)
        return drop
    }

    @Test func stderrNamesOnlyTheItemsNotDeliveredThenTheSummary() throws {
        let work = TemporaryDirectory("item-lines")
        let drop = try Self.drop(in: work)
        let run = try ShareProcess.run(["ingest", "--container", work.path + "/c", drop])
        #expect(run.status == 1, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        let items = lines.filter {
            $0.hasPrefix("share: ingested:") || $0.hasPrefix("share: failed:") || $0.hasPrefix("share: skipped:")
        }
        #expect(
            items.count == 1 && items[0].hasPrefix("share: skipped:") && items[0].contains("pipe"),
            "only the FIFO gets a line: \(run.stderr)")
        #expect(lines.contains { $0.hasPrefix("share: 2 of 3 items ingested") }, "\(run.stderr)")
    }

    @Test func verboseAddsALinePerItemDelivered() throws {
        let work = TemporaryDirectory("item-lines")
        let drop = try Self.drop(in: work)
        let run = try ShareProcess.run(["ingest", "--container", work.path + "/c", "--verbose", drop])
        #expect(run.status == 1, "\(run.stderr)")
        for name in ["a.jpg", "b.jpg"] {
            #expect(run.stderr.contains("share: ingested: \(drop)/\(name) -> file://"), "\(run.stderr)")
        }
        #expect(run.stderr.contains("share: skipped: \(drop)/pipe"), "\(run.stderr)")
    }
}
