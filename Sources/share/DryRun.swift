import Foundation
import ShareIngestCore

/// `share ingest --dry-run`: the plan of a drop on stdout (each input, the
/// sidecars its photo or video would carry, what would be skipped and why,
/// the items that may form a group), with nothing copied or decoded and no
/// container made.
enum DryRun {
    static func run(_ inputs: [ShareInput], parsed: Arguments) -> ExitStatus {
        let plan: PlannedBatch
        let pipeline: PipelineDefinition
        do {
            let loaded = try PipelineDefinition.load(parsed.value("pipeline") ?? "default")
            do { pipeline = try MediaChoices.apply(parsed, to: loaded) } catch {
                return Command.usageFailure(error.description, CommandTable.ingest)
            }
            // The capture-date range is decided once the files are read: the plan cannot say it.
            plan = try ShareIngestor.plan(inputs, pipeline: pipeline, selection: MediaChoices.selection(parsed))
        } catch {
            return Command.failure(error)
        }
        let out: (String) -> Void = { Terminal.shared.text($0) }
        let skipped = plan.items.filter { $0.skipped != nil }
        let sidecars = plan.items.reduce(0) { $0 + $1.sidecars.count }
        if parsed.flag("json") {
            for item in plan.items {
                Terminal.shared.out(
                    JSONLine.object([
                        "event": "planned", "index": item.index, "source": item.label, "kind": item.kind,
                        "size": item.size.map { Int($0) },
                        "status": item.skipped == nil ? "item" : "skipped", "sidecars": item.sidecars,
                        "reason": item.skipped?.reason.rawValue,
                        "stage": item.skipped?.stage.rawValue, "error": item.skipped?.message,
                    ]))
            }
            Terminal.shared.out(
                JSONLine.object([
                    "event": "plan", "pipeline": pipeline.name, "inputs": plan.inputCount,
                    "items": plan.items.count - skipped.count, "skipped": skipped.count,
                    "sidecars": sidecars, "possibleGroups": plan.possibleGroups,
                ]))
            return .success
        }
        out(
            "plan of \(plan.inputCount) inputs with the pipeline \(pipeline.name) (--dry-run: nothing copied, decoded or written)"
        )
        for item in plan.items {
            var line = "  \(item.index)  \(item.label)"
            if let size = item.size { line += "  (\(ReadableSize.bytes(size)))" }
            if let failure = item.skipped {
                line += "  would be skipped (\(failure.reason.rawValue)): \(failure.message)"
            }
            out(line)
            for sidecar in item.sidecars { out("       carries \(sidecar)") }
        }
        let labels = Dictionary(plan.items.map { ($0.index, $0.label) }, uniquingKeysWith: { first, _ in first })
        if !plan.possibleGroups.isEmpty {
            out("may be grouped, if their contents agree (RAW and JPEG, edit and original, burst, Live Photo):")
            for group in plan.possibleGroups {
                out(
                    "  "
                        + group.map { "\($0) \(((labels[$0] ?? "") as NSString).lastPathComponent)" }.joined(
                            separator: " + "))
            }
        }
        out(
            "would ingest \(counted(plan.items.count - skipped.count, "item")) (\(counted(sidecars, "sidecar")) carried) and skip \(skipped.count)"
        )
        return .success
    }
}

/// `1 item`, `2 items`.
func counted(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }

/// Sizes for people: `812 B`, `12.3 kB`, `4.1 MB`.
enum ReadableSize {
    static func bytes(_ count: Int64) -> String {
        if count < 1000 { return "\(count) B" }
        let units = ["kB", "MB", "GB", "TB"]
        var value = Double(count) / 1000
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return String(format: "%.1f %@", value, units[unit])
    }
}
