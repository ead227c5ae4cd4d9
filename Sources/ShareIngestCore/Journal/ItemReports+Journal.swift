import Foundation
import ShareManifest

extension ItemReports {
    /// The reports of a batch's items, rebuilt from the container's journal
    /// (when its stored report is gone): empty when the journal does not have
    /// it. The same in both modes (``BatchLifecycle/Difference/fallbackReport``).
    static func rebuilt(batch: UUID, container: ContainerDirectory, pipeline: PipelineDefinition, message: String?)
        -> [ItemReport]
    {
        guard let journal = try? BatchJournal(container: container) else { return [] }
        let lifecycle = ItemLifecycle(pipeline: pipeline)
        let stage = ManifestStage(settings: pipeline.manifest)
        var reports: [ItemReport] = []
        try? journal.forEachItem(of: batch) {
            reports += stage.reports(for: $0, finished: lifecycle.isFinished($0), message: message)
        }
        return reports
    }
}
