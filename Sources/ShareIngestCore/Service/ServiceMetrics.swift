import Foundation

/// The metrics `share watch` and `share worker` serve at `/metrics` (docs/operating.md:
/// "Operating share"), fed from the batch's event stream (``observe(_:)``), the
/// decoder's helper counters (``readHelpers(started:killed:)``) and the state
/// ``ServiceMonitor`` reads every few seconds (inbox, journal, database).
package final class ServiceMetrics: Sendable {
    /// The version `share_build_info` reports.
    package static let version = "0.32.0"

    /// The histograms' upper bounds, in seconds.
    static let secondsBuckets: [Double] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]

    package let registry = MetricsRegistry()

    /// Which process serves them (workers have jobs; watchers have an inbox).
    package enum Role: String, Sendable { case watch, worker }

    /// The stages counted (the worker's or the pipeline's: a stage of a
    /// catalog of the caller's own too), in run order.
    package let stages: [StageName]

    package init(role: Role, stages: [StageName] = StageName.allCases) {
        self.stages = stages
        let r = registry
        r.declare(
            "share_build_info", .gauge, help: "Always 1; the labels name the version of share and what it runs as.",
            labels: ["version", "role"])
        r.set("share_build_info", [Self.version, role.rawValue], to: 1)
        r.declare(
            "share_items_total", .counter,
            help: "Items that left the pipeline, by outcome (ingested, failed, skipped).", labels: ["outcome"])
        for outcome in [ItemStatus.ingested, .failed, .skipped] { r.add("share_items_total", [outcome.rawValue], 0) }
        r.declare(
            "share_stage_items_total", .counter,
            help:
                "Items by stage and outcome: ran (the stage ran on the item, whatever came of it), failed and skipped (by the stage that stopped the item).",
            labels: ["stage", "outcome"])
        for stage in stages { r.add("share_stage_items_total", [stage.rawValue, "ran"], 0) }
        r.declare(
            "share_item_failures_total", .counter, help: "Items failed or skipped, by reason.", labels: ["reason"])
        r.declare("share_copied_bytes_total", .counter, help: "Bytes copied into the container.")
        r.add("share_copied_bytes_total", [], 0)
        r.declare(
            "share_decoder_misbehaved_total", .counter,
            help: "Items whose sandboxed decoder answered with something the checks refuse.")
        r.add("share_decoder_misbehaved_total", [], 0)
        r.declare(
            "share_batches_total", .counter,
            help: "Batches finished, by outcome (complete, partial, failed, empty, interrupted).", labels: ["outcome"])
        for outcome in ["complete", "partial", "failed", "empty", "interrupted"] {
            r.add("share_batches_total", [outcome], 0)
        }
        r.declare(
            "share_stage_duration_seconds", .histogram, help: "Seconds each item spent in each stage.",
            labels: ["stage"], buckets: Self.secondsBuckets)
        r.declare("share_batches_in_flight", .gauge, help: "Batches started and not yet finished.")
        r.set("share_batches_in_flight", to: 0)
        switch role {
        case .watch:
            r.declare("share_inbox_drops_waiting", .gauge, help: "Drops in the inbox not yet taken.")
            r.set("share_inbox_drops_waiting", to: 0)
        case .worker:
            r.declare(
                "share_jobs_ready", .gauge,
                help: "Jobs queued and ready to run, by stage (read from the database every few seconds).",
                labels: ["stage"])
            r.replace("share_jobs_ready", with: Dictionary(uniqueKeysWithValues: stages.map { ([$0.rawValue], 0) }))
        }
    }

    /// Reads the decoder helpers' counters at each scrape (in-memory counters of the pool).
    package func readHelpers(started: @escaping @Sendable () -> Int, killed: @escaping @Sendable () -> Int) {
        registry.declare(
            "share_helper_starts_total", .counter, help: "Sandboxed decoder helpers started (replacements included)."
        ) { Double(started()) }
        registry.declare(
            "share_helper_kills_total", .counter, help: "Decoder helpers killed because they died, hung or misbehaved."
        ) { Double(killed()) }
    }

    /// Counts one event of a batch (the sink both `share watch` and `share worker` pass on).
    package func observe(_ event: IngestEvent) {
        let r = registry
        switch event {
        case .batchStarted:
            break  // batches in flight are read from the journal or the queue (ServiceMonitor)
        case .stageFinished(let stage, _, let bytes):
            if bytes > 0 { r.add("share_copied_bytes_total", [], Double(bytes)) }
            r.add("share_stage_items_total", [stage.rawValue, "ran"])
        case .itemFinished(let item):
            r.add("share_items_total", [item.status.rawValue])
            if let failure = item.failure {
                r.add("share_item_failures_total", [failure.reason.rawValue])
                r.add("share_stage_items_total", [failure.stage.rawValue, item.status.rawValue])
                if failure.reason == .decoderMisbehaved { r.add("share_decoder_misbehaved_total") }
            }
            for (stage, seconds) in item.stageSeconds.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                r.observe("share_stage_duration_seconds", [stage.rawValue], seconds)
            }
        case .batchFinished(let report):
            let outcome =
                report.interrupted
                ? "interrupted"
                : report.counts.items == 0
                    ? "empty"
                    : report.isComplete
                        ? "complete"
                        : report.ingestedCount > 0 ? "partial" : "failed"
            r.add("share_batches_total", [outcome])
        }
    }
}
