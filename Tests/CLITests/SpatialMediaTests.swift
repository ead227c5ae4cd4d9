import Foundation
import TestSupport
import Testing

/// v2 `projection`, `stereo` and `hdr` (issue 33 item 5), as a host app reads
/// them from the manifest: the panoramas, gain maps and stereo pairs
/// `testdata/make-spatial.py` made, the gain-map AVIF already in testdata, and a
/// real Apple Vision Pro spatial photo (testdata/real/vision-pro.HEIC).
@Suite struct SpatialMediaTests {
    static func thumbnail(_ entry: [String: Any]?) throws -> String {
        let url = try #require(entry?["thumbnail"] as? String)
        return try #require(URL(string: url)?.path)
    }

    @Test func panoramasStereoPairsAndGainMapsAreDescribed() throws {
        let drop = TemporaryDirectory()
        let files = [
            "pano-360.jpg", "pano-cylindrical.jpg", "ultrahdr.jpg", "ultrahdr-mpf-only.jpg", "apple-gainmap.heic",
            "spatial.heic", "spatial-right-primary.heic",
            "spatial.mov",
        ]
        for name in files { _ = try drop.add(name, copying: Fixtures.testdata("spatial/\(name)")) }
        _ = try drop.add("vision-pro.HEIC", copying: Fixtures.testdata("real/vision-pro.HEIC"))
        _ = try drop.add("hdr-base-gain-map.avif", copying: Fixtures.testdata("modern/hdr/hdr-base-gain-map.avif"))
        // A real Pixel 8 Pro Ultra HDR JPEG (ExifTool's t/images/Google.jpg, pictures cut to 8×8).
        _ = try drop.add("exiftool-pixel8pro.jpg", copying: Fixtures.privacy("exiftool-pixel8pro.jpg"))
        _ = try drop.add("plain.jpg", copying: Fixtures.media("photo.jpg"))
        _ = try drop.add("plain.mp4", copying: Fixtures.media("clip-hevc.mp4"))
        let container = TemporaryDirectory()
        let result = try ShareProcess.run(["ingest", "--container", container.path, drop.path])
        #expect(result.status == 0, "\(result.stderr)")
        let byName = try CaptureTimeTests.entries(container.path)

        // GPano, as exiftool wrote it.
        let full = (byName["pano-360.jpg"]?["projection"] as? [String: Any])?.compactMapValues { $0 as? Int }
        #expect(
            full == [
                "fullWidth": 2048, "fullHeight": 1024, "cropLeft": 0, "cropTop": 0, "croppedWidth": 2048,
                "croppedHeight": 1024,
            ]
                && (byName["pano-360.jpg"]?["projection"] as? [String: Any])?["type"] as? String == "equirectangular",
            "\(byName["pano-360.jpg"] ?? [:])")
        let cylinder = byName["pano-cylindrical.jpg"]?["projection"] as? [String: Any]
        #expect(cylinder?["type"] as? String == "cylindrical", "\(cylinder ?? [:])")
        #expect(
            [
                cylinder?["fullWidth"], cylinder?["fullHeight"], cylinder?["cropLeft"], cylinder?["cropTop"],
                cylinder?["croppedWidth"], cylinder?["croppedHeight"],
            ]
            .map { $0 as? Int } == [1600, 400, 200, 50, 1200, 300])
        // The entry's own size stays the picture's.
        #expect(byName["pano-360.jpg"]?["width"] as? Int == 2048 && byName["pano-360.jpg"]?["height"] as? Int == 1024)

        // Gain maps: Ultra HDR (primary XMP, or only the MPF index's second image), Apple's aux image, an AVIF tmap.
        for name in [
            "ultrahdr.jpg", "ultrahdr-mpf-only.jpg", "exiftool-pixel8pro.jpg", "apple-gainmap.heic",
            "hdr-base-gain-map.avif",
        ] {
            #expect(byName[name]?["hdr"] as? String == "gainMap", "\(name): \(byName[name] ?? [:])")
        }
        // Stereo: a made and a real HEIC `ster` pair, an MV-HEVC-marked movie.
        for name in ["spatial.heic", "spatial-right-primary.heic", "vision-pro.HEIC", "spatial.mov"] {
            #expect(byName[name]?["stereo"] as? Bool == true, "\(name): \(byName[name] ?? [:])")
        }
        #expect(byName["spatial.mov"]?["thumbnail"] as? String != nil, "the spatial movie's poster (its base layer)")
        // Nothing of it on plain files.
        for name in ["plain.jpg", "plain.mp4", "pano-cylindrical.jpg", "spatial.heic"] {
            #expect(byName[name]?["hdr"] == nil, "\(name)")
        }
        for name in ["plain.jpg", "plain.mp4", "ultrahdr.jpg", "pano-360.jpg"] {
            #expect(
                byName[name]?["stereo"] == nil && (name == "pano-360.jpg" || byName[name]?["projection"] == nil),
                "\(name)")
        }

        // The HTML report shows them as each item's View.
        let url = try #require(result.lastLine)
        let page = container.file("page.html")
        let report = try ShareProcess.run(["report", url, "--container", container.path, "--html", page])
        #expect(report.status == 0, "\(report.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        for view in [
            "360° panorama (equirectangular 2048×1024)", "panorama (cylindrical 1600×400, crop 1200×300 at 200,50)",
            "stereo pair", "HDR gain map",
        ] {
            #expect(html.contains("<dt>View</dt><dd>\(view)</dd>"), "\(view)")
        }

        // The made stereo pair's thumbnail is its left eye (red), not its right (blue).
        // So is the one whose primary image is its right eye.
        for name in ["spatial.heic", "spatial-right-primary.heic"] {
            let pair = try ImageInspector.pixel(try Self.thumbnail(byName[name]), x: 10, y: 10)
            #expect(ImageInspector.isRed(pair), "\(name): \(pair)")
        }
        // The real one's is its left eye too: nearer libheif's decode of the `ster` group's first image than of its second.
        let eyes = TemporaryDirectory()
        let convert = try MediaTools.run("/usr/bin/heif-convert", [drop.file("vision-pro.HEIC"), eyes.file("eye.png")])
        #expect(convert.status == 0, "\(convert.output)")
        let ours = try Self.thumbnail(byName["vision-pro.HEIC"])
        let size = try ImageInspector.size(ours)
        var differences: [Double] = []
        for eye in ["eye-1.png", "eye-2.png"] {
            try ImageInspector.vips([
                "thumbnail", eyes.file(eye), eyes.file(eye + ".png"), String(size.width), "--height",
                String(size.height), "--size", "force",
            ])
            differences.append(try ImageInspector.meanAbsoluteDifference(ours, eyes.file(eye + ".png")))
        }
        #expect(differences[0] < differences[1], "left \(differences[0]), right \(differences[1])")
    }

    /// A 360° photo's thumbnail is its centre view: the middle 90° × 60° (a
    /// quarter of the width, the middle third of the height), not the whole
    /// squashed sphere; the test cuts that region out of the source itself.
    @Test func aFullSpherePhotoIsThumbnailedByItsCentreView() throws {
        let drop = TemporaryDirectory()
        let source = try drop.add("pano-360.jpg", copying: Fixtures.testdata("spatial/pano-360.jpg"))
        let container = TemporaryDirectory()
        let result = try ShareProcess.run(["ingest", "--container", container.path, drop.path])
        #expect(result.status == 0, "\(result.stderr)")
        let entry = try CaptureTimeTests.entries(container.path)["pano-360.jpg"]
        let thumbnail = try Self.thumbnail(entry)
        let size = try ImageInspector.size(thumbnail)
        #expect(size.width == 360 && size.height == 240, "\(size)")

        let work = TemporaryDirectory()
        let crop = work.file("centre.png")
        let scaled = work.file("centre-360.png")
        let whole = work.file("whole-360.png")
        // 2048 × 1024: longitude 135°–225° is x 768..<1280, latitude 30°–150° y 341..<683.
        try ImageInspector.vips(["extract_area", source, crop, "768", "341", "512", "342"])
        try ImageInspector.vips(["thumbnail", crop, scaled, "360", "--height", "240", "--size", "force"])
        try ImageInspector.vips(["thumbnail", source, whole, "360", "--height", "240", "--size", "force"])
        let difference = try ImageInspector.meanAbsoluteDifference(thumbnail, scaled)
        let squashed = try ImageInspector.meanAbsoluteDifference(thumbnail, whole)
        #expect(difference < 6, "the centre view differs from the crop by \(difference)")
        #expect(squashed > 4 * difference, "the whole sphere squashed is as near (\(squashed))")
        #expect(abs(try ImageInspector.mean(thumbnail) - ImageInspector.mean(crop)) < 3)
        // Its two halves are the source's two middle columns (45° each).
        for (x, sourceX) in [(90, 896), (270, 1152)] {
            let ours = try ImageInspector.pixel(thumbnail, x: x, y: 120)
            let theirs = try ImageInspector.pixel(source, x: sourceX, y: 512)
            #expect(zip(ours, theirs).allSatisfy { abs($0 - $1) < 12 }, "x \(x): \(ours) vs the source's \(theirs)")
        }
    }

    /// A panorama is judged by its shape (issue 54 part 3): GPano's
    /// `equirectangular` on a picture that is not 2:1 (a stray type on a square
    /// camera photo, as photoprism's `wrong.heic`; FullPano sizes of 3:2; both
    /// large enough that a centre view would be no smaller than a thumbnail) is no
    /// sphere, and its thumbnail is the whole picture; a full sphere whose centre
    /// view (a quarter of its width) is smaller than a thumbnail (a 500×250
    /// sphere's is 125×83, as photoprism's `panorama360.jpg`) gets the whole
    /// picture's thumbnail at the thumbnail's size. Each is compared with the
    /// whole source shrunk by libvips.
    @Test func aPanoramaIsJudgedByItsShape() throws {
        let drop = TemporaryDirectory()
        let names = [
            "pano-stray-type.jpg": (360, 360), "pano-not-2to1.jpg": (360, 240), "pano-360-small.jpg": (360, 180),
        ]
        for name in names.keys { _ = try drop.add(name, copying: Fixtures.testdata("spatial/\(name)")) }
        let container = TemporaryDirectory()
        let result = try ShareProcess.run(["ingest", "--container", container.path, drop.path])
        #expect(result.status == 0, "\(result.stderr)")
        let byName = try CaptureTimeTests.entries(container.path)
        let work = TemporaryDirectory()
        for (name, expected) in names.sorted(by: { $0.key < $1.key }) {
            let thumbnail = try Self.thumbnail(byName[name])
            let size = try ImageInspector.size(thumbnail)
            #expect(size.width == expected.0 && size.height == expected.1, "\(name): \(size)")
            let whole = work.file(name + ".whole.png")
            try ImageInspector.vips([
                "thumbnail", Fixtures.testdata("spatial/\(name)"), whole, String(expected.0), "--height",
                String(expected.1), "--size", "force",
            ])
            let difference = try ImageInspector.meanAbsoluteDifference(thumbnail, whole)
            #expect(difference < 6, "\(name): the thumbnail differs from the whole picture by \(difference)")
            // The projection is still reported as written.
            #expect((byName[name]?["projection"] as? [String: Any])?["type"] as? String == "equirectangular", "\(name)")
        }
        // The HTML report calls none of them a 360° panorama but the sphere.
        let url = try #require(result.lastLine)
        let page = container.file("page.html")
        let report = try ShareProcess.run(["report", url, "--container", container.path, "--html", page])
        #expect(report.status == 0, "\(report.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("<dt>View</dt><dd>panorama (equirectangular 1600×1600)</dd>"), "the square photo's view")
        #expect(
            html.contains("<dt>View</dt><dd>360° panorama (equirectangular 500×250)</dd>"), "the small sphere's view")
    }
}
