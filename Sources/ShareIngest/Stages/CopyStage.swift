import Foundation
import Glibc
import ShareManifest

/// Copy: puts the item into the container as `<UUID>.<ext>` (never over an
/// existing file), via a unique temporary name, fsync and rename.
struct CopyStage: ItemStage {
    let settings: PipelineDefinition.CopySettings
    var name: StageName { .copy }

    func process(_ item: ItemWork, in batch: BatchContext) throws(ItemFailure) {
        guard let sniffed = item.sniffed else { return }  // text and URLs have nothing to copy
        let destination = batch.container.mediaPath(id: item.id, fileExtension: sniffed.fileExtension)
        // A copy that reached its final name before a crash is complete (it was
        // fsynced before the rename): keep it if it is still the source's size.
        var existing = stat()
        if lstat(destination, &existing) == 0 {
            if existing.st_mode & S_IFMT == S_IFREG, Int64(existing.st_size) == item.size {
                item.copyPath = destination
                return
            }
            FileSystem.remove(destination)
        }
        switch item.source {
        case .file(let file):
            do {
                item.size = try FileCopier.copy(from: file.path, expected: item.sourceVersion, to: destination, sync: settings.fsync)
            } catch {
                throw SniffStage.failure(error, path: file.shownAs.display, stage: .copy)
            }
        case .data(let data, let name):
            // A resumed batch has lost its in-memory data (only an empty item's is known).
            guard !data.isEmpty || item.size == 0 else {
                throw ItemFailure(.copy, .unreadable, "\(name): in-memory data does not survive an interrupted batch; share it again")
            }
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
