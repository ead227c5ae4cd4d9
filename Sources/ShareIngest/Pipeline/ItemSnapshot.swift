import Foundation
import MediaFormats
import ShareManifest

/// An item's state as it is stored: JSON in the SQLite journal and in
/// PostgreSQL, so a resumed batch (or any worker on any machine) can take the
/// item's next stage. The one mapping between ``ItemWork`` and its record.
struct ItemSnapshot: Codable {
    var index: Int
    var id: UUID
    var source: Source
    var completed: StageName?
    var sniffed: Sniffed?
    var type: SharedMediaType
    var mimeType: String?
    var size: Int64?
    var version: Version?
    var copyPath: String?
    var thumbnailPath: String?
    var width: Int?
    var height: Int?
    var duration: Double?
    var warnings: [String]
    var failure: Failure?
    /// Seconds per stage, so a report made on another machine has them.
    var stageSeconds: [String: Double]?
    /// Being decoded in-process (see ``ItemWork/decodingInFlight``).
    var decoding: Bool?
    /// Deaths while decoded alone (see ``ItemWork/crashStrikes``).
    var strikes: Int?

    /// Where the item's bytes come from: a file (path bytes; a spooled in-memory
    /// input is a file too), a text or a link.
    struct Source: Codable {
        var kind: String
        var path: Data?
        var shownAs: Data?
        var name: String?
        var text: String?
    }

    struct Sniffed: Codable {
        var format: String
        var fileExtension: String
    }

    struct Version: Codable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedSeconds: Int
        var modifiedNanoseconds: Int
    }

    struct Failure: Codable {
        var stage: StageName
        var reason: ItemFailure.Reason
        var message: String
    }

    init(_ item: ItemWork) {
        index = item.index
        id = item.id
        switch item.source {
        case .file(let file): source = Source(kind: "file", path: Data(file.path.bytes), shownAs: Data(file.shownAs.bytes), name: file.name)
        case .text(let value): source = Source(kind: "text", text: value)
        case .url(let value): source = Source(kind: "url", text: value)
        }
        completed = item.completed
        sniffed = item.sniffed.map { Sniffed(format: $0.format.id, fileExtension: $0.fileExtension) }
        type = item.type
        mimeType = item.mimeType
        size = item.size
        version = item.sourceVersion.map {
            Version(device: $0.device, inode: $0.inode, size: $0.size, modifiedSeconds: $0.modifiedSeconds, modifiedNanoseconds: $0.modifiedNanoseconds)
        }
        copyPath = item.copyPath
        thumbnailPath = item.thumbnailPath
        width = item.width
        height = item.height
        duration = item.durationMilliseconds
        warnings = item.warnings
        failure = item.failure.map { Failure(stage: $0.stage, reason: $0.reason, message: $0.message) }
        stageSeconds = item.stageSeconds.isEmpty ? nil : Dictionary(uniqueKeysWithValues: item.stageSeconds.map { ($0.key.rawValue, $0.value) })
        decoding = item.decodingInFlight ? true : nil
        strikes = item.crashStrikes > 0 ? item.crashStrikes : nil
    }

    var item: ItemWork {
        let itemSource: ItemSource
        switch source.kind {
        case "file":
            let path = SourcePath(bytes: Array(source.path ?? Data()))
            itemSource = .file(SourceFile(path, shownAs: source.shownAs.map { SourcePath(bytes: Array($0)) }, name: source.name ?? ""))
        case "text": itemSource = .text(source.text ?? "")
        default: itemSource = .url(source.text ?? "")
        }
        let item = ItemWork(index: index, source: itemSource, id: id)
        item.completed = completed
        if let sniffed {
            let known = MediaFormat.known(id: sniffed.format) ?? .binary
            item.sniffed = SniffedContent(
                format: known, fileExtension: sniffed.fileExtension, mimeType: mimeType ?? known.mimeType,
                recognised: known != .binary && known != .text, declaredExtension: nil, contradictedFormat: nil)
        }
        item.mimeType = mimeType
        item.type = type
        item.size = size
        item.sourceVersion = version.map {
            FileVersion(device: $0.device, inode: $0.inode, size: $0.size, modifiedSeconds: $0.modifiedSeconds, modifiedNanoseconds: $0.modifiedNanoseconds)
        }
        item.copyPath = copyPath
        item.thumbnailPath = thumbnailPath
        item.width = width
        item.height = height
        item.durationMilliseconds = duration
        item.warnings = warnings
        item.failure = failure.map { ItemFailure($0.stage, $0.reason, $0.message) }
        for (name, seconds) in stageSeconds ?? [:] { if let stage = StageName(rawValue: name) { item.stageSeconds[stage] = seconds } }
        item.decodingInFlight = decoding ?? false
        item.crashStrikes = strikes ?? 0
        return item
    }

    var json: String { String(decoding: try! JSONEncoder().encode(self), as: UTF8.self) }

    static func decode(_ json: String) -> ItemWork? {
        (try? JSONDecoder().decode(ItemSnapshot.self, from: Data(json.utf8)))?.item
    }
}
