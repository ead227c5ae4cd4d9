import Foundation
import ShareManifest
import SystemCalls

/// Content already delivered: an item whose SHA-256 an earlier item of its
/// batch has, or a copy in a share not yet consumed (then still in the
/// container), is a duplicate, and the pipeline's policy decides what it becomes.
struct DuplicateContent {
    let earlier: EarlierCopies
    let container: ContainerDirectory
    let policy: PipelineDefinition.DuplicatePolicy

    /// The copy `item` duplicates: one in an earlier share first (the first
    /// delivery of the content, while that share is unconsumed and its copy is
    /// there), else the earliest in its own batch.
    func original(of item: ItemState) -> EarlierCopy? {
        let manifests = ManifestStore(container: container)
        let elsewhere = item.sha256.flatMap { earlier.inOtherShares[$0] } ?? []
        let delivered = elsewhere.lazy.filter { copy in
            guard let key = copy.shareKey else { return false }
            return manifests.exists(key) && FileSystem.exists(copy.path)
        }
        return delivered.first ?? earlier.inBatch[item.index]
    }

    /// Applies the policy to `item` if it is a duplicate; true when it changed.
    /// An empty file is no one's duplicate: all empty files have the same hash.
    /// `removingFiles` false: only work out what the item will become. A
    /// duplicate the pipeline skips is failed by `lifecycle` (its failure final).
    func resolve(_ item: inout ItemState, removingFiles: Bool = true, lifecycle: ItemLifecycle) -> Bool {
        guard (item.size ?? 0) > 0, let original = original(of: item), original.path != item.copyPath else {
            return false
        }
        let from = original.shareKey.map { "share \($0)" } ?? "this share"
        switch policy {
        case .keep:
            // Reported by its entry's `duplicateOf` (a fact, not something that went wrong).
            item.duplicateOf = original.path
        case .link:
            if removingFiles, let own = item.copyPath, own != original.path { FileSystem.remove(own) }
            item.copyPath = original.path
            item.duplicateOf = original.path
        case .skip:
            _ = lifecycle.fail(
                &item,
                ItemFailure(
                    .manifest, .duplicate,
                    "\(item.label): the same content as \(original.label) was already delivered (in \(from)); skipped"))
            if removingFiles { item.removeFiles(in: container) }
        }
        return true
    }
}
