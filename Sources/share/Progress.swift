import Foundation
import ShareIngestCore
import Synchronization

/// Shows a batch's events: a live line on a terminal (items per stage, bytes,
/// items/s, ETA), a line per failed or skipped item (and, when `deliveredLines`,
/// per item delivered too), JSON lines with `--json`, nothing but errors with `--quiet`.
final class ProgressPrinter: Sendable {
    enum Mode { case human, json, quiet }

    /// What the progress line counts, updated from the pipeline's threads.
    private struct Counts {
        var progress = BatchProgress()
        var lastDraw = Date.distantPast
    }

    private let mode: Mode
    private let terminal = Terminal.shared
    private let counts = Mutex(Counts())
    private let start = Date()
    /// The batch under way (its items' log lines name it).
    private let currentBatch = Mutex<String?>(nil)
    /// With a legacy manifest, whether text and links are delivered depends on
    /// the whole batch (they cannot sit next to files): the fan-in decides,
    /// after they finished. Their lines wait for the batch's end and show what
    /// it decided, never "ingested" for an item the report calls skipped.
    private let holdsText: Bool
    private let heldText = Mutex<[Int]>([])
    /// Whether an item delivered (ingested, or a sidecar attached) gets a line of
    /// its own: `share ingest --verbose`, a watcher's log; otherwise only the
    /// items not delivered do, then the summary.
    private let deliveredLines: Bool

    init(mode: Mode, holdsText: Bool = false, deliveredLines: Bool) {
        self.mode = mode
        self.holdsText = holdsText
        self.deliveredLines = deliveredLines
    }

    func handle(_ event: IngestEvent) {
        switch event {
        case .batchStarted(let id, let key, let itemCount):
            currentBatch.withLock { $0 = id.uuidString }
            counts.withLock { $0.progress.take(event) }
            if mode == .json {
                terminal.out(
                    JSONLine.object([
                        "event": "batchStarted", "batch": id.uuidString, "key": key.rawValue, "items": itemCount,
                    ]))
            }
        case .stageFinished:
            let line = counts.withLock { counts -> String? in
                counts.progress.take(event)
                let now = Date()
                guard now.timeIntervalSince(counts.lastDraw) > 0.1 else { return nil }
                counts.lastDraw = now
                return counts.progress.line(elapsed: now.timeIntervalSince(start))
            }
            if let line, mode == .human { terminal.status(line) }
        case .itemFinished(let item):
            counts.withLock { $0.progress.take(event) }
            if holdsText, item.status == .ingested, let type = item.entry?.type, type == .text || type == .url {
                heldText.withLock { $0.append(item.index) }
            } else {
                report(item)
            }
        case .batchFinished(let batch):
            if mode == .human { terminal.clearStatus() }
            let held = Set(
                heldText.withLock { held in
                    defer { held = [] }
                    return held
                })
            if !held.isEmpty {
                for item in batch.items where held.contains(item.index) { report(item) }
            }
            if mode == .json { terminal.out(JSONLine.batch(batch)) }
        }
    }

    private func report(_ item: ItemReport) {
        let batch = currentBatch.withLock { $0 }
        func log(_ level: ServiceLogLine.Level, _ event: String, _ plain: String, _ message: String) {
            terminal.log(
                ServiceLogLine(
                    level: level, event: event, batch: batch, item: String(item.index),
                    stage: item.failure?.stage.rawValue,
                    reason: item.failure?.reason.rawValue, message: message), plain: plain)
        }
        switch mode {
        case .json:
            terminal.out(JSONLine.item(item))
        case .quiet:
            if let failure = item.failure, item.status == .failed {
                log(.error, "itemFailed", "share: failed: \(failure.message)", failure.message)
            }
        case .human:
            if let failure = item.failure {
                let failed = item.status == .failed
                log(
                    failed ? .error : .warning, failed ? "itemFailed" : "itemSkipped",
                    "share: \(item.status.rawValue): \(failure.message)", failure.message)
            } else if let media = item.attachedTo, deliveredLines {
                log(.info, "itemAttached", "share: attached: \(item.source) to \(media)", "\(item.source) to \(media)")
            } else if deliveredLines {
                log(
                    .info, "itemIngested", "share: ingested: \(item.source) -> \(item.entry?.path ?? "")",
                    "\(item.source) -> \(item.entry?.path ?? "")")
            }
            for warning in item.warnings {
                log(.warning, "itemWarning", "share: warning: \(item.source): \(warning)", "\(item.source): \(warning)")
            }
        }
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
            "error": item.failure?.message, "stage": item.failure?.stage.rawValue,
            "reason": item.failure?.reason.rawValue,
            "path": item.entry?.path, "type": item.entry?.type.rawValue, "warnings": item.warnings,
        ])
    }

    /// The last line of a batch that stopped before its end: why (`interrupted`,
    /// `diskFull`, `storeFailed`), the counts so far and the command that finishes it.
    static func stopped(_ batch: BatchReport, resume: String) -> String {
        let reason: String
        switch batch.stop ?? .asked {
        case .asked: reason = "interrupted"
        case .diskFull: reason = "diskFull"
        case .storeFailed: reason = "storeFailed"
        }
        return object([
            "event": "batchStopped", "batch": batch.batchID.uuidString, "key": batch.key.rawValue, "reason": reason,
            "message": (batch.stop ?? .asked).description, "ingested": batch.ingestedCount,
            "unfinished": batch.unfinishedCount,
            "failed": batch.failedCount - batch.unfinishedCount, "resume": resume, "seconds": batch.wallSeconds,
        ])
    }

    static func batch(_ batch: BatchReport) -> String {
        object([
            "event": "batchFinished", "batch": batch.batchID.uuidString, "key": batch.key.rawValue,
            "redirectURL": batch.redirectURL?.description, "manifest": batch.manifestPath,
            "ingested": batch.ingestedCount, "failed": batch.failedCount, "skipped": batch.skippedCount,
            "duplicates": batch.entries.filter { $0.duplicateOf != nil }.count, "seconds": batch.wallSeconds,
        ])
    }
}
