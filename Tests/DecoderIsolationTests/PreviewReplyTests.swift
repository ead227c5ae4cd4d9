import DecoderHelperKit
import Foundation
import MediaFormats
import ShareIngest
import TestSupport
import Testing

@testable import DecoderIsolation

/// The parent's check of the previews a helper returns beside its thumbnail
/// (the thumbnail stage's `sizes` beyond the first): what an honest decoder
/// sends passes, and every reply a taken-over helper could send instead is
/// refused with what is wrong.
@Suite struct PreviewReplyTests {
    static func spec(_ sizes: [Int], _ format: PreviewFormat) -> ThumbnailSpec {
        var spec = ThumbnailSpec(size: 160)
        spec.previews = PreviewSizes(sizes: sizes, format: format)
        return spec
    }

    static func request(_ spec: ThumbnailSpec?) -> DecodeRequest {
        DecodeRequest(path: Fixtures.media("photo.jpg"), label: "photo.jpg", format: .jpeg, thumbnail: spec)
    }

    /// What a helper sends for photo.jpg (640×480), as the parent receives it:
    /// decoded in-process, framed as a result body, split again.
    static func honest(_ spec: ThumbnailSpec) throws -> HelperReply {
        let decoded = try Isolation.none.decoder().decode(request(spec))
        let outcome = Result<DecodedMedia, MediaError>.success(decoded)
        let body = try HelperMessage.resultBody(WireResult(outcome), jpeg: WireResult.jpeg(of: outcome))
        return try HelperReply.parse(body[...])
    }

    static func refusal(_ reply: HelperReply, _ spec: ThumbnailSpec?) -> String? {
        do {
            _ = try ReplyCheck.validate(reply, for: request(spec), fileSize: 100_000)
            return nil
        } catch {
            return error.description
        }
    }

    /// `reply` with its previews replaced: `claims` in the JSON, `bytes` after the thumbnail.
    static func replacing(_ reply: HelperReply, claims: [WirePicture]?, bytes: [[UInt8]]) -> HelperReply {
        var result = reply.result
        result.previews = claims
        return HelperReply(result: result, jpeg: reply.jpeg, previews: bytes.map { $0[...] })
    }

    /// A `width`×`height` picture in `format`, as the decoder encodes a
    /// preview (of a black PNG `vips black` makes).
    static func made(_ format: PreviewFormat, width: Int, height: Int) throws -> [UInt8] {
        let directory = TemporaryDirectory("preview-reply")
        let path = directory.file("black.png")
        try ImageInspector.vips(["black", path, String(width), String(height)])
        var spec = ThumbnailSpec(size: 16)
        spec.previews = PreviewSizes(sizes: [max(width, height)], format: format)
        let decoded = try Isolation.none.decoder().decode(
            DecodeRequest(path: path, label: "black.png", format: .png, thumbnail: spec))
        guard case .made(let thumbnail) = decoded.thumbnail, let picture = thumbnail.previews?.first else { return [] }
        return picture.bytes
    }

    @Test(arguments: PreviewFormat.allCases) func anHonestReplyPassesWithEveryPreviewAsked(format: PreviewFormat) throws
    {
        let spec = Self.spec([320, 1440], format)
        let reply = try Self.honest(spec)
        #expect(reply.previews.count == 2)
        let decoded = try ReplyCheck.validate(reply, for: Self.request(spec), fileSize: 100_000).get()
        guard case .made(let thumbnail) = decoded.thumbnail else {
            Issue.record("no thumbnail: \(String(describing: decoded.thumbnail))")
            return
        }
        #expect(thumbnail.width == 160 && thumbnail.height == 120)
        let previews = try #require(thumbnail.previews)
        // Never enlarged: 1440 asked of a 640×480 photo is 640×480.
        #expect(previews.map { [$0.width, $0.height] } == [[320, 240], [640, 480]])
        #expect(previews.allSatisfy { $0.format == format })
        if format == .webp {
            #expect(previews.allSatisfy { WebPFrame($0.bytes[...]) != nil })
        } else {
            #expect(previews.allSatisfy { JPEGFrame($0.bytes[...]) != nil })
        }
    }

    @Test func previewsThatAreNotWhatWasAskedForAreRefused() throws {
        let spec = Self.spec([320, 1440], .webp)
        let reply = try Self.honest(spec)
        let claims = try #require(reply.result.previews)
        let bytes = reply.previews.map(Array.init)
        // Not asked for at all.
        #expect(Self.refusal(reply, ThumbnailSpec(size: 160)) == "previews nobody asked for")
        // One fewer, or one more, than the sizes asked for.
        #expect(
            Self.refusal(Self.replacing(reply, claims: [claims[0]], bytes: [bytes[0]]), spec)
                == "1 previews where 2 were asked for")
        #expect(
            Self.refusal(Self.replacing(reply, claims: nil, bytes: []), spec) == "0 previews where 2 were asked for")
        #expect(
            Self.refusal(Self.replacing(reply, claims: claims + [claims[1]], bytes: bytes + [bytes[1]]), spec)
                == "3 previews where 2 were asked for")
        // A photo's metadata never reaches the parent in a preview (photo.jpg has GPS).
        let checked = try ReplyCheck.validate(reply, for: Self.request(spec), fileSize: 100_000).get()
        guard case .made(let thumbnail) = checked.thumbnail else {
            Issue.record("no thumbnail")
            return
        }
        #expect(
            thumbnail.previews?.allSatisfy {
                !$0.bytes.contains(subsequence: Array("EXIF".utf8))
                    && !$0.bytes.contains(subsequence: Array("GPS".utf8))
            } == true)
        // Another format than the one asked for, claimed or in the bytes.
        var jpegClaim = claims
        jpegClaim[0].format = .jpeg
        #expect(
            Self.refusal(Self.replacing(reply, claims: jpegClaim, bytes: bytes), spec)
                == "a jpeg preview where webp was asked for")
        let jpeg = try Self.made(.jpeg, width: 320, height: 240)
        var jpegBytes = claims
        jpegBytes[0].length = jpeg.count
        #expect(
            Self.refusal(Self.replacing(reply, claims: jpegBytes, bytes: [jpeg, bytes[1]]), spec)
                == "preview bytes that are not a WebP")
        // WebP bytes where JPEG was asked for.
        let jpegSpec = Self.spec([320, 1440], .jpeg)
        var webpAsJPEG = claims
        webpAsJPEG[0].format = .jpeg
        webpAsJPEG[1].format = .jpeg
        #expect(
            Self.refusal(Self.replacing(reply, claims: webpAsJPEG, bytes: bytes), jpegSpec)
                == "preview bytes that are not a JPEG")
        // A size the picture does not have.
        var lying = claims
        lying[0].width = 300
        #expect(
            Self.refusal(Self.replacing(reply, claims: lying, bytes: bytes), spec)
                == "a preview said to be 300×240 whose picture is 320×240")
        // Larger than asked for: the 640×480 picture where at most 400 was asked.
        #expect(
            Self.refusal(reply, Self.spec([320, 400], .webp))
                == "a 640×480 preview where at most 400 pixels were asked for")
        // Another shape than the photo's.
        let square = try Self.made(.webp, width: 320, height: 320)
        var squareClaim = claims
        squareClaim[0] = WirePicture(width: 320, height: 320, format: .webp, length: square.count)
        #expect(
            Self.refusal(Self.replacing(reply, claims: squareClaim, bytes: [square, bytes[1]]), spec)
                == "a 320×320 preview beside a 160×120 thumbnail")
        // More bytes than any honest encoder makes for the size.
        let huge = [UInt8](repeating: 0, count: ReplyCheck.maximumPreviewBytes(size: 320) + 1)
        var hugeClaim = claims
        hugeClaim[0].length = huge.count
        #expect(
            Self.refusal(Self.replacing(reply, claims: hugeClaim, bytes: [huge, bytes[1]]), spec)
                == "a preview of \(huge.count) bytes for 320 pixels")
        // Previews without a thumbnail.
        var bare = WireResult(.success(DecodedMedia(facts: MediaFacts(kind: .image, width: 640, height: 480))))
        bare.previews = claims
        #expect(
            Self.refusal(HelperReply(result: bare, jpeg: [], previews: reply.previews), spec)
                == "previews without a thumbnail")
        // Lengths that run past the message: a protocol error, before any check.
        var overlong = reply.result
        overlong.previews![1].length = 1 << 24
        let body = try HelperMessage.resultBody(overlong, jpeg: Array(reply.jpeg) + bytes[0] + bytes[1])
        #expect(throws: ProtocolError.self) { try HelperReply.parse(body[...]) }
    }

    /// The parent's WebP reader: a lone lossy or lossless picture, or one
    /// after a VP8X header (and an alpha chunk) of the same canvas, whose
    /// metadata chunks it drops; nothing else: animation, unknown chunks,
    /// cut short, a RIFF length that lies.
    @Test func webpFrameReadsTheSizeKeepsOnlyThePictureOrRefuses() throws {
        func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let n = UInt32(payload.count)
            return Array(type.utf8) + [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)]
                + payload
                + (payload.count % 2 == 1 ? [0] : [])
        }
        func riff(_ chunks: [UInt8]...) -> [UInt8] {
            let body = Array("WEBP".utf8) + chunks.flatMap { $0 }
            let n = UInt32(body.count)
            return Array("RIFF".utf8) + [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)]
                + body
        }
        // VP8L 300×200: signature, then width − 1 and height − 1 in 14 bits each.
        let bits = UInt32(299) | UInt32(199) << 14
        let lossless = chunk(
            "VP8L",
            [0x2F, UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 24), 0, 0])
        #expect(WebPFrame(riff(lossless)[...]).map { [$0.width, $0.height] } == [300, 200])
        #expect(WebPFrame(riff(lossless)[...])?.kept == riff(lossless))
        func vp8x(flags: UInt8, width: Int, height: Int) -> [UInt8] {
            chunk(
                "VP8X",
                [
                    flags, 0, 0, 0, UInt8((width - 1) & 0xFF), UInt8((width - 1) >> 8), 0, UInt8((height - 1) & 0xFF),
                    UInt8((height - 1) >> 8), 0,
                ])
        }
        // Metadata (an EXIF with a place in it, XMP, ICC) is dropped, with the header that announced it.
        let exif = chunk("EXIF", Array("Exif\0\0GPSLatitude 48.85".utf8))
        let withMetadata = riff(
            vp8x(flags: 0x2C, width: 300, height: 200), chunk("ICCP", [1, 2]), lossless, exif,
            chunk("XMP ", Array("<x:xmpmeta/>".utf8)))
        let kept = try #require(WebPFrame(withMetadata[...]))
        #expect(kept.width == 300 && kept.height == 200)
        #expect(kept.kept == riff(lossless))
        #expect(WebPFrame(kept.kept[...])?.kept == kept.kept)
        // A canvas that is not the picture's, animation, an unknown chunk.
        #expect(WebPFrame(riff(vp8x(flags: 0, width: 301, height: 200), lossless)[...]) == nil)
        #expect(WebPFrame(riff(vp8x(flags: 0x02, width: 300, height: 200), lossless)[...]) == nil)
        #expect(
            WebPFrame(riff(vp8x(flags: 0, width: 300, height: 200), chunk("ANIM", [0, 0, 0, 0, 0, 0]), lossless)[...])
                == nil)
        #expect(WebPFrame(riff(lossless, chunk("ZZZZ", [1, 2, 3, 4]))[...]) == nil)
        // Cut short, a RIFF length that is not the bytes', another form.
        let whole = riff(lossless)
        #expect(WebPFrame(whole.dropLast(2)) == nil)
        var wrongLength = whole
        wrongLength[4] &+= 2
        #expect(WebPFrame(wrongLength[...]) == nil)
        var wave = whole
        wave.replaceSubrange(8..<12, with: Array("WAVE".utf8))
        #expect(WebPFrame(wave[...]) == nil)
        // What the decoder writes (lossy, through libvips): nothing but the picture reaches the parent.
        let lossy = try PreviewReplyTests.made(.webp, width: 33, height: 17)
        let read = try #require(WebPFrame(lossy[...]))
        #expect(read.width == 33 && read.height == 17)
        #expect(!read.kept.contains(subsequence: Array("EXIF".utf8)))
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains {
            self[$0..<($0 + subsequence.count)].elementsEqual(subsequence)
        }
    }
}
