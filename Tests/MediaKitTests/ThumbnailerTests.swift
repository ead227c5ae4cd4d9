import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

@Suite struct ThumbnailerTests {
    /// Thumbnails `name`, saves it, and returns its path (kept alive by `directory`).
    static func thumbnail(_ name: String, in directory: TemporaryDirectory, spec: ThumbnailSpec = ThumbnailSpec())
        throws -> (Thumbnail, String)
    {
        let thumbnail = try Thumbnailer.thumbnail(path: Fixtures.media(name), spec: spec)
        let path = try directory.add(name + ".thumb.jpg", bytes: thumbnail.jpeg)
        return (thumbnail, path)
    }

    @Test(arguments: [
        ("photo.jpg", 360, 270), ("portrait-exif6.jpg", 270, 360), ("exif3.jpg", 360, 270), ("exif8.jpg", 270, 360),
        ("screenshot.png", 360, 240), ("alpha.png", 256, 256), ("animated.gif", 200, 100), ("image.webp", 360, 270),
        ("image.heic", 360, 270), ("image.avif", 360, 270), ("image.tiff", 128, 96), ("image.jxl", 360, 270),
        ("gray.jpg", 360, 270), ("cmyk.jpg", 320, 240), ("png16.png", 128, 128), ("progressive.jpg", 360, 270),
        ("tiny-1x1.png", 1, 1), ("wide-2000x10.png", 360, 2), ("document.pdf", 278, 360),
    ])
    func thumbnailFitsAndIsNeverUpscaled(name: String, width: Int, height: Int) throws {
        let directory = TemporaryDirectory()
        let (thumbnail, path) = try Self.thumbnail(name, in: directory)
        #expect(thumbnail.width == width)
        #expect(thumbnail.height == height)
        let onDisk = try ImageInspector.size(path)
        #expect(onDisk.width == width && onDisk.height == height)
        #expect(Array(thumbnail.jpeg.prefix(3)) == [0xFF, 0xD8, 0xFF])
    }

    /// Every synthetic photo has a red marker at its displayed top-left corner.
    @Test(arguments: ["photo.jpg", "portrait-exif6.jpg", "exif3.jpg", "exif8.jpg"])
    func exifOrientationIsApplied(name: String) throws {
        let directory = TemporaryDirectory()
        let (_, path) = try Self.thumbnail(name, in: directory)
        #expect(ImageInspector.isRed(try ImageInspector.pixel(path, x: 3, y: 3)))
    }

    /// libjpeg decodes at the smallest DCT scale whose picture still covers the
    /// thumbnail; smaller pictures and other formats keep libvips' own choice.
    @Test(
        arguments: [
            (4032, 3024, 360, 8), (3024, 4032, 360, 8), (2880, 2000, 360, 8), (2879, 2000, 360, 4),
            (1920, 1080, 360, 4),
            (1000, 750, 360, 2), (719, 540, 360, nil), (4032, 3024, 1080, 2), (640, 480, 60, 8),
            (8, 5000, 360, 8), (7, 5000, 360, 4), (1, 5000, 360, nil), (5000, 3, 360, 2),
        ] as [(Int, Int, Int, Int?)])
    func jpegScaleIsTheSmallestThatCoversTheThumbnail(width: Int, height: Int, size: Int, shrink: Int?) {
        let header = ImageHeader(
            storedWidth: width, storedHeight: height, orientation: 1, pages: 1, loader: "VipsForeignLoadJpegSource")
        #expect(JPEGScale.shrink(for: header, size: size) == shrink)
        let png = ImageHeader(
            storedWidth: width, storedHeight: height, orientation: 1, pages: 1, loader: "VipsForeignLoadPngSource")
        #expect(JPEGScale.shrink(for: png, size: size) == nil)
    }

    /// A 12 MP photo, decoded at 1/8, gives the thumbnail of its fully decoded
    /// picture: the same size, upright (EXIF orientation 6), colour managed (CMYK),
    /// and within a mean absolute difference of 3 (of 255) of it. The photos are
    /// the fixtures scaled up to 4032 px with grain added.
    @Test(arguments: [("portrait-exif6.jpg", 270, 360), ("cmyk.jpg", 360, 270)])
    func twelveMegapixelJPEGAtOneEighthMatchesTheFullDecode(name: String, width: Int, height: Int) throws {
        let directory = TemporaryDirectory()
        let source = Fixtures.media(name)
        let sourceSize = try ImageInspector.size(source)
        let scale = 4032 / Double(max(sourceSize.width, sourceSize.height))
        let scaled = directory.file("scaled.v")
        let grain = directory.file("grain.v")
        let grainy = directory.file("grainy.v")
        try ImageInspector.vips(["resize", source, scaled, String(scale)])
        let scaledSize = try ImageInspector.size(scaled)
        try ImageInspector.vips([
            "gaussnoise", grain, String(scaledSize.width), String(scaledSize.height), "--sigma", "24", "--mean", "0",
        ])
        try ImageInspector.vips(["add", scaled, grain, grainy])
        let photo = directory.file("photo.jpg")
        try ImageInspector.vips(["cast", grainy, photo + "[Q=92]", "uchar"])

        let header = try ImageHeader.read(path: photo, loader: ImageHeader.loader(of: photo))
        #expect(max(header.storedWidth, header.storedHeight) == 4032)
        #expect(JPEGScale.shrink(for: header, size: 360) == 8)
        let thumbnail = try Thumbnailer.thumbnail(path: photo, spec: ThumbnailSpec(quality: 95))
        #expect(thumbnail.width == width && thumbnail.height == height)
        let ours = try directory.add("ours.jpg", bytes: thumbnail.jpeg)
        #expect(ImageInspector.isRed(try ImageInspector.pixel(ours, x: 3, y: 3)))

        let decoded = directory.file("decoded.v")
        let reference = directory.file("reference.v")
        try ImageInspector.vips(["copy", photo, decoded])
        try ImageInspector.vips(["thumbnail", decoded, reference, "360", "--size", "down"])
        let referenceSize = try ImageInspector.size(reference)
        try #require(referenceSize.width == width && referenceSize.height == height)
        let difference = try ImageInspector.meanAbsoluteDifference(ours, reference)
        #expect(difference < 3, "mean absolute difference \(difference)")
    }

    @Test func cmykBecomesThreeBandSRGB() throws {
        let directory = TemporaryDirectory()
        let (_, path) = try Self.thumbnail("cmyk.jpg", in: directory)
        #expect(try ImageInspector.pixel(path, x: 10, y: 10).count == 3)
    }

    @Test func transparencyIsFlattenedOverWhite() throws {
        let directory = TemporaryDirectory()
        let (_, path) = try Self.thumbnail("alpha.png", in: directory)
        let corner = try ImageInspector.pixel(path, x: 0, y: 0)
        #expect(corner.count == 3)
    }

    @Test func sizeAndQualityComeFromTheSpec() throws {
        let directory = TemporaryDirectory()
        let (small, _) = try Self.thumbnail("photo.jpg", in: directory, spec: ThumbnailSpec(size: 100, quality: 40))
        #expect(small.width == 100 && small.height == 75)
    }

    @Test func truncatedJPEGFailsWhenTruncationIsAnError() {
        #expect(throws: VipsError.self) {
            try Thumbnailer.thumbnail(
                path: Fixtures.media("truncated.jpg"), spec: ThumbnailSpec(damageTolerance: .truncated))
        }
    }

    @Test func truncatedJPEGGivesAPartialThumbnailWhenTolerated() throws {
        let thumbnail = try Thumbnailer.thumbnail(
            path: Fixtures.media("truncated.jpg"), spec: ThumbnailSpec(damageTolerance: .none))
        #expect(thumbnail.width == 360)
    }

    @Test func headerGivesDisplayDimensions() throws {
        let header = try ImageHeader.read(
            path: Fixtures.media("portrait-exif6.jpg"),
            loader: ImageHeader.loader(of: Fixtures.media("portrait-exif6.jpg")))
        #expect(header.orientation == 6)
        #expect(header.storedWidth == 640 && header.storedHeight == 480)
        #expect(header.width == 480 && header.height == 640)
        let gif = try ImageHeader.read(
            path: Fixtures.media("animated.gif"), loader: ImageHeader.loader(of: Fixtures.media("animated.gif")))
        #expect(gif.pages == 4)
        #expect(gif.height == 100)
    }

    /// A file sent to libvips as a JPEG that libvips would read with another
    /// loader (here ImageMagick's, for XML) is refused before that loader is built.
    @Test func aFallbackLoaderNeverReadsAFileSentAsAnotherFormat() throws {
        let path = Fixtures.packageRoot.appendingPathComponent("testdata/fidelity/xml-named.jpg").path
        #expect(try ImageHeader.loader(of: path).hasPrefix("VipsForeignLoadMagick"))
        do {
            _ = try InProcessDecoder().decode(DecodeRequest(path: path, label: "xml-named.jpg", format: .jpeg))
            Issue.record("decoded")
        } catch {
            #expect(error.kind == .damaged)
            // Decoding reads the open file through a VipsSource, and no source loader
            // (ImageMagick has none) claims XML: libvips' JPEG loader declined it.
            #expect(error.message.contains("xml-named.jpg: not a readable JPEG image"), "\(error)")
        }
    }
}
