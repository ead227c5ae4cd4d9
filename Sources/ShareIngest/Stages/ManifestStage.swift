import Foundation
import Glibc
import ShareManifest
import SystemCalls

/// Manifest: the fan-in. Runs once, after every item of the batch has finished:
/// makes the copies' folders durable, then writes the manifest atomically (so
/// it is never visible incomplete) and names the redirect URL.
struct ManifestStage {
    let settings: PipelineDefinition.ManifestSettings

    /// The entry an ingested item contributes.
    func entry(for item: ItemWork, message: String?) -> SharedMediaFile {
        func url(_ path: String) -> String { ManifestCoder.fileURLString(path, spelling: settings.pathSpelling) }
        switch item.source {
        case .text(let text):
            return SharedMediaFile(path: text, type: .text, mimeType: item.mimeType, message: message)
        case .url(let link):
            return SharedMediaFile(path: link, type: .url, mimeType: item.mimeType, message: message)
        case .file:
            return SharedMediaFile(
                path: url(item.copyPath ?? ""), thumbnail: item.thumbnailPath.map(url),
                duration: item.durationMilliseconds, type: item.type, mimeType: item.mimeType, message: message,
                fileName: item.source.fileName, size: item.size, width: item.width, height: item.height)
        }
    }

    /// A legacy manifest is either an array of entries or an array of strings: in a
    /// batch with both, the text items cannot be carried and are reported.
    func unsupportedBySchema(_ item: ItemWork, batchHasFiles: Bool) -> ItemFailure? {
        guard settings.schema == .legacy, batchHasFiles, !item.isFileLike else { return nil }
        return ItemFailure(.manifest, .unsupportedBySchema, "\(item.source.label): the legacy manifest cannot hold text next to files; use the v2 schema (pipeline \"default\")")
    }

    /// What the fan-in produced.
    struct Delivery {
        var manifestPath: String?
        var redirect: RedirectURL?
        var reports: [ItemReport]
    }

    /// The fan-in, shared by the local runner and remote workers: once every item
    /// has finished, applies the schema's limits, writes the manifest (unless a run
    /// that died before recording it already did: that one is complete) and
    /// reports every item. Items whose state changes here are passed to `changed`.
    func deliver(_ items: [ItemWork], key: ShareKey, container: ContainerDirectory, message: String?, changed: (ItemWork) -> Void = { _ in }) -> Delivery {
        let hasFiles = items.contains { $0.failure == nil && $0.isFileLike }
        for item in items where item.failure == nil {
            if let failure = unsupportedBySchema(item, batchHasFiles: hasFiles) {
                item.failure = failure
                changed(item)
            }
        }
        var delivery = Delivery(reports: [])
        let delivered = items.filter { $0.failure == nil }
        if !delivered.isEmpty {
            let entries = delivered.map { entry(for: $0, message: message) }
            let path = container.manifestPath(key: key)
            do {
                if !FileSystem.exists(path) {
                    CrashPoint.hit("before-manifest")
                    _ = try write(entries, key: key, container: container)
                }
                delivery.manifestPath = path
                delivery.redirect = redirect(for: entries, key: key)
            } catch {
                let reason: ItemFailure.Reason = error.isDiskFull ? .diskFull : .io
                for item in delivered {
                    item.failure = ItemFailure(.manifest, reason, "\(item.source.label): the manifest could not be written: \(error)")
                    item.removeFiles(in: container)
                    changed(item)
                }
            }
        }
        delivery.reports = items.map { report(for: $0, finished: true, message: message) }
        return delivery
    }

    /// An item's report; `finished` is false for an item an interruption parked.
    func report(for item: ItemWork, finished: Bool, message: String?) -> ItemReport {
        let status: ItemStatus
        switch item.failure?.reason {
        case nil: status = finished ? .ingested : .failed
        case .notRegularFile, .symbolicLink, .tooDeep, .unsupportedBySchema: status = .skipped
        default: status = .failed
        }
        return ItemReport(
            index: item.index, source: item.source.label, status: status, failure: item.failure, warnings: item.warnings,
            entry: status == .ingested ? entry(for: item, message: message) : nil,
            id: item.copyPath != nil ? item.id : nil, stageSeconds: item.stageSeconds)
    }

    /// The redirect URL for a batch with these entries.
    func redirect(for entries: [SharedMediaFile], key: ShareKey) -> RedirectURL {
        RedirectURL(scheme: settings.scheme, key: key, kind: RedirectKind(types: entries.map(\.type)))
    }

    /// Makes the batch's files durable, then writes the manifest.
    func write(_ entries: [SharedMediaFile], key: ShareKey, container: ContainerDirectory) throws(SystemError) -> String {
        if entries.contains(where: { $0.fileURL != nil }) {
            try FileSystem.syncDirectory(container.root)
            try FileSystem.syncDirectory(container.thumbnailsDirectory)
        }
        return try ManifestStore(container: container).write(ManifestCoder.encode(entries, schema: settings.schema), key: key) {
            CrashPoint.hit("manifest-temporary-written")
        }
    }
}
