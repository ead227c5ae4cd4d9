import Foundation
import MediaFormats
import MediaKit
import TestSupport
import Testing

@Suite struct MediaFileTests {
    @Test(arguments: [
        "clip-h264.mp4", "portrait-rot90.mp4", "short-0.4s.mp4", "clip-hevc.mp4", "clip-vp9.webm", "clip.mov",
        "fade-in.mp4", "clip.mkv", "clip.avi", "clip.3gp", "audio.mp3", "audio.m4a", "audio.wav", "audio.ogg",
        "audio.flac",
    ])
    func durationMatchesWhatFFprobeMeasured(name: String) throws {
        let expected = try #require(Fixtures.expected(name)?.durationMs)
        let probe = try MediaFile(path: Fixtures.media(name), timeLimit: 10).probe()
        let duration = try #require(probe.durationMilliseconds)
        #expect(abs(duration - expected) <= 1, "\(name): \(duration) ms, expected \(expected) ms")
    }

    @Test(arguments: [
        "clip-h264.mp4", "portrait-rot90.mp4", "clip-hevc.mp4", "clip-vp9.webm", "clip.mkv", "clip.avi", "clip.3gp",
    ])
    func videoDisplaySizeMatches(name: String) throws {
        let expected = try #require(Fixtures.expected(name))
        let video = try #require(try MediaFile(path: Fixtures.media(name), timeLimit: 10).probe().video)
        #expect(video.width == expected.displayWidth)
        #expect(video.height == expected.displayHeight)
    }

    @Test func portraitVideoRotationIsClockwise90() throws {
        let video = try #require(try MediaFile(path: Fixtures.media("portrait-rot90.mp4")).probe().video)
        #expect(video.rotation == 90)
        #expect(video.storedWidth == 320 && video.storedHeight == 240)
    }

    @Test(arguments: ["audio.mp3", "audio.m4a", "audio.flac"])
    func audioHasNoVideoStream(name: String) throws {
        let probe = try MediaFile(path: Fixtures.media(name)).probe()
        #expect(probe.video == nil)
        #expect(probe.hasAudio)
    }

    @Test func truncatedMP4CannotBeOpened() {
        #expect(throws: AVError.self) { try MediaFile(path: Fixtures.media("truncated.mp4")) }
    }
}

/// Issue 13, item 7: files whose header gives no duration.
extension MediaFileTests {
    /// A live-recorded Matroska file (muxed to a pipe: no Duration, no Cues), of
    /// several MB: its duration comes from the timestamps at its end, read from a
    /// window at the end of the file, and a poster still comes from its start.
    @Test func durationOfMatroskaWithoutADurationElementIsReadFromItsEnd() throws {
        let directory = TemporaryDirectory("live-mkv")
        let path = directory.file("live.mkv")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = [
            "-c",
            "ffmpeg -v error -nostdin -f lavfi -t 40 -i testsrc2=s=320x240:r=25 -c:v libx264 -b:v 1500k -f matroska - > '\(path)'",
        ]
        try shell.run()
        shell.waitUntilExit()
        try #require(shell.terminationStatus == 0)
        let file = try MediaFile(path: path, timeLimit: 10)
        let probe = try file.probe()
        let duration = try #require(probe.durationMilliseconds)
        #expect(abs(duration - 40_000) <= 800, "\(duration) ms")
        let video = try #require(probe.video)
        let poster = try PosterFrame.thumbnail(
            of: file, video: video, durationMilliseconds: duration, spec: ThumbnailSpec())
        #expect(poster.width == 320 && poster.height == 240)
    }
}

extension MediaFileTests {
    /// A raw MPEG-2 video elementary stream saved as `.mpg` (no container, no
    /// timestamps): sniffed as MPEG video, its duration counted from the start.
    @Test func rawMPEGVideoNamedMpgIsAVideoWithADuration() throws {
        let directory = TemporaryDirectory("raw-mpeg")
        let path = directory.file("clip.mpg")
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        ffmpeg.arguments = [
            "-v", "error", "-nostdin", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=3", "-c:v", "mpeg2video", "-f",
            "mpeg2video", path,
        ]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(ContentSniffer.prefixLength))
        #expect(ContentSniffer.sniff(bytes, fileName: "clip.mpg").format == .mpegVideo)
        let file = try MediaFile(path: path, timeLimit: 10)
        let probe = try file.probe()
        #expect(
            abs((probe.durationMilliseconds ?? 0) - 3000) <= 60, "\(String(describing: probe.durationMilliseconds))")
        let video = try #require(probe.video)
        let poster = try PosterFrame.thumbnail(
            of: file, video: video, durationMilliseconds: probe.durationMilliseconds, spec: ThumbnailSpec())
        #expect(poster.width == 320 && poster.height == 240)
    }
}
