import Foundation
import ShareIngestCore

/// `share gc`: removes the files of consumed shares older than a retention period.
enum GCCommand {
    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let parsed: Arguments
        switch Command.parse(arguments, CommandTable.gc) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        // The parser checked its form (a whole number and a unit, or 0).
        let retention = ConsumedShareCollector.parseRetention(parsed.value("older-than") ?? "7d") ?? 7 * 86_400
        if let url = parsed.value("db") {
            let cancellation = CancellationFlag()
            Signals.cancel(cancellation)
            do {
                let pruned = try DistributedIngestor.prune(
                    url: url, olderThan: retention, dryRun: parsed.flag("dry-run"), cancellation: cancellation)
                Terminal.shared.err(
                    "share: \(parsed.flag("dry-run") ? "would remove" : "removed") \(pruned.batches) finished batches (\(pruned.jobs) jobs) and \(pruned.workers) gone workers from the database"
                )
            } catch {
                if let signal = Signals.received {
                    return Command.failure("interrupted: \(error)", ExitStatus.after(signal: signal))
                }
                return Command.failure(error, database: true)
            }
            guard parsed.value("container") != nil else { return .success }
        }
        do {
            let container = try Command.existingContainer(parsed)
            let dryRun = parsed.flag("dry-run")
            // A summary on stderr; each path on stdout only with --verbose (a million-item share has millions).
            let verbose = parsed.flag("verbose")
            let report = try ConsumedShareCollector(container: container).collect(retention: retention, dryRun: dryRun)
            { file in
                if verbose { Terminal.shared.text((dryRun ? "would remove " : "removed ") + file) }
            }
            for batch in report.abandoned {
                Terminal.shared.err(
                    "share: \(dryRun ? "would collect" : "collected") the copies of batch \(batch.uuidString), left unfinished for longer than --older-than (no longer resumable)"
                )
            }
            let abandoned = report.abandoned.isEmpty ? "" : " and \(counted(report.abandoned.count, "abandoned batch"))"
            Terminal.shared.err(
                "share: \(dryRun ? "would collect" : "collected") \(counted(report.keys.count, "consumed share"))\(abandoned), \(counted(report.fileCount, "file")), \(String(format: "%.1f", Double(report.bytes) / 1e6)) MB"
            )
            return .success
        } catch {
            return Command.failure(error)
        }
    }
}
