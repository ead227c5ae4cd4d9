import Foundation

/// Copy: puts the item into the container as `<UUID>.<ext>` (never over an
/// existing file), via a unique temporary name, fsync and rename.
struct CopyStage: ItemStage {
    let settings: PipelineDefinition.CopySettings
    var name: StageName { .copy }

    func process(_ item: ItemWork, in batch: BatchContext) throws(ItemFailure) {
        guard let sniffed = item.sniffed else { return }  // text and URLs have nothing to copy
        let destination = batch.container.mediaPath(id: item.id, fileExtension: sniffed.fileExtension)
        switch item.source {
        case .file(let file):
            do {
                item.size = try FileCopier.copy(from: file.path, expected: item.sourceVersion, to: destination, sync: settings.fsync)
            } catch {
                throw SniffStage.failure(error, path: file.shownAs.display, stage: .copy)
            }
        case .data(let data, let name):
            do {
                try AtomicFile.create(destination, bytes: data, syncDirectory: false)
            } catch {
                throw SniffStage.failure(.system(error), path: name, stage: .copy)
            }
        case .text, .url:
            return
        }
        item.copyPath = destination
    }
}
