import Foundation
import MediaFormats
import ShareManifest
import Synchronization

/// One stage of the pipeline: does its one job on one item. A stage knows its
/// settings, nothing about queues, threads or stores; it reports failure by
/// throwing ``ItemFailure`` and records its results on the item.
protocol PipelineStage: Sendable {
    var name: StageName { get }
    /// True when the stage may decode the item's media (and so takes its share
    /// of the decoder-memory budget, and counts as decoding for poison items).
    func decodes(_ item: InFlightItem) -> Bool
    /// Processes `item`. Items a stage has nothing to do for pass through untouched.
    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure)
}

extension PipelineStage {
    func decodes(_ item: InFlightItem) -> Bool { false }
}

extension PipelineDefinition {
    /// The item stages this pipeline runs, in order, built from its settings: the
    /// one place stages are made, for the local runner and for remote workers alike.
    func makeItemStages() -> [any PipelineStage] {
        var stages: [any PipelineStage] = [SniffStage(settings: sniff), CopyStage(settings: copy)]
        if let location { stages.append(LocationStage(settings: location)) }
        if let probe { stages.append(ProbeStage(settings: probe, thumbnail: thumbnail, moments: motion != nil && manifest.schema == .v2)) }
        if let thumbnail { stages.append(ThumbnailStage(settings: thumbnail)) }
        if let motion { stages.append(MotionStage(settings: motion, pipeline: self)) }
        if let compatible { stages.append(CompatibleStage(settings: compatible)) }
        return stages
    }
}
