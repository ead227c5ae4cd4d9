import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// Thumbnail: writes a JPEG whose longest side is the pipeline's size into
/// `thumbnails/<UUID>.jpg`. The probe usually made it in its pass over the file;
/// without that (a resumed batch, a remote worker, a pipeline without a probe)
/// the decoder makes it here. An image whose thumbnail cannot be made fails; a
/// video, document or audio file without one is still delivered, with a warning
/// (audio without cover art simply has none).
struct ThumbnailStage: PipelineStage {
    let settings: PipelineDefinition.ThumbnailSettings
    var name: StageName { .thumbnail }

    /// It decodes when the probe made no thumbnail in its pass (a resumed item,
    /// a worker that did not probe it, a pipeline without a probe).
    func decodes(_ item: InFlightItem) -> Bool {
        item.sniffed?.format.isDecodable == true && item.carried.thumbnail == nil
    }

    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure) {
        let carried = item.carried.thumbnail
        let decided = item.carried.probeDecodedThumbnail
        item.carried.thumbnail = nil
        item.carried.probeDecodedThumbnail = false
        item.previews = []
        guard let path = item.copyPath, let sniffed = item.sniffed,
            let spec = settings.spec(for: sniffed.format, type: item.type)
        else { return }
        let isAudio = item.type == .file && !sniffed.format.isRenderableDocument
        var outcome = carried
        if outcome == nil, !decided {
            let probe = batch.pipeline.probe ?? .init()
            let request = DecodeRequest(
                path: path, label: item.label, format: sniffed.format, pixelLimit: probe.pixelLimit,
                timeLimit: probe.timeLimit, thumbnail: spec,
                batch: batch.batchID.uuidString)
            do {
                outcome = try batch.decoder.decode(request).thumbnail
            } catch {
                outcome = .failed(error)
            }
        }
        // Audio without cover art has nothing to show; anything else should have had a picture.
        if outcome == nil, isAudio { return }
        let thumbnail: Thumbnail
        switch outcome ?? .failed(MediaError(.damaged, "\(item.label): no picture to make a thumbnail of")) {
        case .made(let made):
            thumbnail = made
        case .failed(let error):
            switch item.type {
            case .image: throw ItemFailure(.thumbnail, error)
            case .video: item.warnings.append("no poster frame: \(error)")
            default:
                item.warnings.append(
                    isAudio ? "no cover thumbnail: \(error)" : "no thumbnail of the first page: \(error)")
            }
            return
        }
        let destination = batch.container.thumbnailPath(id: item.id)
        // A thumbnail left by a run that died before journaling it is this item's
        // own (named by its UUID): replace it.
        FileSystem.remove(destination)
        do {
            try AtomicFile.create(
                destination, bytes: Self.bytes(thumbnail.jpeg, gainMap: thumbnail.gainMap), syncDirectory: false)
        } catch {
            throw ItemFailure(.thumbnail, writing: error, "\(item.label): cannot write thumbnail: \(error)")
        }
        item.thumbnailPath = destination
        item.thumbnailGainMap = thumbnail.gainMap != nil ? true : nil
        item.thumbHash = thumbnail.thumbHash.map { Data($0).base64EncodedString() }
        item.perceptualHash = thumbnail.perceptualHash.map { PerceptualHash.record($0, colours: thumbnail.colourCells) }
        item.previews = try writePreviews(thumbnail, spec: spec, item: item, in: batch)
    }

    /// Each preview made with `thumbnail`, written beside it as
    /// `thumbnails/<UUID>.<size>.<ext>` the way the thumbnail is (a synced
    /// temporary file renamed; the folder is synced with the thumbnails',
    /// before the manifest names them). A preview that cannot be written fails
    /// the item, as its thumbnail would.
    private func writePreviews(_ thumbnail: Thumbnail, spec: ThumbnailSpec, item: InFlightItem, in batch: BatchContext)
        throws(ItemFailure) -> [PreviewRecord]
    {
        guard let sizes = spec.previews?.sizes, let pictures = thumbnail.previews else { return [] }
        var written: [PreviewRecord] = []
        for (size, picture) in zip(sizes, pictures) {
            let destination = batch.container.previewPath(id: item.id, size: size, format: picture.format)
            FileSystem.remove(destination)
            do {
                try AtomicFile.create(
                    destination,
                    bytes: Self.bytes(picture.bytes, gainMap: picture.format == .jpeg ? picture.gainMap : nil),
                    syncDirectory: false)
            } catch {
                for record in written { FileSystem.remove(record.path) }
                throw ItemFailure(
                    .thumbnail, writing: error, "\(item.label): cannot write its \(size) px preview: \(error)")
            }
            var record = PreviewRecord(
                path: destination, width: picture.width, height: picture.height, format: picture.format,
                size: Int64(picture.bytes.count))
            if picture.format == .jpeg, picture.gainMap != nil {
                record.gainMap = true
                record.size = Int64(Self.bytes(picture.bytes, gainMap: picture.gainMap).count)
            }
            written.append(record)
        }
        return written
    }

    /// A JPEG's bytes as written: with a gain map, the Ultra HDR JPEG the parent
    /// assembles (MediaFormats' `UltraHDR`: its XMP and MPF index written here
    /// from checked numbers); without one, `jpeg` itself, byte for byte.
    static func bytes(_ jpeg: [UInt8], gainMap: GainMapPicture?) -> [UInt8] {
        guard let gainMap else { return jpeg }
        return UltraHDR.assemble(base: jpeg, gainMap: gainMap.jpeg, metadata: gainMap.metadata) ?? jpeg
    }
}

extension ThumbnailSpec {
    /// The thumbnail alone (a motion photo's embedded video gets its poster, no previews).
    var withoutPreviews: ThumbnailSpec {
        var spec = self
        spec.previews = nil
        return spec
    }
}

extension ContainerDirectory {
    /// Where an item's preview of longest side `size` goes: `thumbnails/<UUID>.<size>.<ext>`.
    func previewPath(id: UUID, size: Int, format: PreviewFormat) -> String {
        "\(thumbnailsDirectory)/\(id.uuidString).\(size).\(format.fileExtension)"
    }
}

extension PipelineDefinition.ThumbnailSettings {
    /// The thumbnail an item of this format and type gets, if this stage makes one
    /// for its kind: images, video posters, the first page of a document, the
    /// cover of audio (a `file` in an audio format, or in a video container
    /// that turned out to hold only sound).
    func spec(for format: MediaFormat, type: SharedMediaType) -> ThumbnailSpec? {
        let kind: PipelineDefinition.ThumbnailKind
        switch type {
        case .image: kind = .image
        case .video: kind = .video
        case .file where format.isRenderableDocument: kind = .document
        case .file where format.kind == .audio || format.kind == .video: kind = .audio
        default: return nil
        }
        return kinds.contains(kind) ? spec : nil
    }
}

extension ItemFailure {
    /// A decoding failure at `stage`, its reason from the decoder's typed kind.
    init(_ stage: StageName, _ error: MediaError) {
        let reason: Reason
        switch error.kind {
        case .damaged, .unsupported: reason = .undecodable
        case .contentMismatch: reason = .contentMismatch
        case .tooManyPixels: reason = .tooManyPixels
        case .timeLimit: reason = .timeLimit
        case .memoryLimit: reason = .memoryLimit
        case .decoderCrashed: reason = .decoderCrashed
        case .decoderMisbehaved: reason = .decoderMisbehaved
        case .unreadable: reason = .unreadable
        }
        self.init(stage, reason, error.message)
    }
}

extension ThumbnailStage {
    /// The `thumbnail` stage, declared once: its settings and their document
    /// table (key, allowed values; the default is the settings type's own), its
    /// place in the order, what it records, how it is made.
    static let definition = StageDefinition(
        .thumbnail, after: .probe, settings: PipelineDefinition.ThumbnailSettings.self,
        document: [
            .integer("workers", \.workers, in: 1...64),
            .custom(
                "size",
                read: { value, settings throws(SettingProblem) in
                    try PipelineDefinition.ThumbnailSizes.readSize(value, into: &settings)
                },
                write: { _ in nil }, check: { _ in }),
            .custom(
                "sizes",
                read: { value, settings throws(SettingProblem) in
                    try PipelineDefinition.ThumbnailSizes.readSizes(value, into: &settings)
                },
                write: { $0.sizes },
                check: { settings throws(SettingProblem) in try PipelineDefinition.ThumbnailSizes.check(settings.sizes)
                }),
            .choice("format", \.format),
            .integer("quality", \.quality, in: 1...100),
            .choices("for", \.kinds),
            .choice("damageTolerance", \.damageTolerance),
            .number("timeLimit", \.timeLimit, in: 0.001...86_400),
            .number("posterTime", \.posterTime, in: 0...86_400),
            .boolean("gainMaps", \.gainMaps),
        ],
        workers: \.workers, records: [.thumbnailPath, .thumbHash, .perceptualHash, .previews, .thumbnailGainMap],
        make: { settings, _ in ThumbnailStage(settings: settings) })
}

extension PipelineDefinition {
    /// Settings of the `thumbnail` stage (JPEG thumbnails and video posters).
    public struct ThumbnailSettings: StageSettings {
        /// Worker threads (1...64).
        public var workers = 2
        /// The longest side of each picture, in pixels (16...4096, at most 4, no
        /// duplicates); smaller images are not upscaled. The smallest is the
        /// item's `thumbnail`; each larger one is a preview made from the same
        /// decode (the manifest's v2 `previews`).
        public var sizes: [Int] = [360]
        /// The thumbnail's longest side (the smallest of ``sizes``); setting it
        /// sets ``sizes`` to this one size, as the document's `size` does.
        public var size: Int {
            get { sizes.min() ?? 360 }
            set { sizes = [newValue] }
        }
        /// The previews' encoding (`jpeg` or `webp`); the thumbnail stays a JPEG.
        public var format: PreviewFormat = .jpeg
        /// JPEG quality (1...100).
        public var quality = 80
        /// Which kinds get thumbnails: images, videos, documents (PDF first pages),
        /// audio (its cover art).
        public var kinds: Set<ThumbnailKind> = [.image, .video, .document, .audio]
        /// What a truncated or damaged image gives: see the pipeline table in docs/media.md.
        public var damageTolerance: DamageTolerance = .truncated
        /// Seconds one thumbnail may take.
        public var timeLimit: Double = 30
        /// The poster is the keyframe nearest to this many seconds into a video.
        public var posterTime: Double = 1
        /// A photo's HDR gain map is carried into its thumbnail and JPEG previews;
        /// false keeps them SDR (for an app that shows no HDR: no map's time or bytes).
        public var gainMaps = true

        /// The defaults of the `default` pipeline: 360 px, quality 80, images, videos, documents and audio covers.
        public init() {}

        var spec: ThumbnailSpec {
            var spec = ThumbnailSpec(
                size: size, quality: quality, damageTolerance: damageTolerance, timeLimit: timeLimit,
                posterTime: posterTime)
            let larger = sizes.sorted().dropFirst()
            if !larger.isEmpty { spec.previews = PreviewSizes(sizes: Array(larger), format: format) }
            spec.gainMaps = gainMaps
            return spec
        }
    }

    /// Reading and checking the thumbnail stage's `size` (one integer, kept for
    /// older documents) and `sizes` (an array of integers).
    enum ThumbnailSizes {
        static let range = 16...4096
        static let maximumCount = 4
        static let allowed =
            "allowed: an array of 1 to \(maximumCount) different integers in \(range.lowerBound)...\(range.upperBound)"

        static func integer(_ value: Any) -> Int? {
            guard let number = value as? NSNumber, !JSONValue.isBoolean(number),
                number.doubleValue == number.doubleValue.rounded(),
                abs(number.doubleValue) < 1e15
            else { return nil }
            return number.intValue
        }

        static func readSize(_ value: Any, into settings: inout PipelineDefinition.ThumbnailSettings)
            throws(SettingProblem)
        {
            guard let size = integer(value) else {
                throw SettingProblem(
                    "\(PipelineDocument.show(value)) is not an integer; allowed: \(range.lowerBound)...\(range.upperBound)"
                )
            }
            guard range.contains(size) else {
                throw SettingProblem("\(size) is out of range; allowed: \(range.lowerBound)...\(range.upperBound)")
            }
            settings.sizes = [size]
        }

        static func readSizes(_ value: Any, into settings: inout PipelineDefinition.ThumbnailSettings)
            throws(SettingProblem)
        {
            guard let list = value as? [Any] else {
                throw SettingProblem("\(PipelineDocument.show(value)) is not an array; \(allowed)")
            }
            var sizes: [Int] = []
            for element in list {
                guard let size = integer(element) else {
                    throw SettingProblem("\(PipelineDocument.show(element)) is not an integer; \(allowed)")
                }
                sizes.append(size)
            }
            try check(sizes)
            settings.sizes = sizes.sorted()
        }

        static func check(_ sizes: [Int]) throws(SettingProblem) {
            if sizes.isEmpty { throw SettingProblem("must not be empty; \(allowed)") }
            if sizes.count > maximumCount { throw SettingProblem("has \(sizes.count) sizes; \(allowed)") }
            if let wrong = sizes.first(where: { !range.contains($0) }) {
                throw SettingProblem("\(wrong) is out of range; \(allowed)")
            }
            if let twice = sizes.first(where: { size in sizes.filter { $0 == size }.count > 1 }) {
                throw SettingProblem("\(twice) appears twice; \(allowed)")
            }
        }
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
}
