import CFFmpeg
import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

@Suite struct PosterFrameTests {
    static func poster(_ name: String, at seconds: Double = 1) throws -> Thumbnail {
        let file = try MediaFile(path: Fixtures.media(name), timeLimit: 10)
        let probe = try file.probe()
        let video = try #require(probe.video)
        return try PosterFrame.thumbnail(
            of: file, video: video, durationMilliseconds: probe.durationMilliseconds, at: seconds, spec: ThumbnailSpec()
        )
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

    @Test(arguments: [
        "clip-h264.mp4", "clip-hevc.mp4", "clip-vp9.webm", "clip.mov", "clip.mkv", "clip.avi", "clip.3gp",
    ])
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
            try PosterFrame.thumbnail(
                of: file, video: video, durationMilliseconds: probe.durationMilliseconds, spec: ThumbnailSpec(),
                pixelLimit: 320 * 240 - 1)
        }
        let allowed = try PosterFrame.thumbnail(
            of: file, video: video, durationMilliseconds: probe.durationMilliseconds, spec: ThumbnailSpec(),
            pixelLimit: 320 * 240)
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
        SmallVideo(
            codec: "libx264", width: 268, height: 156, fileExtension: "mp4", extraArguments: ["-pix_fmt", "yuv420p"]),
        SmallVideo(
            codec: "libx264", width: 264, height: 150, fileExtension: "mp4", extraArguments: ["-pix_fmt", "yuv420p"]),
        SmallVideo(
            codec: "libx264", width: 2, height: 2, fileExtension: "mp4", extraArguments: ["-pix_fmt", "yuv420p"]),
        SmallVideo(
            codec: "libx264", width: 17, height: 9, fileExtension: "mp4", extraArguments: ["-pix_fmt", "yuv444p"]),
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
        ffmpeg.arguments =
            [
                "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                "testsrc=s=\(video.width)x\(video.height):d=1:r=10",
                "-c:v", video.codec,
            ] + video.extraArguments + [path]
        ffmpeg.standardOutput = FileHandle.nullDevice
        ffmpeg.standardError = FileHandle.nullDevice
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0, "ffmpeg could not make \(video)")

        let file = try MediaFile(path: path, timeLimit: 10)
        let probe = try file.probe()
        let stream = try #require(probe.video)
        let spec = ThumbnailSpec()
        let thumbnail = try PosterFrame.thumbnail(
            of: file, video: stream, durationMilliseconds: probe.durationMilliseconds, spec: spec)
        // Shrunk to fit the spec's longest side, never enlarged.
        let scale = min(1, Double(spec.size) / Double(max(video.width, video.height)))
        #expect(thumbnail.width == max(1, Int((Double(video.width) * scale).rounded())))
        #expect(thumbnail.height == max(1, Int((Double(video.height) * scale).rounded())))
        #expect(!thumbnail.jpeg.isEmpty)
    }
}

/// Issue 13, items 6 and 7: a black first keyframe is passed over in every
/// container, with and without an index, and streams without one (Matroska
/// without cues, MPEG-PS/TS) are walked forward, never reseeked to a keyframe
/// already decoded.
extension PosterFrameTests {
    /// The poster chosen in `path`, its stream, the stream's time base and start time.
    static func choose(_ path: String, at seconds: Double = 1) throws -> (
        PosterFrame.Choice, VideoStreamInfo, Double, Int64
    ) {
        let file = try MediaFile(path: path, timeLimit: 10)
        let probe = try file.probe()
        let video = try #require(probe.video)
        let choice = try PosterFrame.choose(
            of: file, video: video, durationMilliseconds: probe.durationMilliseconds, at: seconds, size: 360,
            pixelLimit: nil)
        let stream = file.stream(video.index).pointee
        return (choice, video, av_q2d(stream.time_base), stream.start_time)
    }

    /// The poster as a user sees it: upright (red marker top-left) and not black.
    static func expectUprightAndBright(_ thumbnail: Thumbnail, sourceLocation: SourceLocation = #_sourceLocation) throws
    {
        let directory = TemporaryDirectory()
        let path = try directory.add("p.jpg", bytes: thumbnail.jpeg)
        #expect(try ImageInspector.mean(path) > 40, sourceLocation: sourceLocation)
        let corner = try ImageInspector.pixel(path, x: thumbnail.width * 3 / 100, y: thumbnail.height * 3 / 100)
        #expect(ImageInspector.isRed(corner), "top-left pixel \(corner)", sourceLocation: sourceLocation)
    }

    @Test(arguments: [
        "black-first-key.mp4", "black-first-key-cues.mkv", "black-first-key-nocues.mkv", "black-first-key.webm",
        "black-first-key.ts",
    ])
    func blackFirstKeyframeIsPassedOver(name: String) throws {
        let expected = try #require(Fixtures.fidelityExpected(name))
        let keyframes = try #require(expected.keyframesMs)
        let (choice, video, timeBase, start) = try Self.choose(Fixtures.fidelity(name))
        // The second keyframe (≈2.1 s), not the first (black) one, nearer to 1 s.
        let shownMs = Double(choice.time - start) * timeBase * 1000
        #expect(abs(shownMs - (keyframes[1] - keyframes[0])) <= 50, "poster at \(shownMs) ms")
        #expect(choice.picture.meanLuma > 40)
        // Each keyframe decoded at most once: the black one (unless the bright one is
        // as near the target), then the bright one.
        #expect(
            choice.decodedTimes.count <= 2 && Set(choice.decodedTimes).count == choice.decodedTimes.count,
            "decoded \(choice.decodedTimes)")
        if name.hasSuffix(".mp4") {
            #expect(choice.seeks == choice.decodedTimes.count)  // indexed: one seek per keyframe
        } else {
            // Walked from its start: no seek, or one rewind after the probe read its end for a duration.
            #expect(
                choice.seeks <= 1, "a stream without a complete index is walked, not reseeked (\(choice.seeks) seeks)")
        }
        let file = try MediaFile(path: Fixtures.fidelity(name), timeLimit: 10)
        let probe = try file.probe()
        try Self.expectUprightAndBright(
            try PosterFrame.thumbnail(
                of: file, video: video, durationMilliseconds: probe.durationMilliseconds, spec: ThumbnailSpec()))
    }

    @Test(arguments: ["mpeg1-ps.mpg", "mpeg2-ps.mpg", "mpeg2-ts-h264.ts", "avchd.m2ts", "avchd.mts"])
    func programAndTransportStreamsGetAPosterAndADuration(name: String) throws {
        let expected = try #require(Fixtures.fidelityExpected(name))
        let file = try MediaFile(path: Fixtures.fidelity(name), timeLimit: 10)
        let probe = try file.probe()
        let video = try #require(probe.video)
        #expect(video.width == expected.displayWidth && video.height == expected.displayHeight)
        let duration = try #require(probe.durationMilliseconds)
        let expectedDuration = try #require(expected.durationMs)
        #expect(
            abs(duration - expectedDuration) <= max(50, expectedDuration * 0.02),
            "\(duration) ms, expected \(expectedDuration)")
        try Self.expectUprightAndBright(
            try PosterFrame.thumbnail(of: file, video: video, durationMilliseconds: duration, spec: ThumbnailSpec()))
    }

    /// Makes a video with ffmpeg: `black` seconds of black, then a bright test
    /// picture with a red square at the top-left, one keyframe a second.
    static func makeVideo(_ path: String, seconds: Int, black: Double, arguments: [String]) throws {
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        let picture =
            "testsrc2=s=240x160:r=10:d=\(seconds),drawbox=x=0:y=0:w=24:h=24:color=0xDC1818:t=fill,drawbox=enable='lt(t,\(black))':color=black:t=fill"
        ffmpeg.arguments =
            [
                "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", picture, "-g", "10", "-keyint_min", "10",
                "-sc_threshold", "0",
            ] + arguments + [path]
        ffmpeg.standardOutput = FileHandle.nullDevice
        ffmpeg.standardError = FileHandle.nullDevice
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0, "ffmpeg could not make \(path)")
    }

    /// Three black keyframes after the target: each is decoded once, on the way
    /// forward, and the fourth (bright) one is the poster.
    @Test(arguments: [
        ("ts", ["-c:v", "libx264", "-bf", "2", "-f", "mpegts"]), ("mpg", ["-c:v", "mpeg2video", "-f", "vob"]),
        ("mkv", ["-c:v", "libx264", "-f", "matroska"]),
    ])
    func aLongBlackIntroIsWalkedThroughOnce(ext: String, arguments: [String]) throws {
        let directory = TemporaryDirectory("poster-walk")
        let path = directory.file("intro.\(ext)")
        try Self.makeVideo(path, seconds: 8, black: 3.5, arguments: arguments)
        let (choice, _, timeBase, start) = try Self.choose(path)
        let seconds = { (time: Int64) in Double(time - start) * timeBase }
        // The first keyframe at or after 3.5 s (encoders place them about every second).
        #expect(choice.picture.meanLuma > 40)
        #expect((3.5...4.6).contains(seconds(choice.time)), "poster at \(seconds(choice.time)) s")
        #expect(choice.seeks == 0, "\(choice.seeks) seeks")
        // From the keyframe nearest 1 s on, each black keyframe decoded once, in order.
        let decoded = choice.decodedTimes.map(seconds)
        #expect(
            decoded == decoded.sorted() && Set(decoded).count == decoded.count && decoded.count >= 3,
            "decoded \(decoded)")
        #expect(decoded.first.map { abs($0 - 1) <= 0.6 } == true, "decoded \(decoded)")
    }

    /// A target far into a stream without an index is reached by a timestamp
    /// search, which lands on a frame (the keyframe nearest the target), not on nothing.
    @Test(arguments: [("ts", ["-c:v", "libx264", "-f", "mpegts"]), ("mpg", ["-c:v", "mpeg2video", "-f", "vob"])])
    func seekingWithoutAnIndexLandsOnAFrame(ext: String, arguments: [String]) throws {
        let directory = TemporaryDirectory("poster-seek")
        let path = directory.file("long.\(ext)")
        try Self.makeVideo(path, seconds: 40, black: 0, arguments: arguments)
        let file = try MediaFile(path: path, timeLimit: 10)
        let probe = try file.probe()
        let video = try #require(probe.video)
        let stream = file.stream(video.index).pointee
        let choice = try PosterFrame.choose(
            of: file, video: video, durationMilliseconds: probe.durationMilliseconds, at: 25, size: 360, pixelLimit: nil
        )
        let shown = Double(choice.time - stream.start_time) * av_q2d(stream.time_base)
        #expect(abs(shown - 25) <= 1, "poster at \(shown) s")
        #expect(choice.decodedTimes.count == 1 && choice.seeks == 1)
    }
}
