import Foundation
import MediaFormats
import ShareManifest
import Synchronization

/// One stage of the pipeline: does its one job on one item. A stage knows its
/// settings, nothing about queues, threads or stores; it reports failure by
/// throwing ``ItemFailure`` and records its results on the item.
protocol ItemStage: Sendable {
    var name: StageName { get }
    /// True when the stage may decode the item's media (and so takes its share
    /// of the decoder-memory budget, and counts as decoding for poison items).
    func decodes(_ item: ItemWork) -> Bool
    /// Processes `item`. Items a stage has nothing to do for pass through untouched.
    func process(_ item: inout ItemWork, in batch: BatchContext) throws(ItemFailure)
}

extension ItemStage {
    func decodes(_ item: ItemWork) -> Bool { false }
}

extension PipelineDefinition {
    /// The item stages this pipeline runs, in order, built from its settings: the
    /// one place stages are made, for the local runner and for remote workers alike.
    func makeItemStages() -> [any ItemStage] {
        var stages: [any ItemStage] = [SniffStage(settings: sniff), CopyStage(settings: copy)]
        if let location { stages.append(LocationStage(settings: location)) }
        if let probe { stages.append(ProbeStage(settings: probe, thumbnail: thumbnail, moments: motion != nil && manifest.schema == .v2)) }
        if let thumbnail { stages.append(ThumbnailStage(settings: thumbnail)) }
        if let motion { stages.append(MotionStage(settings: motion, pipeline: self)) }
        if let compatible { stages.append(CompatibleStage(settings: compatible)) }
        return stages
    }
}

/// What every stage of one batch shares, read-only while it runs: the same for
/// a local batch and for the batches a worker takes jobs of.
struct BatchContext: Sendable {
    let batchID: UUID
    let container: ContainerDirectory
    let pipeline: PipelineDefinition
    /// The pipeline's item stages, by name.
    let stages: [StageName: any ItemStage]
    /// How its items move between stages.
    let lifecycle: ItemLifecycle
    /// Decodes the untrusted media (in this process, or in sandboxed helpers).
    let decoder: any MediaDecoder
    /// Text that came with the share, put on every entry (v2 `message`).
    let message: String?

    init(batchID: UUID, container: ContainerDirectory, pipeline: PipelineDefinition, maxAttempts: Int, decoder: any MediaDecoder, message: String?) {
        self.batchID = batchID
        self.container = container
        self.pipeline = pipeline
        self.stages = Dictionary(uniqueKeysWithValues: pipeline.makeItemStages().map { ($0.name, $0) })
        self.lifecycle = ItemLifecycle(stages: pipeline.itemStages, maxAttempts: maxAttempts)
        self.decoder = decoder
        self.message = message
    }

    /// The context of a recorded batch (its pipeline as it started).
    init(_ record: BatchRecord, container: ContainerDirectory, maxAttempts: Int, decoder: any MediaDecoder) throws(ShareIngestError) {
        self.init(batchID: record.id, container: container, pipeline: try record.pipeline(), maxAttempts: maxAttempts, decoder: decoder, message: record.message)
    }
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
