import Foundation
import MediaKit
import TestSupport
import Testing
import MediaFormats

@Suite struct MediaFileTests {
    @Test(arguments: [
        "clip-h264.mp4", "portrait-rot90.mp4", "short-0.4s.mp4", "clip-hevc.mp4", "clip-vp9.webm", "clip.mov",
        "fade-in.mp4", "clip.mkv", "clip.avi", "clip.3gp", "audio.mp3", "audio.m4a", "audio.wav", "audio.ogg", "audio.flac",
    ])
    func durationMatchesWhatFFprobeMeasured(name: String) throws {
        let expected = try #require(Fixtures.expected(name)?.durationMs)
        let probe = try MediaFile(path: Fixtures.media(name), timeLimit: 10).probe()
        let duration = try #require(probe.durationMilliseconds)
        #expect(abs(duration - expected) <= 1, "\(name): \(duration) ms, expected \(expected) ms")
    }

    @Test(arguments: ["clip-h264.mp4", "portrait-rot90.mp4", "clip-hevc.mp4", "clip-vp9.webm", "clip.mkv", "clip.avi", "clip.3gp"])
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
