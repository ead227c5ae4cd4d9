import Foundation
import ShareIngest

/// `share status`: the container's batches, their state, counts, keys and URLs.
enum StatusCommand {
    static let usage = "usage: share status [--container DIR] [--json]\n       share status --db URL [--json]"

    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let parsed: Arguments
        switch Command.parse(arguments, options: ["container", "db"], flags: ["json"], usage: usage) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        if let url = parsed.value("db") { return distributed(url: url, json: parsed.flag("json")) }
        let batches: [BatchRecord]
        do {
            let container = try Command.container(parsed)
            batches = try BatchJournal(container: container).batches()
        } catch {
            return Command.failure("\(error)")
        }
        let formatter = ISO8601DateFormatter()
        if parsed.flag("json") {
            for batch in batches {
                Terminal.shared.out(JSONLine.object([
                    "batch": batch.id.uuidString, "key": batch.key.rawValue, "state": batch.state.rawValue,
                    "created": formatter.string(from: batch.createdAt), "finished": batch.finishedAt.map(formatter.string(from:)),
                    "items": batch.itemCount, "ingested": batch.ingestedCount, "failed": batch.failedCount, "skipped": batch.skippedCount,
                    "redirectURL": batch.redirectURL, "manifest": batch.manifestPath, "drop": batch.dropName,
                ]))
            }
            return .success
        }
        if batches.isEmpty {
            Terminal.shared.out("no batches")
            return .success
        }
        for batch in batches {
            let counts = "\(batch.ingestedCount)/\(batch.itemCount) ingested" + (batch.failedCount > 0 ? ", \(batch.failedCount) failed" : "")
                + (batch.skippedCount > 0 ? ", \(batch.skippedCount) skipped" : "")
            let drop = batch.dropName.map { " drop=\($0)" } ?? ""
            Terminal.shared.out("\(batch.id.uuidString)  \(batch.state.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(formatter.string(from: batch.createdAt))  \(counts)\(drop)")
            Terminal.shared.out("    \(batch.redirectURL ?? "key \(batch.key)")")
        }
        return .success
    }

    /// `--db`: batches in PostgreSQL, queue depth per stage, work done per worker.
    private static func distributed(url: String, json: Bool) -> ExitStatus {
        do {
            let status = try DistributedIngestor.status(url: url)
            if json {
                for batch in status.batches {
                    Terminal.shared.out(JSONLine.object([
                        "batch": batch.id.uuidString, "key": batch.key.rawValue, "state": batch.state.rawValue, "items": batch.itemCount,
                        "ingested": batch.ingestedCount, "failed": batch.failedCount, "skipped": batch.skippedCount,
                        "redirectURL": batch.redirectURL, "manifest": batch.manifestPath,
                    ]))
                }
                Terminal.shared.out(JSONLine.object([
                    "queue": Dictionary(status.stages.map { ("\($0.stage).\($0.state)", $0.count) }, uniquingKeysWith: +),
                    "workers": Dictionary(status.workers.map { ($0.worker, $0.done) }, uniquingKeysWith: +),
                ]))
                return .success
            }
            for batch in status.batches {
                Terminal.shared.out("\(batch.id.uuidString)  \(batch.state.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(batch.ingestedCount)/\(batch.itemCount) ingested  \(batch.redirectURL ?? "key \(batch.key)")")
            }
            Terminal.shared.out("queue: " + status.stages.map { "\($0.stage) \($0.state) \($0.count)" }.joined(separator: ", "))
            Terminal.shared.out("workers: " + status.workers.map { "\($0.worker) \($0.done)" }.joined(separator: ", "))
            return .success
        } catch {
            return Command.failure("\(error)")
        }
    }
}
