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

/// Tiny and odd-size videos, made with ffmpeg at test time: libswscale's SIMD
/// converters write whole vectors, and a frame converted at its own size used
/// to overrun an RGB buffer of exactly `width × height × 3` bytes (a heap
/// corruption that aborted the process: "malloc(): corrupted top size").
extension PosterFrameTests {
    struct SmallVideo: CustomStringConvertible, Sendable {
        let codec: String
        let width: Int
        let height: Int
        let fileExtension: String
        var extraArguments: [String] = []
        var description: String { "\(codec) \(width)×\(height)" }
    }

    static let smallVideos: [SmallVideo] = [
        SmallVideo(codec: "libx264", width: 268, height: 156, fileExtension: "mp4", extraArguments: ["-pix_fmt", "yuv420p"]),
        SmallVideo(codec: "libx264", width: 264, height: 150, fileExtension: "mp4", extraArguments: ["-pix_fmt", "yuv420p"]),
        SmallVideo(codec: "libx264", width: 2, height: 2, fileExtension: "mp4", extraArguments: ["-pix_fmt", "yuv420p"]),
        SmallVideo(codec: "libx264", width: 17, height: 9, fileExtension: "mp4", extraArguments: ["-pix_fmt", "yuv444p"]),
        SmallVideo(codec: "libvpx", width: 6, height: 4, fileExtension: "webm"),
        SmallVideo(codec: "libvpx", width: 1, height: 1, fileExtension: "webm"),
        SmallVideo(codec: "mjpeg", width: 268, height: 156, fileExtension: "avi"),
        SmallVideo(codec: "flv", width: 268, height: 156, fileExtension: "flv"),
        SmallVideo(codec: "mpeg4", width: 359, height: 641, fileExtension: "mp4"),
        // A 1 s MPEG-PS clip: its target lies past the last keyframe, and its index holds non-key timestamps.
        SmallVideo(codec: "mpeg2video", width: 268, height: 156, fileExtension: "mpg"),
    ]

    @Test(arguments: smallVideos)
    func smallAndOddSizeVideosGetAPosterOfTheirSize(video: SmallVideo) throws {
        let directory = TemporaryDirectory("poster-small")
        let path = directory.file("v.\(video.fileExtension)")
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        ffmpeg.arguments = ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=\(video.width)x\(video.height):d=1:r=10",
            "-c:v", video.codec] + video.extraArguments + [path]
        ffmpeg.standardOutput = FileHandle.nullDevice
        ffmpeg.standardError = FileHandle.nullDevice
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0, "ffmpeg could not make \(video)")

        let file = try MediaFile(path: path, timeLimit: 10)
        let probe = try file.probe()
        let stream = try #require(probe.video)
        let spec = ThumbnailSpec()
        let thumbnail = try PosterFrame.thumbnail(of: file, video: stream, durationMilliseconds: probe.durationMilliseconds, spec: spec)
        // Shrunk to fit the spec's longest side, never enlarged.
        let scale = min(1, Double(spec.size) / Double(max(video.width, video.height)))
        #expect(thumbnail.width == max(1, Int((Double(video.width) * scale).rounded())))
        #expect(thumbnail.height == max(1, Int((Double(video.height) * scale).rounded())))
        #expect(!thumbnail.jpeg.isEmpty)
    }
}
