import Foundation
import ShareManifest

/// What a store records with a planned batch besides its row and items.
struct PlanDetails: Sendable {
    /// Where its items go: the journal's own container, or the one every worker writes into.
    var container: ContainerDirectory
    /// Where each item starts (its first stage) and how many attempts it may lose.
    var lifecycle: ItemLifecycle
    /// Distributed: the token written into the container (``WorkerVisibility``).
    var token: String?
    /// Distributed: the absolute inputs, which every worker must see.
    var roots: [String] = []
    /// True when export sidecars are carried by the media they describe
    /// (``FolderSidecars``): the manifest lists them (v2). A legacy
    /// manifest delivers them as files.
    var carriesSidecars: Bool
    /// Files (and drops) past these sizes fail before anything is copied.
    var sizeLimits = SizeLimits.none
    /// Which files are taken (the others are skipped, `filtered`), and whether hidden ones are walked.
    var selection = DropSelection.all

    init(
        container: ContainerDirectory, pipeline: PipelineDefinition, maxAttempts: Int, token: String? = nil,
        roots: [String] = [],
        sizeLimits: SizeLimits = .none, selection: DropSelection = .all
    ) {
        self.sizeLimits = sizeLimits
        self.selection = selection
        self.container = container
        self.lifecycle = ItemLifecycle(stages: pipeline.itemStages, maxAttempts: maxAttempts)
        self.token = token
        self.roots = roots
        self.carriesSidecars = pipeline.manifest.schema == .v2
    }
}
