import Foundation
import TestSupport
import Testing

/// The compatible copy (issue 24, the pipeline's `compatible` stage) as a user
/// sees it: beside each HEIC, AVIF, JPEG XL and RAW photo, a JPEG that libvips
/// and ffmpeg open at the photo's displayed size, upright (the fixtures' red
/// marker top-left and blue bottom-right, or the same picture as the
/// thumbnail), with the capture date of the source and no GPS under location
/// privacy; linked from the entry, made the same by a worker, removed by `share gc`.
@Suite(.serialized) struct CompatibleCopyTests {
    /// A photo, and what is known of how it looks.
    struct Sample {
        let name: String
        let source: String
        /// The red and blue orientation markers are in its displayed corners.
        let markers: Bool
        /// A camera RAW: the copy is its largest preview (its shape, maybe smaller).
        var preview = false
    }

    static let samples: [Sample] = [
        // HEIC: EXIF orientation 6 and no irot (iPhone 7 era); irot and EXIF 6 (newer iPhones); a real iPhone 7's (P3 ICC on its tiles).
        Sample(name: "exif6-noirot.heic", source: Fixtures.fidelity("heic-exif6-noirot.heic"), markers: true),
        Sample(name: "irot-exif6.heic", source: Fixtures.fidelity("grid-irot-exif6.heic"), markers: true),
        Sample(name: "iphone7.heic", source: Fixtures.privacy("iphone7-gps.heic"), markers: false),
        // AVIF: a real one turned by irot, one with EXIF and GPS, an HDR (PQ, P3) one.
        Sample(name: "kimono.avif", source: Fixtures.testdata("modern/avif/kimono.rotate90.avif"), markers: false),
        Sample(name: "photo.avif", source: Fixtures.privacy("gps.avif"), markers: true),
        Sample(name: "pq-p3.avif", source: Fixtures.testdata("modern/hdr/pq-p3.avif"), markers: false),
        // JPEG XL: with EXIF (date, GPS), and a 16-bit PQ one.
        Sample(name: "photo.jxl", source: Fixtures.privacy("gps.jxl"), markers: true),
        Sample(name: "pq-p3-16bit.jxl", source: Fixtures.testdata("modern/hdr/pq-p3-16bit.jxl"), markers: false),
        // RAW: a Nikon NEF whose preview its orientation (6) turns upright.
        Sample(
            name: "nikon.nef", source: Fixtures.testdata("modern/raw/nikon-d70-exif6.nef"), markers: true, preview: true
        ),
    ]

    static func makeDrop(at folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for sample in samples {
            try FileManager.default.copyItem(atPath: sample.source, toPath: folder + "/" + sample.name)
        }
        // Not a format that needs one: no copy.
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: folder + "/photo.jpg")
    }

    /// Checks each sample's copy; `privacy`: the pipeline also had location privacy.
    static func verify(report: String, drop: String, privacy: Bool) throws {
        let items = try LocationPrivacyTests.reportItems(report)
        #expect((items["photo.jpg"]?["compatible"]) == nil, "a JPEG got a compatible copy")
        for sample in samples {
            let item = try #require(items[sample.name], "\(sample.name) is not in the report")
            #expect(item["status"] as? String == "ingested", "\(sample.name): \(item)")
            let compatible = try #require(
                item["compatible"] as? [String: Any], "\(sample.name): no compatible copy: \(item["warnings"] ?? "")")
            let path = try #require((compatible["path"] as? String).flatMap { URL(string: $0)?.path })
            let copyPath = try #require((item["path"] as? String).flatMap { URL(string: $0)?.path })
            #expect(
                path
                    == copyPath.replacingOccurrences(
                        of: "." + (copyPath as NSString).pathExtension, with: ".compatible.jpg"),
                "\(sample.name): \(path)")
            #expect(compatible["mimeType"] as? String == "image/jpeg")
            #expect(
                compatible["size"] as? Int == (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))

            // libvips and ffmpeg open it, at the photo's displayed size (a RAW's preview: its shape).
            let (width, height) = (try #require(item["width"] as? Int), try #require(item["height"] as? Int))
            let vips = try ImageInspector.size(path)
            let ffprobe = try #require(try MediaTools.ffprobeSize(path), "\(sample.name): ffprobe cannot read its copy")
            #expect(
                vips == (compatible["width"] as? Int ?? -1, compatible["height"] as? Int ?? -1) && ffprobe == vips,
                "\(sample.name): \(vips) \(ffprobe) \(compatible)")
            if sample.preview {
                #expect(
                    vips.width <= width && vips.height <= height
                        && abs(Double(vips.width) / Double(vips.height) - Double(width) / Double(height)) < 0.02,
                    "\(sample.name): \(vips) for \(width)×\(height)")
            } else {
                #expect(vips == (width, height), "\(sample.name): \(vips) for \(width)×\(height)")
            }

            // Upright: the markers where they belong, or the thumbnail's picture.
            if sample.markers {
                let (x, y) = (vips.width * 3 / 100, vips.height * 3 / 100)
                let topLeft = try ImageInspector.pixel(path, x: x, y: y)
                let bottomRight = try ImageInspector.pixel(path, x: vips.width - x - 1, y: vips.height - y - 1)
                #expect(ImageInspector.isRed(topLeft), "\(sample.name): top-left is \(topLeft)")
                #expect(
                    bottomRight.count >= 3 && bottomRight[2] > 150 && bottomRight[0] < 100,
                    "\(sample.name): bottom-right is \(bottomRight)")
            }
            let thumbnail = try #require((item["thumbnail"] as? String).flatMap { URL(string: $0)?.path })
            let thumbnailSize = try ImageInspector.size(thumbnail)
            let scratch = TemporaryDirectory("compatible-scaled")
            let scaled = scratch.file("scaled.png")
            try ImageInspector.vips([
                "thumbnail", path, scaled, String(thumbnailSize.width), "--height", String(thumbnailSize.height),
                "--size", "force",
            ])
            let difference = try ImageInspector.meanAbsoluteDifference(scaled, thumbnail)
            #expect(
                difference < 8,
                "\(sample.name): its copy, scaled down, differs from its thumbnail by \(difference) per channel")

            // Its EXIF: upright, the source's capture date and camera; GPS only without privacy.
            let (copy, source) = (try MediaTools.metadata(path), try MediaTools.metadata(drop + "/" + sample.name))
            #expect(
                copy.value("Orientation", numeric: true) ?? "1" == "1",
                "\(sample.name): Orientation \(copy.value("Orientation") ?? "")")
            for tag in ["DateTimeOriginal", "Make", "Model", "OffsetTimeOriginal"] where source.value(tag) != nil {
                #expect(
                    copy.value(tag) == source.value(tag),
                    "\(sample.name): \(tag) \(copy.value(tag) ?? "absent"), source \(source.value(tag) ?? "")")
            }
            let sourceGPS = source.locationTags.filter { $0.hasPrefix("GPS:") }
            if privacy || sourceGPS.isEmpty {
                #expect(copy.locationTags.isEmpty, "\(sample.name): \(copy.locationTags)")
            } else {
                #expect(
                    copy.value("GPSLatitude", numeric: true) == source.value("GPSLatitude", numeric: true),
                    "\(sample.name): GPS not kept")
            }
        }
    }

    @Test func eachPhotoGetsAnUprightFullSizeJPEGWithItsCaptureMetadata() throws {
        let work = TemporaryDirectory("compatible")
        let drop = work.file("drop")
        try Self.makeDrop(at: drop)
        let pipeline = try LocationPrivacyTests.pipeline(in: work, location: false, compatible: true)
        let run = try ShareProcess.run([
            "ingest", "--container", work.file("c"), "--pipeline", pipeline, "--report", work.file("report.json"), drop,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        try Self.verify(report: work.file("report.json"), drop: drop, privacy: false)
        // The ICC profile of a photo whose colours were kept (an iPhone's Display P3).
        let iphone = try #require(
            try LocationPrivacyTests.reportItems(work.file("report.json"))["iphone7.heic"]?["compatible"]
                as? [String: Any])
        let iphoneCopy = try #require((iphone["path"] as? String).flatMap { URL(string: $0)?.path })
        #expect(try MediaTools.metadata(iphoneCopy).value("ProfileDescription") == "Display P3")

        // The manifest's v2 entry links it, as the report says (and a JPEG's has no link).
        let report = try LocationPrivacyTests.reportItems(work.file("report.json"))
        let manifestPath = try #require(try LocationPrivacyTests.manifestPath(work.file("c")))
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifestPath)))
                as? [[String: Any]])
        #expect(manifest.count == Self.samples.count + 1)
        for entry in manifest {
            let name = try #require(entry["fileName"] as? String)
            let linked = entry["compatible"] as? [String: Any]
            if name == "photo.jpg" {
                #expect(linked == nil, "\(linked ?? [:])")
                continue
            }
            let reported = try #require(
                report[name]?["compatible"] as? [String: Any], "\(name): no compatible copy in the report")
            #expect(
                linked?["path"] as? String == reported["path"] as? String
                    && linked?["mimeType"] as? String == "image/jpeg", "\(name): \(linked ?? [:])")
            #expect(
                linked?["width"] as? Int == reported["width"] as? Int
                    && linked?["height"] as? Int == reported["height"] as? Int
                    && linked?["size"] as? Int == reported["size"] as? Int)
        }

        // The host side: the entry links it, inside the container; consumed and
        // collected, it goes with the share.
        let url = try #require(run.lastLine)
        let open = try ShareProcess.run(["open", url, "--container", work.file("c"), "--consume"])
        #expect(open.status == 0 && open.stdout.contains(".compatible.jpg"), "\(open.stderr)")
        let before = try FileManager.default.contentsOfDirectory(atPath: work.file("c")).filter {
            $0.hasSuffix(".compatible.jpg")
        }
        #expect(before.count == Self.samples.count)
        let gc = try ShareProcess.run(["gc", "--container", work.file("c"), "--older-than", "0"])
        #expect(gc.status == 0, "\(gc.stderr)")
        let after = try FileManager.default.contentsOfDirectory(atPath: work.file("c")).filter {
            $0.hasSuffix(".compatible.jpg") || $0.hasSuffix(".heic")
        }
        #expect(after.isEmpty, "\(after)")
    }

    @Test func underLocationPrivacyTheCopyHasNoGPSEitherAndAWorkerMakesTheSame() throws {
        let work = TemporaryDirectory("compatible-private")
        let drop = work.file("drop")
        try Self.makeDrop(at: drop)
        let pipeline = try LocationPrivacyTests.pipeline(in: work, location: true, compatible: true)
        let local = try ShareProcess.run([
            "ingest", "--container", work.file("local"), "--pipeline", pipeline, "--report", work.file("local.json"),
            drop,
        ])
        #expect(local.status == 0, "\(local.stderr)")
        try Self.verify(report: work.file("local.json"), drop: drop, privacy: true)

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("compatible")
        defer { workers.stopAll() }
        let remote = try ShareProcess.run([
            "ingest", "--db", server.url, "--container", work.file("remote"), "--pipeline", pipeline, "--report",
            work.file("remote.json"), drop,
        ])
        #expect(remote.status == 0, "\(remote.stderr) \(workers.log("compatible"))")
        try Self.verify(report: work.file("remote.json"), drop: drop, privacy: true)
        let (a, b) = (
            try LocationPrivacyTests.reportItems(work.file("local.json")),
            try LocationPrivacyTests.reportItems(work.file("remote.json"))
        )
        for sample in Self.samples {
            let (x, y) = (
                a[sample.name]?["compatible"] as? [String: Any], b[sample.name]?["compatible"] as? [String: Any]
            )
            #expect(
                x?["width"] as? Int == y?["width"] as? Int && x?["height"] as? Int == y?["height"] as? Int
                    && x?["size"] as? Int == y?["size"] as? Int, "\(sample.name): \(x ?? [:]) \(y ?? [:])")
        }
    }
}
