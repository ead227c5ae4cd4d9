import Foundation

/// What a progress line says about a batch under way, counted from its events
/// (``IngestEvent``): items finished of how many, items per stage, bytes
/// copied, items/s and the time left. The total is the batch's planned count
/// (``IngestEvent/batchStarted(batchID:key:itemCount:)``, said once the walk of
/// its folders is over), never the highest item seen so far, which grows while
/// items come in and makes an early ETA far too short: until the count is
/// known the line shows neither a total nor an ETA.
package struct BatchProgress: Sendable {
    /// How many items the batch has; nil until its start says so.
    package private(set) var itemCount: Int?
    /// Items that left the pipeline (ingested, failed, skipped, attached).
    package private(set) var finished = 0
    /// Items each stage finished with.
    package private(set) var stages: [StageName: Int] = [:]
    /// Bytes copied.
    package private(set) var bytes: Int64 = 0

    package init() {}

    /// Counts `event`.
    package mutating func take(_ event: IngestEvent) {
        switch event {
        case .batchStarted(_, _, let count):
            self = BatchProgress()
            itemCount = count
        case .stageFinished(let stage, _, let copied):
            stages[stage, default: 0] += 1
            bytes += copied
        case .itemFinished:
            finished += 1
        case .batchFinished:
            break
        }
    }

    /// The line after `elapsed` seconds:
    /// `5/300 done · sniff 7 · copy 6 · 1.2 MB · 2.5 items/s · ETA 118s`;
    /// `5 done · …` (no total, no ETA) while the count is not known.
    package func line(elapsed: Double) -> String {
        let rate = Double(finished) / max(0.001, elapsed)
        let done = itemCount.map { "\(finished)/\($0) done" } ?? "\(finished) done"
        var eta = ""
        if let itemCount, rate > 0 { eta = String(format: " · ETA %.0fs", Double(max(0, itemCount - finished)) / rate) }
        return String(
            format: "%@ · %@ · %.1f MB · %.1f items/s%@", done, StageName.progress(stages), Double(bytes) / 1e6, rate,
            eta)
    }
}
