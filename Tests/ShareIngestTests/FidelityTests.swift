import Foundation
import MediaFormats
import ShareIngest
import ShareManifest
import TestSupport
import Testing

/// Issue 13, end to end: every class of `testdata/fidelity` through the `default`
/// pipeline, checked for what a user sees (type, extension, MIME type, displayed
/// size, duration within 2 % or 50 ms, an upright thumbnail that is not black,
/// the warnings), against what `testdata/make-fidelity.sh` measured.
@Suite struct FidelityTests {
    /// Every class, the HEIF/AVIF ones (issue 13 items 1, 2 and the image
    /// sequences) included.
    static let names = Fixtures.fidelityNames

    /// One batch of every fixture, shared by the tests of this suite.
    final class Batch: Sendable {
        let container = TemporaryContainer.orFail()
        let report: BatchReport
        let byName: [String: ItemReport]

        init(pipeline: PipelineDefinition = .standard) {
            let inputs = FidelityTests.names.map { ShareInput.path(Fixtures.fidelity($0)) }
            report = try! ShareIngestor(container: container.directory, pipeline: pipeline).ingest(inputs)
            var byName: [String: ItemReport] = [:]
            for item in report.items { byName[(item.source as NSString).lastPathComponent] = item }
            self.byName = byName
        }
    }

    static let batch = Batch()

    @Test func everyFixtureIsDelivered() {
        let failed = Self.batch.report.items.filter { $0.status != .ingested }
        #expect(failed.isEmpty, "\(failed.map { "\($0.source): \(String(describing: $0.failure))" })")
        #expect(Self.batch.report.items.count == Self.names.count)
    }

    @Test(arguments: FidelityTests.names)
    func whatAUserSees(name: String) throws {
        let expected = try #require(Fixtures.fidelityExpected(name))
        let item = try #require(Self.batch.byName[name])
        let entry = try #require(item.entry, "\(name): \(String(describing: item.failure))")
        #expect(entry.type.rawValue == expected.type, "\(name): type \(entry.type)")
        let ext = try #require(entry.fileURL).pathExtension
        #expect(ext == expected.extension || (expected.extension, ext) == ("tiff", "tif"), "\(name): .\(ext)")
        #expect(entry.mimeType == expected.mime, "\(name): \(String(describing: entry.mimeType))")
        if expected.type != "file" {
            #expect(
                entry.width == expected.displayWidth && entry.height == expected.displayHeight,
                "\(name): \(String(describing: entry.width))×\(String(describing: entry.height))")
        }
        if expected.type != "image", let duration = expected.durationMs {
            let delivered = try #require(entry.duration, "\(name) has no duration")
            #expect(
                abs(delivered - duration) <= max(50, duration * 0.02), "\(name): \(delivered) ms, expected \(duration)")
        }
        guard expected.thumbnail == true else {
            #expect(entry.thumbnail == nil, "\(name) has a thumbnail")
            return
        }
        let thumbnail = try #require(entry.thumbnail.flatMap(URL.init(string:))?.path, "\(name) has no thumbnail")
        let (width, height) = try ImageInspector.size(thumbnail)
        #expect(max(width, height) <= 360)
        let corner = try ImageInspector.pixel(thumbnail, x: width * 3 / 100, y: height * 3 / 100)
        #expect(ImageInspector.isRed(corner), "\(name): not upright, top-left is \(corner)")
        let mean = try ImageInspector.mean(thumbnail)
        #expect(mean > 40, "\(name): black thumbnail (mean \(mean))")
        // Pictures and covers are the picture itself, not a misread of its samples.
        // (Video luma was measured on the Y plane, in limited range: not comparable.)
        if expected.type != "video", let luma = expected.meanLuma {
            #expect(abs(mean - luma) < 30, "\(name): mean \(mean), expected about \(luma)")
        }
    }

    /// Text under an image name, and an empty file, come with a warning saying so
    /// (and an SVG decoded in-process, as here, with a second one: its thumbnail
    /// is made only in sandboxed decoder helpers).
    @Test(arguments: [
        ("html-named.jpg", "named .jpg but the content is HTML: stored as .html"),
        ("xml-named.jpg", "named .jpg but the content is XML: stored as .xml"),
        ("svg-named.png", "named .png but the content is SVG: stored as .svg"),
        ("text-named.png", "named .png but the content is text: stored as .txt"),
        ("adts-id3-apic.aac", nil),
        ("empty.jpg", "is empty (0 bytes): delivered as a file"),
    ])
    func warnings(name: String, warning: String?) throws {
        let item = try #require(Self.batch.byName[name])
        let sandboxOnly = item.warnings.filter { $0.contains("only in sandboxed decoder helpers") }
        #expect(sandboxOnly.count == (name.hasPrefix("svg") ? 1 : 0), "\(name): \(item.warnings)")
        #expect(
            item.warnings.filter { !sandboxOnly.contains($0) } == (warning.map { [$0] } ?? []),
            "\(name): \(item.warnings)")
    }

    /// The reference extension's pipeline makes no thumbnails but posters: audio
    /// covers too are off there.
    @Test func theShareExtensionPipelineMakesNoCoverThumbnails() throws {
        let container = try TemporaryContainer()
        let report = try ShareIngestor(
            container: container.directory, pipeline: try PipelineDefinition.load("share-extension")
        )
        .ingest([
            .path(Fixtures.fidelity("cover-id3-apic.mp3")), .path(Fixtures.fidelity("black-first-key-nocues.mkv")),
        ])
        #expect(report.isComplete)
        #expect(report.entries.map { $0.thumbnail != nil } == [false, true])
        #expect(report.entries.first?.duration != nil)
    }
}

extension TemporaryContainer {
    /// A temporary container, for a stored property that cannot throw.
    static func orFail() -> TemporaryContainer { try! TemporaryContainer() }
}

/// Issue 23, end to end: what phones and cameras make today (`testdata/modern`,
/// made by `testdata/make-modern.sh` around real samples; see testdata/README.md)
/// through the `default` pipeline, checked for what a user sees: type,
/// extension, MIME type, displayed size, duration (within 2 % or 50 ms), a
/// thumbnail or none, its orientation, and the warnings.
@Suite struct ModernMediaTests {
    /// What a user should get for one fixture.
    struct Expected: Sendable, CustomStringConvertible {
        let path: String
        let type: String
        let ext: String
        let mime: String
        var size: (width: Int, height: Int)? = nil
        var durationMs: Double? = nil
        /// nil: no thumbnail; else its width and height.
        var thumbnail: (width: Int, height: Int)? = nil
        /// The red marker is at the top-left and the blue one at the bottom-right.
        var upright = false
        /// A warning containing this.
        var warning: String? = nil
        var description: String { path }
    }

    static func e(
        _ path: String, _ type: String, _ ext: String, _ mime: String, size: (Int, Int)? = nil, duration: Double? = nil,
        thumbnail: (Int, Int)? = nil, upright: Bool = false, warning: String? = nil
    ) -> Expected {
        Expected(
            path: path, type: type, ext: ext, mime: mime, size: size.map { (width: $0.0, height: $0.1) },
            durationMs: duration,
            thumbnail: thumbnail.map { (width: $0.0, height: $0.1) }, upright: upright, warning: warning)
    }

    static let cases: [Expected] = [
        // HDR video and stills (item 1); Dolby Vision 10 is AV1 under dav1 (item 3).
        e("hdr/hdr10-pq.mp4", "video", "mp4", "video/mp4", size: (640, 360), duration: 2000, thumbnail: (360, 203)),
        e("hdr/hlg.mp4", "video", "mp4", "video/mp4", size: (640, 360), duration: 2000, thumbnail: (360, 203)),
        e("hdr/pq-vui-only.mp4", "video", "mp4", "video/mp4", size: (640, 360), duration: 2000, thumbnail: (360, 203)),
        e(
            "hdr/av1-pq-mastering.mp4", "video", "mp4", "video/mp4", size: (640, 360), duration: 2000,
            thumbnail: (360, 203)),
        e(
            "hdr/dolby-vision-8.4-hlg.mp4", "video", "mp4", "video/mp4", size: (640, 360), duration: 2000,
            thumbnail: (360, 203)),
        e(
            "hdr/dolby-vision-10.1-av1.mp4", "video", "mp4", "video/mp4", size: (640, 360), duration: 2000,
            thumbnail: (360, 203)),
        e(
            "hdr/dolby-vision-5.mp4", "video", "mp4", "video/mp4", size: (640, 360), duration: 2000,
            thumbnail: (360, 203),
            warning: "Dolby Vision profile 5 has no picture without Dolby Vision's own processing"),
        e("hdr/pq.avif", "image", "avif", "image/avif", size: (640, 360), thumbnail: (360, 203), upright: true),
        e("hdr/pq-p3.avif", "image", "avif", "image/avif", size: (640, 360), thumbnail: (360, 203), upright: true),
        e("hdr/pq-p3-16bit.jxl", "image", "jxl", "image/jxl", size: (640, 360), thumbnail: (360, 203), upright: true),
        e(
            "hdr/hdr-base-gain-map.avif", "image", "avif", "image/avif", size: (640, 360), thumbnail: (360, 203),
            upright: true),
        e(
            "hdr/immich-10bit-HDR-P3-nclx.avif", "image", "avif", "image/avif", size: (3681, 5594),
            thumbnail: (237, 360)),
        // JPEG XL libvips 8.14 refuses (item 3).
        e("jxl/cmyk-layers.jxl", "image", "jxl", "image/jxl", size: (512, 512), thumbnail: (360, 360)),
        // RAW (item 2): real structures with previews, turned by the RAW's orientation.
        e(
            "raw/nikon-d70-exif6.nef", "image", "nef", "image/x-nikon-nef", size: (2014, 3040), thumbnail: (238, 360),
            upright: true),
        e(
            "raw/canon-350d-preview1024.dng", "image", "dng", "image/x-adobe-dng", size: (3456, 2304),
            thumbnail: (360, 240), upright: true),
        e(
            "raw/canon-350d-exif3.cr2", "image", "cr2", "image/x-canon-cr2", size: (3456, 2304), thumbnail: (360, 240),
            upright: true),
        e("raw/canon-r6-pruned.cr3", "image", "cr3", "image/x-canon-cr3", size: (3408, 2272), thumbnail: (360, 240)),
        e(
            "raw/sony-a7m3.arw", "image", "arw", "image/x-sony-arw", size: (6000, 4000), thumbnail: (360, 241),
            upright: true),
        e(
            "raw/fujifilm-s5pro-exif8.raf", "image", "raf", "image/x-fuji-raf", size: (960, 1440),
            thumbnail: (240, 360), upright: true),
        e(
            "raw/olympus-em1-exif6.orf", "image", "orf", "image/x-olympus-orf", size: (3456, 4608),
            thumbnail: (270, 360), upright: true),
        e(
            "raw/panasonic-lx3.rw2", "image", "rw2", "image/x-panasonic-rw2", size: (3648, 2736), thumbnail: (360, 270),
            upright: true),
        // ExifTool's stubs: real structures whose previews are a few bytes. No usable
        // preview (none that decodes, or none of the photo's shape): a file, with the reason.
        e(
            "raw/exiftool-Nikon.nef", "file", "nef", "image/x-nikon-nef",
            warning: "no embedded preview that can be shown"),
        e(
            "raw/exiftool-CanonRaw.cr2", "file", "cr2", "image/x-canon-cr2",
            warning: "no embedded preview that can be shown"),
        e(
            "raw/exiftool-CanonRaw.cr3", "file", "cr3", "image/x-canon-cr3",
            warning: "no embedded preview that can be shown"),
        // Its only preview is an 8×8 placeholder of another shape than its 3456×2304 photo.
        e(
            "raw/exiftool-DNG.dng", "file", "dng", "image/x-adobe-dng",
            warning: "no embedded preview that can be shown (none of the photo's 3456×2304 shape"),
        // Containers and posters (item 4).
        e(
            "video/fragmented-no-mehd.mp4", "video", "mp4", "video/mp4", size: (320, 240), duration: 1067,
            thumbnail: (320, 240)),
        e(
            "video/fragmented-mehd.mp4", "video", "mp4", "video/mp4", size: (320, 240), duration: 1067,
            thumbnail: (320, 240)),
        e(
            "video/edit-list-preroll.mp4", "video", "mp4", "video/mp4", size: (320, 240), duration: 1800,
            thumbnail: (320, 240)),
        e(
            "video/black-only-keyframe-hevc.mp4", "video", "mp4", "video/mp4", size: (320, 240), duration: 1000,
            thumbnail: (320, 240)),
        e(
            "video/matroska-titled-webm.mkv", "video", "mkv", "video/x-matroska", size: (320, 240), duration: 1000,
            thumbnail: (320, 240)),
        e(
            "video/mpeg1-system-6k.mpg", "video", "mpg", "video/mpeg", size: (160, 120), duration: 40,
            thumbnail: (160, 120)),
        e(
            "video/quicktime-mjpeg.mov", "video", "mov", "video/quicktime", size: (240, 160), duration: 1000,
            thumbnail: (240, 160)),
        e("avif/kimono.rotate90.avif", "image", "avif", "image/avif", size: (722, 1024), thumbnail: (254, 360)),
        e(
            "avif/kimono.mirror-vertical.rotate270.crop.avif", "image", "avif", "image/avif", size: (385, 330),
            thumbnail: (360, 309)),
    ]

    static func modern(_ path: String) -> String {
        Fixtures.packageRoot.appendingPathComponent("testdata/modern/\(path)").path
    }

    /// One batch of every fixture, shared by the tests of this suite.
    final class Batch: Sendable {
        let container = TemporaryContainer.orFail()
        let byPath: [String: ItemReport]

        init() {
            let inputs = ModernMediaTests.cases.map { ShareInput.path(ModernMediaTests.modern($0.path)) }
            let report = try! ShareIngestor(container: container.directory, pipeline: .standard).ingest(inputs)
            var byPath: [String: ItemReport] = [:]
            for item in report.items { byPath[ModernMediaTests.cases[item.index].path] = item }
            self.byPath = byPath
        }
    }

    static let batch = Batch()

    @Test(arguments: ModernMediaTests.cases)
    func whatAUserSees(_ expected: Expected) throws {
        let item = try #require(Self.batch.byPath[expected.path])
        let entry = try #require(item.entry, "\(expected.path): \(String(describing: item.failure))")
        #expect(entry.type.rawValue == expected.type, "type \(entry.type)")
        #expect(try #require(entry.fileURL).pathExtension == expected.ext)
        #expect(entry.mimeType == expected.mime)
        if let size = expected.size {
            #expect(
                entry.width == size.width && entry.height == size.height,
                "\(String(describing: entry.width))×\(String(describing: entry.height))")
        }
        if let duration = expected.durationMs {
            let delivered = try #require(entry.duration, "no duration")
            #expect(abs(delivered - duration) <= max(50, duration * 0.02), "\(delivered) ms, expected \(duration)")
        }
        if let warning = expected.warning {
            #expect(item.warnings.contains { $0.contains(warning) }, "\(item.warnings)")
        }
        guard let size = expected.thumbnail else {
            #expect(entry.thumbnail == nil, "a thumbnail")
            return
        }
        let thumbnail = try #require(entry.thumbnail.flatMap(URL.init(string:))?.path, "no thumbnail")
        let (width, height) = try ImageInspector.size(thumbnail)
        #expect(abs(width - size.width) <= 1 && abs(height - size.height) <= 1, "thumbnail \(width)×\(height)")
        if expected.upright {
            let topLeft = try ImageInspector.pixel(thumbnail, x: width * 3 / 100, y: height * 3 / 100)
            let bottomRight = try ImageInspector.pixel(
                thumbnail, x: width - 1 - width * 3 / 100, y: height - 1 - height * 3 / 100)
            #expect(ImageInspector.isRed(topLeft), "top-left \(topLeft)")
            #expect(bottomRight[2] > 150 && bottomRight[0] < 100 && bottomRight[1] < 100, "bottom-right \(bottomRight)")
        }
        if expected.type == "video" {
            #expect(try ImageInspector.mean(thumbnail) > 40, "black poster")
        }
    }
}
