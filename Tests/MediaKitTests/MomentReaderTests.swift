import Foundation
import MediaKit
import TestSupport
import Testing

@testable import MediaFormats

/// What the decoder reads of a file's moment: where a motion photo's video is
/// (every layout: testdata/motion, and real phones' files when they are
/// there), Apple's content identifier, capture times, a Live Photo movie's
/// still-image time, and the poster at that time.
@Suite struct MomentReaderTests {
    static func facts(_ path: String, format: MediaFormat) throws -> MomentFacts? {
        MomentReader.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), format: format)
    }

    static func size(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }

    /// Each layout of testdata/motion: found by the right rule, its range the
    /// MP4 the script appended (so it ends where the file or the trailer does).
    @Test(arguments: [
        ("google-container.jpg", EmbeddedVideo.Layout.containerDirectory, 0),
        ("microvideo.jpg", .microVideo, 0),
        ("samsung-trailer.jpg", .samsungTrailer, -1),
        ("samsung-no-directory.jpg", .samsungTrailer, -1),
        ("appended.jpg", .appended, 0),
        ("motion.heic", .heifMotionBox, 0),
    ])
    func eachLayoutIsFound(name: String, layout: EmbeddedVideo.Layout, endsAtFileEnd: Int) throws {
        let path = Fixtures.motion(name)
        let facts = try #require(
            try Self.facts(path, format: name.hasSuffix(".heic") ? .heic : .jpeg), "\(name): no moment facts")
        let video = try #require(facts.embeddedVideo, "\(name): no embedded video")
        #expect(video.layout == layout, "\(name)")
        #expect(!video.truncated, "\(name)")
        // Only metadata declares a motion photo: an MP4 merely appended does not.
        #expect(facts.declaresMotionPhoto == (layout != .appended), "\(name)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(Array(bytes[(video.offset + 4)..<(video.offset + 8)]) == Array("ftyp".utf8), "\(name)")
        if endsAtFileEnd == 0 {
            #expect(video.offset + video.length == bytes.count, "\(name)")
        } else {
            // Samsung's trailer follows the video: its blocks, SEFH, SEFT.
            #expect(video.offset + video.length < bytes.count - 8, "\(name)")
        }
    }

    /// Cut short inside the video: found by the scan after the JPEG, marked cut short.
    @Test func aTruncatedVideoIsFoundAndMarked() throws {
        for name in ["truncated-playable.jpg", "truncated-unplayable.jpg"] {
            let path = Fixtures.motion(name)
            let video = try #require(try Self.facts(path, format: .jpeg)?.embeddedVideo, "\(name)")
            #expect(video.truncated, "\(name)")
            #expect(try video.offset + video.length == Self.size(path), "\(name): runs to the end of the file")
        }
    }

    /// The XMP still says "motion photo", the video is gone: no video, and the declaration is seen.
    @Test func aRemovedVideoIsNoVideo() throws {
        let facts = try #require(try Self.facts(Fixtures.motion("video-removed.jpg"), format: .jpeg))
        #expect(facts.embeddedVideo == nil)
        #expect(facts.declaresMotionPhoto)
        // An ordinary photo has no embedded video and declares nothing.
        let plain = try Self.facts(Fixtures.media("photo.jpg"), format: .jpeg)
        #expect(plain?.embeddedVideo == nil && plain?.declaresMotionPhoto != true)
    }

    /// The Live Photo pair of testdata/motion/live: the same identifier in the
    /// still's Apple maker note (written by exiftool) and the movie's QuickTime
    /// keys; capture times from EXIF (with its offset) and the movie's
    /// creation date; the movie's still-image time through its edit list.
    @Test func aLivePhotoPairsIdentifiersAndTimesAreRead() throws {
        let still = try #require(try Self.facts(Fixtures.motion("live/IMG_0001.JPG"), format: .jpeg))
        let movie = try #require(try Self.facts(Fixtures.motion("live/IMG_0001.MOV"), format: .mov))
        #expect(still.contentIdentifier == "5A8B1D0E-3C2F-4E61-9B7A-0C4D2E8F1A36")
        #expect(movie.contentIdentifier == still.contentIdentifier)
        // 2024-05-01 12:00:00.250 at +02:00 = 10:00:00.250 UTC.
        #expect(still.captureTime == CaptureTime(local: 1_714_564_800.25, utc: 1_714_557_600.25, source: .exif))
        #expect(movie.captureTime?.source == .quicktime)
        #expect(movie.captureTime?.utc == 1_714_557_600)
        let movieTime = try #require(movie.captureTime)
        #expect(try #require(still.captureTime?.distance(to: movieTime)) < 0.5)
        #expect(try #require(movie.stillImageTime) == 1.6)
        #expect(still.embeddedVideo == nil && movie.embeddedVideo == nil)
        // Without identifiers: only the times.
        let plain = try #require(try Self.facts(Fixtures.motion("live/IMG_0002.JPG"), format: .jpeg))
        #expect(
            plain.contentIdentifier == nil && plain.captureTime?.utc == nil && plain.captureTime?.local == 1_714_565_400
        )
    }

    /// Apple's `BurstUUID` (maker note tag 0x000B) of testdata/exports/apple-burst
    /// (made by make-apple-burst.py), with the frame's capture time; none in a
    /// photo whose maker note has no burst, nor in one without a maker note.
    @Test func anAppleBurstFramesBurstUUIDIsRead() throws {
        let frame = try #require(try Self.facts(Fixtures.testdata("exports/apple-burst/IMG_0102.JPG"), format: .jpeg))
        #expect(frame.burstIdentifier == "6E3F0D4A-1C2B-4E5F-9A8B-7C6D5E4F3A2B")
        #expect(frame.contentIdentifier == nil)
        // 2024-06-02 09:15:42.100 at +02:00.
        #expect(abs((frame.captureTime?.utc ?? 0) - 1_717_312_542.1) < 0.001)
        #expect(
            try Self.facts(Fixtures.testdata("exports/apple-burst/IMG_0105.JPG"), format: .jpeg)?.burstIdentifier == nil
        )
        #expect(try Self.facts(Fixtures.motion("live/IMG_0001.JPG"), format: .jpeg)?.burstIdentifier == nil)
    }

    /// A Live Photo movie's poster is the frame at its still-image time (blue,
    /// after 1.2 s), not the keyframe nearest to 1 s (the red first frame).
    @Test func theStillImageTimeFrameIsThePoster() throws {
        let decoder = InProcessDecoder()
        decoder.prepare()
        let work = TemporaryDirectory()
        func poster(_ path: String) throws -> [Double] {
            let decoded = try decoder.decode(
                DecodeRequest(path: path, label: "clip", format: .mov, thumbnail: ThumbnailSpec()))
            guard case .made(let thumbnail) = decoded.thumbnail else { throw MediaError(.damaged, "no poster") }
            let file = work.file(UUID().uuidString + ".jpg")
            try Data(thumbnail.jpeg).write(to: URL(fileURLWithPath: file))
            return try ImageInspector.pixel(file, x: thumbnail.width / 2, y: thumbnail.height / 2)
        }
        let live = try poster(Fixtures.motion("live/IMG_0001.MOV"))
        #expect(live[2] > 150 && live[0] < 100, "the poster should be the blue frame at 1.6 s: \(live)")
        // The same movie without the timed metadata (its bytes up to the track's own mdat are not enough: strip by re-muxing).
        let stripped = work.file("stripped.mov")
        let remux = Process()
        remux.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        remux.arguments = [
            "-nostdin", "-v", "error", "-y", "-i", Fixtures.motion("live/IMG_0001.MOV"), "-map", "0:v", "-c", "copy",
            stripped,
        ]
        try remux.run()
        remux.waitUntilExit()
        let plain = try poster(stripped)
        #expect(plain[0] > 150 && plain[2] < 100, "without a still-image time the poster is the red keyframe: \(plain)")
    }

    /// The decoder reads the moment facts only when asked, and after the facts.
    @Test func theDecoderReadsMomentsWhenAsked() throws {
        let decoder = InProcessDecoder()
        decoder.prepare()
        let path = Fixtures.motion("google-container.jpg")
        let plain = try decoder.decode(DecodeRequest(path: path, label: "g", format: .jpeg))
        #expect(plain.moments == nil)
        let asked = try decoder.decode(DecodeRequest(path: path, label: "g", format: .jpeg, moments: true))
        #expect(asked.facts.kind == .image && asked.facts.width == 320)
        #expect(asked.moments?.embeddedVideo?.layout == .containerDirectory)
    }

    /// Google's XMP as cameras and tools write it: any prefix for the
    /// namespaces, values as attributes or as elements, entities, comments.
    @Test func theXMPScannerReadsEveryForm() throws {
        let attributes = """
            <?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><!-- a comment -->
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description
             xmlns:C="http://ns.google.com/photos/1.0/camera/" xmlns:K="http://ns.google.com/photos/1.0/container/"
             xmlns:I="http://ns.google.com/photos/1.0/container/item/" C:MotionPhoto='1'>
            <K:Directory><rdf:Seq><rdf:li><K:Item I:Mime="image/jpeg" I:Semantic="Primary"/></rdf:li>
            <rdf:li><K:Item I:Mime="video/mp4" I:Semantic="MotionPhoto" I:Length="1234" I:Padding="0"/></rdf:li></rdf:Seq></K:Directory>
            </rdf:Description></rdf:RDF></x:xmpmeta>
            """
        let parsed = try #require(MotionPhotoXMP(Array(attributes.utf8)[...]))
        #expect(
            parsed.motionPhoto && parsed.items.count == 2 && parsed.items[1].length == 1234 && parsed.items[1].isVideo)
        let elements = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description xmlns:GCamera="http://ns.google.com/photos/1.0/camera/">
            <GCamera:MicroVideo>1</GCamera:MicroVideo><GCamera:MicroVideoOffset> 4182318 </GCamera:MicroVideoOffset>
            <dc:title xmlns:dc="http://purl.org/dc/elements/1.1/">a &amp; b &#x3C;</dc:title></rdf:Description></rdf:RDF></x:xmpmeta>
            """
        let micro = try #require(MotionPhotoXMP(Array(elements.utf8)[...]))
        #expect(micro.microVideo && micro.microVideoOffset == 4_182_318)
        // The same local names in another namespace are not Google's.
        let foreign = #"<a xmlns:G="http://example.org/" G:MotionPhoto="1" G:MicroVideoOffset="9"/>"#
        #expect(MotionPhotoXMP(Array(foreign.utf8)[...]) == nil)
        // Garbage ends the scan without a trap.
        for garbage in ["<", "<a b=", "<a b=\"1", "</x>", "<!--", "<a:b xmlns:a='' a:c='&#xFFFFFFFF;'/>"] {
            _ = MotionPhotoXMP(Array(garbage.utf8)[...])
        }
    }

    /// A Samsung trailer whose directory puts a block inside the JPEG (so the
    /// trailer would start before the image's EOI) is read without a trap, and
    /// yields no video: found by `damagedBytesNeverTrap`, pinned here.
    @Test func aTrailerBlockInsideTheImageYieldsNoVideo() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.motion("samsung-trailer.jpg"))))
        let size = bytes.count
        let directoryLength =
            Int(bytes[size - 8]) | Int(bytes[size - 7]) << 8 | Int(bytes[size - 6]) << 16 | Int(bytes[size - 5]) << 24
        let directory = size - 8 - directoryLength
        #expect(String(decoding: bytes[directory..<(directory + 4)], as: UTF8.self) == "SEFH")
        func put(_ value: Int, at offset: Int) {
            for k in 0..<4 { bytes[offset + k] = UInt8((value >> (8 * k)) & 0xFF) }
        }
        // Every block of the directory now claims 200 bytes at offset 100.
        let count = Int(bytes[directory + 8]) | Int(bytes[directory + 9]) << 8
        #expect(count > 0)
        for i in 0..<count {
            put(directory - 100, at: directory + 12 + i * 12 + 4)
            put(200, at: directory + 12 + i * 12 + 8)
        }
        #expect(SamsungTrailer(bytes)?.start == 100)
        #expect(MomentReader.read(bytes, format: .jpeg)?.embeddedVideo == nil)
    }

    /// Random damage anywhere in a motion photo never traps the reader, and any
    /// video it reports lies inside the file.
    @Test func damagedBytesNeverTrap() throws {
        var generator = SystemRandomNumberGenerator()
        for name in [
            "google-container.jpg", "samsung-trailer.jpg", "motion.heic", "live/IMG_0001.MOV", "live/IMG_0001.JPG",
        ] {
            let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.motion(name))))
            let format: MediaFormat = name.hasSuffix(".heic") ? .heic : name.hasSuffix(".MOV") ? .mov : .jpeg
            for _ in 0..<200 {
                var bytes = original
                for _ in 0..<8 {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
                if Bool.random(using: &generator) {
                    bytes.removeLast(Int.random(in: 0..<bytes.count, using: &generator))
                }
                if let video = MomentReader.read(bytes, format: format)?.embeddedVideo {
                    #expect(video.offset >= 0 && video.offset + video.length <= bytes.count, "\(name)")
                }
            }
        }
    }

    // MARK: - Real phones' files (testdata/motion/real; testdata/README.md)

    /// Pixel, Samsung (JPEG MicroVideo, HEIC mpvd with the SEF data inside it or
    /// after it) and Google's own samples: each video found where the phone put
    /// it; the Samsung still whose video was removed has none.
    @Test(arguments: [
        ("pixel-3a-xl.MP.jpg", EmbeddedVideo.Layout.containerDirectory, 2_728_123, 1_317_283),
        ("samsung-s9plus-microvideo.jpg", .microVideo, 3_686_271, 122_562),
        ("samsung-s22-motion.heic", .heifMotionBox, 1_455_411, 2_193_459),
        ("samsung-s22plus-one-ui-6.heic", .heifMotionBox, 452_284, 3_226_469),
        ("google-libmphoto-motion.heic", .heifMotionBox, 1_582_873, 1_544_201),
        ("google-libmphoto-motion.jpg", .containerDirectory, 30_821, 122_562),
    ])
    func realMotionPhotos(name: String, layout: EmbeddedVideo.Layout, offset: Int, length: Int) throws {
        // Two of them are not committed (testdata/README.md): read when present.
        let optional: Set = ["samsung-s22plus-one-ui-6.heic", "google-libmphoto-motion.heic"]
        guard let path = Fixtures.realSample(name) else {
            #expect(optional.contains(name), "\(name) is missing from testdata/motion/real")
            return
        }
        let facts = try #require(try Self.facts(path, format: name.hasSuffix(".heic") ? .heic : .jpeg), "\(name)")
        #expect(facts.embeddedVideo == EmbeddedVideo(layout: layout, offset: offset, length: length), "\(name)")
        let removedPath = try #require(Fixtures.realSample("samsung-s9plus-video-removed.jpg"))
        let removed = try #require(try Self.facts(removedPath, format: .jpeg))
        #expect(removed.declaresMotionPhoto && removed.embeddedVideo == nil)
    }
}
