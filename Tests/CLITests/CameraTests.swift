import Foundation
import TestSupport
import Testing

/// v2 `camera` (issue 62): the maker, model and lens a photo's EXIF or a
/// movie's QuickTime metadata names, as a host app reads them from the
/// manifest. exiftool is the oracle on every real phone (and camera) file in
/// testdata; files made here by exiftool cover each source (JPEG, HEIC, PNG,
/// WebP, TIFF, a QuickTime movie's keys, an MP4's `udta`) and hostile values.
@Suite struct CameraTests {
    /// The real files in testdata that name their camera (testdata/README.md
    /// says where each is from): the phone files the capture-time test reads,
    /// the Vision Pro's HEIC, and a camera RAW of each maker that is delivered
    /// as a photo (exiftool's own sample RAWs without a preview are files, and
    /// a file has no `camera`).
    static let realFiles =
        CaptureTimeTests.realPhoneFiles + [
            "real/vision-pro.HEIC", "modern/raw/canon-r6-pruned.cr3", "modern/raw/canon-350d-exif3.cr2",
            "modern/raw/canon-350d-preview1024.dng",
            "modern/raw/fujifilm-s5pro-exif8.raf", "modern/raw/nikon-d70-exif6.nef", "modern/raw/olympus-em1-exif6.orf",
            "modern/raw/panasonic-lx3.rw2",
            "modern/raw/sony-a7m3.arw",
        ]

    /// What exiftool says of the camera, as the manifest's `camera` object:
    /// `make` (`Make`), `model` (`Model`), `lens` (`LensModel`), each when it has one.
    static func oracle(_ path: String) throws -> [String: String] {
        let output = try MediaTools.run("/usr/bin/exiftool", ["-j", "-Make", "-Model", "-LensModel", path]).output
        let tags = try #require((try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]])?.first)
        var camera: [String: String] = [:]
        for (tag, key) in [("Make", "make"), ("Model", "model"), ("LensModel", "lens")] {
            if let value = tags[tag].map({ "\($0)" }), !value.isEmpty { camera[key] = value }
        }
        return camera
    }

    static func camera(_ entry: [String: Any]?) -> [String: String] {
        (entry?["camera"] as? [String: Any] ?? [:]).mapValues { "\($0)" }
    }

    @Test func everyRealPhoneFileHasTheCameraExiftoolReads() throws {
        let drop = TemporaryDirectory("camera-real")
        var expected: [String: [String: String]] = [:]
        for relative in Self.realFiles {
            let name = relative.replacingOccurrences(of: "/", with: "-")
            let copy = try drop.add(name, copying: Fixtures.testdata(relative))
            expected[name] = try Self.oracle(copy)
        }
        // The files cover a make, a model and a lens, in stills, HEICs, RAWs and a movie.
        #expect(
            expected.values.contains { $0["lens"] != nil }
                && expected.keys.contains { $0.hasSuffix(".mov") && expected[$0]?["model"] != nil })
        let byName = try CaptureTimeTests.ingest(drop)
        for (name, want) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(byName[name] != nil, "\(name) was not delivered")
            #expect(Self.camera(byName[name]) == want, "\(name): \(Self.camera(byName[name])), exiftool says \(want)")
        }
    }

    /// Runs exiftool on `path` with `arguments` (it edits in place).
    static func exiftool(_ path: String, _ arguments: [String]) throws {
        let result = try MediaTools.run("/usr/bin/exiftool", ["-q", "-overwrite_original"] + arguments + [path])
        try #require(result.status == 0, "exiftool \(arguments): \(result.output)")
    }

    /// A file of each source, made by exiftool from testdata's media, and what its entry's `camera` is.
    static func makeDrop() throws -> (drop: TemporaryDirectory, expected: [String: [String: String]]) {
        let drop = TemporaryDirectory("camera")
        let eos = ["-Make=Canon", "-Model=Canon EOS R5", "-LensModel=RF24-70mm F2.8 L IS USM"]
        let canon = ["make": "Canon", "model": "Canon EOS R5", "lens": "RF24-70mm F2.8 L IS USM"]
        var expected: [String: [String: String]] = [:]
        try Self.exiftool(try drop.add("canon.jpg", copying: Fixtures.media("photo.jpg")), ["-all="] + eos)
        expected["canon.jpg"] = canon
        let pixel = ["make": "Google", "model": "Pixel 8 Pro", "lens": "Pixel 8 Pro back camera 6.9mm f/1.68"]
        try Self.exiftool(
            try drop.add("pixel.heic", copying: Fixtures.media("image.heic")),
            ["-Make=Google", "-Model=Pixel 8 Pro", "-LensModel=Pixel 8 Pro back camera 6.9mm f/1.68"])
        expected["pixel.heic"] = pixel
        for name in ["alpha.png", "image.webp", "image.tiff"] {
            try exiftool(try drop.add(name, copying: Fixtures.media(name)), eos)
            expected[name] = canon
        }
        // A movie's QuickTime keys (as an iPhone writes them), and an MP4's udta ©mak/©mod.
        try Self.exiftool(
            try drop.add("iphone.mov", copying: Fixtures.media("clip.mov")),
            ["-Keys:Make=Apple", "-Keys:Model=iPhone 15 Pro"])
        expected["iphone.mov"] = ["make": "Apple", "model": "iPhone 15 Pro"]
        try Self.exiftool(
            try drop.add("camcorder.mp4", copying: Fixtures.media("clip-h264.mp4")),
            ["-UserData:Make=Panasonic", "-UserData:Model=HC-V770"])
        expected["camcorder.mp4"] = ["make": "Panasonic", "model": "HC-V770"]
        // A photo that names no camera has none.
        try Self.exiftool(try drop.add("anonymous.jpg", copying: Fixtures.media("photo.jpg")), ["-all="])
        expected["anonymous.jpg"] = [:]
        for (name, want) in expected where !want.isEmpty {
            #expect(try Self.oracle(drop.path + "/" + name) == want, "exiftool reads \(name) back")
        }
        return (drop, expected)
    }

    @Test(arguments: [false, true])
    func eachSourceNamesItsCamera(database: Bool) throws {
        let (drop, expected) = try Self.makeDrop()
        let mode = try DatabaseMode(database, worker: "camera")
        defer { mode.stop() }
        let container = TemporaryDirectory()
        let report = container.file("report.json")
        let result = try ShareProcess.run(
            ["ingest", "--container", container.path, "--report", report, drop.path] + mode.options)
        #expect(result.status == 0, "\(result.stderr)")
        let byName = try CaptureTimeTests.entries(container.path)
        for (name, want) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(
                Self.camera(byName[name]) == want,
                "\(database ? "--db" : "ingest"): \(name): \(Self.camera(byName[name]))")
        }
        // The --report file, and the page made from the batch's stored report, show it too.
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        let items = try #require(document["items"] as? [[String: Any]])
        let reported = items.first { ($0["fileName"] as? String) == "canon.jpg" }
        #expect(Self.camera(reported) == expected["canon.jpg"], "\(reported ?? [:])")
        let url = try #require(result.lastLine)
        let page = container.file("page.html")
        #expect(try ShareProcess.run(["report", url, "--container", container.path, "--html", page]).status == 0)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(
            html.contains("<dt>Camera</dt><dd>Canon EOS R5 (RF24-70mm F2.8 L IS USM)</dd>"), "no camera on the page")
        #expect(html.contains("<dt>Camera</dt><dd>Apple iPhone 15 Pro</dd>"), "no movie's camera on the page")
    }

    /// A Make with a terminal's escape sequence and control characters is
    /// cleaned (each made a space, spaces trimmed and joined); a Model of 10 KB
    /// and a lens of 100 bytes are dropped; a lens of NULs and spaces is none.
    @Test func hostileValuesAreCleanedOrDropped() throws {
        let drop = TemporaryDirectory("camera-hostile")
        let evil = try drop.add("evil.jpg", copying: Fixtures.media("photo.jpg"))
        try Self.exiftool(
            evil,
            [
                "-all=", "-Make=\u{1B}]0;owned\u{07}  Evil\tCam ", "-Model=" + String(repeating: "A", count: 10_240),
                "-LensModel=" + String(repeating: "L", count: 100),
            ])
        let blank = try drop.add("blank.jpg", copying: Fixtures.media("photo.jpg"))
        try Self.exiftool(blank, ["-all=", "-Model=Nikon Z 8", "-LensModel=   "])
        let byName = try CaptureTimeTests.ingest(drop)
        #expect(Self.camera(byName["evil.jpg"]) == ["make": "]0;owned Evil Cam"], "\(Self.camera(byName["evil.jpg"]))")
        #expect(Self.camera(byName["blank.jpg"]) == ["model": "Nikon Z 8"], "\(Self.camera(byName["blank.jpg"]))")
    }

    /// The plugin's (legacy) manifest never carries it.
    @Test func theLegacyManifestHasNoCamera() throws {
        let drop = TemporaryDirectory("camera-legacy")
        try Self.exiftool(
            try drop.add("canon.jpg", copying: Fixtures.media("photo.jpg")),
            ["-all=", "-Make=Canon", "-Model=Canon EOS R5"])
        let container = TemporaryDirectory()
        let result = try ShareProcess.run([
            "ingest", "--container", container.path, "--pipeline", "share-extension", drop.path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let manifests = try FileManager.default.contentsOfDirectory(atPath: container.path + "/manifests").filter {
            $0.hasSuffix(".json")
        }
        let text = try String(contentsOfFile: container.path + "/manifests/" + manifests[0], encoding: .utf8)
        #expect(!text.contains("camera") && !text.contains("Canon"), "\(text)")
    }
}
