import Foundation
import ShareIngestCore
import SystemCalls

/// `share status`: the container's batches, their state, counts, keys and URLs.
enum StatusCommand {
    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let parsed: Arguments
        switch Command.parse(arguments, CommandTable.status) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        if let url = parsed.value("db") { return distributed(url: url, json: parsed.flag("json")) }
        var batches: [BatchRecord] = []
        var finished: [UUID: Int] = [:]
        var interrupted: Set<UUID> = []
        do {
            let container = try Command.existingContainer(parsed)
            // A container no batch has run in yet has no journal: none is made.
            if (try? FileStatus.of(container.stateDirectory + "/journal.sqlite")) != nil {
                let journal = try BatchJournal(container: container)
                batches = try journal.batches()
                for batch in batches where journal.isInterrupted(batch) { interrupted.insert(batch.id) }
                // Live progress of the batches under way (read from the journal's index).
                for batch in batches where batch.state == .running || batch.state == .manifesting {
                    finished[batch.id] = try journal.finishedCount(of: batch)
                }
            }
        } catch {
            return Command.failure(error)
        }
        /// The state people see: an unfinished batch no process works on is `interrupted`.
        func state(_ batch: BatchRecord) -> String {
            interrupted.contains(batch.id) ? "interrupted" : batch.state.rawValue
        }
        let formatter = ISO8601DateFormatter()
        if parsed.flag("json") {
            for batch in batches {
                Terminal.shared.out(
                    JSONLine.object([
                        "batch": batch.id.uuidString, "key": batch.key.rawValue, "state": state(batch),
                        "created": formatter.string(from: batch.createdAt),
                        "finished": batch.finishedAt.map(formatter.string(from:)),
                        "items": batch.itemCount,
                        "finishedItems": finished[batch.id] ?? (batch.state == .done ? batch.itemCount : nil),
                        "ingested": batch.ingestedCount, "failed": batch.failedCount, "skipped": batch.skippedCount,
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
            let counts =
                finished[batch.id].map { "\($0)/\(batch.itemCount) finished" }
                ?? "\(batch.ingestedCount)/\(batch.itemCount) ingested"
                + (batch.failedCount > 0 ? ", \(batch.failedCount) failed" : "")
                + (batch.skippedCount > 0 ? ", \(batch.skippedCount) skipped" : "")
            let drop = batch.dropName.map { " drop=\($0)" } ?? ""
            Terminal.shared.text(
                "\(batch.id.uuidString)  \(state(batch).padding(toLength: 11, withPad: " ", startingAt: 0)) \(formatter.string(from: batch.createdAt))  \(counts)\(drop)"
            )
            Terminal.shared.text("    \(batch.redirectURL ?? "key \(batch.key)")")
        }
        return .success
    }

    /// `--db`: batches with their live progress, workers live and gone, the
    /// queue per stage, recent failures with their reasons.
    private static func distributed(url: String, json: Bool) -> ExitStatus {
        let cancellation = CancellationFlag()
        Signals.cancel(cancellation)
        let status: DistributedStatus
        do {
            status = try DistributedIngestor.status(url: url, cancellation: cancellation)
        } catch {
            if let signal = Signals.received {
                return Command.failure("interrupted: \(error)", ExitStatus.after(signal: signal))
            }
            return Command.failure(error, database: true)
        }
        if json {
            printJSON(status)
        } else {
            printText(status)
        }
        return .success
    }

    /// The JSON key of each stage's queued and running jobs.
    private static func counts(_ stages: [StageName: DistributedStatus.StageCount]) -> [String: [String: Int]] {
        Dictionary(
            uniqueKeysWithValues: stages.map {
                ($0.key.rawValue, ["queued": $0.value.queued, "running": $0.value.running])
            })
    }

    /// `--db --json`: a line per batch, worker and failure, then the summary.
    private static func printJSON(_ status: DistributedStatus) {
        let formatter = ISO8601DateFormatter()
        for progress in status.batches {
            let batch = progress.batch
            Terminal.shared.out(
                JSONLine.object([
                    "type": "batch", "batch": batch.id.uuidString, "key": batch.key.rawValue,
                    "state": batch.state.rawValue,
                    "items": batch.itemCount, "finished": batch.finishedCount, "ingested": batch.ingestedCount,
                    "failed": batch.failedCount,
                    "skipped": batch.skippedCount, "redirectURL": batch.redirectURL, "manifest": batch.manifestPath,
                    "failure": batch.failure,
                    "created": formatter.string(from: batch.createdAt),
                    "finishedAt": batch.finishedAt.map(formatter.string(from:)),
                    "stages": counts(progress.stages), "manifestJob": progress.manifest,
                    "retried": progress.retried,
                    "stageSeconds": Dictionary(
                        uniqueKeysWithValues: progress.stageSeconds.map { ($0.key.rawValue, $0.value) }),
                ]))
        }
        for worker in status.workers {
            Terminal.shared.out(
                JSONLine.object([
                    "type": "worker", "name": worker.name, "host": worker.host, "pid": worker.pid,
                    "live": worker.live, "stopped": worker.stopped,
                    "stages": worker.stages, "concurrency": worker.concurrency,
                    "started": formatter.string(from: worker.startedAt),
                    "lastSeen": formatter.string(from: worker.lastSeen), "stagesDone": worker.stagesDone,
                    "failures": worker.failures,
                    "holding": worker.holding,
                    "blocked": worker.blocked.map { ["batch": $0.batch.uuidString, "reason": $0.reason] },
                ]))
        }
        for failure in status.failures {
            Terminal.shared.out(
                JSONLine.object([
                    "type": "failure", "time": formatter.string(from: failure.time),
                    "batch": failure.batch.uuidString, "item": failure.index,
                    "source": failure.source, "stage": failure.stage, "error": failure.error,
                ]))
        }
        Terminal.shared.out(
            JSONLine.object([
                "type": "summary", "queue": counts(status.queue), "liveWorkers": status.workers.count { $0.live },
                "goneWorkers": status.goneWorkers,
            ]))
    }

    /// `--db`: the batches, the workers, the queue and the recent failures, for people.
    private static func printText(_ status: DistributedStatus) {
        let formatter = ISO8601DateFormatter()
        let out: (String) -> Void = { Terminal.shared.text($0) }
        if status.batches.isEmpty { out("no batches") }
        for progress in status.batches { printBatch(progress, out: out) }
        let live = status.workers.filter(\.live)
        out("workers: \(live.count) live, \(status.goneWorkers) gone")
        for worker in status.workers {
            let state = worker.live ? "live" : worker.stopped ? "stopped" : "gone"
            let seen = Int(Date().timeIntervalSince(worker.lastSeen))
            out(
                "  \(worker.name)  \(state)  \(worker.host) pid \(worker.pid)  \(worker.stages.joined(separator: ","))  \(worker.stagesDone) stages done, \(worker.failures) failures, holding \(worker.holding)  last seen \(seen) s ago"
            )
            for block in worker.blocked { out("    not working on batch \(block.batch.uuidString): \(block.reason)") }
        }
        let queue = StageName.allCases.compactMap { stage -> String? in
            guard let count = status.queue[stage] else { return nil }
            return "\(stage.rawValue) \(count.queued) queued \(count.running) running"
        }
        out("queue: " + (queue.isEmpty ? "empty" : queue.joined(separator: " · ")))
        if !status.failures.isEmpty { out("recent failures:") }
        for failure in status.failures {
            let what = failure.index.map { "item \($0)" + (failure.source.map { " (\($0))" } ?? "") } ?? "manifest"
            out(
                "  \(formatter.string(from: failure.time))  batch \(failure.batch.uuidString) \(what) \(failure.stage): \(failure.error)"
            )
        }
    }

    /// A batch's lines: its state and counts, its pending stages, its failure, its stage times.
    private static func printBatch(_ progress: DistributedStatus.BatchProgress, out: (String) -> Void) {
        let batch = progress.batch
        var line =
            "\(batch.id.uuidString)  \(batch.state.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) "
        if batch.state == .running {
            line += "\(batch.finishedCount)/\(batch.itemCount) items finished"
        } else {
            line +=
                "\(batch.ingestedCount)/\(batch.itemCount) ingested"
                + (batch.failedCount > 0 ? ", \(batch.failedCount) failed" : "")
                + (batch.skippedCount > 0 ? ", \(batch.skippedCount) skipped" : "")
        }
        out(line + "  \(batch.redirectURL ?? "key \(batch.key)")")
        if batch.state == .running {
            let stages = StageName.allCases.compactMap { stage -> String? in
                guard let count = progress.stages[stage], count.queued + count.running > 0 else { return nil }
                return "\(stage.rawValue) \(count.queued) queued \(count.running) running"
            }
            out(
                "    stages: " + (stages.isEmpty ? "none pending" : stages.joined(separator: " · "))
                    + " · manifest \(progress.manifest)")
        }
        if let failure = batch.failure {
            out("    failed: \(failure); share ingest --resume \(batch.id.uuidString) --db URL retries it")
        }
        if !progress.stageSeconds.isEmpty {
            let times = StageName.allCases.compactMap { stage in
                progress.stageSeconds[stage].map { "\(stage.rawValue) \(String(format: "%.2f", $0)) s" }
            }
            out(
                "    stage time (summed over items): " + times.joined(separator: ", ")
                    + (progress.retried > 0 ? " · \(progress.retried) jobs retried" : ""))
        }
    }
}
