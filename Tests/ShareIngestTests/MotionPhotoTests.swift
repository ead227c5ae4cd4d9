import ContentHash
import Foundation
import MediaFormats
import MediaKit
import ShareIngest
import ShareManifest
import TestSupport
import Testing

@testable import ShareIngestCore

/// Moments through the whole pipeline (`default`, in-process decoding): a
/// motion photo's video copied out and linked from the photo's entry, the
/// photo's copy untouched; Live Photo halves linked both ways; what a user sees
/// for cut-short and removed videos; the extracted files owned by their item.
@Suite struct MotionPhotoTests {
    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    static func ingest(
        _ inputs: [ShareInput], pipeline: PipelineDefinition = .standard, in container: TemporaryContainer
    ) throws -> BatchReport {
        try ShareIngestor(container: container.directory, pipeline: pipeline, identifiers: .sequential()).ingest(inputs)
    }

    /// A video's facts, read back by the decoder (it plays: its stream decodes).
    static func probe(_ path: String) throws -> DecodedMedia {
        let decoder = InProcessDecoder()
        decoder.prepare()
        return try decoder.decode(DecodeRequest(path: path, label: path, format: .mp4, thumbnail: ThumbnailSpec()))
    }

    /// Every layout: the photo is delivered as it was (same bytes, same
    /// SHA-256), its entry links the video, which is the MP4 inside it, byte for
    /// byte, and plays for as long as the embedded one.
    @Test(arguments: [
        "google-container.jpg", "microvideo.jpg", "samsung-trailer.jpg", "samsung-no-directory.jpg", "appended.jpg",
        "motion.heic",
    ])
    func theVideoIsCopiedOutAndLinked(name: String) throws {
        let container = try TemporaryContainer()
        let source = Fixtures.motion(name)
        let report = try Self.ingest([.path(source)], in: container)
        #expect(report.isComplete, "\(report.items.compactMap(\.failure))")
        let entry = try #require(report.entries.first)
        let photoPath = try #require(entry.fileURL?.path)
        #expect(try Self.bytes(photoPath) == Self.bytes(source), "\(name): the photo's copy is not the original")
        let video = try #require(entry.motionVideo, "\(name): no motionVideo")
        let videoPath = try #require(video.fileURL?.path)
        #expect(videoPath.hasPrefix(container.root + "/") && videoPath.hasSuffix(".mp4"), "\(videoPath)")
        let original = [UInt8](try Self.bytes(source))
        let extracted = [UInt8](try Self.bytes(videoPath))
        #expect(extracted.count == video.size.map(Int.init), "\(name)")
        let offset = try #require(
            MomentReader.read(original, format: name.hasSuffix(".heic") ? .heic : .jpeg)?.embeddedVideo?.offset)
        #expect(Array(original[offset..<(offset + extracted.count)]) == extracted, "\(name): not the embedded bytes")
        let probed = try Self.probe(videoPath)
        #expect(probed.facts.kind == .video && probed.facts.width == 160 && probed.facts.height == 120, "\(name)")
        #expect(abs((video.duration ?? 0) - 1500) <= 40, "\(name): \(video.duration ?? -1) ms")
        #expect(video.mimeType == "video/mp4" && video.width == 160 && video.height == 120)
        let poster = try #require(video.thumbnail.flatMap(URL.init(string:))?.path)
        #expect(try ImageInspector.size(poster) == (160, 120))
        // The manifest says so (v2 only, as written).
        let manifest = String(decoding: try Self.bytes(try #require(report.manifestPath)), as: UTF8.self)
        #expect(
            manifest.contains(
                "\"motionVideo\": {\"path\": \"\(video.path)\", \"thumbnail\": \"\(video.thumbnail ?? "")\", \"duration\": "
            ), "\(manifest)")
        // The host app reads it back, checked.
        let share = try RedirectHandler(container: container.directory).open(report.redirectURL!.description)
        #expect(share.entries[0].motionVideo?.size == video.size)
        // Copy, poster, video, its poster: nothing else.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: container.root).filter {
                !$0.hasPrefix(".") && $0 != "thumbnails" && $0 != "manifests"
            }.count == 2)
    }

    @Test func aCutShortVideoThatPlaysIsExtractedWithAWarning() throws {
        let container = try TemporaryContainer()
        let report = try Self.ingest([.path(Fixtures.motion("truncated-playable.jpg"))], in: container)
        let item = report.items[0]
        #expect(item.status == .ingested)
        let video = try #require(item.entry?.motionVideo)
        #expect(try Self.probe(try #require(video.fileURL?.path)).facts.kind == .video)
        #expect(
            item.warnings.contains {
                $0.contains("is cut short (the file ends inside it): extracted as far as it goes")
            }, "\(item.warnings)")
    }

    @Test func aCutShortVideoThatDoesNotPlayIsSkippedWithAWarning() throws {
        let container = try TemporaryContainer()
        let report = try Self.ingest([.path(Fixtures.motion("truncated-unplayable.jpg"))], in: container)
        let item = report.items[0]
        #expect(item.status == .ingested && item.entry?.motionVideo == nil)
        #expect(
            item.warnings.contains { $0.contains("is cut short and does not play") && $0.hasSuffix("not extracted") },
            "\(item.warnings)")
        // Nothing of it is left in the container.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: container.root).filter {
                $0.hasSuffix(".mp4") || $0.hasSuffix(".partial")
            }.isEmpty)
    }

    /// XMP still says "motion photo" but the video is gone: a photo, no error, no warning.
    @Test func aRemovedVideoIsNoErrorAndNoVideo() throws {
        let container = try TemporaryContainer()
        let report = try Self.ingest([.path(Fixtures.motion("video-removed.jpg"))], in: container)
        #expect(report.isComplete)
        #expect(
            report.items[0].entry?.motionVideo == nil && report.items[0].warnings.isEmpty, "\(report.items[0].warnings)"
        )
    }

    /// The extracted video is the item's own: gone with it when the item fails
    /// later (here: the manifest cannot be written), collected with it by gc.
    @Test func theExtractedVideoBelongsToItsItem() throws {
        let container = try TemporaryContainer()
        let report = try Self.ingest([.path(Fixtures.motion("google-container.jpg"))], in: container)
        let video = try #require(report.entries[0].motionVideo?.fileURL?.path)
        let poster = try #require(report.entries[0].motionVideo?.thumbnail.flatMap(URL.init(string:))?.path)
        // Named by the UUID derived from its item's: the same on every run and worker.
        var state = ItemState(index: 0, id: try #require(report.items[0].id), source: .text(""), label: "x")
        #expect(video.hasSuffix("/\(state.motionVideoID.uuidString).mp4") && state.motionVideoID != state.id)
        // A failing item removes what it owns, the video too.
        state.sniffed = SniffedContent(
            format: .jpeg, fileExtension: "jpg", mimeType: "image/jpeg", recognised: true, declaredExtension: nil,
            contradictedFormat: nil)
        state.moments = MomentFacts(embeddedVideo: EmbeddedVideo(layout: .appended, offset: 0, length: 100))
        #expect(state.ownedFiles(in: container.directory).isSuperset(of: [video, poster]))
        // share gc, once the share is consumed, removes it with the photo.
        _ = try RedirectHandler(container: container.directory).open(report.redirectURL!.description, consume: true)
        let collected = try ConsumedShareCollector(container: container.directory).collect(
            retention: 0, now: Date().addingTimeInterval(60))
        #expect(collected.keys == [report.key])
        #expect(!FileManager.default.fileExists(atPath: video) && !FileManager.default.fileExists(atPath: poster))
    }

    /// Legacy manifests cannot link a video: none is extracted, and the manifest is what it always was.
    @Test func theLegacyFlavourExtractsNothing() throws {
        let container = try TemporaryContainer()
        let report = try Self.ingest(
            [.path(Fixtures.motion("google-container.jpg"))], pipeline: .standard.simulating(.seedExtension),
            in: container)
        #expect(report.isComplete && report.entries[0].motionVideo == nil)
        let manifest = String(decoding: try Self.bytes(try #require(report.manifestPath)), as: UTF8.self)
        #expect(!manifest.contains("motionVideo") && !manifest.contains("livePhoto"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: container.root).filter { $0.hasSuffix(".mp4") }.isEmpty)
    }

    // MARK: - Live Photos

    /// testdata/motion/live: the identifier pair and the name-and-time pair are
    /// linked both ways; the same-named pairs with a 6 s movie and with capture
    /// times an hour apart are not.
    @Test func liveHalvesAreLinkedBothWaysAndNamesAloneNeverPair() throws {
        let container = try TemporaryContainer()
        let report = try Self.ingest([.path(Fixtures.motion("live"))], in: container)
        #expect(report.isComplete, "\(report.items.compactMap(\.failure))")
        func entry(_ name: String) throws -> SharedMediaFile {
            try #require(report.entries.first { $0.fileName == name }, "\(name)")
        }
        let (still, movie) = (try entry("IMG_0001.JPG"), try entry("IMG_0001.MOV"))
        let link = try #require(still.livePhoto)
        #expect(movie.livePhoto == link)
        #expect(link.photo == still.path && link.video == movie.path)
        #expect(link.pairedBy == .contentIdentifier && link.contentIdentifier == "5A8B1D0E-3C2F-4E61-9B7A-0C4D2E8F1A36")
        let byName = try #require(try entry("IMG_0002.JPG").livePhoto)
        #expect(try entry("IMG_0002_HEVC.MOV").livePhoto == byName)
        #expect(
            try byName.pairedBy == .nameAndTime && byName.contentIdentifier == nil
                && byName.video == entry("IMG_0002_HEVC.MOV").path)
        for name in ["IMG_0003.JPG", "IMG_0003.MOV", "IMG_0004.JPG", "IMG_0004.MOV"] {
            #expect(try entry(name).livePhoto == nil, "\(name) was paired on its name alone")
        }
        // Both halves stay items of their own, and the manifest carries the link.
        #expect(report.entries.count == 8)
        let manifest = String(decoding: try Self.bytes(try #require(report.manifestPath)), as: UTF8.self)
        #expect(
            manifest.contains(
                "\"livePhoto\": {\"photo\": \"\(still.path)\", \"video\": \"\(movie.path)\", \"contentIdentifier\": \"5A8B1D0E-3C2F-4E61-9B7A-0C4D2E8F1A36\", \"pairedBy\": \"contentIdentifier\"}"
            ), "\(manifest)")
        // The movie's poster is its still-image-time frame (blue).
        let poster = try #require(movie.thumbnail.flatMap(URL.init(string:))?.path)
        let pixel = try ImageInspector.pixel(poster, x: 80, y: 60)
        #expect(pixel[2] > 150 && pixel[0] < 100, "\(pixel)")
        // And the stored report (what share report shows) has both links.
        let stored = try BatchReport.stored(key: report.key, in: container.directory)
        #expect(stored.entries.filter { $0.livePhoto != nil }.count == 4)
    }

    /// A pair whose identifiers differ never pairs, whatever the names and times.
    @Test func differentIdentifiersNeverPair() throws {
        let still = try Self.state(
            index: 0, name: "IMG_9.HEIC", type: .image, format: .heic, identifier: "AAA", time: 100)
        var movie = try Self.state(
            index: 1, name: "IMG_9.MOV", type: .video, format: .mov, identifier: "BBB", time: 100)
        movie.durationMilliseconds = 2000
        #expect(LivePhotoPairing(candidates: [still, movie], final: { $0 }).links.isEmpty)
        movie.moments?.contentIdentifier = nil
        #expect(LivePhotoPairing(candidates: [still, movie], final: { $0 }).links.count == 2)
        // A duplicate the pipeline skips pairs with nothing.
        #expect(LivePhotoPairing(candidates: [still, movie], final: { $0.index == 1 ? nil : $0 }).links.isEmpty)
        #expect(LivePhotoPairing.pairingName(label: "drop/IMG_0002_HEVC.MOV", isMovie: true) == "drop/img_0002")
        #expect(LivePhotoPairing.pairingName(label: "drop/IMG_0002_HEVC.JPG", isMovie: false) == "drop/img_0002_hevc")
    }

    static func state(
        index: Int, name: String, type: SharedMediaType, format: MediaFormat, identifier: String?, time: Double
    ) throws -> ItemState {
        var state = ItemState(index: index, id: UUID(), source: .text(""), label: "drop/" + name)
        state.type = type
        state.copyPath = "/c/\(name)"
        state.sniffed = SniffedContent(
            format: format, fileExtension: "x", mimeType: format.mimeType, recognised: true, declaredExtension: nil,
            contradictedFormat: nil)
        state.moments = MomentFacts(contentIdentifier: identifier, captureTime: CaptureTime(local: time))
        return state
    }

    // MARK: - Live Photo rules (README, "Rules and the tests that hold them")

    /// A drop of testdata/motion/live files under new names: `new name → fixture`.
    static func liveDrop(_ files: KeyValuePairs<String, String>) throws -> TemporaryDirectory {
        let drop = TemporaryDirectory("live-rules")
        for (name, fixture) in files { try drop.add(name, copying: Fixtures.motion("live/" + fixture)) }
        return drop
    }

    static func entries(of drop: TemporaryDirectory) throws -> [String: SharedMediaFile] {
        let container = try TemporaryContainer()
        let report = try Self.ingest([.path(drop.path)], in: container)
        #expect(report.isComplete, "\(report.items.compactMap(\.failure))")
        return Dictionary(report.entries.map { ($0.fileName ?? "?", $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The identifier is read from the still (its Apple maker note) and from the
    /// movie (its QuickTime key): the two pair by it though their names differ.
    @Test func halvesWithTheSameContentIdentifierPairWhateverTheirNames() throws {
        let found = try Self.entries(
            of: try Self.liveDrop(["IMG_0001.JPG": "IMG_0001.JPG", "clip-from-chat.MOV": "IMG_0001.MOV"]))
        let link = try #require(found["IMG_0001.JPG"]?.livePhoto, "the still was not paired by its identifier")
        #expect(link.pairedBy == .contentIdentifier && link.contentIdentifier == "5A8B1D0E-3C2F-4E61-9B7A-0C4D2E8F1A36")
        #expect(found["clip-from-chat.MOV"]?.livePhoto == link && link.video == found["clip-from-chat.MOV"]?.path)
    }

    /// Without identifiers, a movie taken up to 2 s before the still pairs by
    /// name and time; one taken an hour before does not (the README's window
    /// holds in both directions; `liveHalvesAreLinkedBothWaysAndNamesAloneNeverPair`
    /// has the movie after the still). The stills' capture times are rewritten by exiftool.
    @Test func aMovieTakenBeforeTheStillPairsOnlyWithinTheWindow() throws {
        let drop = try Self.liveDrop([
            "IMG_0005.JPG": "IMG_0002.JPG", "IMG_0005_HEVC.MOV": "IMG_0002_HEVC.MOV",  // movie 12:10:01, still 12:10:02
            "IMG_0006.JPG": "IMG_0004.JPG", "IMG_0006.MOV": "IMG_0004.MOV",  // movie 13:30:00, still 14:30:00
        ])
        for (name, time) in [("IMG_0005.JPG", "2024:05:01 12:10:02"), ("IMG_0006.JPG", "2024:05:01 14:30:00")] {
            let run = try MediaTools.run(
                "/usr/bin/exiftool", ["-q", "-overwrite_original", "-DateTimeOriginal=\(time)", drop.file(name)])
            #expect(run.status == 0)
            #expect(try MediaTools.tag("DateTimeOriginal", of: drop.file(name)) == time)
        }
        let found = try Self.entries(of: drop)
        let link = try #require(found["IMG_0005.JPG"]?.livePhoto, "a movie taken 1 s before its still was not paired")
        #expect(link.pairedBy == .nameAndTime && found["IMG_0005_HEVC.MOV"]?.livePhoto == link)
        #expect(
            found["IMG_0006.JPG"]?.livePhoto == nil && found["IMG_0006.MOV"]?.livePhoto == nil,
            "a movie taken an hour before its still was paired")
    }

    /// A movie is half of one Live Photo: of two stills with its identifier, or
    /// with its name and time, only the first is paired with it.
    @Test func aMovieGoesToOneStill() throws {
        let found = try Self.entries(
            of: try Self.liveDrop([
                "IMG_0001.JPG": "IMG_0001.JPG", "IMG_0001 copy.JPG": "IMG_0001.JPG", "IMG_0001.MOV": "IMG_0001.MOV",
                "IMG_0002.JPG": "IMG_0002.JPG", "IMG_0002.jpeg": "IMG_0002.JPG",
                "IMG_0002_HEVC.MOV": "IMG_0002_HEVC.MOV",
            ]))
        for (stills, movie) in [
            (["IMG_0001 copy.JPG", "IMG_0001.JPG"], "IMG_0001.MOV"),
            (["IMG_0002.JPG", "IMG_0002.jpeg"], "IMG_0002_HEVC.MOV"),
        ] {
            let linked = stills.filter { found[$0]?.livePhoto != nil }
            #expect(linked.count == 1, "\(movie) is paired with \(linked)")
            let link = try #require(found[movie]?.livePhoto, "\(movie)")
            #expect(
                link.photo == found[linked.first ?? ""]?.path && found[linked.first ?? ""]?.livePhoto == link,
                "\(movie)")
        }
    }

    /// A still is half of one Live Photo: with two movies of its identifier and
    /// name, it is paired with the first, and the other movie with nothing.
    @Test func aStillTakesOneMovie() throws {
        let found = try Self.entries(
            of: try Self.liveDrop([
                "IMG_0001.JPG": "IMG_0001.JPG", "IMG_0001.MOV": "IMG_0001.MOV", "IMG_0001_HEVC.MOV": "IMG_0001.MOV",
            ]))
        let link = try #require(found["IMG_0001.JPG"]?.livePhoto)
        #expect(link.video == found["IMG_0001.MOV"]?.path && found["IMG_0001.MOV"]?.livePhoto == link)
        #expect(found["IMG_0001_HEVC.MOV"]?.livePhoto == nil, "the still was paired with a second movie")
    }

    /// The pipeline setting: no pairing, and no extraction, when switched off.
    @Test func theSettingsSwitchEachOff() throws {
        var pipeline = PipelineDefinition.standard
        pipeline.motion?.extract = false
        pipeline.motion?.livePhotos = false
        let decoded = try PipelineDefinition.decode(Data(pipeline.encodedJSON().utf8), file: "round trip")
        #expect(decoded == pipeline)
        let container = try TemporaryContainer()
        let report = try Self.ingest(
            [
                .path(Fixtures.motion("google-container.jpg")), .path(Fixtures.motion("live/IMG_0001.JPG")),
                .path(Fixtures.motion("live/IMG_0001.MOV")),
            ], pipeline: pipeline, in: container)
        #expect(report.isComplete && report.entries.allSatisfy { $0.motionVideo == nil && $0.livePhoto == nil })
        #expect(throws: PipelineError.self) {
            try PipelineDefinition.decode(
                Data(
                    #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "motion", "extract": "yes"}, {"stage": "manifest"}]}"#
                        .utf8), file: "x.json")
        }
    }

    // MARK: - Real phones' files

    /// Pixel JPEG, Samsung JPEG (MicroVideo) and Samsung HEIC, as phones made
    /// them: each photo delivered byte for byte, its video extracted, playable,
    /// linked; the Samsung photo whose video was removed has none.
    @Test func realMotionPhotosFromThreeMakers() throws {
        let names = [
            "pixel-3a-xl.MP.jpg", "samsung-s9plus-microvideo.jpg", "samsung-s22-motion.heic",
            "samsung-s9plus-video-removed.jpg",
        ]
        let drop = TemporaryDirectory("real")
        for name in names { try drop.add(name, copying: try #require(Fixtures.realSample(name))) }
        let container = try TemporaryContainer()
        let report = try Self.ingest([.path(drop.path)], in: container)
        #expect(report.isComplete, "\(report.items.compactMap(\.failure))")
        let expected: [String: (duration: Double, width: Int, height: Int)] = [
            "pixel-3a-xl.MP.jpg": (763, 1024, 768), "samsung-s9plus-microvideo.jpg": (4133, 1365, 768),
            "samsung-s22-motion.heic": (2083, 1080, 1440),
        ]
        for entry in report.entries {
            let name = try #require(entry.fileName)
            #expect(
                try Self.bytes(try #require(entry.fileURL?.path)) == Self.bytes(drop.file(name)),
                "\(name): the photo's copy is not the original")
            guard let facts = expected[name] else {
                #expect(entry.motionVideo == nil, "\(name)")
                continue
            }
            let video = try #require(entry.motionVideo, "\(name)")
            #expect(
                video.duration == facts.duration && video.width == facts.width && video.height == facts.height,
                "\(name): \(video)")
            #expect(
                try Self.probe(try #require(video.fileURL?.path)).facts.durationMilliseconds == facts.duration,
                "\(name)")
        }
    }
}
