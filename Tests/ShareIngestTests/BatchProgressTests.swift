import Foundation
import ShareManifest
import Testing

@testable import ShareIngestCore

/// The progress line `share ingest` draws on a terminal, given a batch's
/// events (issue 61, finding 11): its total is the batch's planned count from
/// the start, never the highest item seen so far, so the first ETA is not too
/// short; before the count is known there is no total and no ETA. Elapsed time
/// is given, not measured.
@Suite struct BatchProgressTests {
    static func item(_ index: Int) -> ItemReport {
        ItemReport(
            index: index, source: "/drop/\(index).txt", status: .ingested, failure: nil, warnings: [],
            entry: SharedMediaFile(path: "file:///c/\(index).txt", type: .file, size: 10), id: nil, stageSeconds: [:])
    }

    @Test func theTotalIsThePlannedCountFromTheFirstItem() throws {
        var progress = BatchProgress()
        progress.take(.batchStarted(batchID: UUID(), key: try ShareKey("progress"), itemCount: 300))
        // The first five items, in completion order, finish their copy, then leave the pipeline.
        for index in [3, 0, 4, 1, 2] {
            progress.take(.stageFinished(.copy, index: index, bytes: 1_000_000))
            progress.take(.itemFinished(Self.item(index)))
        }
        // 5 items in 10 s: 0.5 items/s, 295 left: 590 s.
        #expect(progress.line(elapsed: 10) == "5/300 done · copy 5 · 5.0 MB · 0.5 items/s · ETA 590s")
    }

    @Test func noTotalAndNoETABeforeTheCountIsKnown() {
        var progress = BatchProgress()
        progress.take(.stageFinished(.sniff, index: 73, bytes: 0))
        progress.take(.itemFinished(Self.item(73)))
        let line = progress.line(elapsed: 2)
        #expect(line == "1 done · sniff 1 · 0.0 MB · 0.5 items/s", "\(line)")
        #expect(!line.contains("ETA") && !line.contains("/74"))
    }
}
