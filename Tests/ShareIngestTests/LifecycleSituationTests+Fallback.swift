import Foundation
import Synchronization
import Testing

@testable import ShareIngestCore

/// Where a batch's item reports come from when its stored report is gone: its
/// own store, the same in both modes (the journal locally; the queue in `--db`
/// mode, whose batches the container's journal does not know).
extension LifecycleSituationTests {
    /// A batch too large for its reports to be held (``BatchReport/itemsHeldInMemory``),
    /// every tenth item failed, through the fan-in; its stored report is removed
    /// before the reports are read, on another thread once the holder is done
    /// with it: they are the ones the stored report had, labels and outcomes,
    /// read from the batch's store opened again.
    @Test(arguments: Mode.allCases)
    func aReportWhoseStoredCopyIsGoneIsReadFromTheBatchsStore(_ mode: Mode) throws {
        let count = BatchReport.itemsHeldInMemory + 1
        let items = settleItems(count).map { item in
            var item = item
            item.completed = SettleStage.name
            if item.index % 10 == 3 { item.failure = ItemFailure(.sniff, .empty, "\(item.label) is empty") }
            return item
        }
        let holder = try Self.holder(mode, items: items)
        try holder.fanIn(faults: Faults())
        #expect(try holder.fanIn()?.state == .done, "\(mode)")
        let report = try #require(holder.told.finished.last)
        #expect(report.counts.items == count && report.failedCount == count / 10 && !report.items.areHeld)

        let path = holder.directory.reportPath(key: report.key)
        let stored = Array(try BatchReport.stored(key: report.key, in: holder.directory).items)
        try FileManager.default.removeItem(atPath: path)
        // Gone through one at a time (as events are replayed), then read whole.
        let visited = Thread.result {
            var visited: [Outcome] = []
            report.items.visit { visited.append(Outcome($0)) }
            return visited
        }
        let expected = stored.map(Outcome.init)
        #expect(Self.difference(visited, expected) == nil, "\(mode): gone through")
        let rebuilt = Thread.result { Array(report.items) }

        try #require(rebuilt.count == count && stored.count == count, "\(mode)")
        #expect(Self.difference(rebuilt.map(Outcome.init), expected) == nil, "\(mode): read whole")
        #expect(
            rebuilt[3].status == .failed && rebuilt[3].failure?.message.contains("item-3 is empty") == true, "\(mode)")
        #expect(rebuilt[4].status == .ingested && rebuilt[4].entry != nil, "\(mode)")
        #expect(rebuilt.count { $0.status == .failed } == count / 10, "\(mode)")
    }

    /// A local batch too large for its reports to be held, stopped before any
    /// item ran (a run has no interrupted report in `--db` mode: its client
    /// waits): its reports, read on another thread once the run is over, come
    /// from its journal, each item unfinished, with its label.
    @Test func aLargeInterruptedReportIsReadFromTheBatchsJournal() throws {
        let count = BatchReport.itemsHeldInMemory + 1
        let holder = try LocalHolder(items: settleItems(count), maxAttempts: 3)
        let stop = CancellationFlag()
        stop.cancel()
        var batch = holder.record
        let report = try holder.runner(cancellation: stop).run(&batch)
        #expect(report.interrupted && report.counts.items == count && !report.items.areHeld)

        let items = Thread.result { Array(report.items) }
        let labels = (0..<count).map { "item-\($0)" }
        let wrong = items.indices.first { items[$0].index != $0 || items[$0].source != labels[$0] }
        let first = wrong.map { "\(Outcome(items[$0]))" } ?? "none"
        #expect(items.count == count && wrong == nil, "\(items.count) reports; the first wrong: \(first)")
        // Not delivered yet: reported failed, and counted unfinished (the resume finishes them).
        #expect(
            items.allSatisfy { $0.status == .failed && $0.entry == nil },
            "\(items.first.map { "\(Outcome($0))" } ?? "none")")
        #expect(report.unfinishedCount == count)
    }

    /// Nil when `reports` are `expected`, else where they first differ (not the
    /// whole of either: ten thousand of them).
    static func difference(_ reports: [Outcome], _ expected: [Outcome]) -> String? {
        guard reports != expected else { return nil }
        guard let first = reports.indices.first(where: { $0 < expected.count && reports[$0] != expected[$0] }) else {
            return "\(reports.count) reports, \(expected.count) expected"
        }
        return "#\(first): \(reports[first]), expected \(expected[first]) (\(reports.count) of \(expected.count))"
    }

    /// What a user reads of an item's report: its place, its label, its outcome and why, what was delivered.
    struct Outcome: Equatable, Sendable, CustomStringConvertible {
        let index: Int
        let source: String
        let status: ItemStatus
        let failure: String?
        let entry: String?

        init(_ report: ItemReport) {
            (index, source, status) = (report.index, report.source, report.status)
            (failure, entry) = (report.failure?.message, report.entry?.path)
        }

        var description: String { "\(index) \(source) \(status) \(failure ?? "-") \(entry ?? "-")" }
    }
}

extension Thread {
    /// `body`'s result, computed on a thread of its own.
    static func result<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        let result = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            result.withLock { $0 = body() }
            done.signal()
        }.start()
        done.wait()
        return result.withLock { $0! }
    }
}
