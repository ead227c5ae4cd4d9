import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// A source file: the path read (a symbolic link already resolved), and the
/// path and name the user knows it by.
struct SourceFile: Sendable {
    let path: SourcePath
    let shownAs: SourcePath
    let name: String

    init(_ path: SourcePath, shownAs: SourcePath? = nil, name: String) {
        self.path = path
        self.shownAs = shownAs ?? path
        self.name = name
    }
}

/// Where an item's bytes come from. In-memory inputs are spooled to a file when
/// the batch is planned (``BatchPlan``): from then on they are files like any other.
enum ItemSource: Sendable {
    case file(SourceFile)
    case text(String)
    case url(String)

    /// How the report names the source.
    var label: String {
        switch self {
        case .file(let file): file.shownAs.display
        case .text(let text): "text:" + String(text.prefix(60))
        case .url(let url): "url:" + String(url.prefix(200))
        }
    }

    var fileName: String? {
        switch self {
        case .file(let file): file.name
        case .text, .url: nil
        }
    }
}

/// One item's state as it moves through the stages. Exactly one stage worker
/// holds it at a time (it is handed over through the queues, whose locks order
/// the accesses), so it needs no lock of its own: hence `@unchecked Sendable`.
final class ItemWork: @unchecked Sendable {
    let index: Int
    let source: ItemSource
    /// Assigned (and journaled) before the copy, so the copy is named once.
    let id: UUID
    /// The last stage this item finished; a resumed batch starts it after that.
    var completed: StageName?

    // Sniff
    var sniffed: SniffedContent?
    var sourceVersion: FileVersion?
    /// What decoding it is expected to cost (from the sniffed header; in memory
    /// only: a resumed item is estimated again from its format and size).
    var decodeCost: DecodeCost?
    // Copy
    var copyPath: String?
    var size: Int64?
    // Probe
    var type: SharedMediaType = .file
    var mimeType: String?
    var width: Int?
    var height: Int?
    var durationMilliseconds: Double?
    /// The thumbnail the probe's decoding pass made, for the thumbnail stage to
    /// write (in memory only: a resumed item's thumbnail is made again).
    var pendingThumbnail: ThumbnailOutcome?
    /// True when the probe asked the decoder for a thumbnail (none came back for
    /// audio without cover art: the thumbnail stage need not decode it again).
    var probeDecodedThumbnail = false
    // Thumbnail
    var thumbnailPath: String?

    var warnings: [String] = []
    var failure: ItemFailure?
    var stageSeconds: [StageName: Double] = [:]
    /// Set (and journaled) while a stage decodes this item in-process, cleared
    /// when it ends: found set when a batch resumes, it means the process died
    /// while decoding it.
    var decodingInFlight = false
    /// Deaths of the process while this item was the only one being decoded.
    var crashStrikes = 0

    init(index: Int, source: ItemSource, id: UUID = UUID()) {
        self.index = index
        self.source = source
        self.id = id
        if case .url = source { type = .url }
        if case .text = source { type = .text }
    }

    /// Every file of the container this item may own (to remove if it fails): the
    /// ones recorded, and the ones its UUID names, which a run that died before
    /// journaling them may have left.
    func ownedFiles(in container: ContainerDirectory) -> Set<String> {
        var files = Set([copyPath, thumbnailPath].compactMap { $0 })
        if let ext = sniffed?.fileExtension { files.insert(container.mediaPath(id: id, fileExtension: ext)) }
        if isFileLike { files.insert(container.thumbnailPath(id: id)) }
        return files
    }

    /// Removes every file this item may own (a failed item leaves nothing behind).
    func removeFiles(in container: ContainerDirectory) {
        for path in ownedFiles(in: container) { FileSystem.remove(path) }
        copyPath = nil
        thumbnailPath = nil
    }

    var isFileLike: Bool {
        switch source {
        case .file: true
        case .text, .url: false
        }
    }
}
