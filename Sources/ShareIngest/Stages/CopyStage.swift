import Foundation
import ShareManifest
import SystemCalls

/// Copy: puts the item into the container as `<UUID>.<ext>` (never over an
/// existing file), via a unique temporary name, fsync and rename, and records
/// the SHA-256 of its bytes (computed in the same pass): the item's content
/// identity, which the fan-in uses to find duplicates. The sidecars it carries
/// are copied beside it, under its UUID.
struct CopyStage: PipelineStage {
    let settings: PipelineDefinition.CopySettings
    var name: StageName { .copy }

    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure) {
        guard let sniffed = item.sniffed else { return }  // text and URLs have nothing to copy
        let destination = batch.container.mediaPath(id: item.id, fileExtension: sniffed.fileExtension)
        item.carried.copiedFromSource = try Self.copy(&item.state, to: destination, sync: settings.fsync)
        Self.copySidecars(of: &item.state, in: batch.container, sync: settings.fsync)
    }

    /// Copies `item`'s source to `destination`, recording the copy, its size
    /// and SHA-256; true when the bytes were copied from the source now. A copy
    /// that reached its final name before a crash is complete (it was fsynced
    /// before the rename): it is kept if it is still the source's size.
    static func copy(_ item: inout ItemState, to destination: String, sync: Bool) throws(ItemFailure) -> Bool {
        if let existing = try? FileStatus.ofLink(destination) {
            if existing.type == .regular, existing.size == item.size {
                item.copyPath = destination
                if item.sha256 == nil {
                    do { item.sha256 = try FileCopier.hash(of: destination) } catch {
                        throw ItemFailure(.copy, .io, "\(item.label): cannot read back its copy: \(error)")
                    }
                }
                return false
            }
            FileSystem.remove(destination)
        }
        guard case .file(let file) = item.source else { return false }
        do {
            let copied = try FileCopier.copy(from: file.path, expected: item.sourceVersion, to: destination, sync: sync)
            item.size = copied.size
            item.sha256 = copied.sha256
        } catch {
            throw SniffStage.failure(error, path: item.label, stage: .copy)
        }
        item.copyPath = destination
        return true
    }

    /// Copies the sidecars `item` carries (read by its sniff) under its UUID:
    /// the `n`-th as `<UUID>.<n>.<ext>`, with its kind's extension (`json`,
    /// `xmp`, `aae`), or its content's when it is no sidecar. One whose copy
    /// fails (it changed, it vanished) fails on its own. Also used by the
    /// fan-in, for the sidecars of an item that failed before its copy.
    static func copySidecars(of item: inout ItemState, in container: ContainerDirectory, sync: Bool) {
        for position in item.carriedSidecars.indices {
            var sidecar = item.carriedSidecars[position]
            guard !sidecar.isSettled, sidecar.copyPath == nil, sidecar.size != nil else { continue }
            let ext = sidecar.kind.map(ExportSidecars.fileExtension(of:)) ?? sidecar.sniffed?.fileExtension ?? "bin"
            var copied = sidecar.item(carriedBy: item)
            do throws(ItemFailure) {
                _ = try copy(&copied, to: ExportSidecars.copyPath(in: container, id: item.id, n: position + 1, fileExtension: ext), sync: sync)
            } catch {
                copied.failure = error
            }
            sidecar.update(from: copied)
            item.carriedSidecars[position] = sidecar
        }
    }
}

extension CopyStage {
    /// The `copy` stage, declared once: its settings and their document
    /// table (key, allowed values; the default is the settings type's own), its
    /// place in the order, what it records, how it is made.
    static let definition = StageDefinition(
        .copy, after: .sniff, required: true, settings: PipelineDefinition.CopySettings.self,
        document: [
            .integer("workers", \.workers, in: 1...64),
            .boolean("fsync", \.fsync),
        ],
        workers: \.workers, records: [.copyPath, .size, .sha256, .carriedSidecars],
        make: { settings, _ in CopyStage(settings: settings) })
}

extension PipelineDefinition {
    /// Settings of the `copy` stage.
    public struct CopySettings: StageSettings {
        /// Worker threads (1...64).
        public var workers = 2
        /// fsync every copy before the manifest names it.
        public var fsync = true

        /// The defaults: two workers, fsync on.
        public init() {}
    }
}
