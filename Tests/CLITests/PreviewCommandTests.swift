import Foundation
import TestSupport
import Testing

/// Previews beside the thumbnail (the thumbnail stage's `sizes` and `format`,
/// issue 33 item 2) as a user sees them: for each picture, a file
/// `thumbnails/<UUID>.<size>.<ext>` of the size it says (never enlarged, the
/// thumbnail's shape: a 360° photo's centre view too), listed in the v2
/// manifest's `previews` with its real width, height and byte size, carrying no
/// metadata (no EXIF, no GPS: libvips' WebP saver would keep them), the same in
/// `ingest`, `ingest --db` with a worker and `watch`, and removed by `share gc`.
@Suite(.serialized) struct PreviewCommandTests {
    /// Name in the drop → source, and whether the item has a picture.
    static let samples: [(name: String, source: String, picture: Bool)] = [
        ("iphone6.jpg", Fixtures.privacy("iphone6-gps.jpg"), true),  // a real iPhone 6 photo, 3264×2448, with GPS
        ("iphone7.heic", Fixtures.privacy("iphone7-gps.heic"), true),  // a real iPhone 7 HEIC, 4032×3024, with GPS
        ("small.jpg", Fixtures.media("photo.jpg"), true),  // 640×480: never enlarged
        ("pano-360.jpg", Fixtures.testdata("spatial/pano-360.jpg"), true),  // a 360° photo: its centre view
        ("clip.mp4", Fixtures.media("clip-h264.mp4"), true),  // a video: its poster
        ("notes.txt", Fixtures.media("notes.txt"), false),  // no picture, no previews
    ]

    static func makeDrop(at folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for sample in samples {
            try FileManager.default.copyItem(atPath: sample.source, toPath: folder + "/" + sample.name)
        }
    }

    /// A pipeline whose thumbnail stage has `thumbnail` (its JSON members).
    static func pipeline(in work: TemporaryDirectory, _ thumbnail: String, name: String = "previews") throws -> String {
        let path = work.file(name + ".json")
        let document =
            #"{"name": "\#(name)", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "probe"}, {"stage": "thumbnail", \#(thumbnail)}, {"stage": "manifest"}]}"#
        try Data(document.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The only manifest of `container`, its entries by file name.
    static func manifest(_ container: String) throws -> [String: [String: Any]] {
        let path = try #require(try LocationPrivacyTests.manifestPath(container))
        let entries = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: entries.map { (($0["fileName"] as? String) ?? "?", $0) })
    }

    /// The RIFF chunks of a WebP file, in order.
    static func webpChunks(_ path: String) throws -> [String] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard bytes.count >= 12, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46][...],
            bytes[8..<12] == [0x57, 0x45, 0x42, 0x50][...]
        else { return ["not a WebP"] }
        var chunks: [String] = []
        var at = 12
        while at + 8 <= bytes.count {
            let length =
                Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            chunks.append(String(decoding: bytes[at..<at + 4], as: UTF8.self))
            at += 8 + length + (length & 1)
        }
        return chunks
    }

    /// What the manifest of `container` says of each sample's previews, checked
    /// against the files; returns name → "WxH size" of its one preview (for
    /// comparing modes).
    static func verify(_ container: String, size: Int, format: String) throws -> [String: String] {
        let container = (container as NSString).standardizingPath
        let entries = try manifest(container)
        #expect(entries.count == samples.count, "\(entries.keys.sorted())")
        var seen: [String: String] = [:]
        for sample in samples {
            let entry = try #require(entries[sample.name], "\(sample.name) is not in the manifest")
            guard sample.picture else {
                #expect(
                    entry["previews"] == nil && (entry["thumbnail"] == nil || entry["thumbnail"] is NSNull),
                    "\(sample.name): \(entry)")
                continue
            }
            let previews = try #require(entry["previews"] as? [[String: Any]], "\(sample.name): no previews: \(entry)")
            #expect(previews.count == 1, "\(sample.name): \(previews)")
            let preview = try #require(previews.first)
            let path = try #require(
                (preview["path"] as? String).flatMap { URL(string: $0)?.path }, "\(sample.name): \(preview)")
            let copy = try #require((entry["path"] as? String).flatMap { URL(string: $0)?.path })
            let id = ((copy as NSString).lastPathComponent as NSString).deletingPathExtension
            #expect(
                path == "\(container)/thumbnails/\(id).\(size).\(format == "jpeg" ? "jpg" : format)",
                "\(sample.name): \(path)")
            #expect(preview["mimeType"] as? String == "image/\(format)")
            #expect(
                preview["size"] as? Int == (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int),
                "\(sample.name): \(preview)")

            // Its real size: what it says, at most the size asked, never larger than the media.
            let real = try ImageInspector.size(path)
            #expect(
                real == (preview["width"] as? Int ?? -1, preview["height"] as? Int ?? -1),
                "\(sample.name): \(real) for \(preview)")
            let (width, height) = (try #require(entry["width"] as? Int), try #require(entry["height"] as? Int))
            #expect(
                max(real.width, real.height) == min(size, max(width, height)) || sample.name == "pano-360.jpg",
                "\(sample.name): \(real) of \(width)×\(height)")
            // The thumbnail is the smallest, of the same shape (a 360° photo's: both its centre view, 3:2).
            let thumbnail = try #require((entry["thumbnail"] as? String).flatMap { URL(string: $0)?.path })
            let small = try ImageInspector.size(thumbnail)
            #expect(
                max(small.width, small.height) <= max(real.width, real.height),
                "\(sample.name): thumbnail \(small), preview \(real)")
            #expect(
                abs(Double(small.width) / Double(small.height) - Double(real.width) / Double(real.height)) < 0.02,
                "\(sample.name): \(small) and \(real)")
            if sample.name == "pano-360.jpg" {
                #expect(real == (512, 341), "the centre view of a 2048×1024 sphere: \(real)")
            }

            // No metadata: a WebP holds only its picture; exiftool finds no EXIF, XMP or location.
            if format == "webp" {
                let chunks = try Self.webpChunks(path)
                #expect(chunks == ["VP8 "], "\(sample.name): \(chunks)")
            }
            let tags = try MediaTools.tags(path)
            #expect(
                !tags.contains {
                    ["IFD0", "ExifIFD", "GPS", "XMP-exif", "XMP-tiff"].contains($0.group) || $0.name.contains("GPS")
                }, "\(sample.name): \(tags)")
            seen[sample.name] = "\(real.width)x\(real.height) \(preview["size"] as? Int ?? -1)"
        }
        return seen
    }

    @Test func eachPictureGetsItsPreviewInEveryModeAndGCRemovesIt() throws {
        let work = TemporaryDirectory("previews")
        let drop = work.file("drop")
        try Self.makeDrop(at: drop)
        let pipeline = try Self.pipeline(in: work, #""sizes": [360, 1440], "format": "webp""#)

        let local = try ShareProcess.run(["ingest", "--container", work.file("local"), "--pipeline", pipeline, drop])
        #expect(local.status == 0, "\(local.stderr)")
        let reference = try Self.verify(work.file("local"), size: 1440, format: "webp")

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("previews")
        defer { workers.stopAll() }
        let remote = try ShareProcess.run([
            "ingest", "--db", server.url, "--container", work.file("remote"), "--pipeline", pipeline, drop,
        ])
        #expect(remote.status == 0, "\(remote.stderr) \(workers.log("previews"))")
        #expect(try Self.verify(work.file("remote"), size: 1440, format: "webp") == reference)

        let inbox = work.file("inbox")
        try Self.makeDrop(at: inbox + "/holiday")
        _ = FileManager.default.createFile(atPath: inbox + "/holiday/.ready", contents: nil)
        let watch = try ShareProcess.run([
            "watch", inbox, "--container", work.file("watched"), "--pipeline", pipeline, "--once",
        ])
        #expect(watch.status == 0, "\(watch.stderr)")
        #expect(try Self.verify(work.file("watched"), size: 1440, format: "webp") == reference)

        // Consumed and collected: the previews go with their items.
        let url = try #require(local.lastLine)
        #expect(try ShareProcess.run(["open", url, "--container", work.file("local"), "--consume"]).status == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: work.file("local/thumbnails")).filter {
            $0.hasSuffix(".1440.webp")
        }
        #expect(before.count == Self.samples.filter(\.picture).count, "\(before)")
        let gc = try ShareProcess.run(["gc", "--container", work.file("local"), "--older-than", "0"])
        #expect(gc.status == 0, "\(gc.stderr)")
        let after = try FileManager.default.contentsOfDirectory(atPath: work.file("local/thumbnails"))
        #expect(after.isEmpty, "\(after)")
    }

    @Test func jpegPreviewsCarryNoMetadataEither() throws {
        let work = TemporaryDirectory("previews-jpeg")
        let drop = work.file("drop")
        try Self.makeDrop(at: drop)
        let pipeline = try Self.pipeline(in: work, #""sizes": [360, 1024], "format": "jpeg""#)
        let run = try ShareProcess.run(["ingest", "--container", work.file("c"), "--pipeline", pipeline, drop])
        #expect(run.status == 0, "\(run.stderr)")
        _ = try Self.verify(work.file("c"), size: 1024, format: "jpeg")
    }

    /// The thumbnail alone (the default `sizes: [360]`) writes no preview and no
    /// `previews` field; the legacy schema never has one.
    @Test func withoutSizesThereAreNoPreviews() throws {
        let work = TemporaryDirectory("thumbnail-alone")
        let drop = work.file("drop")
        try Self.makeDrop(at: drop)
        for name in ["default", "share-extension"] {
            let container = work.file(name)
            let run = try ShareProcess.run(["ingest", "--container", container, "--pipeline", name, drop])
            #expect(run.status == 0, "\(run.stderr)")
            let text = try String(
                contentsOfFile: try #require(try LocationPrivacyTests.manifestPath(container)), encoding: .utf8)
            #expect(!text.contains(#""previews""#), "\(name): \(text.prefix(400))")
            let files = try FileManager.default.contentsOfDirectory(atPath: container + "/thumbnails")
            #expect(files.allSatisfy { $0.split(separator: ".").count == 2 }, "\(name): \(files)")
        }
    }

    /// A setting out of its range, or a format there is no encoder for, is
    /// refused before anything is copied, naming the file and the field.
    @Test func aBadSettingIsRefusedNamingTheField() throws {
        let work = TemporaryDirectory("previews-bad")
        let drop = work.file("drop")
        try Self.makeDrop(at: drop)
        for (setting, expected) in [
            (#""sizes": [0]"#, "stages[3].sizes"),
            (#""sizes": [360, 1440], "format": "gif""#, "stages[3].format"),
            (#""sizes": []"#, "stages[3].sizes"),
        ] {
            let pipeline = try Self.pipeline(in: work, setting, name: "bad")
            let run = try ShareProcess.run(["ingest", "--container", work.file("c"), "--pipeline", pipeline, drop])
            #expect(run.status == 64, "\(setting): exit \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("bad.json: \(expected)"), "\(setting): \(run.stderr)")
            #expect(
                !FileManager.default.fileExists(atPath: work.file("c/manifests")), "\(setting): a manifest was written")
        }
    }
}
