import Foundation
import TestSupport
import Testing

/// HDR kept in thumbnails and previews (issue 54 part 1): an Ultra HDR JPEG's
/// thumbnail and JPEG previews are Ultra HDR JPEGs themselves, whose second
/// image (the MPF index's, read by exiftool) is the source's gain map, turned
/// and scaled to the picture; their SDR base is the thumbnail made before;
/// the manifest says which carry one. WebP previews and files without a gain
/// map are unchanged.
@Suite struct GainMapThumbnailTests {
    static func pipeline(in directory: TemporaryDirectory, format: String, sizes: [Int] = [200, 480]) throws -> String {
        let path = directory.file("pipeline-\(format)-\(sizes.map(String.init).joined(separator: "-")).json")
        let json =
            #"{"name": "hdr-test", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "probe"}, "#
            + #"{"stage": "thumbnail", "sizes": \#(sizes), "format": "\#(format)"}, {"stage": "manifest"}]}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func path(_ url: Any?) throws -> String { try #require((url as? String).flatMap(URL.init(string:))?.path) }

    /// The second MPF image of an Ultra HDR JPEG (its gain map), as a file; nil when it has none.
    static func gainMap(of path: String, into directory: TemporaryDirectory, name: String) throws -> String? {
        let out = try MediaTools.run("/bin/sh", ["-c", "exiftool -b -MPImage2 '\(path)' > '\(directory.file(name))'"])
        #expect(out.status == 0)
        let size = (try? FileManager.default.attributesOfItem(atPath: directory.file(name))[.size] as? Int) ?? 0
        return size > 0 ? directory.file(name) : nil
    }

    /// The source's gain map as the thumbnail's should be: turned as the photo
    /// (`rotate`: vips' `rot` angle, or nil) and scaled to `width`×`height`.
    static func expectedGainMap(
        _ source: String, rotate: String?, width: Int, height: Int, work: TemporaryDirectory, name: String
    ) throws -> String {
        let raw = try #require(try gainMap(of: source, into: work, name: name + ".src.jpg"))
        var turned = raw
        if let rotate {
            turned = work.file(name + ".turned.png")
            try ImageInspector.vips(["rot", raw, turned, rotate])
        }
        let scaled = work.file(name + ".expected.png")
        try ImageInspector.vips([
            "thumbnail", turned, scaled, String(width), "--height", String(height), "--size", "force",
        ])
        return scaled
    }

    @Test func anUltraHDRPhotosThumbnailAndJPEGPreviewsCarryItsGainMap() throws {
        let drop = TemporaryDirectory("hdr-drop")
        for name in ["ultrahdr-gradient.jpg", "ultrahdr-exif6.jpg", "ultrahdr.jpg"] {
            _ = try drop.add(name, copying: Fixtures.testdata("spatial/" + name))
        }
        _ = try drop.add("exiftool-pixel8pro.jpg", copying: Fixtures.privacy("exiftool-pixel8pro.jpg"))
        _ = try drop.add("plain.jpg", copying: Fixtures.media("photo.jpg"))
        let work = TemporaryDirectory("hdr-work")
        let container = work.file("c")
        let run = try ShareProcess.run([
            "ingest", "--container", container, "--pipeline", try Self.pipeline(in: work, format: "jpeg"), drop.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let byName = try CaptureTimeTests.entries(container)
        // ExifTool's Pixel 8 Pro sample declares a gain map (`hdrgm:Version`, a `GainMap` directory item) whose
        // image was cut away: no map to carry, so an SDR thumbnail, as any photo's.
        #expect(
            byName["exiftool-pixel8pro.jpg"]?["hdr"] as? String == "gainMap"
                && byName["exiftool-pixel8pro.jpg"]?["thumbnailHdr"] == nil)
        for name in ["ultrahdr-gradient.jpg", "ultrahdr-exif6.jpg", "ultrahdr.jpg"] {
            let entry = byName[name]
            #expect(entry?["thumbnailHdr"] as? String == "gainMap", "\(name): \(entry ?? [:])")
            let previews = entry?["previews"] as? [[String: Any]] ?? []
            #expect(
                !previews.isEmpty && previews.allSatisfy { $0["hdr"] as? String == "gainMap" }, "\(name): \(previews)")
        }
        #expect(
            byName["plain.jpg"]?["thumbnailHdr"] == nil
                && (byName["plain.jpg"]?["previews"] as? [[String: Any]])?.first?["hdr"] == nil)
        #expect(
            try Self.gainMap(of: Self.path(byName["plain.jpg"]?["thumbnail"]), into: work, name: "plain.gain.jpg")
                == nil)

        // The gain map is the source's, turned and scaled: near it, and far from it flipped.
        for (name, rotate) in [("ultrahdr-gradient.jpg", nil), ("ultrahdr-exif6.jpg", "d90")] as [(String, String?)] {
            let entry = try #require(byName[name])
            var pictures = [try Self.path(entry["thumbnail"])]
            for preview in entry["previews"] as? [[String: Any]] ?? [] {
                pictures.append(try Self.path(preview["path"]))
            }
            for (index, picture) in pictures.enumerated() {
                let size = try ImageInspector.size(picture)
                let map = try #require(
                    try Self.gainMap(of: picture, into: work, name: "\(name).\(index).gain.jpg"),
                    "\(name): \(picture) has no gain map")
                // The source's map is half its base on each side: so is the picture's.
                let mapSize = try ImageInspector.size(map)
                #expect(
                    mapSize == (size.width / 2, size.height / 2), "\(name): a \(mapSize) gain map of a \(size) picture")
                let expected = try Self.expectedGainMap(
                    Fixtures.testdata("spatial/" + name), rotate: rotate, width: mapSize.width, height: mapSize.height,
                    work: work, name: "\(name).\(index)")
                let flipped = work.file("\(name).\(index).flipped.png")
                try ImageInspector.vips(["flip", expected, flipped, "horizontal"])
                let near = try ImageInspector.meanAbsoluteDifference(map, expected)
                let far = try ImageInspector.meanAbsoluteDifference(map, flipped)
                #expect(near < 6, "\(name) \(index): the gain map differs from the source's by \(near)")
                #expect(far > 5 * near + 10, "\(name) \(index): flipped it differs by only \(far) (\(near) unflipped)")
            }
        }

        // The SDR base is the thumbnail a plain JPEG of the same picture gets: the primary alone (no MPF, no gain map).
        let primary = try Data(contentsOf: URL(fileURLWithPath: Fixtures.testdata("spatial/ultrahdr-gradient.jpg")))
        let plainDrop = TemporaryDirectory("hdr-plain")
        let mapJPEG = try Data(
            contentsOf: URL(
                fileURLWithPath: try #require(
                    try Self.gainMap(
                        of: Fixtures.testdata("spatial/ultrahdr-gradient.jpg"), into: work, name: "src.jpg"))))
        _ = try plainDrop.add("ultrahdr-gradient.jpg", bytes: Array(primary.prefix(primary.count - mapJPEG.count)))
        let strip = try MediaTools.run(
            "/usr/bin/exiftool",
            ["-q", "-overwrite_original", "-XMP:all=", "-MPF:all=", plainDrop.file("ultrahdr-gradient.jpg")])
        #expect(strip.status == 0, "\(strip.output)")
        let plainContainer = work.file("plain")
        #expect(
            try ShareProcess.run([
                "ingest", "--container", plainContainer, "--pipeline", try Self.pipeline(in: work, format: "jpeg"),
                plainDrop.path,
            ]).status == 0)
        let sdr = try Self.path(try CaptureTimeTests.entries(plainContainer)["ultrahdr-gradient.jpg"]?["thumbnail"])
        let hdrThumbnail = try Self.path(byName["ultrahdr-gradient.jpg"]?["thumbnail"])
        #expect(
            try ImageInspector.meanAbsoluteDifference(hdrThumbnail, sdr) == 0, "the SDR base is not the plain thumbnail"
        )

        // The report marks the HDR thumbnails.
        let url = try #require(run.lastLine)
        let page = work.file("page.html")
        #expect(try ShareProcess.run(["report", url, "--container", container, "--html", page]).status == 0)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("<dt>View</dt><dd>HDR gain map (in its thumbnail too)</dd>"))
    }

    /// An `hdrgm` value of an Ultra HDR JPEG's gain map (its second MPF image's XMP), as written.
    static func hdrgm(_ name: String, of picture: String, work: TemporaryDirectory) throws -> Double? {
        let map = try #require(
            try gainMap(of: picture, into: work, name: UUID().uuidString + ".jpg"), "\(picture) has no gain map")
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: map)), as: UTF8.self)
        guard let found = text.firstRange(of: "hdrgm:\(name)=\"") else { return nil }
        return Double(text[found.upperBound...].prefix { $0 != "\"" })
    }

    /// The gain map image of an iPhone HEIC, as a one-band PNG: its item (2) cut out
    /// by bench/heif-item.py with its properties, decoded by libheif's heif-convert
    /// (which applies its `irot`: the map as libheif shows it).
    static func heifGainMap(_ source: String, work: TemporaryDirectory, name: String) throws -> String {
        let cut = work.file(name + ".item.heic")
        let decoded = work.file(name + ".item.png")
        let grey = work.file(name + ".map.png")
        let script = Fixtures.packageRoot.appendingPathComponent("bench/heif-item.py").path
        let run = try MediaTools.run("/usr/bin/python3", [script, source, "2", cut])
        #expect(run.status == 0, "\(run.output)")
        #expect(try MediaTools.run("/usr/bin/heif-convert", [cut, decoded]).status == 0)
        try ImageInspector.vips(["extract_band", decoded, grey, "0"])
        return grey
    }

    /// Apple's linear gain map value v as ISO 21496-1's log-encoded one for a
    /// headroom H: 255 · log2(1 + (H − 1) · sRGB⁻¹(v / 255)) / log2 H, rounded
    /// (Apple's "Applying Apple HDR effect to your photos"), written as a 256×1 LUT.
    static func appleLUT(headroom: Double, into path: String) throws {
        var bytes = Array("P5\n256 1\n255\n".utf8)
        for v in 0..<256 {
            let e = Double(v) / 255
            let linear = e <= 0.04045 ? e / 12.92 : pow((e + 0.055) / 1.055, 2.4)
            bytes.append(UInt8(min(255, max(0, (255 * log2(1 + (headroom - 1) * linear) / log2(headroom)).rounded()))))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// iPhone HDR photos (issue 54 part 1, Apple's HEIC and ISO 21496-1 `tmap`):
    /// the thumbnail and JPEG previews carry the photo's gain map, its values
    /// re-encoded for Apple's maps (headroom from the maker note, or from the map's
    /// XMP), the `tmap`'s own where there is one, turned by the photo's `irot`;
    /// a flipped map or a dropped one fails. A map without a headroom, and a
    /// `tmap` whose base is HDR, leave the thumbnail SDR.
    @Test func anIPhoneHDRPhotosThumbnailAndJPEGPreviewsCarryItsGainMap() throws {
        let drop = TemporaryDirectory("iphone-hdr-drop")
        for name in ["apple-hdr.heic", "apple-hdr-irot.heic", "apple-hdr-tmap.heic", "apple-gainmap.heic"] {
            _ = try drop.add(name, copying: Fixtures.testdata("spatial/" + name))
        }
        _ = try drop.add("hdr-base-gain-map.avif", copying: Fixtures.testdata("modern/hdr/hdr-base-gain-map.avif"))
        // The same photo with its map's type renamed: no gain map, so the SDR base a photo without one gets.
        var plain = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.testdata("spatial/apple-hdr.heic"))))
        let urn = Array("aux:hdrgainmap".utf8)
        let at = try #require((0..<(plain.count - urn.count)).first { Array(plain[$0..<($0 + urn.count)]) == urn })
        plain[at + urn.count - 1] = UInt8(ascii: "q")
        _ = try drop.add("plain.heic", bytes: plain)
        let work = TemporaryDirectory("iphone-hdr-work")
        let container = work.file("c")
        let run = try ShareProcess.run([
            "ingest", "--container", container, "--pipeline", try Self.pipeline(in: work, format: "jpeg"), drop.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let byName = try CaptureTimeTests.entries(container)
        for name in ["apple-gainmap.heic", "hdr-base-gain-map.avif"] {
            #expect(
                byName[name]?["hdr"] as? String == "gainMap" && byName[name]?["thumbnailHdr"] == nil,
                "\(name): \(byName[name] ?? [:])")
        }
        #expect(byName["plain.heic"]?["hdr"] == nil && byName["plain.heic"]?["thumbnailHdr"] == nil)

        // (name, headroom for Apple's values or nil for the tmap's own, the hdrgm values expected)
        let cases: [(String, Double?, [String: Double])] = [
            (
                "apple-hdr.heic", pow(2, 2.303 - 0.303 * 0.6),
                [
                    "GainMapMin": 0, "GainMapMax": 2.303 - 0.303 * 0.6, "Gamma": 1, "OffsetSDR": 0, "OffsetHDR": 0,
                    "HDRCapacityMin": 0, "HDRCapacityMax": 2.303 - 0.303 * 0.6,
                ]
            ),
            (
                "apple-hdr-irot.heic", 3,
                [
                    "GainMapMin": 0, "GainMapMax": log2(3), "Gamma": 1, "OffsetSDR": 0, "OffsetHDR": 0,
                    "HDRCapacityMax": log2(3),
                ]
            ),
            (
                "apple-hdr-tmap.heic", nil,
                [
                    "GainMapMin": -0.25, "GainMapMax": 1.5, "Gamma": 0.9, "OffsetSDR": 0.00001, "OffsetHDR": 0.00001,
                    "HDRCapacityMin": 0, "HDRCapacityMax": 1.5,
                ]
            ),
        ]
        for (name, headroom, values) in cases {
            try Self.expectCarried(
                try #require(byName[name]), source: Fixtures.testdata("spatial/" + name), name: name,
                headroom: headroom, values: values, work: work)
        }
        // The SDR base is the thumbnail the photo gets without its gain map.
        #expect(
            try ImageInspector.meanAbsoluteDifference(
                Self.path(byName["apple-hdr.heic"]?["thumbnail"]), Self.path(byName["plain.heic"]?["thumbnail"])) == 0)
    }

    /// Expects `entry`'s thumbnail and JPEG previews to carry the gain map of the
    /// HEIF or AVIF `source` (its item 2; a JPEG's second MPF image, turned by
    /// vips' `rot` angle `rotate` as its photo is): a quarter of each picture's side, near
    /// the source's map as libheif shows it (through Apple's values for a
    /// `headroom`; a mean difference below `within`) and far from it flipped
    /// (more than five times as far, and `apart` more), with the `hdrgm` XMP `values`.
    static func expectCarried(
        _ entry: [String: Any], source path: String, name: String, headroom: Double?, values: [String: Double],
        rotate: String? = nil, within: Double = 6, apart: Double = 10, work: TemporaryDirectory
    ) throws {
        #expect(entry["thumbnailHdr"] as? String == "gainMap", "\(name): \(entry)")
        let previews = entry["previews"] as? [[String: Any]] ?? []
        #expect(!previews.isEmpty && previews.allSatisfy { $0["hdr"] as? String == "gainMap" }, "\(name): \(previews)")
        // The source's map as libheif shows it (a JPEG's: its second MPF image), its values as the thumbnail's must be.
        var source =
            path.hasSuffix(".jpg")
            ? try #require(
                try Self.gainMap(of: path, into: work, name: name + ".source-map.jpg"),
                "\(name) has no second MPF image")
            : try Self.heifGainMap(path, work: work, name: name)
        if let headroom {
            let lut = work.file(name + ".lut.pgm")
            let mapped = work.file(name + ".mapped.png")
            try Self.appleLUT(headroom: headroom, into: lut)
            try ImageInspector.vips(["maplut", source, mapped, lut])
            source = mapped
        }
        if let rotate {
            let turned = work.file(name + ".turned.png")
            try ImageInspector.vips(["rot", source, turned, rotate])
            source = turned
        }
        var pictures = [try Self.path(entry["thumbnail"])]
        for preview in previews { pictures.append(try Self.path(preview["path"])) }
        for (index, picture) in pictures.enumerated() {
            let size = try ImageInspector.size(picture)
            let map = try #require(
                try Self.gainMap(of: picture, into: work, name: "\(name).\(index).gain.jpg"),
                "\(name): \(picture) has no gain map")
            // The photo's map is half of it on each side; the picture's a quarter (an Ultra HDR phone JPEG's scale).
            let mapSize = try ImageInspector.size(map)
            let quarter = (Int((Double(size.width) / 4).rounded()), Int((Double(size.height) / 4).rounded()))
            #expect(mapSize == quarter, "\(name): a \(mapSize) gain map of a \(size) picture")
            let expected = work.file("\(name).\(index).expected.png")
            let flipped = work.file("\(name).\(index).flipped.png")
            try ImageInspector.vips([
                "thumbnail", source, expected, String(mapSize.width), "--height", String(mapSize.height), "--size",
                "force",
            ])
            try ImageInspector.vips(["flip", expected, flipped, "horizontal"])
            let near = try ImageInspector.meanAbsoluteDifference(map, expected)
            let far = try ImageInspector.meanAbsoluteDifference(map, flipped)
            #expect(near < within, "\(name) \(index): the gain map differs from the source's by \(near)")
            #expect(far > 5 * near + apart, "\(name) \(index): flipped it differs by only \(far) (\(near) unflipped)")
            for (key, value) in values {
                let written: Double = try Self.hdrgm(key, of: picture, work: work) ?? .nan
                #expect(abs(written - value) < 0.00001, "\(name) \(index): hdrgm:\(key) is \(written), not \(value)")
            }
        }
    }

    /// iPhone JPEGs with Apple's gain map (issue 62: "Most Compatible", an MPF
    /// second image marked by Apple's `HDRGainMap` XMP, no `hdrgm`), in the older
    /// layout (the headroom in the maker note's HDRHeadroom/HDRGain alone) and the
    /// current one (the map's XMP `HDRGainMapHeadroom`, which wins over the maker
    /// note's): reported HDR, carried into the thumbnail and JPEG previews as
    /// their HEIC twins' maps are (Apple's values re-encoded by the HEIC's
    /// headroom rules, a quarter of each picture's side), with no warning.
    @Test func anIPhoneJPEGsAppleGainMapIsCarriedIntoItsThumbnailAndJPEGPreviews() throws {
        let drop = TemporaryDirectory("iphone-jpeg-hdr-drop")
        for name in ["gainmap-apple.jpg", "gainmap-apple-current.jpg"] {
            _ = try drop.add(name, copying: Fixtures.testdata("spatial/" + name))
        }
        let work = TemporaryDirectory("iphone-jpeg-hdr-work")
        let container = work.file("c")
        let report = work.file("report.json")
        let run = try ShareProcess.run([
            "ingest", "--container", container, "--report", report, "--pipeline",
            try Self.pipeline(in: work, format: "jpeg"), drop.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: report))
        let items = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["items"] as? [[String: Any]])
        let byName = try CaptureTimeTests.entries(container)
        // HDRHeadroom 1.01, HDRGain 0.6: Apple's formula, 2.303 − 0.303 · 0.6 stops; the current layout's XMP says 3.
        let older = 2.303 - 0.303 * 0.6
        for (name, stops) in [("gainmap-apple.jpg", older), ("gainmap-apple-current.jpg", log2(3.0))] {
            let entry = try Self.reportedHDRWithoutWarning(name, items: items, entries: byName)
            try Self.expectCarried(
                entry, source: Fixtures.testdata("spatial/" + name), name: name, headroom: pow(2, stops),
                values: [
                    "GainMapMin": 0, "GainMapMax": stops, "Gamma": 1, "OffsetSDR": 0, "OffsetHDR": 0,
                    "HDRCapacityMin": 0, "HDRCapacityMax": stops,
                ],
                work: work)
        }
    }

    /// Real iPhone JPEGs with Apple's gain map (issue 62, testdata/real): an
    /// iPhone 13 mini photo in the older layout (the headroom in the maker note
    /// alone: 3 stops) and a full-size iPhone 16 Pro photo in the current one (the
    /// map's XMP headroom 3.237871; EXIF orientation 6; a 2856×2142 map).
    /// Each is reported HDR with no warning, at the size a person sees (the
    /// iPhone 16 Pro's is a portrait), and its thumbnail and JPEG preview carry
    /// its map turned and scaled in place: within 3.5 of 255 of the source's
    /// (2.1–2.6 on the iPhone 16 Pro's; its 360 px preview's map, 90×68 as stored,
    /// which shrink-on-load's rounding left a row short, was 5.1 away when that
    /// row was made by a second resize that moved the map half a pixel), and far
    /// from it mirrored (a real scene's sides are more alike than a chart's: the
    /// iPhone 13 mini's map is 10 from its mirror image, 0.7–0.9 from itself).
    @Test func realIPhoneJPEGsCarryTheirAppleGainMapsInPlace() throws {
        let drop = TemporaryDirectory("real-iphone-jpeg-drop")
        let files = ["iphone13mini-apple-gainmap-old.jpg", "iphone16pro-apple-gainmap.jpg"]
        for name in files { _ = try drop.add(name, copying: Fixtures.testdata("real/" + name)) }
        let work = TemporaryDirectory("real-iphone-jpeg-work")
        let container = work.file("c")
        let report = work.file("report.json")
        let run = try ShareProcess.run([
            "ingest", "--container", container, "--report", report, "--pipeline",
            try Self.pipeline(in: work, format: "jpeg", sizes: [200, 360]), drop.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: report))
        let items = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["items"] as? [[String: Any]])
        let byName = try CaptureTimeTests.entries(container)
        // (name, shown size, stops, vips' rot angle that turns the stored map as the photo is shown)
        let cases: [(String, (Int, Int), Double, String?)] = [
            ("iphone13mini-apple-gainmap-old.jpg", (384, 512), 3, nil),
            ("iphone16pro-apple-gainmap.jpg", (4284, 5712), log2(3.237871), "d90"),
        ]
        for (name, shown, stops, rotate) in cases {
            let entry = try Self.reportedHDRWithoutWarning(name, items: items, entries: byName)
            #expect(
                entry["width"] as? Int == shown.0 && entry["height"] as? Int == shown.1,
                "\(name): \(entry["width"] ?? "-")×\(entry["height"] ?? "-")")
            try Self.expectCarried(
                entry, source: Fixtures.testdata("real/" + name), name: name, headroom: pow(2, stops),
                values: [
                    "GainMapMin": 0, "GainMapMax": stops, "Gamma": 1, "OffsetSDR": 0, "OffsetHDR": 0,
                    "HDRCapacityMin": 0, "HDRCapacityMax": stops,
                ],
                rotate: rotate, within: 3.5, apart: 3, work: work)
        }
    }

    /// Apple's JPEG layout where it cannot be carried is named, never silent:
    /// a map marked by Apple's XMP with no headroom anywhere (the maker note's
    /// signature renamed away), and an MPF image with the maker note's headroom
    /// that nothing marks as Apple's map (its XMP renamed away). Each keeps its
    /// SDR thumbnail, `hdr: "gainMap"` and a warning naming why.
    @Test func anIPhoneJPEGWhoseAppleGainMapCannotBeCarriedIsNamed() throws {
        let drop = TemporaryDirectory("iphone-jpeg-uncarried-drop")
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.testdata("spatial/gainmap-apple.jpg"))))
        func renamed(_ bytes: [UInt8], _ from: String, _ to: String) throws -> [UInt8] {
            let old = Array(from.utf8)
            let new = Array(to.utf8)
            var out = bytes
            var at = 0
            var found = 0
            while at + old.count <= out.count {
                if Array(out[at..<(at + old.count)]) == old {
                    out.replaceSubrange(at..<(at + old.count), with: new)
                    found += 1
                }
                at += 1
            }
            #expect(found > 0 && old.count == new.count, "\(from) not in the fixture")
            return out
        }
        _ = try drop.add("no-headroom.jpg", bytes: try renamed(original, "Apple iOS", "Apple iOZ"))
        _ = try drop.add(
            "unmarked.jpg",
            bytes: try renamed(
                try renamed(original, "HDRGainMapVersion", "HDRGainMapVersioZ"), "aux:hdrgainmap", "aux:hdrgainmaq"))
        let work = TemporaryDirectory("iphone-jpeg-uncarried-work")
        let container = work.file("c")
        let report = work.file("report.json")
        let run = try ShareProcess.run([
            "ingest", "--container", container, "--report", report, "--pipeline",
            try Self.pipeline(in: work, format: "jpeg"), drop.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: report))
        let items = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["items"] as? [[String: Any]])
        for (name, warning) in [
            (
                "no-headroom.jpg",
                "Apple's JPEG gain map has no headroom (no HDRGainMapHeadroom XMP, no maker note HDRHeadroom and HDRGain)"
            ),
            ("unmarked.jpg", "no image its MPF index lists is marked as Apple's gain map (HDRGainMap XMP)"),
        ] {
            let item = try #require(
                items.first { ($0["source"] as? String ?? "").hasSuffix("/" + name) }, "\(name) is not in the report")
            let warnings = item["warnings"] as? [String] ?? []
            #expect(
                item["hdr"] as? String == "gainMap" && item["thumbnail"] as? String != nil
                    && item["thumbnailHdr"] == nil, "\(name): \(item)")
            #expect(
                warnings.contains(
                    "its HDR gain map is not carried into its thumbnail: \(warning); the thumbnail is SDR"),
                "\(name): \(warnings)")
        }
    }

    /// A three-channel (colour) `hdrgm` map in a JPEG (issue 62: `GainMapMin`,
    /// `GainMapMax`, `Gamma` as `rdf:Seq`s of 0,0,0; 2,1.5,1; 1,1,1, a colour map
    /// picture, as Adobe's tools write it) is carried three-channel: the thumbnail's
    /// and JPEG preview's maps have three bands, the source's map (at its half of
    /// each side) re-encoded per channel for one set of numbers (minimum 0, maximum
    /// 2, gamma 1: red as it is, green × 1.5/2, blue × 1/2), in the channels' order;
    /// no warning. So is a three-channel `tmap` in an AVIF (maxima 1.5, 1, 0.5,
    /// minima −0.25, gamma 0.9: one set, −0.25 to 1.5 with gamma 1, its AV1 map's
    /// channels re-encoded each).
    @Test func aThreeChannelGainMapIsCarriedWithItsThreeChannels() throws {
        let drop = TemporaryDirectory("three-channel-drop")
        let name = "gainmap-three-channel.jpg"
        let source = Fixtures.testdata("spatial/gainmap-three-channel.jpg")
        _ = try drop.add(name, copying: source)
        _ = try drop.add("gainmap-three-channel.avif", copying: Fixtures.testdata("spatial/gainmap-three-channel.avif"))
        let work = TemporaryDirectory("three-channel-work")
        let container = work.file("c")
        let report = work.file("report.json")
        let run = try ShareProcess.run([
            "ingest", "--container", container, "--report", report, "--pipeline",
            try Self.pipeline(in: work, format: "jpeg"), drop.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: report))
        let items = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["items"] as? [[String: Any]])
        for item in items {
            #expect(item["hdr"] as? String == "gainMap" && (item["warnings"] as? [String] ?? []).isEmpty, "\(item)")
        }
        let entries = try CaptureTimeTests.entries(container)
        let entry = try #require(entries[name])
        // The AVIF: its AV1 map (as libheif shows it, three bands) through its channels' tables, at a quarter of each side.
        let avif = try #require(entries["gainmap-three-channel.avif"])
        let avifMap = work.file("avif.map.png")
        let avifLUT = work.file("avif.lut.ppm")
        let avifMapped = work.file("avif.mapped.png")
        let cut = work.file("avif.item.avif")
        #expect(
            try MediaTools.run(
                "/usr/bin/python3",
                [
                    Fixtures.packageRoot.appendingPathComponent("bench/heif-item.py").path,
                    Fixtures.testdata("spatial/gainmap-three-channel.avif"), "2", cut,
                ]
            ).status == 0)
        #expect(try MediaTools.run("/usr/bin/heif-convert", [cut, avifMap]).status == 0)
        var table = Array("P6\n256 1\n255\n".utf8)
        for v in 0..<256 {
            for maximum in [1.5, 1.0, 0.5] {
                let r = pow(Double(v) / 255, 1 / 0.9)
                table.append(UInt8((255 * (-0.25 * (1 - r) + maximum * r + 0.25) / 1.75).rounded()))
            }
        }
        try Data(table).write(to: URL(fileURLWithPath: avifLUT))
        try ImageInspector.vips(["maplut", avifMap, avifMapped, avifLUT])
        #expect(avif["thumbnailHdr"] as? String == "gainMap", "\(avif)")
        let avifPicture = try Self.path(avif["thumbnail"])
        let avifSize = try ImageInspector.size(avifPicture)
        let carried = try #require(
            try Self.gainMap(of: avifPicture, into: work, name: "avif.gain.jpg"), "the AVIF's thumbnail has no gain map"
        )
        let carriedSize = try ImageInspector.size(carried)
        #expect(
            carriedSize == (Int((Double(avifSize.width) / 4).rounded()), Int((Double(avifSize.height) / 4).rounded())),
            "a \(carriedSize) map")
        #expect(try ImageInspector.pixel(carried, x: 0, y: 0).count == 3, "the AVIF's map is not three-channel")
        let avifExpected = work.file("avif.expected.png")
        let avifUnencoded = work.file("avif.unencoded.png")
        try ImageInspector.vips([
            "thumbnail", avifMapped, avifExpected, String(carriedSize.width), "--height", String(carriedSize.height),
            "--size", "force",
        ])
        try ImageInspector.vips([
            "thumbnail", avifMap, avifUnencoded, String(carriedSize.width), "--height", String(carriedSize.height),
            "--size", "force",
        ])
        let avifNear = try ImageInspector.meanAbsoluteDifference(carried, avifExpected)
        let avifFar = try ImageInspector.meanAbsoluteDifference(carried, avifUnencoded)
        #expect(
            avifNear < 6 && avifFar > 2 * avifNear + 8,
            "the AVIF's map differs from its source's re-encoded by \(avifNear), not re-encoded by \(avifFar)")
        for (key, value) in [
            "GainMapMin": -0.25, "GainMapMax": 1.5, "Gamma": 1, "OffsetSDR": 0.00001, "OffsetHDR": 0.00001,
            "HDRCapacityMin": 0, "HDRCapacityMax": 1.5,
        ] {
            let written: Double = try Self.hdrgm(key, of: avifPicture, work: work) ?? .nan
            #expect(abs(written - value) < 0.00001, "the AVIF's hdrgm:\(key) is \(written), not \(value)")
        }
        #expect(entry["thumbnailHdr"] as? String == "gainMap", "\(entry)")
        // The source's map per channel through its re-encoding (a 3-band LUT: red, green, blue).
        var lut = Array("P6\n256 1\n255\n".utf8)
        for v in 0..<256 {
            lut += [UInt8(v), UInt8((Double(v) * 1.5 / 2).rounded()), UInt8((Double(v) / 2).rounded())]
        }
        let lutPath = work.file("three.lut.ppm")
        let mapped = work.file("three.mapped.png")
        try Data(lut).write(to: URL(fileURLWithPath: lutPath))
        let raw = try #require(try Self.gainMap(of: source, into: work, name: "three.source-map.jpg"))
        try ImageInspector.vips(["maplut", raw, mapped, lutPath])
        var pictures = [try Self.path(entry["thumbnail"])]
        for preview in entry["previews"] as? [[String: Any]] ?? [] {
            #expect(preview["hdr"] as? String == "gainMap", "\(preview)")
            pictures.append(try Self.path(preview["path"]))
        }
        #expect(pictures.count == 2)
        for (index, picture) in pictures.enumerated() {
            let size = try ImageInspector.size(picture)
            let map = try #require(
                try Self.gainMap(of: picture, into: work, name: "three.\(index).gain.jpg"), "\(picture) has no gain map"
            )
            let mapSize = try ImageInspector.size(map)
            #expect(
                mapSize == (Int((Double(size.width) / 2).rounded()), Int((Double(size.height) / 2).rounded())),
                "a \(mapSize) map of a \(size) picture")
            #expect(try ImageInspector.pixel(map, x: 0, y: 0).count == 3, "the map is not three-channel")
            // Against the source's map re-encoded, and as it is (its values read under the new numbers: wrong).
            let expected = work.file("three.\(index).expected.png")
            let unencoded = work.file("three.\(index).unencoded.png")
            try ImageInspector.vips([
                "thumbnail", mapped, expected, String(mapSize.width), "--height", String(mapSize.height), "--size",
                "force",
            ])
            try ImageInspector.vips([
                "thumbnail", raw, unencoded, String(mapSize.width), "--height", String(mapSize.height), "--size",
                "force",
            ])
            let near = try ImageInspector.meanAbsoluteDifference(map, expected)
            let far = try ImageInspector.meanAbsoluteDifference(map, unencoded)
            #expect(near < 6, "\(index): the gain map differs from the source's re-encoded by \(near)")
            #expect(far > 3 * near + 10, "\(index): not re-encoded it differs by only \(far) (\(near) re-encoded)")
            for (key, value) in [
                "GainMapMin": 0.0, "GainMapMax": 2, "Gamma": 1, "OffsetSDR": 0.015625, "OffsetHDR": 0.015625,
                "HDRCapacityMin": 0, "HDRCapacityMax": 2,
            ] {
                let written: Double = try Self.hdrgm(key, of: picture, work: work) ?? .nan
                #expect(abs(written - value) < 0.00001, "\(index): hdrgm:\(key) is \(written), not \(value)")
            }
        }
    }

    /// An AVIF whose `tmap` has an SDR base and an AV1 gain map (as libavif writes
    /// one): its thumbnail and JPEG previews carry the map (decoded by dav1d in the
    /// helper) with the `tmap`'s numbers; its SDR base is the thumbnail the same
    /// file gets with its `tmap` renamed away, which carries none.
    @Test func anAVIFsAV1GainMapIsCarriedIntoItsThumbnailAndJPEGPreviews() throws {
        let drop = TemporaryDirectory("avif-hdr-drop")
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.testdata("spatial/sdr-tmap.avif"))))
        _ = try drop.add("sdr-tmap.avif", bytes: original)
        // The same file with its tmap item's type (in its infe) renamed: an AVIF without a gain map.
        var plain = original
        let ftypEnd = Int(plain[3])
        let name = Array("tmap".utf8)
        let found = (ftypEnd..<(plain.count - 4)).filter { Array(plain[$0..<($0 + 4)]) == name }
        let type = try #require(found.count == 1 ? found.first : nil, "tmap found at \(found) after the ftyp box")
        plain[type + 3] = UInt8(ascii: "q")
        _ = try drop.add("plain.avif", bytes: plain)
        let work = TemporaryDirectory("avif-hdr-work")
        let container = work.file("c")
        let report = work.file("report.json")
        let run = try ShareProcess.run(
            [
                "ingest", "--container", container, "--report", report, "--pipeline",
                try Self.pipeline(in: work, format: "jpeg"), drop.path,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!(try String(contentsOfFile: report, encoding: .utf8)).contains("could not be carried"))
        let byName = try CaptureTimeTests.entries(container)
        #expect(
            byName["plain.avif"]?["hdr"] == nil && byName["plain.avif"]?["thumbnailHdr"] == nil,
            "\(byName["plain.avif"] ?? [:])")
        try Self.expectCarried(
            try #require(byName["sdr-tmap.avif"]), source: Fixtures.testdata("spatial/sdr-tmap.avif"),
            name: "sdr-tmap.avif", headroom: nil,
            values: [
                "GainMapMin": -0.25, "GainMapMax": 1.5, "Gamma": 0.9, "OffsetSDR": 0.00001, "OffsetHDR": 0.00001,
                "HDRCapacityMin": 0, "HDRCapacityMax": 1.5,
            ],
            work: work)
        // The map libheif decodes from the file is the one it was made from (sdr-tmap.map.png), so the comparison above is with the truth.
        let decoded = try Self.heifGainMap(Fixtures.testdata("spatial/sdr-tmap.avif"), work: work, name: "truth")
        #expect(try ImageInspector.meanAbsoluteDifference(decoded, Fixtures.testdata("spatial/sdr-tmap.map.png")) < 1)
        #expect(
            try ImageInspector.meanAbsoluteDifference(
                Self.path(byName["sdr-tmap.avif"]?["thumbnail"]), Self.path(byName["plain.avif"]?["thumbnail"])) == 0)
    }

    /// AVIFs whose AV1 gain map cannot be read (`make-spatial.py avif_bad_maps`):
    /// a map whose picture is larger than its `ispe` says, one cut in half, a
    /// 10-bit one. Each photo is delivered with its SDR thumbnail and a warning
    /// naming what was wrong; the good AVIF beside them still carries its map.
    @Test func anAVIFWhoseAV1MapCannotBeReadIsDeliveredSDRWithTheReason() throws {
        let drop = TemporaryDirectory("avif-bad-maps")
        let expected = [
            "sdr-tmap-map-lies.avif": "tile 0 decoded as 640×480, not 320×240", "sdr-tmap-map-cut.avif": "AV1 tile 0:",
            "sdr-tmap-map-10bit.avif": "a 10-bit gain map (only 8-bit maps are carried)",
        ]
        for name in expected.keys.sorted() + ["sdr-tmap.avif"] {
            _ = try drop.add(name, copying: Fixtures.testdata("spatial/" + name))
        }
        let work = TemporaryDirectory("avif-bad-maps-work")
        let container = work.file("c")
        let report = work.file("report.json")
        let run = try ShareProcess.run(["ingest", "--container", container, "--report", report, drop.path])
        #expect(run.status == 0, "\(run.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: report))
        let items = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["items"] as? [[String: Any]])
        var byName: [String: [String: Any]] = [:]
        for item in items { byName[((item["source"] as? String ?? "") as NSString).lastPathComponent] = item }
        for (name, reason) in expected {
            let item = try #require(byName[name], "\(name) is not in the report")
            let warnings = item["warnings"] as? [String] ?? []
            #expect(
                item["status"] as? String == "ingested" && item["thumbnail"] as? String != nil
                    && item["thumbnailHdr"] == nil, "\(name): \(item)")
            #expect(item["hdr"] as? String == "gainMap", "\(name): \(item)")
            #expect(
                warnings.contains {
                    $0.contains("its HDR gain map could not be carried into its thumbnail") && $0.contains(reason)
                }, "\(name): \(warnings)")
        }
        #expect(byName["sdr-tmap.avif"]?["thumbnailHdr"] as? String == "gainMap", "\(byName["sdr-tmap.avif"] ?? [:])")
    }

    /// `"gainMaps": false` on the thumbnail stage (an app that shows no HDR):
    /// the thumbnails and JPEG previews of an Ultra HDR JPEG, an iPhone HEIC and an
    /// AVIF carry no map (no second MPF image, no `thumbnailHdr`), their pixels
    /// are those of the SDR base the default pipeline gives, the photos still say
    /// `hdr: "gainMap"`, and no warning is written.
    @Test func aPipelineThatAsksForNoGainMapsGetsSDRThumbnails() throws {
        let drop = TemporaryDirectory("no-gain-maps")
        _ = try drop.add("ultrahdr-gradient.jpg", copying: Fixtures.testdata("spatial/ultrahdr-gradient.jpg"))
        _ = try drop.add("apple-hdr.heic", copying: Fixtures.testdata("spatial/apple-hdr.heic"))
        _ = try drop.add("sdr-tmap.avif", copying: Fixtures.testdata("spatial/sdr-tmap.avif"))
        let work = TemporaryDirectory("no-gain-maps-work")
        let carrying = try Self.pipeline(in: work, format: "jpeg")
        let sdr = work.file("pipeline-sdr.json")
        let text = try String(contentsOfFile: carrying, encoding: .utf8).replacingOccurrences(
            of: #""format": "jpeg"}"#, with: #""format": "jpeg", "gainMaps": false}"#)
        #expect(text.contains(#""gainMaps": false"#))
        try Data(text.utf8).write(to: URL(fileURLWithPath: sdr))
        var entries: [String: [String: [String: Any]]] = [:]
        for (name, pipeline) in [("carried", carrying), ("sdr", sdr)] {
            let container = work.file("c-" + name)
            let report = work.file("report-\(name).json")
            let run = try ShareProcess.run([
                "ingest", "--container", container, "--report", report, "--pipeline", pipeline, drop.path,
            ])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(!(try String(contentsOfFile: report, encoding: .utf8)).contains("could not be carried"))
            entries[name] = try CaptureTimeTests.entries(container)
        }
        for name in ["ultrahdr-gradient.jpg", "apple-hdr.heic", "sdr-tmap.avif"] {
            let carried = try #require(entries["carried"]?[name])
            let plain = try #require(entries["sdr"]?[name])
            #expect(carried["thumbnailHdr"] as? String == "gainMap", "\(name): \(carried)")
            #expect(plain["thumbnailHdr"] == nil && plain["hdr"] as? String == "gainMap", "\(name): \(plain)")
            var pictures = [(try Self.path(carried["thumbnail"]), try Self.path(plain["thumbnail"]))]
            let previews = zip(
                carried["previews"] as? [[String: Any]] ?? [], plain["previews"] as? [[String: Any]] ?? [])
            for (a, b) in previews {
                #expect(b["hdr"] == nil, "\(name): \(b)")
                pictures.append((try Self.path(a["path"]), try Self.path(b["path"])))
            }
            #expect(pictures.count == 2, "\(name): a thumbnail and a preview each")
            for (index, (withMap, without)) in pictures.enumerated() {
                #expect(
                    try Self.gainMap(of: without, into: work, name: "\(name).\(index).none.jpg") == nil,
                    "\(name) \(index): \(without) has a gain map")
                #expect(
                    try ImageInspector.meanAbsoluteDifference(withMap, without) == 0,
                    "\(name) \(index): the SDR pictures differ")
            }
        }
    }

    /// WebP previews stay SDR (the format has no gain map); the thumbnail still carries it.
    @Test func webPPreviewsStaySDR() throws {
        let drop = TemporaryDirectory("hdr-webp")
        _ = try drop.add("ultrahdr-gradient.jpg", copying: Fixtures.testdata("spatial/ultrahdr-gradient.jpg"))
        let work = TemporaryDirectory("hdr-webp-work")
        let container = work.file("c")
        let run = try ShareProcess.run([
            "ingest", "--container", container, "--pipeline", try Self.pipeline(in: work, format: "webp"), drop.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let entry = try #require(try CaptureTimeTests.entries(container)["ultrahdr-gradient.jpg"])
        #expect(entry["thumbnailHdr"] as? String == "gainMap")
        let previews = entry["previews"] as? [[String: Any]] ?? []
        #expect(
            previews.count == 1
                && previews.allSatisfy { $0["hdr"] == nil && $0["mimeType"] as? String == "image/webp" }, "\(previews)")
    }

    /// Files without an Ultra HDR gain map get the thumbnails and previews they
    /// got before gain maps were carried, byte for byte: SHA-256 (first 16 hex
    /// digits) of each, recorded with the tree before issue 54's part 1 (commit
    /// 5c354e4; Debian 12's libvips 8.14.1 and libjpeg-turbo 2.1.5, which
    /// re-recording after a library upgrade must say). Among them: an Apple
    /// gain-map HEIC without a headroom (no way to say how bright: it stays SDR)
    /// and a `tmap` AVIF whose base is HDR (its tone-mapped thumbnail stays).
    @Test func filesWithoutAnUltraHDRGainMapKeepTheirThumbnailsByteForByte() throws {
        let recorded: [String: [String]] = [
            "apple-gainmap.heic": ["a2721c22993abd6a", "39ebea33bb4aa008"],
            "clip-h264.mp4": ["abfa1eccca0ea1c0", "c0d227f5889b5840"],
            "hdr-base-gain-map.avif": ["fbd73557e018ed98", "9e38b225365beed7"],
            "image.heic": ["002f82cf59a125b3", "699535d695c81cac"],
            "pano-360.jpg": ["7bfa088421b8632c", "af117a220182ba83"],
            "photo.jpg": ["1f82fe38a5fef0c0", "163a60ce28cb1571"],
            "screenshot.png": ["619db4796b7440e5", "14931d6ddf73e867"],
        ]
        let drop = TemporaryDirectory("hdr-unchanged")
        for name in ["photo.jpg", "image.heic", "screenshot.png", "clip-h264.mp4"] {
            _ = try drop.add(name, copying: Fixtures.media(name))
        }
        for name in ["apple-gainmap.heic", "pano-360.jpg"] {
            _ = try drop.add(name, copying: Fixtures.testdata("spatial/" + name))
        }
        _ = try drop.add("hdr-base-gain-map.avif", copying: Fixtures.testdata("modern/hdr/hdr-base-gain-map.avif"))
        let work = TemporaryDirectory("hdr-unchanged-work")
        let container = work.file("c")
        let report = work.file("report.json")
        let run = try ShareProcess.run(
            [
                "ingest", "--container", container, "--report", report, "--pipeline",
                try Self.pipeline(in: work, format: "jpeg"), drop.path,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        // Nothing was tried on their maps either (no "could not be carried" warning).
        #expect(!(try String(contentsOfFile: report, encoding: .utf8)).contains("gain map"))
        for (name, entry) in try CaptureTimeTests.entries(container) {
            var files = [try Self.path(entry["thumbnail"])]
            for preview in entry["previews"] as? [[String: Any]] ?? [] { files.append(try Self.path(preview["path"])) }
            let hashes = try files.map { file in
                let output = try MediaTools.run("/usr/bin/sha256sum", [file]).output
                return String(output.prefix(16))
            }
            #expect(hashes == recorded[name], "\(name): \(hashes)")
            #expect(entry["thumbnailHdr"] == nil, "\(name)")
        }
    }

    /// A crafted Ultra HDR JPEG whose gain map claims 60000×60000 pixels: the
    /// map is refused before any of it is decoded, the photo is delivered with
    /// its SDR thumbnail and a warning saying why, and the batch goes on.
    @Test func aGainMapLargerThanItsPhotoIsRefusedAndThePhotoStaysSDR() throws {
        var bytes = Array(
            try Data(contentsOf: URL(fileURLWithPath: Fixtures.testdata("spatial/ultrahdr-gradient.jpg"))))
        // The gain map's frame header: the last SOF0 of the file (the map follows the primary).
        let sof = try #require((0..<(bytes.count - 9)).last { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        (bytes[sof + 5], bytes[sof + 6], bytes[sof + 7], bytes[sof + 8]) = (0xEA, 0x60, 0xEA, 0x60)
        let drop = TemporaryDirectory("hdr-bomb")
        _ = try drop.add("bomb.jpg", bytes: bytes)
        _ = try drop.add("plain.jpg", copying: Fixtures.media("photo.jpg"))
        let work = TemporaryDirectory("hdr-bomb-work")
        let container = work.file("c")
        let report = work.file("report.json")
        let run = try ShareProcess.run(["ingest", "--container", container, "--report", report, drop.path])
        #expect(run.status == 0, "\(run.stderr)")
        let byName = try CaptureTimeTests.entries(container)
        #expect(
            byName["bomb.jpg"]?["thumbnail"] as? String != nil && byName["bomb.jpg"]?["thumbnailHdr"] == nil,
            "\(byName["bomb.jpg"] ?? [:])")
        #expect(byName["plain.jpg"]?["thumbnail"] as? String != nil)
        let text = try String(contentsOfFile: report, encoding: .utf8)
        #expect(
            text.contains("its HDR gain map could not be carried into its thumbnail")
                && text.contains("60000×60000 gain map"), "\(text.prefix(2000))")
    }

    /// Issue 62: every gain-map layout is carried or named, never dropped
    /// silently (`make-gainmap.py layouts`; Apple's JPEG layout and a JPEG's
    /// three-channel `hdrgm` map, now carried, have their own tests): a
    /// three-channel `tmap` in an AVIF, and a map the primary's
    /// XMP declares but the file lacks, each get an SDR thumbnail,
    /// `hdr: "gainMap"` and a warning naming the layout; a map of no simple
    /// fraction of its picture and one larger than it, with big-endian EXIF and
    /// MPF, are carried, resampled to the thumbnail's grid.
    @Test func everyGainMapLayoutIsCarriedOrNamed() throws {
        let drop = TemporaryDirectory("gainmap-layouts")
        let expected = [
            "gainmap-three-channel-offsets.avif":
                "its HDR gain map could not be carried into its thumbnail (a three-channel map (its tmap item has 3 sets of values) whose numbers are refused",
            "gainmap-three-channel-bad-gamma.jpg":
                "its HDR gain map is not carried into its thumbnail: a three-channel map (hdrgm:GainMapMax has 3 values) whose numbers are refused",
            "exiftool-pixel8pro.jpg":
                "its HDR gain map is not carried into its thumbnail: the gain map its XMP declares is not in the file",
        ]
        for name in expected.keys.sorted() + ["gainmap-odd-fraction.jpg", "gainmap-larger.jpg"]
        where !name.contains("-offsets") && !name.contains("-bad-") && !name.hasPrefix("exiftool") {
            _ = try drop.add(name, copying: Fixtures.testdata("spatial/" + name))
        }
        // Three-channel maps whose numbers cannot be carried: the AVIF's tmap with its last channel's alternate offset
        // changed (10/1000000 to 11/1000000: offsets differ by channel), the JPEG's third Gamma value no number.
        func changed(_ name: String, _ from: [UInt8], _ to: [UInt8], last: Bool) throws -> [UInt8] {
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.testdata("spatial/" + name))))
            let all = (0...(bytes.count - from.count)).filter { Array(bytes[$0..<($0 + from.count)]) == from }
            let at = try #require(last ? all.last : all.first, "\(name) has no \(from)")
            bytes.replaceSubrange(at..<(at + from.count), with: to)
            return bytes
        }
        _ = try drop.add(
            "gainmap-three-channel-offsets.avif",
            bytes: try changed(
                "gainmap-three-channel.avif", [0, 0, 0, 10, 0, 0x0F, 0x42, 0x40], [0, 0, 0, 11, 0, 0x0F, 0x42, 0x40],
                last: true))
        _ = try drop.add(
            "gainmap-three-channel-bad-gamma.jpg",
            bytes: try changed(
                "gainmap-three-channel.jpg", Array("<rdf:li>1</rdf:li></rdf:Seq></hdrgm:Gamma>".utf8),
                Array("<rdf:li>x</rdf:li></rdf:Seq></hdrgm:Gamma>".utf8), last: true))
        // ExifTool's Pixel 8 Pro sample declares a map (`hdrgm:Version`, a `GainMap` directory item) whose image was cut away.
        _ = try drop.add("exiftool-pixel8pro.jpg", copying: Fixtures.privacy("exiftool-pixel8pro.jpg"))
        let work = TemporaryDirectory("gainmap-layouts-work")
        let container = work.file("c")
        let report = work.file("report.json")
        let run = try ShareProcess.run([
            "ingest", "--container", container, "--report", report, "--pipeline",
            try Self.pipeline(in: work, format: "jpeg"), drop.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: report))
        let items = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["items"] as? [[String: Any]])
        var byName: [String: [String: Any]] = [:]
        for item in items { byName[((item["source"] as? String ?? "") as NSString).lastPathComponent] = item }
        for (name, warning) in expected {
            let item = try #require(byName[name], "\(name) is not in the report")
            let warnings = item["warnings"] as? [String] ?? []
            #expect(
                item["status"] as? String == "ingested" && item["thumbnail"] as? String != nil
                    && item["thumbnailHdr"] == nil, "\(name): \(item)")
            #expect(item["hdr"] as? String == "gainMap", "\(name): \(item)")
            #expect(
                warnings.contains { $0.contains(warning) && $0.contains("the thumbnail is SDR") },
                "\(name): \(warnings)")
        }
        // The odd fraction and the larger map: carried, in the thumbnail and its JPEG preview, the source's map resampled to each
        // (101×76 of 403×302: the picture's sides times the same fractions; 512×384: the picture's own size).
        let entries = try CaptureTimeTests.entries(container)
        for (name, fraction) in [
            ("gainmap-odd-fraction.jpg", (101.0 / 403, 76.0 / 302)), ("gainmap-larger.jpg", (1.0, 1.0)),
        ] {
            let entry = try #require(entries[name])
            #expect(
                entry["thumbnailHdr"] as? String == "gainMap" && entry["hdr"] as? String == "gainMap",
                "\(name): \(entry)")
            #expect((byName[name]?["warnings"] as? [String] ?? []).isEmpty, "\(name): \(byName[name] ?? [:])")
            var pictures = [try Self.path(entry["thumbnail"])]
            for preview in entry["previews"] as? [[String: Any]] ?? [] {
                pictures.append(try Self.path(preview["path"]))
            }
            #expect(pictures.count == 2)
            for (index, picture) in pictures.enumerated() {
                let size = try ImageInspector.size(picture)
                let map = try #require(
                    try Self.gainMap(of: picture, into: work, name: "\(name).\(index).gain.jpg"),
                    "\(picture) has no gain map")
                let mapSize = try ImageInspector.size(map)
                #expect(
                    abs(Double(mapSize.width) - Double(size.width) * fraction.0) <= 1
                        && abs(Double(mapSize.height) - Double(size.height) * fraction.1) <= 1,
                    "\(name): a \(mapSize) map of a \(size) picture")
                let expected = try Self.expectedGainMap(
                    Fixtures.testdata("spatial/" + name), rotate: nil, width: mapSize.width, height: mapSize.height,
                    work: work, name: "\(name).\(index)")
                let flipped = work.file("\(name).\(index).flipped.png")
                try ImageInspector.vips(["flip", expected, flipped, "horizontal"])
                let near = try ImageInspector.meanAbsoluteDifference(map, expected)
                let far = try ImageInspector.meanAbsoluteDifference(map, flipped)
                #expect(near < 6, "\(name) \(index): the gain map differs from the source's by \(near)")
                #expect(far > 5 * near + 10, "\(name) \(index): flipped it differs by only \(far) (\(near) unflipped)")
            }
        }
    }

    /// The manifest entry of `name`, after checking that its report item and its
    /// entry both say `hdr: "gainMap"` and that the item has no warning.
    static func reportedHDRWithoutWarning(
        _ name: String, items: [[String: Any]], entries: [String: [String: Any]]
    ) throws -> [String: Any] {
        let item = try #require(
            items.first { ($0["source"] as? String ?? "").hasSuffix("/" + name) }, "\(name) is not in the report")
        #expect(item["hdr"] as? String == "gainMap", "\(name): \(item)")
        #expect((item["warnings"] as? [String] ?? []).isEmpty, "\(name): \(item["warnings"] ?? [])")
        let entry = try #require(entries[name])
        #expect(entry["hdr"] as? String == "gainMap", "\(name): \(entry)")
        return entry
    }
}
