import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import DecoderIsolation

/// A helper's moment facts are claims like any other: the parent accepts an
/// embedded video only inside the file as it measured it, identifiers only of
/// Apple's alphabet, dates only within a sane span; a lie fails the item as
/// `decoderMisbehaved` and stops the helper.
@Suite struct MomentReplyTests {
    /// A request for a JPEG, or, with `kind` video or audio, an MP4 (the
    /// parent checks a reply's kind against the sniffed format).
    static func request(moments: Bool = true, kind: MediaFacts.Kind = .image) -> DecodeRequest {
        let video = kind == .video || kind == .audio
        return DecodeRequest(
            path: "/container/x", label: "x", format: video ? .mp4 : .jpeg, pixelLimit: 100_000_000, moments: moments)
    }

    static func reply(_ moments: MomentFacts?, kind: MediaFacts.Kind = .image) -> HelperReply {
        var result = WireResult(
            .success(
                DecodedMedia(
                    facts: MediaFacts(
                        kind: kind, width: 640, height: 480, durationMilliseconds: kind == .video ? 2000 : nil))))
        result.moments = moments
        return HelperReply(result: result, jpeg: [])
    }

    static func refusal(_ reply: HelperReply, _ request: DecodeRequest? = nil, fileSize: Int? = 10_000) -> String? {
        do {
            _ = try ReplyCheck.validate(
                reply, for: request ?? Self.request(kind: reply.result.facts?.kind ?? .image), fileSize: fileSize)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func honestMomentsPass() throws {
        let moments = MomentFacts(
            embeddedVideo: EmbeddedVideo(layout: .containerDirectory, offset: 4000, length: 6000),
            declaresMotionPhoto: true,
            contentIdentifier: "5A8B1D0E-3C2F-4E61-9B7A-0C4D2E8F1A36",
            captureTime: CaptureTime(local: 1_714_564_800.25, utc: 1_714_557_600.25))
        #expect(Self.refusal(Self.reply(moments)) == nil)
        let decoded = try ReplyCheck.validate(Self.reply(moments), for: Self.request(), fileSize: 10_000).get()
        #expect(decoded.moments == moments)
        #expect(Self.refusal(Self.reply(MomentFacts(stillImageTime: 1.6), kind: .video)) == nil)
        #expect(Self.refusal(Self.reply(MomentFacts(burstIdentifier: "6E3F0D4A-1C2B-4E5F-9A8B-7C6D5E4F3A2B"))) == nil)
        #expect(
            Self.refusal(Self.reply(MomentFacts(burstIdentifier: "6E3F0D4A"), kind: .video))?.hasPrefix(
                "the burst identifier") == true, "a video is no burst's frame")
        #expect(Self.refusal(Self.reply(MomentFacts(position: CapturePosition(latitude: -90, longitude: 180)))) == nil)
    }

    @Test(arguments: [
        (
            "an embedded video at bytes 4000 to 10001 of a file of 10000 bytes",
            MomentFacts(embeddedVideo: EmbeddedVideo(layout: .appended, offset: 4000, length: 6001))
        ),
        (
            "an embedded video at bytes -1 to 99 of a file of 10000 bytes",
            MomentFacts(embeddedVideo: EmbeddedVideo(layout: .appended, offset: -1, length: 100))
        ),
        (
            "an embedded video at bytes 100 to 110 of a file of 10000 bytes",
            MomentFacts(embeddedVideo: EmbeddedVideo(layout: .appended, offset: 100, length: 10))
        ),
        (
            "an embedded video at bytes 1 to (overflow)",
            MomentFacts(embeddedVideo: EmbeddedVideo(layout: .appended, offset: 1, length: Int.max))
        ),
        ("the content identifier \" ]0;owned \"", MomentFacts(contentIdentifier: "\u{1B}]0;owned\u{7}")),
        ("the content identifier", MomentFacts(contentIdentifier: String(repeating: "A", count: 101))),
        ("the content identifier", MomentFacts(contentIdentifier: "")),
        ("the burst identifier \" ]0;owned \"", MomentFacts(burstIdentifier: "\u{1B}]0;owned\u{7}")),
        ("the burst identifier", MomentFacts(burstIdentifier: String(repeating: "B", count: 101))),
        ("a capture time of", MomentFacts(captureTime: CaptureTime(local: 1e12))),
        ("a capture time of nan s", MomentFacts(captureTime: CaptureTime(utc: .nan))),
        ("a still-image time of 1.0 s", MomentFacts(stillImageTime: 1)),  // in a still
        // Positions are looked up only once checked (issue 54).
        ("a position of nan, 2.0", MomentFacts(position: CapturePosition(latitude: .nan, longitude: 2))),
        ("a position of 48.0, inf", MomentFacts(position: CapturePosition(latitude: 48, longitude: .infinity))),
        ("a position of 90.5, 2.0", MomentFacts(position: CapturePosition(latitude: 90.5, longitude: 2))),
        ("a position of 48.0, -180.5", MomentFacts(position: CapturePosition(latitude: 48, longitude: -180.5))),
        ("the position 0, 0", MomentFacts(position: CapturePosition(latitude: 0, longitude: 0))),
    ])
    func liesAreRefused(refusal: String, moments: MomentFacts) {
        let got = Self.refusal(Self.reply(moments))
        #expect(got?.hasPrefix(refusal) == true, "\(got ?? "accepted")")
    }

    /// Camera facts are text a file made up (issue 62): whatever a helper
    /// sends, the parent keeps them only cleaned: control characters (a
    /// terminal's escape sequence) made spaces, spaces and NULs trimmed, a
    /// value of more than 64 bytes (10 KB here) dropped.
    @Test func cameraFactsAreCleanedWhateverTheHelperSent() throws {
        let sent = CameraFacts(
            make: "\u{1B}]0;owned\u{07}  Evil\tCam \0\0", model: String(repeating: "A", count: 10_240), lens: " \0 ")
        let decoded = try ReplyCheck.validate(
            Self.reply(MomentFacts(camera: sent)), for: Self.request(), fileSize: 10_000
        ).get()
        #expect(decoded.moments?.camera == CameraFacts(make: "]0;owned Evil Cam"))
        let honest = CameraFacts(
            make: "Apple", model: "iPhone 15 Pro", lens: "iPhone 15 Pro back triple camera 6.765mm f/1.78")
        #expect(
            try ReplyCheck.validate(
                Self.reply(MomentFacts(camera: honest), kind: .video), for: Self.request(kind: .video)
            ).get().moments?.camera == honest)
        let empty = try ReplyCheck.validate(
            Self.reply(MomentFacts(camera: CameraFacts(make: "\u{07}", model: String(repeating: "é", count: 33)))),
            for: Self.request()
        ).get()
        #expect(empty.moments?.camera == nil, "nothing left: no camera")
    }

    @Test func momentsNobodyAskedForOrOfAVideoAreRefused() {
        let video = MomentFacts(embeddedVideo: EmbeddedVideo(layout: .appended, offset: 0, length: 100))
        #expect(Self.refusal(Self.reply(video), Self.request(moments: false)) == "moment facts nobody asked for")
        #expect(Self.refusal(Self.reply(video, kind: .video)) == "an embedded video in a video")
        #expect(Self.refusal(Self.reply(video), fileSize: nil) == "an embedded video in a file whose size is not known")
        #expect(
            Self.refusal(Self.reply(MomentFacts(contentIdentifier: "A"), kind: .audio))
                == "moment facts of a file that is no image or video")
    }

    /// A real helper that lies in its moment facts (test faults
    /// `forge-video-range`, `forge-identifier`) fails its item and is stopped.
    @Test(arguments: [
        ("forge-video-range", "an embedded video at bytes 0 to 1073741824 of a file of"),
        ("forge-identifier", "the content identifier \" ]0;owned \""),
    ])
    func aHelperLyingAboutMomentsIsStopped(fault: String, refusal: String) throws {
        let decoder = HelperPoolTests.decoder(fault: "\(fault):liar.jpg")
        defer { decoder.shutdown() }
        decoder.prepare()
        let request = DecodeRequest(
            path: Fixtures.motion("google-container.jpg"), label: "drop/liar.jpg", format: .jpeg, batch: "b",
            moments: true)
        do {
            _ = try decoder.decode(request)
            Issue.record("\(fault): a lying reply was accepted")
        } catch {
            #expect(error.kind == .decoderMisbehaved, "\(fault): \(error)")
            #expect(error.message.contains(refusal), "\(fault): \(error)")
        }
        #expect(decoder.helperProcessIDs.isEmpty, "the lying helper is still there")
        // An honest helper's answer passes, with the real range.
        var honest = request
        honest.label = "drop/honest.jpg"
        let decoded = try decoder.decode(honest)
        #expect(decoded.moments?.embeddedVideo?.layout == .containerDirectory)
    }
}
