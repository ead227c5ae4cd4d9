import Foundation
import MediaFormats
import ShareManifest

/// What every stage of one batch shares, read-only while it runs: the same for
/// a local batch and for the batches a worker takes jobs of.
struct BatchContext: Sendable {
    let batchID: UUID
    let container: ContainerDirectory
    let pipeline: PipelineDefinition
    /// The pipeline's item stages, by name.
    let stages: [StageName: any PipelineStage]
    /// How its items move between stages.
    let lifecycle: ItemLifecycle
    /// Decodes the untrusted media (in this process, or in sandboxed helpers).
    let decoder: any MediaDecoder
    /// Text that came with the share, put on every entry (v2 `message`).
    let message: String?
    /// The folders its files are opened beneath: those its plan held open in
    /// this process, others opened when first needed (``DropRoots``).
    let roots: DropRoots
    /// Set when its holder is to stop: a stage that runs long (a copy of a
    /// large file) looks at it as it goes.
    let cancellation: CancellationFlag

    init(
        batchID: UUID, container: ContainerDirectory, pipeline: PipelineDefinition, maxAttempts: Int,
        decoder: any MediaDecoder, message: String?,
        cancellation: CancellationFlag = CancellationFlag(), spaceWait: ItemLifecycle.SpaceWait = .park
    ) {
        self.batchID = batchID
        self.container = container
        self.pipeline = pipeline
        self.stages = Dictionary(uniqueKeysWithValues: pipeline.makeItemStages().map { ($0.name, $0) })
        self.lifecycle = ItemLifecycle(pipeline: pipeline, maxAttempts: maxAttempts, spaceWait: spaceWait)
        self.decoder = decoder
        self.message = message
        self.roots = DropRoots(HeldDropRoots.take(batchID))
        self.cancellation = cancellation
    }

    /// The context of a recorded batch (its pipeline as it started, read with
    /// `catalog`'s stages).
    init(
        _ record: BatchRecord, container: ContainerDirectory, decoder: any MediaDecoder, catalog: StageCatalog,
        cancellation: CancellationFlag = CancellationFlag(), spaceWait: ItemLifecycle.SpaceWait = .park
    ) throws(ShareIngestError) {
        self.init(
            batchID: record.id, container: container, pipeline: try record.pipeline(catalog: catalog),
            maxAttempts: record.maxAttempts, decoder: decoder,
            message: record.message, cancellation: cancellation, spaceWait: spaceWait)
    }
}
