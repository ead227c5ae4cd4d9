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
