import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// A pipeline: which stages run, with how many workers and which settings, and
/// how the manifest is written. Decoded from `pipelines/*.json` and validated;
/// two definitions are built in (`default` and `share-extension`).
///
/// Every setting is a `var`, so a pipeline can also be built or adjusted in code:
/// ```swift
/// var pipeline = PipelineDefinition.standard          // or try .load("share-extension")
/// pipeline.thumbnail?.size = 200                      // nil: this pipeline makes no thumbnails
/// pipeline.manifest.schema = .legacy
/// pipeline.probe = nil                                // drop a stage
/// pipeline.thumbnail = .init()                        // add one with the documented defaults
/// pipeline.location = .init()                         // location privacy on
/// pipeline.compatible = .init()                       // JPEG copies of HEIC, AVIF, JPEG XL, RAW
/// let ingestor = ShareIngestor(container: container, pipeline: pipeline)
/// ```
/// A definition built in code is validated like a file when a batch starts (an
/// out-of-range setting throws ``ShareIngestError/pipeline(_:)``).
public struct PipelineDefinition: Sendable, Hashable {
    /// The name reports and the journal show (`default`, `share-extension`, a file's `name`).
    public var name: String
    /// What the pipeline is for, in one sentence.
    public var description: String
    /// The `sniff` stage (required).
    public var sniff: SniffSettings
    /// The `copy` stage (required).
    public var copy: CopySettings
    /// Nil when the pipeline has no probe stage (types then come from the content alone).
    public var probe: ProbeSettings?
    /// Nil when the pipeline makes no thumbnails.
    public var thumbnail: ThumbnailSettings?
    /// Nil when the pipeline neither extracts motion photos' videos nor pairs Live Photos.
    public var motion: MotionSettings?
    /// Location privacy: the copies carry no location. Nil (the default): they
    /// are copied as they are.
    public var location: LocationSettings?
    /// Nil (the default) when the pipeline makes no compatible copies.
    public var compatible: CompatibleSettings?
    /// The `manifest` stage (required, last).
    public var manifest: ManifestSettings

    /// A pipeline from its stages' settings; every argument has the documented
    /// default, so `PipelineDefinition(name: "mine")` has every stage of `default`.
    public init(
        name: String, description: String = "", sniff: SniffSettings = .init(), copy: CopySettings = .init(),
        location: LocationSettings? = nil, probe: ProbeSettings? = .init(), thumbnail: ThumbnailSettings? = .init(), motion: MotionSettings? = .init(),
        compatible: CompatibleSettings? = nil, manifest: ManifestSettings = .init()
    ) {
        self.name = name
        self.description = description
        self.sniff = sniff
        self.copy = copy
        self.location = location
        self.probe = probe
        self.thumbnail = thumbnail
        self.motion = motion
        self.compatible = compatible
        self.manifest = manifest
    }

    /// The stages in order, as item stages run them (manifest excluded: it is the fan-in).
    public var itemStages: [StageName] {
        [.sniff, .copy] + (location != nil ? [.location] : []) + (probe != nil ? [.probe] : []) + (thumbnail != nil ? [.thumbnail] : [])
            + (motion != nil ? [.motion] : []) + (compatible != nil ? [.compatible] : [])
    }

    /// How many worker threads `stage` runs on (0 for a stage the pipeline lacks).
    public func workers(for stage: StageName) -> Int {
        switch stage {
        case .sniff: sniff.workers
        case .copy: copy.workers
        case .location: location?.workers ?? 0
        case .probe: probe?.workers ?? 0
        case .thumbnail: thumbnail?.workers ?? 0
        case .motion: motion?.workers ?? 0
        case .compatible: compatible?.workers ?? 0
        case .manifest: 1
        }
    }

    /// Settings of the `location` stage (location privacy): the location
    /// metadata of each copy (EXIF GPS, XMP `exif:GPS*`, QuickTime `©xyz` and
    /// `com.apple.quicktime.location.*`, MP4 `loci`) is blanked in place, in
    /// the copy only; the capture date, the orientation, the pixels and
    /// everything else stay. A file whose location cannot be removed in place
    /// fails (reason `locationNotRemovable`).
    public struct LocationSettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 2
        /// Seconds reading one file's metadata may take.
        public var timeLimit: Double = 30

        /// The defaults: two workers, 30 s.
        public init() {}
    }

    /// Settings of the `compatible` stage: a full-resolution JPEG beside each
    /// photo in a format many apps cannot open (iOS's "Most Compatible"),
    /// upright, in sRGB (or with the source's ICC profile), with its capture
    /// metadata (no GPS under location privacy), linked from its entry.
    public struct CompatibleSettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 1
        /// JPEG quality (1...100).
        public var quality = 90
        /// Which formats get one.
        public var formats: Set<CompatibleFormat> = Set(CompatibleFormat.allCases)
        /// Seconds making one copy may take.
        public var timeLimit: Double = 120

        /// The defaults: one worker, quality 90, every format, 120 s.
        public init() {}
    }

    /// The formats a `compatible` stage makes JPEG copies of.
    public enum CompatibleFormat: String, Sendable, Hashable, CaseIterable {
        /// HEIC and HEIF stills.
        case heif
        /// AVIF stills.
        case avif
        /// JPEG XL.
        case jxl
        /// Camera RAW (DNG, NEF, CR2, CR3, ARW, RAF, ORF, RW2): from the largest embedded preview.
        case raw

        /// The kind `format` belongs to, if any.
        init?(_ format: MediaFormat) {
            switch format.id {
            case "heic", "heif": self = .heif
            case "avif": self = .avif
            case "jxl": self = .jxl
            default:
                guard format.isCameraRAW else { return nil }
                self = .raw
            }
        }
    }

    /// Settings of the `sniff` stage (content type and extension from the first 4 KB).
    public struct SniffSettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 1
        /// Fail a file whose name claims a media format its unrecognisable content is not.
        public var rejectContradictions = true

        /// The defaults: one worker, contradictions rejected.
        public init() {}
    }

    /// Settings of the `copy` stage.
    public struct CopySettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 2
        /// fsync every copy before the manifest names it.
        public var fsync = true

        /// The defaults: two workers, fsync on.
        public init() {}
    }

    /// Settings of the `probe` stage (confirms the type, reads dimensions and duration).
    public struct ProbeSettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 2
        /// Images and videos with more pixels than this (per frame) are refused before decoding.
        public var pixelLimit = 100_000_000
        /// Seconds one file may take to open and probe.
        public var timeLimit: Double = 30

        /// The defaults: two workers, 100 MP, 30 s.
        public init() {}
    }

    /// Settings of the `thumbnail` stage (JPEG thumbnails and video posters).
    public struct ThumbnailSettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 2
        /// The longest side in pixels (16...4096); smaller images are not upscaled.
        public var size = 360
        /// JPEG quality (1...100).
        public var quality = 80
        /// Which kinds get thumbnails: images, videos, documents (PDF first pages),
        /// audio (its cover art).
        public var kinds: Set<ThumbnailKind> = [.image, .video, .document, .audio]
        /// What a truncated or damaged image gives: see the README's pipeline table.
        public var damageTolerance: DamageTolerance = .truncated
        /// Seconds one thumbnail may take.
        public var timeLimit: Double = 30
        /// The poster is the keyframe nearest to this many seconds into a video.
        public var posterTime: Double = 1

        /// The defaults of the `default` pipeline: 360 px, quality 80, images, videos, documents and audio covers.
        public init() {}

        var spec: ThumbnailSpec {
            ThumbnailSpec(size: size, quality: quality, damageTolerance: damageTolerance, timeLimit: timeLimit, posterTime: posterTime)
        }
    }

    /// Settings of the `motion` stage: moments, not just files.
    public struct MotionSettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 1
        /// Copy a motion photo's embedded video (Google, Samsung; JPEG or HEIC)
        /// out into the container as a file of its own, probed and with a
        /// poster, linked from the photo's entry (`motionVideo`). The photo's
        /// copy stays byte for byte the original.
        public var extract = true
        /// Pair a Live Photo's still and movie shared in the same batch (by
        /// Apple's content identifier; else by name, a movie of at most
        /// ``livePhotoMaximumSeconds`` and capture times within
        /// ``livePhotoMaximumGap``), linked both ways (`livePhoto`).
        public var livePhotos = true

        /// The longest movie paired with a still by name and capture time.
        public static let livePhotoMaximumSeconds = 3.2
        /// The largest difference between a still's and a movie's capture times
        /// when they are paired by name.
        public static let livePhotoMaximumGap = 2.0

        /// The defaults: one worker, motion photos extracted, Live Photos paired.
        public init() {}
    }

    /// What a thumbnail stage makes thumbnails for.
    public enum ThumbnailKind: String, Sendable, Hashable, CaseIterable {
        /// Still and animated images (the first frame).
        case image
        /// Videos: a poster from a keyframe.
        case video
        /// Documents libvips renders: the first page of a PDF.
        case document
        /// Audio with cover art (ID3 APIC, MP4 `covr`, FLAC or Vorbis pictures):
        /// the cover. The item stays a `file` with its duration.
        case audio
    }

    /// Settings of the `manifest` stage: what the host app will read.
    public struct ManifestSettings: Sendable, Hashable {
        /// The JSON layout written.
        public var schema: ManifestSchema = .v2
        /// The redirect URL's scheme.
        public var scheme = RedirectURL.defaultScheme
        /// A fixed key; nil gives every batch its own (`ShareKey-<UUID>`).
        public var key: ShareKey?
        /// How `file://` paths are spelled.
        public var pathSpelling: PathSpelling = .percentEncoded
        /// What becomes of an item whose content (SHA-256) was delivered before:
        /// earlier in the batch, or in a share not yet consumed.
        public var duplicates: DuplicatePolicy = .keep

        /// The defaults: v2, `ShareMedia`, a key per batch, percent-encoded paths,
        /// duplicates kept (and marked).
        public init() {}
    }

    /// What the fan-in does with an item whose content was already delivered.
    public enum DuplicatePolicy: String, Sendable, Hashable, CaseIterable {
        /// Delivered with its own copy, marked (`duplicateOf`, a warning).
        case keep
        /// Delivered as a pointer to the earlier copy: its own copy is removed.
        case link
        /// Left out (status `skipped`, reason `duplicate`), its copy removed.
        case skip
    }
}

/// Why a pipeline definition was refused: the file, the field, what is wrong and what is allowed.
public struct PipelineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The pipeline file (or `built-in pipeline <name>`, `pipeline <name>` for one built in code).
    public let file: String
    /// The field, e.g. `stages[2].quality`.
    public let field: String
    /// What is wrong and what is allowed.
    public let problem: String

    /// `<file>: <field>: <problem>`.
    public var description: String { "\(file): \(field): \(problem)" }
}

extension PipelineDefinition {
    /// The pipelines compiled into the program, by name.
    public static let builtinNames = BuiltinPipelines.json.keys.sorted()

    /// A built-in pipeline by name, or a pipeline file by path (anything with a `/`
    /// or ending in `.json`).
    public static func load(_ nameOrPath: String) throws(PipelineError) -> PipelineDefinition {
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") {
            guard let data = try? Data(FileSystem.readWholeFile(nameOrPath)) else {
                throw PipelineError(file: nameOrPath, field: "(file)", problem: "cannot be read (missing or not a file)")
            }
            return try decode(data, file: nameOrPath)
        }
        guard let text = BuiltinPipelines.json[nameOrPath] else {
            throw PipelineError(
                file: nameOrPath, field: "(name)",
                problem: "no built-in pipeline has this name; built in: \(builtinNames.joined(separator: ", ")); or give a path to a .json file")
        }
        return try decode(Data(text.utf8), file: "built-in pipeline \(nameOrPath)")
    }

    /// The `default` pipeline.
    public static var standard: PipelineDefinition { try! load("default") }

    /// Decodes and validates a pipeline document (see ``PipelineDocument``).
    public static func decode(_ data: Data, file: String) throws(PipelineError) -> PipelineDefinition {
        try PipelineDocument(file: file).decode(data)
    }

    /// The definition as a pipeline document (every setting spelled out), so it can
    /// be stored with a batch and read back identically.
    public func encodedJSON() -> String { PipelineDocument.encode(self) }

    /// Checks every setting against what the document allows, for a definition
    /// built in code (a batch stores it as JSON, and a resumed batch must read it
    /// back): the same rules as a file, naming the same fields.
    public func validate() throws(PipelineError) { try PipelineDocument(file: "pipeline \(name)").check(self) }
}
