import ContentHash
import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// Motion: a motion photo's video becomes a file of its own. The decoder said
/// where it is inside the photo (``MomentFacts/embeddedVideo``: the probe asked
/// for it in its pass over the file); the parent checks that byte range against
/// the copy's own size, copies it out inside the kernel (one copy of its bytes,
/// never parsed here) into `<UUID>.mp4` under a UUID of its own, and has the
/// decoder probe it like any video (duration, size, poster). The photo's copy is
/// left byte for byte as it was. A video that does not decode is removed, with a
/// warning; one cut short but playable is kept, with a warning; a photo whose
/// metadata still says "motion photo" after its video was removed simply has none.
///
/// The video belongs to the photo's item: named by ``ItemState/motionVideoID``
/// (derived from the item's UUID, so a run that died after the copy finds it
/// again), removed with it if the item fails, collected with it by `share gc`.
/// Manifests that cannot link it (legacy) get none extracted.
struct MotionStage: PipelineStage {
    let settings: PipelineDefinition.MotionSettings
    /// False when no probe stage read the moment facts: this stage reads them.
    let momentsRead: Bool
    /// Only a v2 manifest can link what this stage makes.
    let linkable: Bool
    var name: StageName { .motion }

    init(settings: PipelineDefinition.MotionSettings, pipeline: PipelineDefinition) {
        self.settings = settings
        momentsRead = pipeline.probe != nil
        linkable = pipeline.manifest.schema == .v2
    }

    /// It decodes only a photo with a video inside to extract (or, without a
    /// probe stage, one whose moment facts are still to be read).
    func decodes(_ item: InFlightItem) -> Bool {
        guard linkable, item.failure == nil, item.motionVideo == nil else { return false }
        if !momentsRead, item.moments == nil, let format = item.sniffed?.format {
            return MomentReaderFormats.reads(format)
        }
        return settings.extract && item.type == .image && item.moments?.embeddedVideo != nil
    }

    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure) {
        guard linkable, item.failure == nil, let copy = item.copyPath, let sniffed = item.sniffed else { return }
        // Without a probe stage nothing read the moment facts yet.
        if !momentsRead, item.moments == nil, MomentReaderFormats.reads(sniffed.format) {
            let request = DecodeRequest(
                path: copy, label: item.label, format: sniffed.format, batch: batch.batchID.uuidString, moments: true)
            item.moments = try? batch.decoder.decode(request).moments
        }
        guard settings.extract, item.type == .image, item.motionVideo == nil, let embedded = item.moments?.embeddedVideo
        else { return }
        let what = "its embedded video (\(embedded.length) bytes, \(embedded.layout.words))"
        guard let (format, fileExtension) = Self.format(of: embedded, in: copy, what: what, warnings: &item.warnings)
        else { return }
        let destination = batch.container.mediaPath(id: item.state.motionVideoID, fileExtension: fileExtension)
        // A copy that reached its name before a crash is complete (fsynced before the rename).
        if (try? FileStatus.ofLink(destination))?.size != Int64(embedded.length) {
            FileSystem.remove(destination)
            do {
                try FileCopier.copyRange(of: copy, embedded.range, to: destination, sync: batch.pipeline.copy.fsync)
            } catch {
                throw ItemFailure(.motion, writing: error, "\(item.label): cannot copy out \(what): \(error)")
            }
        }
        let probe = batch.pipeline.probe ?? .init()
        let request = DecodeRequest(
            path: destination, label: "\(item.label) (embedded video)", format: format, pixelLimit: probe.pixelLimit,
            timeLimit: probe.timeLimit,
            thumbnail: batch.pipeline.thumbnail?.spec(for: format, type: .video).map(\.withoutPreviews),
            batch: batch.batchID.uuidString)
        let decoded: DecodedMedia
        do {
            decoded = try batch.decoder.decode(request)
        } catch {
            FileSystem.remove(destination)
            item.warnings.append(
                "\(what) \(embedded.truncated ? "is cut short and " : "")does not play (\(error.message)); not extracted"
            )
            return
        }
        guard decoded.facts.kind == .video else {
            FileSystem.remove(destination)
            item.warnings.append(
                "\(what) holds no video stream\(embedded.truncated ? " (it is cut short)" : ""); not extracted")
            return
        }
        if embedded.truncated {
            item.warnings.append("\(what) is cut short (the file ends inside it): extracted as far as it goes")
        }
        var video = MotionVideo(
            path: destination, size: Int64(embedded.length), mimeType: decoded.facts.mimeType ?? format.mimeType,
            durationMilliseconds: decoded.facts.durationMilliseconds, width: decoded.facts.width,
            height: decoded.facts.height, layout: embedded.layout)
        try writePoster(decoded.thumbnail, of: &video, for: &item, in: batch)
        item.motionVideo = video
        item.warnings += decoded.facts.warnings.map { "embedded video: \($0)" }
    }

    /// The format and file extension of the video `embedded` claims to be in
    /// `copy`; nil, with a warning naming it (`what`), when its range lies
    /// outside the file or its first bytes are no video this pipeline reads.
    private static func format(
        of embedded: EmbeddedVideo, in copy: String, what: String, warnings: inout [String]
    ) -> (MediaFormat, String)? {
        // The decoder's range is a claim: it must lie inside the copy as it is on disk.
        let (end, overflow) = embedded.offset.addingReportingOverflow(embedded.length)
        guard let status = try? FileStatus.ofLink(copy), status.type == .regular, embedded.offset >= 0,
            embedded.length >= 8, !overflow,
            end <= Int(status.size)
        else {
            warnings.append("\(what) lies outside the file; not extracted")
            return nil
        }
        // Its extension and format from its first bytes, as for any file.
        let prefix =
            (try? FileDescriptor.openForReading(copy).read(
                count: min(ContentSniffer.prefixLength, embedded.length), at: Int64(embedded.offset), path: copy)) ?? []
        let format = ContentSniffer.sniff(prefix, fileName: nil).format
        guard format.kind == .video, let fileExtension = MotionVideo.fileExtension(of: format) else {
            warnings.append("\(what) is not a video this pipeline reads (\(format.name)); not extracted")
            return nil
        }
        return (format, fileExtension)
    }

    /// Writes the poster frame the decoder made of the embedded video beside
    /// it (``MotionVideo/thumbnailPath``), or warns that there is none.
    private func writePoster(
        _ thumbnail: ThumbnailOutcome?, of video: inout MotionVideo, for item: inout InFlightItem,
        in batch: BatchContext
    ) throws(ItemFailure) {
        switch thumbnail {
        case .made(let poster):
            let path = batch.container.thumbnailPath(id: item.state.motionVideoID)
            FileSystem.remove(path)
            do {
                try AtomicFile.create(path, bytes: poster.jpeg, syncDirectory: false)
                video.thumbnailPath = path
            } catch {
                throw ItemFailure(
                    .motion, writing: error, "\(item.label): cannot write the poster of its embedded video: \(error)")
            }
        case .failed(let error):
            item.warnings.append("no poster frame for its embedded video: \(error)")
        case nil:
            break
        }
    }
}

/// The formats whose moments the decoder reads (stills with an embedded video
/// or a maker note, QuickTime movies), and the other pictures whose EXIF names
/// their camera (TIFF, camera RAW, JPEG XL, PNG, WebP: only that).
enum MomentReaderFormats {
    static func reads(_ format: MediaFormat) -> Bool {
        ["jpeg", "heic", "heif", "avif", "mov", "mp4", "m4v", "3gp"].contains(format.id)
            || MomentReader.cameraFormats.contains(format.id)
    }
}

extension ItemState {
    /// The UUID a motion photo's extracted video is named by: derived from the
    /// item's own (the first 16 bytes of a SHA-256 of it, as a version-5-style
    /// UUID), so it is the same in every run and on every worker without being
    /// recorded first, and is no other item's.
    var motionVideoID: UUID { Self.motionVideoID(of: id) }

    /// The UUID the motion video of the item `id` is named by.
    static func motionVideoID(of id: UUID) -> UUID {
        let digest = SHA256()
        Array("share-ingest motion video \(id.uuidString)".utf8).withUnsafeBytes { digest.update($0) }
        var bytes = digest.digest()
        bytes[6] = bytes[6] & 0x0F | 0x50
        bytes[8] = bytes[8] & 0x3F | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

extension EmbeddedVideo.Layout {
    /// The layout in words, for warnings and reports.
    var words: String {
        switch self {
        case .containerDirectory: "Google motion photo, Container:Directory"
        case .microVideo: "Google MicroVideo"
        case .samsungTrailer: "Samsung SEF trailer"
        case .heifMotionBox: "HEIF mpvd box"
        case .appended: "MP4 after the image"
        }
    }
}

extension MotionStage {
    /// The `motion` stage, declared once: its settings and their document
    /// table (key, allowed values; the default is the settings type's own), its
    /// place in the order, what it records, how it is made.
    static let definition = StageDefinition(
        .motion, after: .thumbnail, settings: PipelineDefinition.MotionSettings.self,
        document: [
            .integer("workers", \.workers, in: 1...64),
            .boolean("extract", \.extract),
            .boolean("livePhotos", \.livePhotos),
        ],
        workers: \.workers, records: [.moments, .motionVideo],
        make: { settings, pipeline in MotionStage(settings: settings, pipeline: pipeline) })
}

extension PipelineDefinition {
    /// Settings of the `motion` stage: moments, not just files.
    public struct MotionSettings: StageSettings {
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
}
