import DecoderHelperKit
import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import DecoderIsolation

/// The parent's checks of a helper's reply, on replies a taken-over helper
/// could send, and on the edge cases real decoders produce (which must pass).
@Suite struct ReplyCheckTests {
    /// A real 360×270 thumbnail of photo.jpg (640×480), as libvips made it.
    static let thumbnail: [UInt8] = {
        let made = try? InProcessThumbnail.make(Fixtures.media("photo.jpg"))
        return made ?? []
    }()

    static let spec = ThumbnailSpec()

    static func request(thumbnail: ThumbnailSpec? = spec) -> DecodeRequest {
        DecodeRequest(
            path: "/container/x.jpg", label: "x.jpg", format: .jpeg, pixelLimit: 100_000_000, thumbnail: thumbnail)
    }

    static func reply(_ facts: MediaFacts?, width: Int? = 360, height: Int? = 270, jpeg: [UInt8] = thumbnail)
        -> HelperReply
    {
        var result = WireResult(.failure(MediaError(.damaged, "placeholder")))
        result.failure = nil
        result.facts = facts
        result.thumbnailWidth = width
        result.thumbnailHeight = height
        return HelperReply(result: result, jpeg: jpeg[...])
    }

    static let photo = MediaFacts(kind: .image, width: 640, height: 480)

    /// The refusal of `reply` for `request` (by default a JPEG's, or an MP4's
    /// for the facts of a video or a sound), or nil when it passes.
    static func refusal(_ reply: HelperReply, _ request: DecodeRequest? = nil, fileSize: Int? = 1000) -> String? {
        var media = Self.request()
        if let kind = reply.result.facts?.kind, kind == .video || kind == .audio { media.format = .mp4 }
        do {
            _ = try ReplyCheck.validate(reply, for: request ?? media, fileSize: fileSize)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func anHonestReplyPasses() throws {
        try #require(!Self.thumbnail.isEmpty)
        #expect(Self.refusal(Self.reply(Self.photo)) == nil)
        // Sound-only forms of video containers are known MIME types.
        let webm = DecodeRequest(path: "/container/x.webm", label: "x.webm", format: .webm, thumbnail: Self.spec)
        #expect(
            Self.refusal(
                Self.reply(
                    MediaFacts(kind: .audio, durationMilliseconds: 1500, mimeType: "audio/webm"), width: nil,
                    height: nil, jpeg: []), webm) == nil)
        // A failure passes as the failure it is.
        var failed = WireResult(.failure(MediaError(.damaged, "x.jpg: truncated")))
        failed.facts = nil
        #expect(Self.refusal(HelperReply(result: failed, jpeg: []), Self.request()) == nil)
    }

    /// Finding 9 of issue 51: a reply's `facts.kind` was not checked against
    /// the sniffed format. A taken-over helper answering that a JPEG is a video
    /// (or a PDF an image, an MP3 a document) is refused; every kind the
    /// decoders here really give for a format passes.
    @Test func theFactsKindMustBeOneTheSniffedFormatCanHave() throws {
        func request(_ format: MediaFormat, task: DecodeTask = .media) -> DecodeRequest {
            DecodeRequest(path: "/container/x", label: "x", format: format, task: task)
        }
        func facts(_ kind: MediaFacts.Kind) -> HelperReply {
            let sized = kind == .image || kind == .video
            return Self.reply(
                MediaFacts(kind: kind, width: sized ? 640 : nil, height: sized ? 480 : nil), width: nil, height: nil,
                jpeg: [])
        }
        let mp3 = try #require(MediaFormat.all.first { $0.kind == .audio })
        let svg = try #require(MediaFormat.all.first { $0.id == "svg" })
        let zip = try #require(MediaFormat.all.first { $0.kind == .archive })
        let honest: [(MediaFormat, [MediaFacts.Kind])] = [
            (.jpeg, [.image, .unreadable]), (.mp4, [.video, .audio, .unreadable]),
            (mp3, [.audio, .video, .unreadable]),
            (.pdf, [.document, .unreadable]), (svg, [.document, .unreadable]), (zip, [.unreadable]),
        ]
        for (format, kinds) in honest {
            for kind in [MediaFacts.Kind.image, .video, .audio, .document, .unreadable] {
                let refusal = Self.refusal(facts(kind), request(format))
                if kinds.contains(kind) {
                    #expect(refusal == nil, "\(format.id) as \(kind): \(refusal ?? "")")
                } else {
                    #expect(
                        refusal?.contains("for a file sniffed as \(format.name)") == true,
                        "\(format.id) as \(kind) passed: \(refusal ?? "nil")")
                }
            }
        }
        // A location request's facts are the format's own kind.
        let scan = request(.jpeg, task: .locationMetadata)
        #expect(
            Self.refusal(Self.reply(MediaFacts(kind: .video), width: nil, height: nil, jpeg: []), scan)?.contains(
                "sniffed as JPEG") == true)
    }

    /// A contact sheet's tile comes back as raw pixels (issue 51, finding 4):
    /// the parent composes them without decoding, so their size, stride and
    /// length are checked, and a pixel answer carries nothing else.
    @Test func pixelRepliesAreCheckedForSizeStrideAndLength() throws {
        let request = DecodeRequest(
            path: "/container/thumbnails/x.jpg", label: "x.jpg", format: .jpeg, thumbnail: ThumbnailSpec(size: 192),
            task: .pixels)
        func reply(
            width: Int?, height: Int?, stride: Int?, bytes: Int, kind: MediaFacts.Kind = .image, thumbnail: Bool = false
        ) -> HelperReply {
            var result = Self.reply(MediaFacts(kind: kind), width: nil, height: nil, jpeg: []).result
            result.pixelsWidth = width
            result.pixelsHeight = height
            result.pixelsStride = stride
            if thumbnail { (result.thumbnailWidth, result.thumbnailHeight) = (4, 3) }
            return HelperReply(result: result, jpeg: [UInt8](repeating: 7, count: bytes)[...])
        }
        let honest = try ReplyCheck.validate(
            reply(width: 192, height: 144, stride: 576, bytes: 576 * 144), for: request
        ).get()
        #expect(honest.pixels?.width == 192 && honest.pixels?.height == 144 && honest.pixels?.bytes.count == 576 * 144)
        for (lie, refusal) in [
            (reply(width: 193, height: 144, stride: 579, bytes: 579 * 144), "pixels of 193×144 where at most 192"),
            (reply(width: 0, height: 144, stride: 0, bytes: 0), "pixels of 0×144"),
            (reply(width: 100, height: 100, stride: 400, bytes: 400 * 100), "rows are 400 bytes apart"),
            (reply(width: 100, height: 100, stride: 300, bytes: 300 * 100 - 1), "29999 bytes of pixels for 100×100"),
            (reply(width: 100, height: 100, stride: 300, bytes: 300 * 100 + 300), "30300 bytes of pixels"),
            (reply(width: nil, height: nil, stride: nil, bytes: 0), "without the pixels' size"),
            (reply(width: 4, height: 3, stride: 12, bytes: 36, thumbnail: true), "with more than pixels"),
            (reply(width: 4, height: 3, stride: 12, bytes: 36, kind: .video), "the facts of a video"),
        ] {
            let got = Self.refusal(lie, request)
            #expect(got?.contains(refusal) == true, "\(refusal): \(got ?? "accepted")")
        }
        // Pixels nobody asked for are refused in any other answer.
        var media = Self.reply(Self.photo).result
        media.pixelsWidth = 4
        #expect(Self.refusal(HelperReply(result: media, jpeg: Self.thumbnail[...])) == "pixels nobody asked for")
    }

    /// A thumbnail's ThumbHash passes when it is base64 of a plausible hash, and
    /// reaches the parent as its bytes; anything else is refused.
    @Test func aThumbHashMustBePlausibleBase64() throws {
        try #require(!Self.thumbnail.isEmpty)
        var reply = Self.reply(Self.photo)
        var result = reply.result
        result.thumbnailThumbHash = "1QcSHQRnh493V4dIh4eXh1h4kJUI"
        reply = HelperReply(result: result, jpeg: reply.jpeg)
        let decoded = try ReplyCheck.validate(reply, for: Self.request()).get()
        guard case .made(let thumbnail) = decoded.thumbnail else {
            Issue.record("no thumbnail")
            return
        }
        #expect(thumbnail.thumbHash == [UInt8](Data(base64Encoded: "1QcSHQRnh493V4dIh4eXh1h4kJUI")!))
        for (hash, refusal) in [
            ("not base64!", "a ThumbHash that is not base64"), ("AAAA", "a ThumbHash of 3 bytes"),
            (Data(repeating: 7, count: 41).base64EncodedString(), "a ThumbHash of 41 bytes"),
            ("AACAAAA=", "a ThumbHash of 5 bytes"),  // the alpha flag, without the alpha byte
            ("1QcSHQRnh493V4dIh4eXh1h4kJU", "a ThumbHash that is not base64"),  // unpadded
        ] {
            result.thumbnailThumbHash = hash
            #expect(Self.refusal(HelperReply(result: result, jpeg: reply.jpeg))?.hasPrefix(refusal) == true, "\(hash)")
        }
        var without = Self.reply(Self.photo, width: nil, height: nil, jpeg: []).result
        without.thumbnailThumbHash = "1QcSHQRnh493V4dIh4eXh1h4kJUI"
        #expect(Self.refusal(HelperReply(result: without, jpeg: [])) == "a ThumbHash without a thumbnail")
    }

    /// Text a helper sends is shown to people: a terminal escape sequence in a
    /// warning or a failure reaches the terminal as spaces.
    @Test func controlCharactersInTextBecomeSpaces() throws {
        let facts = MediaFacts(kind: .image, width: 640, height: 480, warnings: ["clean", "\u{1B}[2Jcleared\u{7}"])
        let decoded = try ReplyCheck.validate(Self.reply(facts), for: Self.request()).get()
        #expect(decoded.facts.warnings == ["clean", " [2Jcleared "])
        var failed = WireResult(.failure(MediaError(.damaged, "x.jpg:\u{1B}]0;title\u{7} broken")))
        failed.facts = nil
        let failure = try ReplyCheck.validate(HelperReply(result: failed, jpeg: []), for: Self.request())
        #expect(failure == .failure(MediaError(.damaged, "x.jpg: ]0;title  broken")))
    }

    /// Rounding at the extremes: a 1×5000 strip's thumbnail is 1×360 (its width
    /// cannot be 0.07 of a pixel); a 5000×1 strip's is 360×1.
    @Test func extremeShapesPassWithinRounding() throws {
        let strip = try Self.jpeg(width: 1, height: 360)
        #expect(
            Self.refusal(
                Self.reply(MediaFacts(kind: .image, width: 1, height: 5000), width: 1, height: 360, jpeg: strip)) == nil
        )
        let wide = try Self.jpeg(width: 360, height: 1)
        #expect(
            Self.refusal(
                Self.reply(MediaFacts(kind: .image, width: 5000, height: 1), width: 360, height: 1, jpeg: wide)) == nil)
        // One pixel off on a photo: rounding, accepted.
        let rounded = try Self.jpeg(width: 360, height: 271)
        #expect(Self.refusal(Self.reply(Self.photo, width: 360, height: 271, jpeg: rounded)) == nil)
    }

    @Test(arguments: [
        ("a size of 0×480 pixels", MediaFacts(kind: .image, width: 0, height: 480)),
        ("a width without a height", MediaFacts(kind: .image, width: 640)),
        ("over the pixel limit", MediaFacts(kind: .image, width: 100_000, height: 100_000)),
        ("a duration of nan ms", MediaFacts(kind: .video, width: 640, height: 480, durationMilliseconds: .nan)),
        ("a duration of inf ms", MediaFacts(kind: .video, width: 640, height: 480, durationMilliseconds: .infinity)),
        ("a duration of -5.0 ms", MediaFacts(kind: .video, width: 640, height: 480, durationMilliseconds: -5)),
        ("a frame count of 0", MediaFacts(kind: .image, width: 640, height: 480, frameCount: 0)),
        (
            "the unknown MIME type \"image/x-forged\"",
            MediaFacts(kind: .image, width: 640, height: 480, mimeType: "image/x-forged")
        ),
        ("65 warnings", MediaFacts(kind: .image, width: 640, height: 480, warnings: Array(repeating: "w", count: 65))),
        (
            "a warning of 5000 bytes",
            MediaFacts(kind: .image, width: 640, height: 480, warnings: [String(repeating: "w", count: 5000)])
        ),
    ])
    func factsOutsideTheLimitsAreRefused(expected: String, facts: MediaFacts) {
        let refusal = Self.refusal(Self.reply(facts))
        #expect(refusal?.contains(expected) == true, "\(refusal ?? "accepted")")
    }

    /// A panorama's projection: sane sizes and a crop inside the whole panorama;
    /// `stereo` and `gainMap` only where they can be. A 360° photo's thumbnail may
    /// have its centre view's shape (3:2 for 2:1), and only then.
    @Test func panoramaStereoAndGainMapFactsAreBounded() throws {
        func facts(_ projection: Projection?, kind: MediaFacts.Kind = .image, stereo: Bool? = nil, gainMap: Bool? = nil)
            -> MediaFacts
        {
            var facts = MediaFacts(kind: kind, width: 640, height: 480)
            (facts.projection, facts.stereo, facts.gainMap) = (projection, stereo, gainMap)
            return facts
        }
        let cylinder = Projection(
            type: .cylindrical, fullWidth: 1000, fullHeight: 600, cropLeft: 100, cropTop: 50, croppedWidth: 640,
            croppedHeight: 480)
        #expect(Self.refusal(Self.reply(facts(cylinder, stereo: true, gainMap: true))) == nil)
        for (projection, expected) in [
            (
                Projection(type: .cylindrical, fullWidth: 0, fullHeight: 600),
                "a panorama size that is not 1–1048576 pixels"
            ),
            (
                Projection(type: .equirectangular, fullWidth: 4_000_000, fullHeight: 2_000_000),
                "a panorama size that is not"
            ),
            (
                Projection(
                    type: .cylindrical, fullWidth: 1000, fullHeight: 600, cropLeft: 400, croppedWidth: 640,
                    croppedHeight: 480), "a panorama crop 640x480+400+0 outside its 1000x600"
            ),
            (
                Projection(
                    type: .cylindrical, fullWidth: 1000, fullHeight: 600, cropTop: -1, croppedWidth: 640,
                    croppedHeight: 480), "outside its 1000x600"
            ),
        ] {
            let refusal = Self.refusal(Self.reply(facts(projection)))
            #expect(refusal?.contains(expected) == true, "\(refusal ?? "accepted")")
        }
        let noVideo = MediaFacts(kind: .audio, durationMilliseconds: 100)
        var audio = noVideo
        audio.stereo = true
        #expect(
            Self.refusal(Self.reply(audio, width: nil, height: nil, jpeg: []))
                == "a stereo pair that is no image or video")
        audio = noVideo
        audio.projection = cylinder
        #expect(
            Self.refusal(Self.reply(audio, width: nil, height: nil, jpeg: []))
                == "a panorama projection of a file that is no image")
        #expect(
            Self.refusal(Self.reply(facts(nil, kind: .video, gainMap: true))) == "a gain map of a file that is no image"
        )

        // The centre view of a 2:1 sphere is 3:2 (or the whole sphere, when the view could not be made);
        // without the projection, or of another shape, it is refused.
        var sphere = MediaFacts(kind: .image, width: 2048, height: 1024)
        sphere.projection = Projection(type: .equirectangular, fullWidth: 2048, fullHeight: 1024)
        let view = try Self.jpeg(width: 360, height: 240)
        let whole = try Self.jpeg(width: 360, height: 180)
        let square = try Self.jpeg(width: 360, height: 360)
        #expect(Self.refusal(Self.reply(sphere, width: 360, height: 240, jpeg: view)) == nil)
        #expect(Self.refusal(Self.reply(sphere, width: 360, height: 180, jpeg: whole)) == nil)
        #expect(
            Self.refusal(Self.reply(sphere, width: 360, height: 360, jpeg: square))
                == "a 360×360 thumbnail of a 2048×1024 picture")
        sphere.projection = nil
        #expect(
            Self.refusal(Self.reply(sphere, width: 360, height: 240, jpeg: view))
                == "a 360×240 thumbnail of a 2048×1024 picture")
    }

    @Test func thumbnailsThatAreNotWhatWasAskedForAreRefused() throws {
        // Not asked for.
        #expect(Self.refusal(Self.reply(Self.photo), Self.request(thumbnail: nil)) == "a thumbnail nobody asked for")
        // Not a JPEG, or a JPEG cut short.
        #expect(
            Self.refusal(Self.reply(Self.photo, jpeg: Array("\u{89}PNG\r\n\u{1A}\n".utf8)))
                == "thumbnail bytes that are not a JPEG")
        #expect(
            Self.refusal(Self.reply(Self.photo, jpeg: Array(Self.thumbnail.dropLast(100))))
                == "thumbnail bytes that are not a JPEG")
        // A size the JPEG does not have.
        #expect(
            Self.refusal(Self.reply(Self.photo, width: 300, height: 225))
                == "a thumbnail said to be 300×225 whose JPEG is 360×270")
        // Larger than asked for, or of another shape than the picture.
        let large = try Self.jpeg(width: 720, height: 540)
        #expect(
            Self.refusal(Self.reply(Self.photo, width: 720, height: 540, jpeg: large))
                == "a 720×540 thumbnail where at most 360 pixels were asked for")
        let square = try Self.jpeg(width: 360, height: 360)
        #expect(
            Self.refusal(Self.reply(Self.photo, width: 360, height: 360, jpeg: square))
                == "a 360×360 thumbnail of a 640×480 picture")
        // Bytes without a thumbnail.
        #expect(Self.refusal(Self.reply(Self.photo, width: nil, height: nil)) == "thumbnail bytes without a thumbnail")
    }

    /// The parent's JPEG reader: the frame size of well-formed files, nil for
    /// anything that is not a whole JPEG.
    @Test func jpegFrameReadsTheSizeOrRefuses() throws {
        let frame = JPEGFrame(Self.thumbnail[...])
        #expect(frame?.width == 360 && frame?.height == 270, "\(String(describing: frame))")
        let progressive = try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("progressive.jpg")))
        #expect(JPEGFrame(Array(progressive)[...]) != nil, "a progressive JPEG (SOF2)")
        #expect(JPEGFrame([0xFF, 0xD8, 0xFF, 0xD9]) == nil, "no frame header")
        #expect(JPEGFrame(Array(Self.thumbnail.dropFirst(2))[...]) == nil, "no start of image")
        // A scan before any frame header.
        #expect(JPEGFrame([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0xFF, 0xD9]) == nil)
        // A segment whose length runs past the end.
        #expect(JPEGFrame([0xFF, 0xD8, 0xFF, 0xE0, 0x7F, 0xFF, 0x00, 0xFF, 0xD9]) == nil)
        // A frame header claiming 0×0.
        #expect(
            JPEGFrame([
                0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x11, 0x00, 0xFF, 0xD9,
            ]) == nil)
    }

    // MARK: - Compatible copies and location metadata

    static func compatibleRequest(format: MediaFormat = .heic) -> DecodeRequest {
        DecodeRequest(
            path: "/container/x.heic", label: "x.heic", format: format,
            compatibleCopy: CompatibleCopySpec(maximumBytes: 1 << 20))
    }

    /// A reply carrying a compatible copy of `jpeg`, said to be `width`×`height`.
    static func compatibleReply(_ facts: MediaFacts = photo, width: Int, height: Int, jpeg: [UInt8]) -> HelperReply {
        var reply = Self.reply(facts, width: nil, height: nil, jpeg: [])
        var result = reply.result
        result.compatibleWidth = width
        result.compatibleHeight = height
        result.compatibleLength = jpeg.count
        result.compatibleMetadata = ["EXIF: Make, Model, DateTimeOriginal"]
        reply = HelperReply(result: result, jpeg: [], compatible: jpeg[...])
        return reply
    }

    @Test func aCompatibleCopyMustBeAJPEGOfThePhotosFullSize() throws {
        let full = try Self.jpeg(width: 640, height: 480)
        let decoded = try ReplyCheck.validate(
            Self.compatibleReply(width: 640, height: 480, jpeg: full), for: Self.compatibleRequest()
        ).get()
        guard case .made(let copy)? = decoded.compatibleCopy else {
            Issue.record("no copy: \(decoded)")
            return
        }
        #expect(copy.width == 640 && copy.height == 480 && copy.jpeg == full)

        let half = try Self.jpeg(width: 320, height: 240)
        let refusals: [(String, HelperReply, DecodeRequest)] = [
            (
                "not a JPEG", Self.compatibleReply(width: 640, height: 480, jpeg: Array(repeating: 7, count: 100)),
                Self.compatibleRequest()
            ),
            (
                "said to be 640×480 whose JPEG is 320×240", Self.compatibleReply(width: 640, height: 480, jpeg: half),
                Self.compatibleRequest()
            ),
            ("not its full size", Self.compatibleReply(width: 320, height: 240, jpeg: half), Self.compatibleRequest()),
            (
                "nobody asked for", Self.compatibleReply(width: 640, height: 480, jpeg: full),
                Self.request(thumbnail: nil)
            ),
            (
                "where at most 1000 were allowed", Self.compatibleReply(width: 640, height: 480, jpeg: full),
                {
                    var request = Self.compatibleRequest()
                    request.compatibleCopy?.maximumBytes = 1000
                    return request
                }()
            ),
        ]
        for (expected, reply, request) in refusals {
            let refusal = Self.refusal(reply, request)
            #expect(refusal?.contains(expected) == true, "\(expected): \(refusal ?? "passed")")
        }
        // A RAW's copy is its largest preview: smaller, of the photo's shape (within 2 %).
        let raw = Self.compatibleRequest(format: .nef)
        let preview = try Self.jpeg(width: 1006, height: 1520)
        #expect(
            Self.refusal(
                Self.compatibleReply(
                    MediaFacts(kind: .image, width: 2014, height: 3040), width: 1006, height: 1520, jpeg: preview), raw)
                == nil)
        let square = try Self.jpeg(width: 1000, height: 1000)
        #expect(
            Self.refusal(
                Self.compatibleReply(
                    MediaFacts(kind: .image, width: 2014, height: 3040), width: 1000, height: 1000, jpeg: square), raw)?
                .contains("another shape") == true)
    }

    /// The Takeout JSONs sent with a file get one reading each, in their
    /// order, and none are answered when none were sent; each reading within
    /// its lengths, with finite places; a forged one is refused.
    @Test func takeoutReadingsAnswerTheJSONsSentWithinTheirBounds() throws {
        var request = Self.request(thumbnail: nil)
        request.takeoutJSONs = [Array("{}".utf8), Array("[]".utf8)]
        func reply(_ readings: [TakeoutReading]?, facts: MediaFacts = Self.photo) -> HelperReply {
            var result = WireResult(.success(DecodedMedia(facts: facts)))
            result.takeouts = readings
            return HelperReply(result: result, jpeg: [])
        }
        let honest = TakeoutSidecar(
            title: "X.jpg", photoTakenTime: 99_999_999_999, description: "at dusk",
            geoData: TakeoutPlace(latitude: 95, longitude: 2))
        let readings: [TakeoutReading] = [.read(honest), .refused("not valid JSON")]
        #expect(Self.refusal(reply(readings), request) == nil, "ranges are the pipeline's to check, not the reply's")
        #expect(try ReplyCheck.validate(reply(readings), for: request).get().takeouts == readings)
        #expect(Self.refusal(reply(nil), request) == "0 Takeout JSON readings for the 2 sent")
        #expect(Self.refusal(reply([.read(honest)]), request) == "1 Takeout JSON readings for the 2 sent")
        #expect(
            Self.refusal(reply([.read(honest)]), Self.request(thumbnail: nil))
                == "1 Takeout JSON readings for the 0 sent")
        let long = TakeoutSidecar(
            title: "X", description: String(repeating: "a", count: TakeoutJSON.maximumDescription + 1))
        #expect(
            Self.refusal(reply([.read(long), .read(honest)]), request) == "a Takeout description of 2001 characters")
        let infinite = TakeoutSidecar(title: "X", geoDataExif: TakeoutPlace(latitude: .infinity, longitude: 0))
        #expect(Self.refusal(reply([.read(honest), .read(infinite)]), request)?.hasPrefix("a Takeout place") == true)
        #expect(
            Self.refusal(reply([.read(honest), .refused(String(repeating: "x", count: 5000))]), request)?.hasPrefix(
                "a Takeout JSON's refusal of") == true)
        let escaped = try ReplyCheck.validate(
            reply([.read(TakeoutSidecar(title: "X\u{1B}[2J.jpg")), .refused("bad\u{1B}[2J")]), for: request
        ).get().takeouts
        #expect(escaped == [.read(TakeoutSidecar(title: "X [2J.jpg")), .refused("bad [2J")])
    }

    @Test func locationMetadataOnlyAnswersALocationRequest() throws {
        let request = DecodeRequest(path: "/container/x.jpg", label: "x.jpg", format: .jpeg, task: .locationMetadata)
        func reply(_ location: LocationMetadata?, facts: MediaFacts = MediaFacts(kind: .image)) -> HelperReply {
            var result = WireResult(.success(DecodedMedia(facts: facts)))
            result.location = location
            return HelperReply(result: result, jpeg: [])
        }
        let found = LocationMetadata(found: [
            LocationRecord(
                name: "EXIF GPS (GPSLatitude)", edits: [MetadataEdit(offset: 100, length: 24, fill: .zeros, step: 0)])
        ])
        #expect(try ReplyCheck.validate(reply(found), for: request, fileSize: 1000).get().location == found)
        #expect(Self.refusal(reply(found), Self.request(thumbnail: nil))?.contains("nobody asked for") == true)
        #expect(Self.refusal(reply(nil), request)?.contains("without its findings") == true)
        #expect(Self.refusal(reply(found, facts: Self.photo), request)?.contains("decoded media") == true)
        for edit in [
            MetadataEdit(offset: -1, length: 4, fill: .zeros, step: 0),
            MetadataEdit(offset: 0, length: 0, fill: .zeros, step: 0),
            MetadataEdit(offset: Int.max, length: 2, fill: .zeros, step: 0),
            MetadataEdit(offset: 0, length: 2, fill: .zeros, step: 9),
        ] {
            let bad = LocationMetadata(found: [LocationRecord(name: "x", edits: [edit])])
            #expect(Self.refusal(reply(bad), request)?.contains("an overwrite of") == true, "\(edit)")
        }
        let many = LocationMetadata(found: [
            LocationRecord(
                name: "x",
                edits: Array(repeating: MetadataEdit(offset: 0, length: 1, fill: .zeros, step: 0), count: 5000))
        ])
        #expect(Self.refusal(reply(many), request)?.contains("overwrites") == true)
    }

    /// Location overwrites are bounded: the issue's hostile reply (4,096 ranges,
    /// each as long as the file, overlapping) is refused, as are two ranges that
    /// overlap in one step, ranges past the end, and zeros over more bytes than
    /// the file has; ranges of different steps may cover each other (a box's
    /// payload zeroed, then its type made `free`).
    @Test func locationOverwritesAreBoundedByTheFile() throws {
        let request = DecodeRequest(path: "/container/x.jpg", label: "x.jpg", format: .jpeg, task: .locationMetadata)
        func reply(_ edits: [MetadataEdit]) -> HelperReply {
            var result = WireResult(.success(DecodedMedia(facts: MediaFacts(kind: .image))))
            result.location = LocationMetadata(found: [LocationRecord(name: "EXIF GPS", edits: edits)])
            return HelperReply(result: result, jpeg: [])
        }
        let flood = (0..<4096).map { MetadataEdit(offset: $0 % 2, length: 999, fill: .zeros, step: 0) }
        #expect(
            Self.refusal(reply(flood), request)?.contains("in all in a 1000-byte file") == true,
            "\(Self.refusal(reply(flood), request) ?? "passed")")
        let overlapping = [
            MetadataEdit(offset: 10, length: 20, fill: .zeros, step: 0),
            MetadataEdit(offset: 25, length: 10, fill: .zeros, step: 0),
        ]
        #expect(Self.refusal(reply(overlapping), request)?.contains("overlapping overwrites at 10") == true)
        #expect(
            Self.refusal(reply([MetadataEdit(offset: 990, length: 20, fill: .zeros, step: 0)]), request)?.contains(
                "of a 1000-byte file") == true)
        #expect(
            Self.refusal(reply([MetadataEdit(offset: 0, length: 8, fill: .zeros, step: 0)]), request, fileSize: nil)?
                .contains("size is not known") == true)
        let freeBox = [
            MetadataEdit(offset: 108, length: 92, fill: .zeros, step: 0),
            MetadataEdit(offset: 100, length: 100, fill: .freeBox, step: 1),
        ]
        #expect(Self.refusal(reply(freeBox), request) == nil)
        let steps = [
            MetadataEdit(offset: 10, length: 20, fill: .zeros, step: 0),
            MetadataEdit(offset: 10, length: 2, fill: .zeros, step: 2),
        ]
        #expect(Self.refusal(reply(steps), request) == nil)
    }

    /// The parent keeps only the JPEG segments it needs from a helper's
    /// thumbnail and compatible copy: a COM and an APP13 a lying helper put in
    /// (an earlier item's bytes) are gone, the picture is unchanged (same
    /// frame, same scan), and a compatible copy keeps its EXIF and ICC blocks,
    /// but not an EXIF with GPS when the copy must carry no location.
    @Test func repliesKeepOnlyTheSegmentsThePictureNeeds() throws {
        let plain = try Self.jpeg(width: 64, height: 48)
        let secret = Array("an earlier item's bytes".utf8)
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        let exif =
            JPEGSegments.exifSignature + [
                0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
            ]
        let gpsExif =
            JPEGSegments.exifSignature + [
                0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 1, 0, 0x25, 0x88, 4, 0, 1, 0, 0, 0, 26, 0, 0, 0, 0, 0, 0, 0,
            ]
        let icc = JPEGSegments.iccSignature + [1, 1] + Array(repeating: 7, count: 32)
        let hostile =
            [0xFF, 0xD8] + segment(0xFE, secret) + segment(0xED, secret) + segment(0xE1, exif) + segment(0xE2, icc)
            + Array(plain.dropFirst(2))
        let thumbnail = try #require(JPEGSegments.filtered(hostile[...], keepingMetadata: false, allowsLocation: true))
        #expect(
            thumbnail.firstRange(of: secret) == nil && thumbnail.firstRange(of: icc) == nil
                && thumbnail.firstRange(of: exif) == nil)
        #expect(JPEGFrame(thumbnail[...])?.width == 64 && JPEGFrame(thumbnail[...])?.height == 48)
        // Nothing but the plain JPEG's own APP0 (JFIF) is gone from it.
        let plainKept = try #require(JPEGSegments.filtered(plain[...], keepingMetadata: false, allowsLocation: true))
        #expect(
            thumbnail == plainKept && plainKept.count < plain.count
                && plain.firstRange(of: Array(plainKept.dropFirst(2))) != nil)
        let copy = try #require(JPEGSegments.filtered(hostile[...], keepingMetadata: true, allowsLocation: false))
        #expect(
            copy.firstRange(of: secret) == nil && copy.firstRange(of: exif) != nil && copy.firstRange(of: icc) != nil)
        let withGPS = [0xFF, 0xD8] + segment(0xE1, gpsExif) + Array(plain.dropFirst(2))
        #expect(
            try #require(JPEGSegments.filtered(withGPS[...], keepingMetadata: true, allowsLocation: false)).firstRange(
                of: gpsExif) == nil)
        #expect(
            try #require(JPEGSegments.filtered(withGPS[...], keepingMetadata: true, allowsLocation: true)).firstRange(
                of: gpsExif) != nil)
        // Cut short, or no EOI: not a JPEG.
        #expect(JPEGSegments.filtered(hostile.dropLast(2), keepingMetadata: false, allowsLocation: true) == nil)
        #expect(JPEGSegments.filtered(hostile.prefix(40), keepingMetadata: false, allowsLocation: true) == nil)
    }

    /// A JPEG of `width` × `height` (libvips, for the shapes the tests need).
    static func jpeg(width: Int, height: Int) throws -> [UInt8] {
        let directory = TemporaryDirectory("reply-jpeg")
        let path = directory.file("made.jpg")
        try ImageInspector.vips(["black", path, String(width), String(height)])
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

/// A thumbnail made the way a helper makes one (through the library, in-process).
enum InProcessThumbnail {
    static func make(_ path: String) throws -> [UInt8] {
        let decoded = try Isolation.none.decoder().decode(
            DecodeRequest(path: path, label: "photo.jpg", format: .jpeg, thumbnail: ThumbnailSpec()))
        guard case .made(let thumbnail) = decoded.thumbnail else { return [] }
        return thumbnail.jpeg
    }
}
