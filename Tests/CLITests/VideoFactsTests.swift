import Foundation
import TestSupport
import Testing

/// v2 `video` (issue 33 item 4), as a host app reads it from the manifest: made
/// clips (even and variable frame rates by ffmpeg's `setpts`, Android's and
/// Apple's slow-motion tags) and the clips already in testdata (rotation, HDR).
@Suite struct VideoFactsTests {
    static func ffmpeg(_ arguments: [String]) throws {
        let result = try MediaTools.run("/usr/bin/ffmpeg", ["-loglevel", "error", "-y"] + arguments)
        #expect(result.status == 0, "ffmpeg \(arguments)")
    }

    /// ffprobe's codec name of the first stream of `kind` (`v` or `a`).
    static func codec(_ path: String, _ kind: String) throws -> String? {
        let output =
            try MediaTools.run(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-select_streams", "\(kind):0", "-show_entries", "stream=codec_name", "-of",
                    "csv=p=0", path,
                ]
            )
            .output.split(whereSeparator: { $0 == "," || $0 == "\n" }).first.map(String.init) ?? ""
        // (A Dolby Vision stream's line ends with its side data's empty field.)
        return output.isEmpty ? nil : output
    }

    @Test func madeAndRealClipsReportHowTheyPlay() throws {
        let drop = TemporaryDirectory()
        let source = ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30:duration=2"]
        try Self.ffmpeg(source + ["-c:v", "libx264", "-an", drop.file("constant.mp4")])
        // 30 frames at 30 fps, then 30 at 10 fps: the container's rate claims one number.
        try Self.ffmpeg(
            source + [
                "-vf", "setpts='if(lt(N,30),N/30,1+(N-30)/10)/TB'", "-fps_mode", "vfr", "-c:v", "libx264",
                drop.file("variable.mp4"),
            ])
        // Android's slow motion: captured at 240 fps, stored at 30 (MediaMuxer's mdta key).
        try Self.ffmpeg(
            source + [
                "-c:v", "libx264", "-movflags", "use_metadata_tags", "-metadata", "com.android.capture.fps=240.000000",
                drop.file("android-slowmo.mp4"),
            ])
        // Apple's slow motion: a 120 fps movie meant to play slowed down.
        try Self.ffmpeg(
            [
                "-f", "lavfi", "-i", "testsrc=size=320x240:rate=120:duration=1", "-f", "lavfi", "-i", "sine=duration=1",
                "-c:v", "libx264", "-c:a", "aac",
                "-movflags", "use_metadata_tags", "-metadata", "com.apple.quicktime.full-frame-rate-playback-intent=0",
                drop.file("apple-slomo.mov"),
            ])
        let copies = [
            "portrait-rot90.mp4": Fixtures.media("portrait-rot90.mp4"),
            "clip-vp9.webm": Fixtures.media("clip-vp9.webm"),
            "clip-hevc.mp4": Fixtures.media("clip-hevc.mp4"),
            "hdr10-pq.mp4": Fixtures.testdata("modern/hdr/hdr10-pq.mp4"),
            "hlg.mp4": Fixtures.testdata("modern/hdr/hlg.mp4"),
            "dolby-vision-5.mp4": Fixtures.testdata("modern/hdr/dolby-vision-5.mp4"),
            "dolby-vision-8.4-hlg.mp4": Fixtures.testdata("modern/hdr/dolby-vision-8.4-hlg.mp4"),
        ]
        for (name, path) in copies { _ = try drop.add(name, copying: path) }
        let container = TemporaryDirectory()
        let result = try ShareProcess.run(["ingest", "--container", container.path, drop.path])
        #expect(result.status == 0, "\(result.stderr)")
        let byName = try CaptureTimeTests.entries(container.path)
        func video(_ name: String) -> [String: Any] { byName[name]?["video"] as? [String: Any] ?? [:] }

        // The codecs are ffprobe's names, on every clip.
        for name in byName.keys {
            let path = drop.file(name)
            #expect(video(name)["codec"] as? String == (try Self.codec(path, "v")), "\(name): \(video(name))")
            #expect(video(name)["audio"] as? String == (try Self.codec(path, "a")), "\(name): \(video(name))")
        }
        #expect(
            video("constant.mp4")["frameRate"] as? Double == 30
                && video("constant.mp4")["variableFrameRate"] as? Bool == false, "\(video("constant.mp4"))")
        #expect(video("variable.mp4")["variableFrameRate"] as? Bool == true, "\(video("variable.mp4"))")
        let android = video("android-slowmo.mp4")
        #expect(
            android["captureFrameRate"] as? Double == 240 && android["slowMotion"] as? Bool == true
                && android["frameRate"] as? Double == 30, "\(android)")
        let apple = video("apple-slomo.mov")
        #expect(
            apple["slowMotion"] as? Bool == true && apple["captureFrameRate"] as? Double == 120
                && apple["frameRate"] as? Double == 120, "\(apple)")
        #expect(video("constant.mp4")["slowMotion"] == nil && video("constant.mp4")["captureFrameRate"] == nil)
        #expect(video("portrait-rot90.mp4")["rotation"] as? Int == 90 && video("constant.mp4")["rotation"] as? Int == 0)
        #expect(video("hdr10-pq.mp4")["hdr"] as? String == "pq", "\(video("hdr10-pq.mp4"))")
        #expect(video("hlg.mp4")["hdr"] as? String == "hlg", "\(video("hlg.mp4"))")
        #expect(
            video("dolby-vision-5.mp4")["hdr"] as? String == "dolbyVision"
                && video("dolby-vision-5.mp4")["dolbyVisionProfile"] as? Int == 5)
        #expect(
            video("dolby-vision-8.4-hlg.mp4")["hdr"] as? String == "dolbyVision"
                && video("dolby-vision-8.4-hlg.mp4")["dolbyVisionProfile"] as? Int == 8)
        #expect(video("clip-vp9.webm")["hdr"] == nil)
    }
}
