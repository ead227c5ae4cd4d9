import Foundation
import TestSupport
import Testing

/// Real public files reported wrong (issue 33 item 6), as the manifest shows them.
@Suite struct RealFileTests {
    static func ingest(_ files: [String: String], into container: TemporaryDirectory = TemporaryDirectory()) throws -> (
        entries: [String: [String: Any]], stderr: String
    ) {
        let drop = TemporaryDirectory()
        for (name, source) in files { _ = try drop.add(name, copying: source) }
        let result = try ShareProcess.run(["ingest", "--container", container.path, drop.path])
        #expect(result.status == 0, "\(result.stderr)")
        return (try CaptureTimeTests.entries(container.path), result.stderr)
    }

    /// kimono.rotate90.avif: 1024×722 stored, `irot` 270°: displayed 722×1024, upright
    /// (libheif's own decode is the oracle for the thumbnail).
    @Test func anAVIFRotatedByIrotIsDisplayedUpright() throws {
        let source = Fixtures.testdata("real/kimono.rotate90.avif")
        let container = TemporaryDirectory()
        let (entries, _) = try Self.ingest(["kimono.rotate90.avif": source], into: container)
        let entry = try #require(entries["kimono.rotate90.avif"])
        #expect(entry["width"] as? Int == 722 && entry["height"] as? Int == 1024, "\(entry)")
        let thumbnailURL = try #require(entry["thumbnail"] as? String)
        let thumbnail = try #require(URL(string: thumbnailURL)?.path)
        let work = TemporaryDirectory()
        let decoded = work.file("libheif.png")
        let reference = work.file("reference.v")
        let ours = work.file("ours.v")
        let difference = work.file("difference.v")
        #expect(try MediaTools.run("/usr/bin/heif-convert", [source, decoded]).status == 0)
        #expect(try MediaTools.run("/usr/bin/vips", ["thumbnail", decoded, reference, "360"]).status == 0)
        #expect(try MediaTools.run("/usr/bin/vips", ["copy", thumbnail, ours]).status == 0)
        #expect(try MediaTools.run("/usr/bin/vipsheader", ["-f", "width", ours]).output.hasPrefix("254"))
        #expect(try MediaTools.run("/usr/bin/vips", ["subtract", ours, reference, difference]).status == 0)
        let absolute = work.file("absolute.v")
        #expect(try MediaTools.run("/usr/bin/vips", ["abs", difference, absolute]).status == 0)
        let mean =
            Double(
                try MediaTools.run("/usr/bin/vips", ["avg", absolute]).output.trimmingCharacters(
                    in: .whitespacesAndNewlines)) ?? .infinity
        // Upright: close to libheif's picture (sideways, the mean difference is tens of levels).
        #expect(mean < 6, "mean difference \(mean)")
    }

    /// blue.mpg (pygame's examples): an MPEG-1 system stream whose packets carry no
    /// timestamp: its duration is its frames at its frame rate (ffprobe counts
    /// them by decoding), and it gets a poster.
    @Test func anMPEG1SystemStreamWithoutTimestampsGetsAPosterAndADuration() throws {
        let source = Fixtures.testdata("real/blue.mpg")
        let probe = try MediaTools.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                "stream=nb_read_frames,r_frame_rate", "-of", "csv=p=0", source,
            ]
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        // "30/1,24"
        let parts = probe.split(separator: ",")
        let rate = parts.first.map { $0.split(separator: "/").compactMap { Double($0) } } ?? []
        let frames = try #require(parts.last.flatMap { Double($0) })
        try #require(rate.count == 2 && rate[1] > 0, "\(probe)")
        let expected = (frames / (rate[0] / rate[1]) * 1000).rounded()
        #expect(expected == 800)
        let container = TemporaryDirectory()
        let (entries, stderr) = try Self.ingest(["blue.mpg": source], into: container)
        let entry = try #require(entries["blue.mpg"])
        #expect(entry["duration"] as? Double == expected, "\(entry)")
        #expect(entry["width"] as? Int == 320 && entry["height"] as? Int == 240)
        let thumbnailURL = try #require(entry["thumbnail"] as? String, "\(stderr)")
        let thumbnail = try #require(URL(string: thumbnailURL)?.path)
        #expect(try MediaTools.run("/usr/bin/vipsheader", ["-f", "width", thumbnail]).output.hasPrefix("320"))
        #expect(!stderr.contains("no poster"), "\(stderr)")
    }

    /// A VP9 WebM whose EBML DocType says `matroska` (ffmpeg's `-f matroska`) keeps
    /// its `.webm` name; a Matroska with H.264 named `.webm` is stored as `.mkv`.
    @Test func aWebMLabelledMatroskaKeepsItsName() throws {
        let work = TemporaryDirectory()
        let vp9 = work.file("vp9.webm")
        let h264 = work.file("h264.webm")
        for (path, codec) in [
            (vp9, ["-c:v", "libvpx-vp9", "-c:a", "libopus"]), (h264, ["-c:v", "libx264", "-c:a", "libopus"]),
        ] {
            let result = try MediaTools.run(
                "/usr/bin/ffmpeg",
                [
                    "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10:duration=1", "-f",
                    "lavfi", "-i", "sine=duration=1",
                ]
                    + codec + ["-f", "matroska", path])
            #expect(result.status == 0)
        }
        let docType = try MediaTools.run("/usr/bin/exiftool", ["-s3", "-DocType", vp9]).output
        #expect(docType.hasPrefix("matroska"), "\(docType)")
        let (entries, stderr) = try Self.ingest(["clip.webm": vp9, "h264.webm": h264])
        let clip = try #require(entries["clip.webm"])
        #expect(
            (clip["path"] as? String)?.hasSuffix(".webm") == true && clip["mimeType"] as? String == "video/webm",
            "\(clip)")
        #expect(!stderr.contains("clip.webm: named .webm"), "\(stderr)")
        let other = try #require(entries["h264.webm"])
        #expect(
            (other["path"] as? String)?.hasSuffix(".mkv") == true && other["mimeType"] as? String == "video/x-matroska",
            "\(other)")
    }

    /// Real iPhone photos (Display P3, an iPhone 7 HEIC and an iPhone 16 Pro
    /// JPEG; issue 62): each thumbnail's mean colour is the photo's as
    /// LittleCMS shows it in sRGB (`vips thumbnail --export-profile srgb`),
    /// not its Display P3 values read as sRGB (duller: the iPhone 7's red 3.7
    /// levels lower on average before the fix).
    @Test(arguments: ["privacy/iphone7-gps.heic", "real/iphone16pro-apple-gainmap.jpg"])
    func anIPhonePhotosThumbnailShowsItsColoursInSRGB(photo: String) throws {
        let source = Fixtures.testdata(photo)
        let name = (photo as NSString).lastPathComponent
        let container = TemporaryDirectory()
        let (entries, _) = try Self.ingest([name: source], into: container)
        let entry = try #require(entries[name])
        let thumbnailURL = try #require(entry["thumbnail"] as? String)
        let thumbnail = try #require(URL(string: thumbnailURL)?.path)
        let work = TemporaryDirectory()
        func means(_ path: String) throws -> [Double] {
            try (0..<3).map { band in
                let extracted = work.file("band-\(band)-\(UUID().uuidString).v")
                #expect(try MediaTools.run("/usr/bin/vips", ["extract_band", path, extracted, "\(band)"]).status == 0)
                return Double(
                    try MediaTools.run("/usr/bin/vips", ["avg", extracted]).output.trimmingCharacters(
                        in: .whitespacesAndNewlines)) ?? .nan
            }
        }
        let shown = work.file("shown.png")
        let unconverted = work.file("unconverted.png")
        #expect(
            try MediaTools.run("/usr/bin/vips", ["thumbnail", source, shown, "360", "--export-profile", "srgb"]).status
                == 0)
        #expect(try MediaTools.run("/usr/bin/vips", ["thumbnail", source, unconverted, "360"]).status == 0)
        let (ours, expected, dull) = (try means(thumbnail), try means(shown), try means(unconverted))
        // The photo tells the two apart, and ours is LittleCMS's within resampling's and JPEG's change of a mean.
        #expect(
            zip(dull, expected).map { abs($0 - $1) }.max() ?? 0 >= 2,
            "Display P3 read as sRGB: \(dull), shown: \(expected)")
        #expect(zip(ours, expected).allSatisfy { abs($0 - $1) <= 1 }, "ours \(ours), LittleCMS's \(expected)")
    }
}
