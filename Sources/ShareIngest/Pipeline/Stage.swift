import Foundation
import MediaFormats
import ShareManifest
import Synchronization

/// One stage of the pipeline: does its one job on one item. A stage knows its
/// settings, nothing about queues, threads or journals; it reports failure by
/// throwing ``ItemFailure`` and records its results on the item.
protocol ItemStage: Sendable {
    var name: StageName { get }
    /// Processes `item`. Items a stage has nothing to do for pass through untouched.
    func process(_ item: ItemWork, in batch: BatchContext) throws(ItemFailure)
}

extension PipelineDefinition {
    /// The item stages this pipeline runs, in order, built from its settings: the
    /// one place stages are made, for the local runner and for remote workers alike.
    func makeItemStages() -> [any ItemStage] {
        var stages: [any ItemStage] = [SniffStage(settings: sniff), CopyStage(settings: copy)]
        if let probe { stages.append(ProbeStage(settings: probe, thumbnail: thumbnail)) }
        if let thumbnail { stages.append(ThumbnailStage(settings: thumbnail)) }
        return stages
    }
}

/// What every stage of one batch shares: read-only after the batch starts.
struct BatchContext: Sendable {
    let batchID: UUID
    let container: ContainerDirectory
    let pipeline: PipelineDefinition
    /// Decodes the untrusted media (in this process, or in sandboxed helpers).
    let decoder: any MediaDecoder
    /// Text that came with the share, put on every entry (v2 `message`).
    let message: String?
    let cancellation: CancellationFlag
}

/// A flag set once (on SIGINT/SIGTERM or by the caller) and read by every worker.
public final class CancellationFlag: Sendable {
    private let cancelled = Atomic(false)

    /// A flag not yet set.
    public init() {}

    /// Sets the flag: workers finish their current stage and the batch stops, resumable. Thread-safe.
    public func cancel() { cancelled.store(true, ordering: .releasing) }

    /// True once ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}
