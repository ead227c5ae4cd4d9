import Foundation
import ShareManifest

extension ItemReports {
    /// The reports of a batch's items, rebuilt from its own store (when its
    /// stored report is gone), a page at a time with the store's cursor
    /// (``ItemStore/items(of:after:limit:)``): the journal locally, the queue in
    /// `--db` mode. Those it cannot read are left out (``ItemReports`` reports
    /// them as no longer stored).
    static func rebuilt(batch: UUID, store: any ItemStore, pipeline: PipelineDefinition, message: String?)
        -> [ItemReport]
    {
        let lifecycle = ItemLifecycle(pipeline: pipeline)
        let stage = ManifestStage(settings: pipeline.manifest)
        var reports: [ItemReport] = []
        try? store.forEachItem(of: batch) {
            reports += stage.reports(for: $0, finished: lifecycle.isFinished($0), message: message)
        }
        return reports
    }

    /// The same, from the store `opener` opens when they are read (on whichever
    /// thread, however late): empty when it cannot be opened.
    static func rebuilt(batch: UUID, opening opener: StoreOpener, pipeline: PipelineDefinition, message: String?)
        -> [ItemReport]
    {
        guard let store = try? opener.open() else { return [] }
        return rebuilt(batch: batch, store: store, pipeline: pipeline, message: message)
    }
}
