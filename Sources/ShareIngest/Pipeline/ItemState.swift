import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// A source file: the path read (a symbolic link already resolved) and the
/// name the user knows it by. How it is shown in reports is the item's
/// ``ItemState/label``, decided once when the batch is planned.
struct SourceFile: Sendable, Hashable {
    let path: SourcePath
    let name: String
}

/// Where an item's bytes come from. In-memory inputs are spooled to a file when
/// the batch is planned (``BatchPlan``): from then on they are files like any other.
enum ItemSource: Sendable, Hashable {
    case file(SourceFile)
    case text(String)
    case url(String)

    var fileName: String? {
        switch self {
        case .file(let file): file.name
        case .text, .url: nil
        }
    }
}

/// One item's state: the value every mode keeps, records and reads back. Its
/// fields are declared once, here; the journal's and the queue's rows hold its
/// JSON (``encoded()``), the report derives from it (``ManifestStage``), and a
/// resumed batch or a worker on another machine takes the item's next stage
/// from it. What exists only while an item is in memory is ``CarriedResults``.
struct ItemState: Sendable {
    /// Position in the batch (input order).
    let index: Int
    /// Assigned (and recorded) before the copy, so the copy is named once.
    let id: UUID
    let source: ItemSource
    /// How reports and messages name the item: the path the user knows (a
    /// watched drop by its place in the inbox, not where a worker reads it),
    /// `text:…`, `url:…` or `data:<name>`. Decided when the batch is planned.
    let label: String
    /// The last stage this item finished; it goes on after that one.
    var completed: StageName?

    // Sniff
    var sniffed: SniffedContent?
    var sourceVersion: FileVersion?
    // Copy
    var copyPath: String?
    var size: Int64?
    /// The SHA-256 of the copy's bytes (hexadecimal): its content identity.
    var sha256: String?
    /// The copy of the same content delivered earlier (in this batch, or in a
    /// share not yet consumed), when this item is a duplicate: its path.
    var duplicateOf: String?
    // Probe
    var type: SharedMediaType = .file
    var mimeType: String?
    var width: Int?
    var height: Int?
    var durationMilliseconds: Double?
    // Thumbnail
    var thumbnailPath: String?
    // Moments
    /// What the decoder found that ties the item to a moment (an embedded
    /// video's byte range, Apple's content identifier, the capture time).
    var moments: MomentFacts?
    /// A motion photo's video, copied out of its copy (the motion stage).
    var motionVideo: MotionVideo?
    /// The Live Photo this still or movie is half of (the fan-in pairs them).
    var livePhoto: LivePhotoLink?
    // Location privacy: what was removed from the copy (nil: the stage did not
    // run on it, or found nothing).
    var locationRemoved: [String]?
    // Compatible copy
    var compatible: CompatibleCopyRecord?

    /// Things that went wrong without costing the item.
    var warnings: [String] = []
    /// Why the item was not delivered (final once set).
    var failure: ItemFailure?
    /// Seconds spent in each stage.
    var stageSeconds: [StageName: Double] = [:]
    /// Attempts lost at its next stage through no fault of its own (its worker
    /// died, its process died while decoding it alone): see ``ItemLifecycle``.
    var lostAttempts = 0
    /// Set (and recorded) while a stage decodes this item in-process, cleared
    /// when it ends: found set when a batch resumes, it means the process died
    /// while decoding it.
    var decodingInFlight = false

    init(index: Int, id: UUID, source: ItemSource, label: String, failure: ItemFailure? = nil) {
        self.index = index
        self.id = id
        self.source = source
        self.label = label
        self.failure = failure
        if case .url = source { type = .url }
        if case .text = source { type = .text }
    }

    /// The state of an item whose recorded JSON cannot be read: it fails, with
    /// why, instead of vanishing from its batch.
    static func unreadable(index: Int, id: UUID?, error: String) -> ItemState {
        ItemState(
            index: index, id: id ?? UUID(), source: .text(""), label: "item \(index)",
            failure: ItemFailure(.sniff, .unreadableState, "item \(index): its recorded state cannot be read (\(error)); it was not delivered"))
    }

    var isFileLike: Bool {
        switch source {
        case .file: true
        case .text, .url: false
        }
    }

    /// Every file of the container this item may own (to remove if it fails): the
    /// ones recorded, and the ones its UUID names, which a run that died before
    /// recording them may have left.
    /// Only files named by its UUID are its own: a duplicate linked to an
    /// earlier copy points at that copy, which is never removed with it.
    /// A motion photo's extracted video is its own too (named by
    /// ``motionVideoID``, with either extension it may have).
    func ownedFiles(in container: ContainerDirectory) -> Set<String> {
        var files = Set(deliveredFiles.filter { $0.lastPathComponentOfPath.hasPrefix(id.uuidString) })
        if let ext = sniffed?.fileExtension { files.insert(container.mediaPath(id: id, fileExtension: ext)) }
        if isFileLike {
            files.insert(container.thumbnailPath(id: id))
            files.insert(container.compatiblePath(id: id))
        }
        if moments?.embeddedVideo != nil || motionVideo != nil {
            for ext in MotionVideo.extensions { files.insert(container.mediaPath(id: motionVideoID, fileExtension: ext)) }
            files.insert(container.thumbnailPath(id: motionVideoID))
        }
        return files
    }

    /// The container files this item's entry names: its copy, thumbnail and compatible copy.
    var deliveredFiles: [String] { [copyPath, thumbnailPath, compatible?.path].compactMap { $0 } }

    /// Removes every file this item may own (a failed item leaves nothing behind).
    mutating func removeFiles(in container: ContainerDirectory) {
        for path in ownedFiles(in: container) { FileSystem.remove(path) }
        copyPath = nil
        thumbnailPath = nil
        motionVideo = nil
        compatible = nil
    }
}

/// An item's compatible copy (``CompatibleStage``): a full-resolution JPEG in the container.
struct CompatibleCopyRecord: Sendable, Hashable, Codable {
    let path: String
    let width: Int
    let height: Int
    let size: Int64
}

/// What a stage hands the next one in memory, never recorded: a resumed item
/// (or one another worker takes up) simply has none.
struct CarriedResults: Sendable {
    /// What decoding the item is expected to cost (from its sniffed header).
    var decodeCost: DecodeCost?
    /// The thumbnail the probe's decoding pass made, for the thumbnail stage to write.
    var thumbnail: ThumbnailOutcome?
    /// True when the probe asked the decoder for a thumbnail (none came back for
    /// audio without cover art: the thumbnail stage need not decode it again).
    var probeDecodedThumbnail = false
    /// True when the copy stage wrote the copy from the source in this run: it
    /// holds the source's bytes, which its recorded SHA-256 is the hash of.
    var copiedFromSource = false
}

/// An item being worked on: its state and what its stages carry in memory.
/// Stages read and write the state's fields directly (`item.copyPath`).
@dynamicMemberLookup
struct InFlightItem: Sendable {
    var state: ItemState
    var carried = CarriedResults()

    init(_ state: ItemState) { self.state = state }

    subscript<Value>(dynamicMember path: WritableKeyPath<ItemState, Value>) -> Value {
        get { state[keyPath: path] }
        set { state[keyPath: path] = newValue }
    }

    subscript<Value>(dynamicMember path: KeyPath<ItemState, Value>) -> Value { state[keyPath: path] }
}

// MARK: - Recorded form

extension ItemState: Codable {
    // The keys of the recorded JSON. PostgreSQL queries read some of them
    // (`failure`, `stageSeconds`); older records (before `label` and
    // `lostAttempts`) still decode.
    private enum Key: String, CodingKey {
        case index, id, source, label, completed, sniffed, type, mimeType, size, version, copyPath, thumbnailPath, width, height
        case duration, warnings, failure, stageSeconds, decoding, lostAttempts, strikes, sha256, duplicateOf
        case moments, motionVideo, livePhoto
        case locationRemoved, compatible
    }

    private struct Source: Codable {
        var kind: String
        var path: Data?
        /// How older records kept the label of a file.
        var shownAs: Data?
        var name: String?
        var text: String?
    }

    private struct Sniffed: Codable {
        var format: String
        var fileExtension: String
    }

    private struct Version: Codable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedSeconds: Int
        var modifiedNanoseconds: Int
    }

    private struct Failure: Codable {
        var stage: StageName
        var reason: ItemFailure.Reason
        var message: String
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(index, forKey: .index)
        try c.encode(id, forKey: .id)
        switch source {
        case .file(let file): try c.encode(Source(kind: "file", path: Data(file.path.bytes), name: file.name), forKey: .source)
        case .text(let value): try c.encode(Source(kind: "text", text: value), forKey: .source)
        case .url(let value): try c.encode(Source(kind: "url", text: value), forKey: .source)
        }
        try c.encode(label, forKey: .label)
        try c.encodeIfPresent(completed, forKey: .completed)
        try c.encodeIfPresent(sniffed.map { Sniffed(format: $0.format.id, fileExtension: $0.fileExtension) }, forKey: .sniffed)
        try c.encode(type, forKey: .type)
        try c.encodeIfPresent(mimeType, forKey: .mimeType)
        try c.encodeIfPresent(size, forKey: .size)
        try c.encodeIfPresent(sha256, forKey: .sha256)
        try c.encodeIfPresent(duplicateOf, forKey: .duplicateOf)
        try c.encodeIfPresent(
            sourceVersion.map {
                Version(device: $0.device, inode: $0.inode, size: $0.size, modifiedSeconds: $0.modifiedSeconds, modifiedNanoseconds: $0.modifiedNanoseconds)
            }, forKey: .version)
        try c.encodeIfPresent(copyPath, forKey: .copyPath)
        try c.encodeIfPresent(thumbnailPath, forKey: .thumbnailPath)
        try c.encodeIfPresent(moments, forKey: .moments)
        try c.encodeIfPresent(motionVideo, forKey: .motionVideo)
        try c.encodeIfPresent(livePhoto, forKey: .livePhoto)
        try c.encodeIfPresent(locationRemoved, forKey: .locationRemoved)
        try c.encodeIfPresent(compatible, forKey: .compatible)
        try c.encodeIfPresent(width, forKey: .width)
        try c.encodeIfPresent(height, forKey: .height)
        try c.encodeIfPresent(durationMilliseconds, forKey: .duration)
        try c.encode(warnings, forKey: .warnings)
        try c.encodeIfPresent(failure.map { Failure(stage: $0.stage, reason: $0.reason, message: $0.message) }, forKey: .failure)
        if !stageSeconds.isEmpty {
            try c.encode(Dictionary(uniqueKeysWithValues: stageSeconds.map { ($0.key.rawValue, $0.value) }), forKey: .stageSeconds)
        }
        if decodingInFlight { try c.encode(true, forKey: .decoding) }
        if lostAttempts > 0 { try c.encode(lostAttempts, forKey: .lostAttempts) }
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let source = try c.decode(Source.self, forKey: .source)
        let itemSource: ItemSource
        var label: String
        switch source.kind {
        case "file":
            let path = SourcePath(bytes: Array(source.path ?? Data()))
            itemSource = .file(SourceFile(path: path, name: source.name ?? ""))
            label = SourcePath(bytes: Array(source.shownAs ?? source.path ?? Data())).display
        case "text":
            itemSource = .text(source.text ?? "")
            label = ItemState.label(ofText: source.text ?? "")
        case "url":
            itemSource = .url(source.text ?? "")
            label = ItemState.label(ofURL: source.text ?? "")
        default:
            throw DecodingError.dataCorruptedError(forKey: .source, in: c, debugDescription: "unknown source kind \(source.kind)")
        }
        label = try c.decodeIfPresent(String.self, forKey: .label) ?? label
        self.init(index: try c.decode(Int.self, forKey: .index), id: try c.decode(UUID.self, forKey: .id), source: itemSource, label: label)
        completed = try c.decodeIfPresent(StageName.self, forKey: .completed)
        type = try c.decode(SharedMediaType.self, forKey: .type)
        mimeType = try c.decodeIfPresent(String.self, forKey: .mimeType)
        if let sniffed = try c.decodeIfPresent(Sniffed.self, forKey: .sniffed) {
            let known = MediaFormat.known(id: sniffed.format) ?? .binary
            self.sniffed = SniffedContent(
                format: known, fileExtension: sniffed.fileExtension, mimeType: mimeType ?? known.mimeType,
                recognised: known != .binary && known != .text, declaredExtension: nil, contradictedFormat: nil)
        }
        size = try c.decodeIfPresent(Int64.self, forKey: .size)
        sha256 = try c.decodeIfPresent(String.self, forKey: .sha256)
        duplicateOf = try c.decodeIfPresent(String.self, forKey: .duplicateOf)
        sourceVersion = try c.decodeIfPresent(Version.self, forKey: .version).map {
            FileVersion(device: $0.device, inode: $0.inode, size: $0.size, modifiedSeconds: $0.modifiedSeconds, modifiedNanoseconds: $0.modifiedNanoseconds)
        }
        copyPath = try c.decodeIfPresent(String.self, forKey: .copyPath)
        thumbnailPath = try c.decodeIfPresent(String.self, forKey: .thumbnailPath)
        moments = try c.decodeIfPresent(MomentFacts.self, forKey: .moments)
        motionVideo = try c.decodeIfPresent(MotionVideo.self, forKey: .motionVideo)
        livePhoto = try c.decodeIfPresent(LivePhotoLink.self, forKey: .livePhoto)
        locationRemoved = try c.decodeIfPresent([String].self, forKey: .locationRemoved)
        compatible = try c.decodeIfPresent(CompatibleCopyRecord.self, forKey: .compatible)
        width = try c.decodeIfPresent(Int.self, forKey: .width)
        height = try c.decodeIfPresent(Int.self, forKey: .height)
        durationMilliseconds = try c.decodeIfPresent(Double.self, forKey: .duration)
        warnings = try c.decodeIfPresent([String].self, forKey: .warnings) ?? []
        failure = try c.decodeIfPresent(Failure.self, forKey: .failure).map { ItemFailure($0.stage, $0.reason, $0.message) }
        for (name, seconds) in try c.decodeIfPresent([String: Double].self, forKey: .stageSeconds) ?? [:] {
            if let stage = StageName(rawValue: name) { stageSeconds[stage] = seconds }
        }
        decodingInFlight = try c.decodeIfPresent(Bool.self, forKey: .decoding) ?? false
        // Older records counted deaths while decoded alone as `strikes`.
        lostAttempts = try c.decodeIfPresent(Int.self, forKey: .lostAttempts) ?? c.decodeIfPresent(Int.self, forKey: .strikes) ?? 0
    }

    /// The recorded JSON.
    func encoded() -> String {
        // Encoding plain values cannot fail.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }

    /// The state recorded as `json`; an unreadable record becomes an item that
    /// fails with why (``unreadable(index:id:error:)``), never a dropped one.
    static func decode(_ json: String, index: Int, id: UUID?) -> ItemState {
        do {
            return try JSONDecoder().decode(ItemState.self, from: Data(json.utf8))
        } catch {
            return .unreadable(index: index, id: id, error: "\(error)")
        }
    }

    static func label(ofText text: String) -> String { "text:" + String(text.prefix(60)) }
    static func label(ofURL url: String) -> String { "url:" + String(url.prefix(200)) }
}
