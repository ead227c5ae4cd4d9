import Foundation
import MediaKit
import TestSupport
import Testing
import MediaFormats

@Suite struct PosterFrameTests {
    static func poster(_ name: String, at seconds: Double = 1) throws -> Thumbnail {
        let file = try MediaFile(path: Fixtures.media(name), timeLimit: 10)
        let probe = try file.probe()
        let video = try #require(probe.video)
        return try PosterFrame.thumbnail(of: file, video: video, durationMilliseconds: probe.durationMilliseconds, at: seconds, spec: ThumbnailSpec())
    }

    static func meanBrightness(_ jpeg: [UInt8]) throws -> Double {
        let dir = TemporaryDirectory()
        let path = try dir.add("t.jpg", bytes: jpeg)
        return try ImageInspector.mean(path)
    }

    @Test func fadeInSkipsBlackKeyframes() throws {
        let thumbnail = try Self.poster("fade-in.mp4")
        #expect(try Self.meanBrightness(thumbnail.jpeg) > 100)
    }
}

extension PosterFrameTests {
    @Test func shortClipStillGetsAPoster() throws {
        let thumbnail = try Self.poster("short-0.4s.mp4")
        #expect(thumbnail.width == 320 && thumbnail.height == 240)
    }

    @Test func portraitPosterIsUpright() throws {
        let thumbnail = try Self.poster("portrait-rot90.mp4")
        #expect(thumbnail.width == 240 && thumbnail.height == 320)
        let directory = TemporaryDirectory()
        let path = try directory.add("p.jpg", bytes: thumbnail.jpeg)
        #expect(ImageInspector.isRed(try ImageInspector.pixel(path, x: 3, y: 3)))
    }

    @Test(arguments: ["clip-h264.mp4", "clip-hevc.mp4", "clip-vp9.webm", "clip.mov", "clip.mkv", "clip.avi", "clip.3gp"])
    func everyCodecGivesAPoster(name: String) throws {
        let expected = try #require(Fixtures.expected(name))
        let thumbnail = try Self.poster(name)
        #expect(thumbnail.width == expected.displayWidth)
        #expect(thumbnail.height == expected.displayHeight)
    }
}

extension PosterFrameTests {
    /// libav's own frame-size limit: a frame larger than the limit is never allocated.
    @Test func framesOverThePixelLimitAreNotDecoded() throws {
        let file = try MediaFile(path: Fixtures.media("clip-h264.mp4"), timeLimit: 10)
        let probe = try file.probe()
        let video = try #require(probe.video)
        #expect(throws: (any Error).self) {
            try PosterFrame.thumbnail(of: file, video: video, durationMilliseconds: probe.durationMilliseconds, spec: ThumbnailSpec(), pixelLimit: 320 * 240 - 1)
        }
        let allowed = try PosterFrame.thumbnail(of: file, video: video, durationMilliseconds: probe.durationMilliseconds, spec: ThumbnailSpec(), pixelLimit: 320 * 240)
        #expect(allowed.width == 320)
    }
}
