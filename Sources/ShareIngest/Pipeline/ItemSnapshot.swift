import Foundation
import MediaKit
import MediaFormats
import ShareManifest

/// An item's state as it is stored: JSON in the SQLite journal and in
/// PostgreSQL, so a resumed batch (or any worker on any machine) can take the
/// item's next stage. The one mapping between ``ItemWork`` and its record.
struct ItemSnapshot: Codable {
    var index: Int
    var kind: String
    var source: Data?
    var shownAs: Data?
    var name: String?
    var text: String?
    var id: UUID
    var completed: StageName?
    var format: String?
    var fileExtension: String?
    var mimeType: String?
    var type: SharedMediaType
    var size: Int64?
    var version: [Int64]?
    var copyPath: String?
    var thumbnailPath: String?
    var width: Int?
    var height: Int?
    var duration: Double?
    var warnings: [String]
    var failure: [String]?

    init(_ item: ItemWork) {
        index = item.index
        id = item.id
        switch item.source {
        case .file(let file): (kind, source, shownAs, name) = ("file", Data(file.path.bytes), Data(file.shownAs.bytes), file.name)
        case .data(_, let dataName): (kind, name) = ("data", dataName)
        case .text(let value): (kind, text) = ("text", value)
        case .url(let value): (kind, text) = ("url", value)
        }
        completed = item.completed
        format = item.sniffed?.format.id
        fileExtension = item.sniffed?.fileExtension
        mimeType = item.mimeType
        type = item.type
        size = item.size
        version = item.sourceVersion.map {
            [Int64(bitPattern: $0.device), Int64(bitPattern: $0.inode), $0.size, Int64($0.modifiedSeconds), Int64($0.modifiedNanoseconds)]
        }
        copyPath = item.copyPath
        thumbnailPath = item.thumbnailPath
        width = item.width
        height = item.height
        duration = item.durationMilliseconds
        warnings = item.warnings
        failure = item.failure.map { [$0.stage.rawValue, $0.reason.rawValue, $0.message] }
    }

    var item: ItemWork {
        let itemSource: ItemSource
        switch kind {
        case "file":
            itemSource = .file(SourceFile(SourcePath(bytes: Array(source ?? Data())), shownAs: shownAs.map { SourcePath(bytes: Array($0)) }, name: name ?? ""))
        case "data": itemSource = .data(Data(), name: name ?? "data")
        case "text": itemSource = .text(text ?? "")
        default: itemSource = .url(text ?? "")
        }
        let item = ItemWork(index: index, source: itemSource, id: id)
        item.completed = completed
        if let format, let fileExtension {
            let known = MediaFormat.known(id: format) ?? .binary
            item.sniffed = SniffedContent(
                format: known, fileExtension: fileExtension, mimeType: mimeType ?? known.mimeType,
                recognised: known != .binary && known != .text, declaredExtension: nil, contradictedFormat: nil)
        }
        item.mimeType = mimeType
        item.type = type
        item.size = size
        if let v = version, v.count == 5 {
            item.sourceVersion = FileVersion(
                device: UInt64(bitPattern: v[0]), inode: UInt64(bitPattern: v[1]), size: v[2], modifiedSeconds: Int(v[3]), modifiedNanoseconds: Int(v[4]))
        }
        item.copyPath = copyPath
        item.thumbnailPath = thumbnailPath
        item.width = width
        item.height = height
        item.durationMilliseconds = duration
        item.warnings = warnings
        if let failure, failure.count == 3, let stage = StageName(rawValue: failure[0]), let reason = ItemFailure.Reason(rawValue: failure[1]) {
            item.failure = ItemFailure(stage, reason, failure[2])
        }
        return item
    }

    var json: String { String(decoding: try! JSONEncoder().encode(self), as: UTF8.self) }

    static func decode(_ json: String) -> ItemWork? {
        (try? JSONDecoder().decode(ItemSnapshot.self, from: Data(json.utf8)))?.item
    }
}
