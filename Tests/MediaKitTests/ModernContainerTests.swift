import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

/// Issue 23, items 3 and 4: containers and posters (what a user sees of each
/// fixture is checked end to end by `ModernMediaTests`; these check how).
@Suite struct ModernContainerTests {
    static func modern(_ path: String) -> String {
        Fixtures.packageRoot.appendingPathComponent("testdata/modern/\(path)").path
    }
    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: modern(path))))
    }

    /// A live encoder's fragmented MP4 lasts until its last fragment ends (not
    /// the 39.8 hours its all-ones durations say to libavformat); one with a
    /// `mehd` lasts what the `mehd` says, fragments unread.
    @Test func fragmentedMP4Duration() throws {
        let live = try #require(FragmentedDuration.seconds(try Self.bytes("video/fragmented-no-mehd.mp4")))
        #expect(abs(live - 32.0 / 30) < 0.001, "\(live)")
        var stated = try Self.bytes("video/fragmented-mehd.mp4")
        #expect(abs(try #require(FragmentedDuration.seconds(stated)) - 32.0 / 30) < 0.001)
        // The mehd, not the fragments: a mehd of 45000 at 30000 per second is 1.5 s.
        let mehd = try #require(stated.indices.first { stated[$0..<($0 + 4)].elementsEqual(Array("mehd".utf8)) })
        stated.replaceSubrange((mehd + 8)..<(mehd + 12), with: [0, 0, 0xAF, 0xC8])
        #expect(FragmentedDuration.seconds(stated) == 1.5)
        // Not fragmented: nothing to say.
        #expect(
            FragmentedDuration.seconds(
                [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("clip-h264.mp4"))))) == nil)
    }

    /// WebM or Matroska: the EBML header's DocType decides, not the letters "webm"
    /// anywhere in the first bytes; a Matroska DocType named `.webm` whose every
    /// track is one WebM allows stays WebM (issue 33, item 6).
    @Test func webmAndMatroskaByDocType() throws {
        let titled = try Self.bytes("video/matroska-titled-webm.mkv").prefix(ContentSniffer.prefixLength)
        // Its one track is VP9, titled "webm": by its name alone it is Matroska.
        #expect(ContentSniffer.sniff(titled, fileName: "clip.mkv").format == .mkv)
        #expect(ContentSniffer.sniff(titled, fileName: "clip.mkv").fileExtension == "mkv")
        #expect(ContentSniffer.sniff(titled, fileName: "clip").fileExtension == "mkv")
        #expect(ContentSniffer.sniff(titled, fileName: "clip.webm").fileExtension == "webm")
        let webm = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("clip-vp9.webm")))).prefix(
            ContentSniffer.prefixLength)
        #expect(ContentSniffer.sniff(webm, fileName: "clip.mkv").format == .webm)
        #expect(ContentSniffer.ebmlDocType(Array(webm)) == "webm")
    }

    /// Dolby Vision 10: AV1 under `dav1`, which libavformat 5.1 leaves without a
    /// codec, is an AV1 video stream here.
    @Test func dolbyVisionProfile10IsAV1() throws {
        let media = try MediaFile(path: Self.modern("hdr/dolby-vision-10.1-av1.mp4"))
        let probe = try media.probe()
        #expect(probe.video?.codec == "av1")
        let hints = ColourDescription.StreamHints(media.stream(try #require(probe.video).index))
        #expect(hints.dolbyVision == ColourDescription.DolbyVision(profile: 10, compatibility: 1))
    }

    /// Posters that keyframes alone do not give: the stream is decoded forward to
    /// a frame that is not black, at or after the target where there is one.
    @Test(arguments: ["video/black-only-keyframe-hevc.mp4", "video/edit-list-preroll.mp4"])
    func postersDecodedForward(_ path: String) throws {
        let media = try MediaFile(path: Self.modern(path))
        let probe = try media.probe()
        let video = try #require(probe.video)
        let choice = try PosterFrame.choose(
            of: media, video: video, durationMilliseconds: probe.durationMilliseconds, at: 1, size: 360, pixelLimit: nil
        )
        #expect(choice.picture.meanLuma >= PosterFrame.blackThreshold, "\(choice.picture.meanLuma)")
        // Not the black keyframe, nor a frame before the edit list's start.
        #expect(choice.time > 0, "\(choice.time)")
    }

    /// AVIF `irot` (Link-U's real files): the displayed size and the thumbnail are
    /// libheif's (which applies the transforms itself), our item parser's facts
    /// agree with it.
    @Test(arguments: ["avif/kimono.rotate90.avif", "avif/kimono.mirror-vertical.rotate270.crop.avif"])
    func avifIrotIsShownAsLibheifShowsIt(_ path: String) throws {
        let ours = try HEIFDecodingTests.decode(Self.modern(path))
        let size = try LibheifDecoder.size(of: try Self.bytes(path))
        #expect(ours.facts.width == size.width && ours.facts.height == size.height)
        let reference = try HEIFDecodingTests.decode(Self.modern(path), paths: .libheif)
        try #require(
            ours.thumbnail.width == reference.thumbnail.width && ours.thumbnail.height == reference.thumbnail.height)
        let difference = HEIFDecodingTests.meanAbsoluteDifference(
            try HEIFDecodingTests.pixels(ours.thumbnail), try HEIFDecodingTests.pixels(reference.thumbnail))
        #expect(difference.allSatisfy { $0 < 3.0 }, "\(difference)")
    }

    /// A JPEG XL libvips 8.14 refuses (CMYK with layers) is read by libjxl through
    /// libavcodec: its thumbnail is close to the conformance suite's reference
    /// rendering (mean 241.6 of 255 on white; the black plate is not applied).
    @Test func jpegXLWithCMYKLayers() throws {
        InProcessDecoder().prepare()
        let decoded = try InProcessDecoder().decode(
            DecodeRequest(
                path: Self.modern("jxl/cmyk-layers.jxl"), label: "cmyk-layers.jxl", format: .jxl,
                thumbnail: ThumbnailSpec()))
        #expect(decoded.facts.kind == .image && decoded.facts.width == 512 && decoded.facts.height == 512)
        guard case .made(let thumbnail)? = decoded.thumbnail else {
            Issue.record("no thumbnail")
            return
        }
        let pixels = try HEIFDecodingTests.pixels(thumbnail)
        let mean = Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count)
        #expect(abs(mean - 241.6) < 6, "\(mean)")
        #expect(DecoderRoute(.jxl).libraries == ["libavcodec", DecoderChainTests.vips])
    }
}
