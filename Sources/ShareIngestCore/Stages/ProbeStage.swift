import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// Probe: opens the copy through the batch's decoder to confirm what it is (an
/// image must decode as one; a video must have a decodable video stream; audio
/// alone is a file with a duration) and reads its displayed size and duration.
/// When the thumbnail stage will want a thumbnail of it, the decoder makes it in
/// the same pass (the file is opened and parsed once) and the thumbnail stage
/// writes it. For a v2 manifest, the same pass reads the file's moment facts
/// (a motion photo's embedded video, Apple's content identifier, the capture
/// time) for the motion stage, the fan-in and the entry's `capturedAt`. The
/// Takeout JSONs the item carries go to the decoder with it, in the same
/// request (``takeoutJSONs(of:roots:)``): their facts become the item's.
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
        var request = DecodeRequest(
            path: path, label: item.label, format: sniffed.format, pixelLimit: settings.pixelLimit,
            timeLimit: settings.timeLimit,
            thumbnail: thumbnail?.spec(for: sniffed.format, type: item.type), batch: batch.batchID.uuidString,
            moments: moments && MomentReaderFormats.reads(sniffed.format))
        let takeouts = Self.takeoutJSONs(of: &item.state, roots: batch.roots)
        request.takeoutJSONs = takeouts.map(\.bytes)
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
        var factsGiven = false
        for (takeout, reading) in zip(takeouts, decoded.takeouts) {
            switch reading {
            case .read(let sidecar) where !factsGiven:
                Self.give(
                    TakeoutMetadata.facts(from: sidecar), to: &item.state,
                    locationPrivacy: batch.pipeline.location != nil)
                factsGiven = true
            case .read: break
            case .refused(let reason):
                item.carriedSidecars[takeout.position].release(warning: TakeoutMetadata.notRead(reason))
            }
        }
        if item.type != .image && item.type != .video {
            // Decoded as no photo or video after all (a RAW without a preview that shows).
            for position in item.carriedSidecars.indices where item.carriedSidecars[position].isAttached {
                let kind = item.carriedSidecars[position].kind
                item.carriedSidecars[position].release(
                    warning: CarriedSidecar.mediaNotDelivered(
                        kind, media: item.label, reason: "is not a photo or video"))
            }
        }
    }

    /// The bytes of the attached Takeout JSONs `item` carries, read from their
    /// sources (read, not parsed: they are untrusted), with their positions:
    /// those whose head looks like Takeout's (the fan-in delivers any other as
    /// a file). One too large, or beyond the ``DecodeRequest/maximumTakeoutJSONs``
    /// a request carries, is released with a warning saying why. None once
    /// the item has its Takeout JSON's time (a probe done again).
    /// Each is opened beneath its root and read only when it is the file the plan saw.
    static func takeoutJSONs(of item: inout ItemState, roots: DropRoots) -> [(position: Int, bytes: [UInt8])] {
        var found: [(position: Int, bytes: [UInt8])] = []
        guard item.capturedAtSource != TakeoutMetadata.capturedAtSource else { return [] }
        for position in item.carriedSidecars.indices {
            let sidecar = item.carriedSidecars[position]
            let label = sidecar.label(carriedBy: item)
            guard sidecar.isAttached, sidecar.kind == .takeout,
                let (input, version) = try? FileCopier.openSource(sidecar.source(carriedBy: item), in: roots),
                let head = try? input.read(
                    count: Int(min(Int64(ContentSniffer.prefixLength), version.size)), at: 0, path: label),
                ExportSidecars.kind(name: sidecar.name, head: head) == .takeout
            else { continue }
            let reason: String
            if version.size > Int64(TakeoutMetadata.maximumSize) {
                reason = "it is larger than \(TakeoutMetadata.maximumSize >> 20) MiB"
            } else if found.count >= DecodeRequest.maximumTakeoutJSONs {
                reason = "its photo or video has more than \(DecodeRequest.maximumTakeoutJSONs) of them"
            } else if version.size <= Int64(head.count) {
                found.append((position, head))
                continue
            } else if let bytes = try? input.read(count: Int(version.size), at: 0, path: label) {
                found.append((position, bytes))
                continue
            } else {
                reason = "it cannot be read"
            }
            item.carriedSidecars[position].release(warning: TakeoutMetadata.notRead(reason))
        }
        return found
    }

    /// What its (first) Takeout JSON says, given to `item`: `photoTakenTime` as
    /// `capturedAt` (source `takeout`: the JSON wins, as Takeout strips dates
    /// from some files), `description`, `geoData` (never under location privacy).
    static func give(_ facts: TakeoutFacts, to item: inout ItemState, locationPrivacy: Bool) {
        if let taken = facts.takenAt, let text = TakeoutMetadata.rfc3339(taken) {
            item.capturedAt = text
            item.capturedAtSource = TakeoutMetadata.capturedAtSource
        }
        item.exportDescription = facts.description
        // Its place's time zone (the capture time's offset: issue 54); under location privacy only the offset at the capture time (issue 58).
        if item.capturePlace == nil, let place = facts.location,
            let zone = CapturePlace.zone(at: CapturePosition(latitude: place.latitude, longitude: place.longitude))
        {
            item.capturePlace =
                locationPrivacy
                ? CapturePlace(
                    offsetIn: zone, time: item.moments?.captureTime, fileName: item.source.fileName,
                    modified: item.sourceVersion,
                    takeout: item.capturedAtSource == TakeoutMetadata.capturedAtSource ? item.capturedAt : nil,
                    source: .takeout)
                : CapturePlace(zone: zone, source: .takeout)
        }
        item.exportLocation = locationPrivacy ? nil : facts.location
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
        workers: \.workers,
        records: [
            .type, .mimeType, .width, .height, .durationMilliseconds, .video, .projection, .stereo, .gainMap, .moments,
            .carriedSidecars,
            .capturedAt, .capturedAtSource, .exportDescription, .exportLocation, .capturePlace,
        ],
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
