import Foundation

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
        case .file, .data:
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
        return try ManifestStore(container: container).write(entries, schema: settings.schema, key: key)
    }
}
