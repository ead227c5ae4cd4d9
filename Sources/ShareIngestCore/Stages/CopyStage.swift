import Foundation
import ShareManifest
import SystemCalls

/// Copy: puts the item into the container as `<UUID>.<ext>` (never over an
/// existing file), via a unique temporary name, fsync and rename, and records
/// the SHA-256 of its bytes (computed in the same pass): the item's content
/// identity, which the fan-in uses to find duplicates.
struct CopyStage: PipelineStage {
    let settings: PipelineDefinition.CopySettings
    var name: StageName { .copy }

    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure) {
        guard let sniffed = item.sniffed else { return }  // text and URLs have nothing to copy
        let destination = batch.container.mediaPath(id: item.id, fileExtension: sniffed.fileExtension)
        // A copy that reached its final name before a crash is complete (it was
        // fsynced before the rename): keep it if it is still the source's size.
        if let existing = try? FileStatus.ofLink(destination) {
            if existing.type == .regular, existing.size == item.size {
                item.copyPath = destination
                if item.sha256 == nil {
                    do { item.sha256 = try FileCopier.hash(of: destination) } catch {
                        throw ItemFailure(.copy, .io, "\(item.label): cannot read back its copy: \(error)")
                    }
                }
                return
            }
            FileSystem.remove(destination)
        }
        guard case .file(let file) = item.source else { return }
        do {
            let guards = CopyGuards(reserve: { [settings] in settings.reserve(of: $0) }, stop: batch.cancellation)
            let copied = try FileCopier.copy(
                from: file, in: batch.roots, expected: item.sourceVersion, to: destination, sync: settings.fsync,
                guards: guards)
            item.size = copied.size
            item.sha256 = copied.sha256
            item.carried.copiedFromSource = true
        } catch {
            throw SniffStage.failure(error, path: item.label, stage: .copy)
        }
        item.copyPath = destination
        // A new copy is at its name (a test's kill aimed at k new copies lands here).
        CrashPoint.hit("copied:" + file.name)
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
            .integer("reserveMiB", \.reserveMiB, in: 0...1 << 20),
            .number("reservePercent", \.reservePercent, in: 0...50),
        ],
        workers: \.workers, records: [.copyPath, .size, .sha256],
        make: { settings, _ in CopyStage(settings: settings) })
}

extension PipelineDefinition {
    /// Settings of the `copy` stage.
    public struct CopySettings: StageSettings {
        /// Worker threads (1...64).
        public var workers = 2
        /// fsync every copy before the manifest names it.
        public var fsync = true
        /// Space kept free on the container's file system, in MiB: a copy that
        /// would leave less than the smaller of this and ``reservePercent``
        /// waits for space instead (0: no reserve).
        public var reserveMiB = 256
        /// The same, in percent of the file system's size (0...50; 0: no reserve).
        public var reservePercent = 1.0

        /// The defaults: two workers, fsync on, 1 % of the disk (at most 256 MiB) kept free.
        public init() {}

        /// Bytes a copy must leave free on a file system of `space`.
        func reserve(of space: DiskSpace) -> Int64 {
            min(Int64(reserveMiB) << 20, Int64(Double(space.total) * reservePercent / 100))
        }
    }
}
