import DecoderHelperKit
import Foundation
import MediaFormats
import ShareIngest
import TestSupport
import Testing

@testable import DecoderIsolation

/// The parent's check of the gain maps a helper returns with an Ultra HDR
/// photo's thumbnail and JPEG previews, and with an iPhone HDR HEIC's and an
/// AVIF's (issue 54; GainMapReplyCheck.swift): an honest reply passes, and each
/// lie is refused with what is wrong.
@Suite struct GainMapReplyTests {
    /// The photos whose replies are checked: an Ultra HDR JPEG, an iPhone HEIC (Apple's map, turned by `irot`),
    /// an AVIF (a `tmap` with an AV1 map).
    static let sources = ["spatial/ultrahdr-gradient.jpg", "spatial/apple-hdr-irot.heic", "spatial/sdr-tmap.avif"]

    static func request(_ spec: ThumbnailSpec?, source: String) -> DecodeRequest {
        let format: MediaFormat = source.hasSuffix(".heic") ? .heic : source.hasSuffix(".avif") ? .avif : .jpeg
        return DecodeRequest(path: Fixtures.testdata(source), label: source, format: format, thumbnail: spec)
    }

    static var spec: ThumbnailSpec {
        var spec = ThumbnailSpec(size: 160)
        spec.previews = PreviewSizes(sizes: [320], format: .jpeg)
        return spec
    }

    /// What a helper sends for `source`, framed and split again.
    static func honest(_ source: String) throws -> HelperReply {
        let decoded = try Isolation.none.decoder().decode(request(spec, source: source))
        let outcome = Result<DecodedMedia, MediaError>.success(decoded)
        let body = try HelperMessage.resultBody(WireResult(outcome), jpeg: WireResult.jpeg(of: outcome))
        return try HelperReply.parse(body[...])
    }

    static func refusal(_ reply: HelperReply, source: String) -> String? {
        do {
            _ = try ReplyCheck.validate(reply, for: request(spec, source: source), fileSize: 100_000)
            return nil
        } catch {
            return error.description
        }
    }

    static func with(_ reply: HelperReply, _ change: (inout WireResult) -> Void) -> HelperReply {
        var result = reply.result
        change(&result)
        return HelperReply(result: result, jpeg: reply.jpeg, compatible: reply.compatible, previews: reply.previews)
    }

    @Test(arguments: sources) func anHonestGainMapPasses(source: String) throws {
        let reply = try Self.honest(source)
        let wire = try #require(reply.result.thumbnailGainMap, "the helper sent no gain map")
        #expect(reply.result.previews?.first?.gainMap != nil)
        #expect(Self.refusal(reply, source: source) == nil)
        let decoded = try ReplyCheck.validate(reply, for: Self.request(Self.spec, source: source), fileSize: 100_000)
            .get()
        guard case .made(let thumbnail) = decoded.thumbnail else {
            Issue.record("no thumbnail")
            return
        }
        // The Ultra HDR JPEG's map is half its base on each side, and so is its thumbnail's; an iPhone HEIC's and an AVIF's a quarter.
        let scale = source.hasSuffix(".jpg") ? 0.5 : 0.25
        #expect(
            thumbnail.gainMap?.width == Int((Double(thumbnail.width) * scale).rounded())
                && thumbnail.gainMap?.height == Int((Double(thumbnail.height) * scale).rounded()))
        #expect(thumbnail.gainMap?.metadata == wire.metadata)
        #expect(thumbnail.previews?.first?.gainMap != nil)
    }

    @Test(arguments: sources) func liesAreRefused(source: String) throws {
        let reply = try Self.honest(source)
        let wire = try #require(reply.result.thumbnailGainMap)
        var larger = wire
        (larger.width, larger.height) = (wire.width * 4, wire.height * 4)
        var nan = wire
        nan.metadata.gainMapMax = .nan
        var inverted = wire
        inverted.metadata.gainMapMin = 3
        var bigger = wire
        bigger.width += 1
        var wider = wire
        wider.width = 8
        var notJPEG = wire
        notJPEG.jpeg = Data("not a picture".utf8).base64EncodedString()
        var huge = wire
        huge.metadata.hdrCapacityMax = 40
        // A real JPEG of the thumbnail's width and half the map's height, claimed as what it is: the wrong shape.
        let directory = TemporaryDirectory("gain-map-reply")
        let squashed = directory.file("squashed.jpg")
        try ImageInspector.vips(["black", squashed, String(wire.width), String(max(1, wire.height / 2))])
        var flat = wire
        flat.height = max(1, wire.height / 2)
        flat.jpeg = try Data(contentsOf: URL(fileURLWithPath: squashed)).base64EncodedString()
        let cases: [(String, HelperReply)] = [
            (
                "a \(wire.width)×\(flat.height) gain map (said \(wire.width)×\(flat.height)) of a",
                Self.with(reply) { $0.thumbnailGainMap = flat }
            ),
            ("gain map metadata that is not finite", Self.with(reply) { $0.thumbnailGainMap = nan }),
            ("a gain map range of 3.0 to", Self.with(reply) { $0.thumbnailGainMap = inverted }),
            ("an HDR capacity of", Self.with(reply) { $0.thumbnailGainMap = huge }),
            (
                "a \(wire.width)×\(wire.height) gain map (said \(wire.width + 1)×",
                Self.with(reply) { $0.thumbnailGainMap = bigger }
            ),
            ("a \(wire.width)×\(wire.height) gain map (said 8×", Self.with(reply) { $0.thumbnailGainMap = wider }),
            ("gain map bytes that are not a JPEG", Self.with(reply) { $0.thumbnailGainMap = notJPEG }),
            (
                "a \(wire.width)×\(wire.height) gain map (said \(wire.width * 4)×",
                Self.with(reply) { $0.thumbnailGainMap = larger }
            ),
            ("a gain map of a picture that has none", Self.with(reply) { $0.facts?.gainMap = nil }),
        ]
        for (expected, lie) in cases {
            let got = Self.refusal(lie, source: source)
            #expect(got?.hasPrefix(expected) == true, "\(expected): \(got ?? "accepted")")
        }
    }

    /// A pipeline with `"gainMaps": false` asks for none: the helper makes none,
    /// and a map sent anyway is refused.
    @Test(arguments: sources) func aGainMapNobodyAskedForIsRefused(source: String) throws {
        var spec = Self.spec
        spec.gainMaps = false
        let decoded = try Isolation.none.decoder().decode(Self.request(spec, source: source))
        guard case .made(let thumbnail) = decoded.thumbnail else {
            Issue.record("no thumbnail")
            return
        }
        #expect(thumbnail.gainMap == nil && thumbnail.previews?.allSatisfy { $0.gainMap == nil } == true)
        #expect(decoded.facts.gainMap == true, "the photo still has its map: \(decoded.facts)")
        let reply = try Self.honest(source)
        do {
            _ = try ReplyCheck.validate(reply, for: Self.request(spec, source: source), fileSize: 100_000)
            Issue.record("a gain map nobody asked for was accepted")
        } catch {
            #expect(error.description.hasPrefix("a gain map nobody asked for"), "\(error)")
        }
    }
}
