import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

/// Issue 13, items 9 and 10: AAC after an ID3v2 tag is AAC, and audio with cover
/// art gets a thumbnail from the attached picture while staying audio with its duration.
@Suite struct AudioCoverTests {
    static func decode(
        _ path: String, _ format: MediaFormat, spec: ThumbnailSpec? = ThumbnailSpec(), pixelLimit: Int = 100_000_000
    ) throws(MediaError) -> DecodedMedia {
        InProcessDecoder().prepare()
        return try InProcessDecoder().decode(
            DecodeRequest(
                path: path, label: (path as NSString).lastPathComponent, format: format, pixelLimit: pixelLimit,
                thumbnail: spec))
    }

    @Test(arguments: [
        ("cover-id3-apic.mp3", MediaFormat.mp3), ("cover-covr.m4a", .m4a), ("cover-picture.flac", .flac),
        ("cover-vorbis-picture.ogg", .ogg),
        ("adts-id3-apic.aac", .aac),
    ])
    func coverArtIsTheThumbnailAndTheFileStaysAudio(name: String, format: MediaFormat) throws {
        let expected = try #require(Fixtures.fidelityExpected(name))
        let cover = try #require(expected.cover)
        let decoded = try Self.decode(Fixtures.fidelity(name), format)
        #expect(decoded.facts.kind == .audio)
        #expect(decoded.facts.width == nil && decoded.facts.height == nil, "the cover's size is not the file's")
        let duration = try #require(decoded.facts.durationMilliseconds)
        let expectedDuration = try #require(expected.durationMs)
        #expect(
            abs(duration - expectedDuration) <= max(50, expectedDuration * 0.02),
            "\(duration) ms, expected \(expectedDuration)")
        guard case .made(let thumbnail)? = decoded.thumbnail else {
            Issue.record("no cover thumbnail: \(String(describing: decoded.thumbnail))")
            return
        }
        #expect(thumbnail.width == cover.width && thumbnail.height == cover.height)
        let directory = TemporaryDirectory("cover")
        let path = try directory.add("c.jpg", bytes: thumbnail.jpeg)
        #expect(ImageInspector.isRed(try ImageInspector.pixel(path, x: 4, y: 4)), "the cover is upright")
        #expect(try ImageInspector.mean(path) > 40)
    }

    @Test func audioWithoutCoverArtHasNoThumbnailAndNoFailure() throws {
        let decoded = try Self.decode(Fixtures.media("audio.mp3"), .mp3)
        #expect(decoded.facts.kind == .audio)
        #expect(decoded.thumbnail == nil)
    }

    /// A cover larger than the pixel limit is never decoded (libav's `max_pixels`
    /// bounds even the probe's look at it: its size stays unknown, so it is not
    /// offered as a cover); the audio is still read.
    @Test func aCoverOverThePixelLimitIsNotDecodedButTheAudioIsRead() throws {
        let decoded = try Self.decode(Fixtures.fidelity("cover-covr.m4a"), .m4a, pixelLimit: 100 * 100)
        #expect(decoded.facts.kind == .audio && decoded.facts.durationMilliseconds != nil)
        if case .made? = decoded.thumbnail { Issue.record("a cover over the limit was decoded") }
    }

    /// ID3v2 then ADTS: the sniffer reads past the tag (longer than its prefix
    /// here, because of the cover) and says AAC; libav reads it as AAC.
    @Test func adtsAfterAnID3TagIsAAC() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.fidelity("adts-id3-apic.aac")))
        let prefix = Array(data.prefix(ContentSniffer.prefixLength))
        let offset = try #require(ContentSniffer.continuationOffset(prefix))
        let sniffed = ContentSniffer.sniff(
            prefix, fileName: "song.mp3",
            continuation: Array(data.dropFirst(offset).prefix(ContentSniffer.prefixLength)))
        #expect(sniffed.format == .aac && sniffed.fileExtension == "aac" && sniffed.mimeType == "audio/aac")
        let probe = try MediaFile(path: Fixtures.fidelity("adts-id3-apic.aac")).probe()
        #expect(probe.container == "aac")
    }
}
