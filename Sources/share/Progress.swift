import Foundation
import ShareIngest

/// Shows a batch's events: a live line on a terminal (items per stage, bytes,
/// items/s, ETA), plain lines otherwise, JSON lines with `--json`, nothing but
/// errors with `--quiet`.
final class ProgressPrinter: @unchecked Sendable {
    enum Mode { case human, json, quiet }

    private let mode: Mode
    private let terminal = Terminal.shared
    private let lock = NSLock()
    private var counts: [StageName: Int] = [:]
    private var bytes: Int64 = 0
    private var finished = 0
    private var seen = 0
    private let start = Date()
    private var lastDraw = Date.distantPast

    init(mode: Mode) { self.mode = mode }

    func handle(_ event: IngestEvent) {
        switch event {
        case .batchStarted(let id, let key):
            if mode == .json { terminal.out(JSONLine.object(["event": "batchStarted", "batch": id.uuidString, "key": key.rawValue])) }
        case .stageFinished(let stage, let index, let copied):
            lock.lock()
            counts[stage, default: 0] += 1
            bytes += copied
            seen = max(seen, index + 1)
            let line = shouldDraw() ? statusLine() : nil
            lock.unlock()
            if let line, mode == .human { terminal.status(line) }
        case .itemFinished(let item):
            lock.lock()
            finished += 1
            seen = max(seen, item.index + 1)
            lock.unlock()
            report(item)
        case .batchFinished(let batch):
            if mode == .human { terminal.clearStatus() }
            if mode == .json { terminal.out(JSONLine.batch(batch)) }
        }
    }

    private func report(_ item: ItemReport) {
        switch mode {
        case .json:
            terminal.out(JSONLine.item(item))
        case .quiet:
            if let failure = item.failure, item.status == .failed { terminal.err("share: failed: \(failure.message)") }
        case .human:
            if let failure = item.failure {
                terminal.err("share: \(item.status.rawValue): \(failure.message)")
            } else if !terminal.stderrIsTerminal {
                terminal.err("share: ingested: \(item.source) -> \(item.entry?.path ?? "")")
            }
            for warning in item.warnings { terminal.err("share: warning: \(item.source): \(warning)") }
        }
    }

    private func shouldDraw() -> Bool {
        let now = Date()
        guard now.timeIntervalSince(lastDraw) > 0.1 else { return false }
        lastDraw = now
        return true
    }

    private func statusLine() -> String {
        let elapsed = max(0.001, Date().timeIntervalSince(start))
        let rate = Double(finished) / elapsed
        let stages = StageName.allCases.compactMap { stage in counts[stage].map { "\(stage.rawValue) \($0)" } }.joined(separator: " · ")
        let remaining = max(0, seen - finished)
        let eta = rate > 0 ? String(format: " · ETA %.0fs", Double(remaining) / rate) : ""
        return String(format: "%d/%d done · %@ · %.1f MB · %.1f items/s%@", finished, seen, stages, Double(bytes) / 1e6, rate, eta)
    }
}

/// JSON-lines encoding of events for other programs.
enum JSONLine {
    static func object(_ fields: [String: Any?]) -> String {
        let clean = fields.mapValues { $0 ?? NSNull() }
        let data = try! JSONSerialization.data(withJSONObject: clean, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func item(_ item: ItemReport) -> String {
        object([
            "event": "item", "index": item.index, "source": item.source, "status": item.status.rawValue,
            "error": item.failure?.message, "stage": item.failure?.stage.rawValue, "reason": item.failure?.reason.rawValue,
            "path": item.entry?.path, "type": item.entry?.type.rawValue, "warnings": item.warnings,
        ])
    }

    static func batch(_ batch: BatchReport) -> String {
        object([
            "event": "batchFinished", "batch": batch.batchID.uuidString, "key": batch.key.rawValue,
            "redirectURL": batch.redirectURL?.description, "manifest": batch.manifestPath,
            "ingested": batch.ingestedCount, "failed": batch.failedCount, "skipped": batch.skippedCount,
            "seconds": batch.wallSeconds,
        ])
    }
}
