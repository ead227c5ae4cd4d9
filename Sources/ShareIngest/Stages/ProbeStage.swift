import Foundation
import MediaFormats

/// Probe: opens the copy through the batch's decoder to confirm what it is (an
/// image must decode as one; a video must have a decodable video stream; audio
/// alone is a file with a duration) and reads its displayed size and duration.
/// When the thumbnail stage will want a thumbnail of it, the decoder makes it in
/// the same pass (the file is opened and parsed once) and the thumbnail stage
/// writes it. For a v2 manifest, the same pass reads the file's moment facts
/// (a motion photo's embedded video, Apple's content identifier, the capture
/// time) for the motion stage, the fan-in and the entry's `capturedAt`.
struct ProbeStage: PipelineStage {
    let settings: PipelineDefinition.ProbeSettings
    /// The thumbnail stage's settings, when the pipeline has one.
    let thumbnail: PipelineDefinition.ThumbnailSettings?
    /// Whether to read the moment facts too.
    var moments = false
    var name: StageName { .probe }

    func decodes(_ item: InFlightItem) -> Bool { item.sniffed?.format.isDecodable == true }

    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure) {
        guard let sniffed = item.sniffed, let path = item.copyPath, sniffed.format.isDecodable else { return }
        let request = DecodeRequest(
            path: path, label: item.label, format: sniffed.format, pixelLimit: settings.pixelLimit, timeLimit: settings.timeLimit,
            thumbnail: thumbnail?.spec(for: sniffed.format, type: item.type), batch: batch.batchID.uuidString,
            moments: moments && MomentReaderFormats.reads(sniffed.format))
        let decoded: DecodedMedia
        do {
            decoded = try batch.decoder.decode(request)
        } catch {
            throw ItemFailure(.probe, error)
        }
        item.state.apply(decoded.facts)
        item.moments = decoded.moments
        item.carried.thumbnail = decoded.thumbnail
        item.carried.probeDecodedThumbnail = request.thumbnail != nil
    }
}

extension ItemState {
    /// Records what decoding found: the type people see, displayed size, duration.
    mutating func apply(_ facts: MediaFacts) {
        switch facts.kind {
        case .image: type = .image
        case .video: type = .video
        case .audio, .document, .unreadable: type = .file
        }
        width = facts.width
        height = facts.height
        durationMilliseconds = facts.durationMilliseconds
        video = facts.video
        (projection, stereo, gainMap) = (facts.projection, facts.stereo, facts.gainMap)
        if let mime = facts.mimeType { mimeType = mime }
        warnings += facts.warnings
    }
}

extension ProbeStage {
    /// The `probe` stage, declared once: its settings and their document
    /// table (key, allowed values; the default is the settings type's own), its
    /// place in the order, what it records, how it is made.
    static let definition = StageDefinition(
        .probe, after: .location, settings: PipelineDefinition.ProbeSettings.self,
        document: [
            .integer("workers", \.workers, in: 1...64),
            .integer("pixelLimit", \.pixelLimit, in: 1...1_000_000_000_000),
            .number("timeLimit", \.timeLimit, in: 0.001...86_400),
        ],
        workers: \.workers, records: [.type, .mimeType, .width, .height, .durationMilliseconds, .video, .projection, .stereo, .gainMap, .moments],
        make: { settings, pipeline in
                ProbeStage(settings: settings, thumbnail: pipeline.thumbnail, moments: pipeline.manifest.schema == .v2)
            })
}

extension PipelineDefinition {
    /// Settings of the `probe` stage (confirms the type, reads dimensions and duration).
    public struct ProbeSettings: StageSettings {
        /// Worker threads (1...64).
        public var workers = 2
        /// Images and videos with more pixels than this (per frame) are refused before decoding.
        public var pixelLimit = 100_000_000
        /// Seconds one file may take to open and probe.
        public var timeLimit: Double = 30

        /// The defaults: two workers, 100 MP, 30 s.
        public init() {}
    }
}
