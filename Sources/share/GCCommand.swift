import Foundation
import ShareIngest

/// `share gc`: removes the files of consumed shares older than a retention period.
enum GCCommand {
    static let usage = """
        usage: share gc [--container DIR] [--older-than 7d|12h|30m|0] [--dry-run] [--verbose]
               share gc --db URL [--older-than 7d|12h|30m|0] [--dry-run]   (finished batches, their jobs, gone workers)
        """

    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let parsed: Arguments
        switch Command.parse(arguments, options: ["container", "older-than", "db"], flags: ["dry-run", "verbose"], usage: usage) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        guard let retention = ConsumedShareCollector.parseRetention(parsed.value("older-than") ?? "7d") else {
            return Command.usageFailure("--older-than must look like 7d, 12h, 30m, 45s or 0", usage: usage)
        }
        if let url = parsed.value("db") {
            let cancellation = CancellationFlag()
            Signals.cancel(cancellation)
            do {
                let pruned = try DistributedIngestor.prune(url: url, olderThan: retention, dryRun: parsed.flag("dry-run"), cancellation: cancellation)
                Terminal.shared.err("share: \(parsed.flag("dry-run") ? "would remove" : "removed") \(pruned.batches) finished batches (\(pruned.jobs) jobs) and \(pruned.workers) gone workers from the database")
            } catch {
                return Command.failure("\(error)")
            }
            guard parsed.value("container") != nil else { return .success }
        }
        do {
            let container = try Command.container(parsed)
            let dryRun = parsed.flag("dry-run")
            // A summary on stderr; each path on stdout only with --verbose (a million-item share has millions).
            let verbose = parsed.flag("verbose")
            let report = try ConsumedShareCollector(container: container).collect(retention: retention, dryRun: dryRun) { file in
                if verbose { Terminal.shared.out((dryRun ? "would remove " : "removed ") + file) }
            }
            Terminal.shared.err("share: \(dryRun ? "would collect" : "collected") \(report.keys.count) consumed shares, \(report.fileCount) files, \(String(format: "%.1f", Double(report.bytes) / 1e6)) MB")
            return .success
        } catch {
            return Command.failure("\(error)")
        }
    }
}
