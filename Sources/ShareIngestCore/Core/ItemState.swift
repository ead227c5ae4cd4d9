import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

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

/// One item's state: the value every mode keeps, records and reads back.
///
/// Its persisted form is declared once, here: the stored properties below are
/// the record (synthesised `Codable`, keyed by ``CodingKeys``), the journal's and
/// the queue's rows hold its JSON (``encoded()``) and copy the columns they index
/// from ``ItemColumn``, the report derives from it (``ManifestStage``), and a
/// resumed batch or a worker on another machine takes the item's next stage from
/// it. A field left out of ``CodingKeys`` would be lost on every round trip:
/// `LifecycleTests.everyRecordedFieldSurvivesARoundTrip` sets each one and reads
/// it back. What exists only while an item is in memory is ``CarriedResults``.
struct ItemState: Sendable, Hashable, Codable {
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
    /// The pixels its header announces (width × height, from the first bytes
    /// the sniff read; nil when they do not say): with its format and size,
    /// what decoding it is expected to cost (``ItemLifecycle/cost(of:)``), the
    /// same for every holder.
    var headerPixels: Int?
    // Copy
    var copyPath: String?
    var size: Int64?
    /// The SHA-256 of the copy's bytes (hexadecimal): its content identity.
    var sha256: String?
    /// The copy of the same content delivered earlier (in this batch, or in a
    /// share not yet consumed), when this item is a duplicate: its path.
    var duplicateOf: String?
    /// The picture delivered earlier (in this batch, or in a share not yet
    /// consumed) this one looks like, when it is not a duplicate: its path and
    /// the distance between their perceptual hashes (v2 `similarTo`).
    var similarTo: SimilarRecord?
    // Probe
    var type: SharedMediaType = .file
    var mimeType: String?
    var width: Int?
    var height: Int?
    var durationMilliseconds: Double?
    /// How a video plays (v2 `video`), as the probe read it.
    var video: VideoFacts?
    /// A panorama's projection, a stereo pair, an HDR gain map (v2 `projection`,
    /// `stereo`, `hdr`), as the probe read them.
    var projection: Projection?
    var stereo: Bool?
    var gainMap: Bool?
    // Thumbnail
    var thumbnailPath: String?
    /// The thumbnail's ThumbHash, base64 (v2 `thumbhash`).
    var thumbHash: String?
    /// The thumbnail's perceptual hash (``PerceptualHash``) and its colour
    /// cells, as ``PerceptualHash/record(_:colours:)`` writes them (16
    /// hexadecimal digits, then `-` and 96 more; older records: 24 more, or the 16 alone):
    /// what the fan-in finds near-duplicates by (v2 `similarTo`).
    var perceptualHash: String?
    /// The larger pictures made with the thumbnail (v2 `previews`), smallest first.
    @OmittedWhenDefault var previews: [PreviewRecord] = []
    // Moments
    /// What the decoder found that ties the item to a moment (an embedded
    /// video's byte range, Apple's content identifier, the capture time).
    var moments: MomentFacts?
    /// A motion photo's video, copied out of its copy (the motion stage).
    var motionVideo: MotionVideo?
    /// The Live Photo this still or movie is half of (the fan-in pairs them).
    var livePhoto: LivePhotoLink?
    // Export sidecars (``ExportSidecars``)
    /// The export sidecars found beside this photo or video when the batch was
    /// planned (its Takeout JSON, XMP, `.AAE`; ``FolderSidecars``), carried
    /// through its stages instead of being items of their own: read by its
    /// sniff, copied under its UUID by its copy (`<UUID>.<n>.<ext>`), their
    /// Takeout JSON read with it by its probe. Each is still an input of the
    /// batch, with its own index and report.
    @OmittedWhenDefault var carriedSidecars: [CarriedSidecar] = []
    /// The kind of export sidecar its content shows (the sniff): on an item
    /// of its own, a sidecar whose media is not in the drop; on a carried
    /// sidecar as an item (``CarriedSidecar/item(carriedBy:n:)``), its kind.
    var sidecarKind: SharedMediaFile.Sidecar.Kind?
    /// On a carried sidecar as an item: the media item it is attached to (its
    /// label), until it is released.
    var attachedTo: String?
    /// When the photo or video was taken (RFC 3339), and where that came from
    /// (`takeout`: its Takeout JSON's `photoTakenTime`). Set by the fan-in.
    var capturedAt: String?
    var capturedAtSource: String?
    /// Its Takeout JSON's `description` (the entry's `message` when the share has none).
    var exportDescription: String?
    /// Its Takeout JSON's `geoData` (reported when location privacy is off).
    var exportLocation: TakeoutLocation?
    /// The group of shots it belongs to (the fan-in forms them: ``ShotGrouping``).
    var group: SharedMediaFile.Group?
    /// The time zone of the place it was taken, when a stage found it before
    /// the position could be lost: the location stage (its copy's position,
    /// before removing it) or the probe (its Takeout JSON's `geoData`). Only
    /// the zone is kept, never the position (issue 54: `capturedAt`'s offset).
    var capturePlace: CapturePlace?
    /// True when the thumbnail was written as an Ultra HDR JPEG, with the
    /// source's gain map (v2 `thumbnailHdr`: issue 54).
    var thumbnailGainMap: Bool?
    // Location privacy: what was removed from the copy (nil: the stage did not
    // run on it, or found nothing).
    var locationRemoved: [String]?
    // Compatible copy
    var compatible: CompatibleCopyRecord?
    /// What stages that are not built in record about the item, by stage
    /// (their ``StageDefinition`` names it): their values, and the container
    /// files they made for it.
    @OmittedWhenDefault var stageRecords: [StageName: StageRecord] = [:]

    /// Things that went wrong without costing the item.
    @OmittedWhenDefault var warnings: [String] = []
    /// Why the item was not delivered (final once set).
    var failure: ItemFailure?
    /// Why it waits to start again (its copy or a thumbnail could not be
    /// written for want of space: ``ItemLifecycle/waitForSpace(_:_:)``): not
    /// final, cleared once a stage completes; reported while it waits.
    var waitingForSpace: ItemFailure?
    /// Seconds spent in each stage.
    @OmittedWhenDefault var stageSeconds: [StageName: Double] = [:]
    /// Attempts lost at its next stage through no fault of its own (its worker
    /// died, its process died while decoding it alone): see ``ItemLifecycle``.
    @OmittedWhenDefault var lostAttempts = 0
    /// Set (and recorded) while a stage decodes this item in-process, cleared
    /// when it ends: found set when a batch resumes, it means the process died
    /// while decoding it.
    @OmittedWhenDefault var decodingInFlight = false
    /// Set when it was in flight when its process (or worker) died: it runs
    /// alone next, until a stage completes, so that a death that is its doing
    /// is blamed on it (beside others, that death was blamed on none of them;
    /// see ``ItemLifecycle/lose(held:inFlightBeside:reason:stopping:)``).
    @OmittedWhenDefault var suspect = false

    /// The record's keys: one per stored property (a property missing here is
    /// never recorded). Three keep the names older records used.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case index, id, source, label, completed, sniffed, headerPixels, copyPath, size, sha256, duplicateOf, type,
            mimeType, width, height
        case thumbnailPath, moments, motionVideo, livePhoto, carriedSidecars, sidecarKind, attachedTo, capturedAt,
            capturedAtSource
        case exportDescription, exportLocation, group, locationRemoved, compatible, stageRecords, warnings, failure,
            stageSeconds, lostAttempts
        case suspect, video, projection, stereo, gainMap
        case capturePlace, thumbnailGainMap
        case previews, waitingForSpace
        case thumbHash = "thumbhash"
        case perceptualHash = "phash"
        case similarTo
        case sourceVersion = "version"
        case durationMilliseconds = "duration"
        case decodingInFlight = "decoding"
    }

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
            failure: ItemFailure(
                .sniff, .unreadableState,
                "item \(index): its recorded state cannot be read (\(error)); it was not delivered"))
    }

    /// True when its record names a copy that is not there: a stage failed and
    /// removed the item's files, and the record of that failure was never
    /// written (the journal's disk full, or the process gone in between), so
    /// the record still says what was made. It runs again from its first stage
    /// (``restarted()``), as that failure would have had it.
    var lostItsCopy: Bool { copyPath.map { !FileSystem.exists($0) } ?? false }

    /// The item as its batch's plan made it (what the plan recorded: its
    /// source and the version seen, the sidecars it carries), to run again
    /// from its first stage: nothing a stage found or made is kept.
    func restarted() -> ItemState {
        var item = ItemState(index: index, id: id, source: source, label: label)
        item.sourceVersion = sourceVersion
        item.carriedSidecars = carriedSidecars.map { $0.restarted() }
        item.sidecarKind = sidecarKind
        item.attachedTo = attachedTo
        return item
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
            for ext in MotionVideo.extensions {
                files.insert(container.mediaPath(id: motionVideoID, fileExtension: ext))
            }
            files.insert(container.thumbnailPath(id: motionVideoID))
        }
        return files
    }

    /// The container files this item's entry names (its copy, thumbnail and
    /// compatible copy) and the ones its stages made for it. The copies of the
    /// sidecars it carries are theirs, not its own (``CarriedSidecar``).
    var deliveredFiles: [String] {
        [copyPath, thumbnailPath, compatible?.path].compactMap { $0 } + stageRecords.values.flatMap(\.files)
            + previews.map(\.path)
    }

    /// Removes every file this item may own (a failed item leaves nothing behind).
    mutating func removeFiles(in container: ContainerDirectory) {
        for path in ownedFiles(in: container) { FileSystem.remove(path) }
        copyPath = nil
        thumbnailPath = nil
        thumbHash = nil
        perceptualHash = nil
        previews = []
        motionVideo = nil
        compatible = nil
        for stage in stageRecords.keys { stageRecords[stage]?.files = [] }
    }
}

/// The earlier picture an item looks like (``ItemState/similarTo``).
struct SimilarRecord: Sendable, Hashable, Codable {
    /// Its copy in the container.
    var path: String
    /// How many bits of their perceptual hashes differ.
    var distance: Int
}

/// What a stage that is not built in records about one item (``ItemState/stageRecords``).
struct StageRecord: Sendable, Hashable, Codable {
    /// Its own values, by name.
    var values: [String: String] = [:]
    /// Container files it made for the item, named by the item's UUID (`<UUID>.<ext>`):
    /// removed with the item if it fails, collected by `share gc` with its share.
    var files: [String] = []
}

/// One of an item's previews (``ThumbnailStage``): a JPEG or WebP in the
/// thumbnails folder, `<UUID>.<size>.<ext>`.
struct PreviewRecord: Sendable, Hashable, Codable {
    let path: String
    let width: Int
    let height: Int
    let format: PreviewFormat
    var size: Int64
    /// True for a JPEG preview written with the source's gain map (issue 54).
    var gainMap: Bool? = nil
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
    /// Seconds a retry recorded by an earlier run must still wait before its
    /// stage runs (the journal's record of the lifecycle's backoff).
    var wait = 0.0
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
