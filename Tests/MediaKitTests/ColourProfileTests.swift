import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

/// Pictures tagged with an ICC profile (issue 62: every iPhone photo is Display
/// P3) get thumbnails in sRGB's colours, as a screen shows their source; a
/// compatible copy, which carries the profile, keeps the profile's values.
/// The expected colours are LittleCMS's through the `vips` command line
/// (`icc_transform … srgb --embedded`), not through the pipeline's code.
@Suite struct ColourProfileTests {
    /// The values every test picture holds: an orange that Display P3 and sRGB
    /// write ten levels apart in red and eight in blue.
    static let values: [Double] = [180, 120, 80]

    /// A 64×48 picture of ``values`` tagged with the profile of `profileSource`
    /// (exiftool copies the profile, the pixels are not touched), as JPEG, PNG
    /// and (from the PNG, `heif-enc` keeps its profile) HEIC; and the colour
    /// LittleCMS shows the JPEG in, in sRGB.
    static func tagged(with profileSource: String, in directory: TemporaryDirectory) throws -> (
        jpeg: String, heic: String, shown: [Double]
    ) {
        let flat = directory.file("flat.v")
        try ImageInspector.vips(["black", directory.file("black.v"), "64", "48", "--bands", "3"])
        try ImageInspector.vips(
            [
                "linear", directory.file("black.v"), directory.file("lit.v"), "1 1 1",
                values.map { "\(Int($0))" }.joined(separator: " "),
            ])
        try ImageInspector.vips(["cast", directory.file("lit.v"), flat, "uchar"])
        let jpeg = directory.file("tagged.jpg")
        try ImageInspector.vips(["copy", flat, jpeg + "[Q=98]"])
        let copied = try MediaTools.run(
            "/usr/bin/exiftool", ["-q", "-overwrite_original", "-TagsFromFile", profileSource, "-ICC_Profile", jpeg])
        try #require(copied.status == 0)
        let png = directory.file("tagged.png")
        try ImageInspector.vips(["copy", jpeg, png])
        let heic = directory.file("tagged.heic")
        let encoded = try MediaTools.run("/usr/bin/heif-enc", ["-q", "95", "-o", heic, png])
        try #require(encoded.status == 0)
        let shown = directory.file("shown.png")
        try ImageInspector.vips(["icc_transform", jpeg, shown, "srgb", "--embedded"])
        return (jpeg, heic, try ImageInspector.pixel(shown, x: 32, y: 24))
    }

    static let displayP3 = Fixtures.testdata("real/iphone13mini-apple-gainmap-old.jpg")
    static let sRGBProfile = Fixtures.testdata("motion/real/pixel-3a-xl.MP.jpg")

    /// The thumbnail's centre pixel.
    static func centre(_ thumbnail: Thumbnail, in directory: TemporaryDirectory) throws -> [Double] {
        let path = try directory.add("thumbnail-\(UUID().uuidString).jpg", bytes: thumbnail.jpeg)
        return try ImageInspector.pixel(path, x: thumbnail.width / 2, y: thumbnail.height / 2)
    }

    static func expect(_ pixel: [Double], near expected: [Double], within tolerance: Double = 2.5, _ what: String) {
        #expect(
            pixel.count == 3 && zip(pixel, expected).allSatisfy { abs($0 - $1) <= tolerance },
            "\(what): \(pixel), not \(expected)")
    }

    @Test func aDisplayP3JPEGsThumbnailShowsItsColoursInSRGB() throws {
        let directory = TemporaryDirectory()
        let picture = try Self.tagged(with: Self.displayP3, in: directory)
        // The fixture tells the two apart: shown in sRGB, its red is well above the values it holds.
        #expect(picture.shown[0] - Self.values[0] >= 6, "LittleCMS shows \(picture.shown)")
        let thumbnail = try Thumbnailer.thumbnail(path: picture.jpeg, spec: ThumbnailSpec(size: 32))
        Self.expect(try Self.centre(thumbnail, in: directory), near: picture.shown, "the JPEG's thumbnail")
    }

    /// Through libavcodec (the iPhone HEIC's path) and through libheif.
    @Test(arguments: [false, true])
    func aDisplayP3HEICsThumbnailShowsItsColoursInSRGB(libheif: Bool) throws {
        let directory = TemporaryDirectory()
        let picture = try Self.tagged(with: Self.displayP3, in: directory)
        let (_, thumbnail, route) = try HEIFDecodingTests.decode(
            picture.heic, paths: libheif ? .libheif : .primaryItem, size: 32)
        #expect(route == (libheif ? .libheif : .libavcodec))
        // HEVC at quality 95 moves a flat colour by a level or two.
        Self.expect(try Self.centre(thumbnail, in: directory), near: picture.shown, within: 4, "the HEIC's thumbnail")
    }

    /// A 16-bit PNG with the profile: libvips' thumbnail makes it 8-bit with
    /// the profile still on it, and it is shown in the same colour.
    @Test func aSixteenBitDisplayP3PNGsThumbnailShowsItsColoursInSRGB() throws {
        let directory = TemporaryDirectory()
        let picture = try Self.tagged(with: Self.displayP3, in: directory)
        let deep = directory.file("deep.png")
        try ImageInspector.vips(["colourspace", picture.jpeg, directory.file("deep.v"), "rgb16"])
        try ImageInspector.vips(["copy", directory.file("deep.v"), deep])
        let described = try MediaTools.run("/usr/bin/exiftool", ["-s3", "-BitDepth", "-ProfileDescription", deep])
        try #require(described.output.split(separator: "\n") == ["16", "Display P3"], "\(described.output)")
        let thumbnail = try Thumbnailer.thumbnail(path: deep, spec: ThumbnailSpec(size: 32))
        Self.expect(try Self.centre(thumbnail, in: directory), near: picture.shown, "the 16-bit PNG's thumbnail")
    }

    @Test func aCompatibleCopyKeepsItsProfilesValues() throws {
        let directory = TemporaryDirectory()
        let picture = try Self.tagged(with: Self.displayP3, in: directory)
        var spec = ThumbnailSpec(size: 1 << 20)
        spec.convertsToSRGB = false
        let copy = try Thumbnailer.thumbnail(path: picture.jpeg, spec: spec)
        Self.expect(try Self.centre(copy, in: directory), near: Self.values, "the copy's values")
    }

    @Test func anSRGBProfileLeavesThePictureAsItIs() throws {
        let directory = TemporaryDirectory()
        let picture = try Self.tagged(with: Self.sRGBProfile, in: directory)
        let profile = try #require(try Thumbnailer.thumbnailImage(path: picture.jpeg, spec: ThumbnailSpec()).iccProfile)
        #expect(ICCProfile.describesSRGB(profile))
        let p3 = try #require(try Thumbnailer.thumbnailImage(path: Self.displayP3, spec: ThumbnailSpec()).iccProfile)
        #expect(!ICCProfile.describesSRGB(p3))
        let thumbnail = try Thumbnailer.thumbnail(path: picture.jpeg, spec: ThumbnailSpec(size: 32))
        Self.expect(try Self.centre(thumbnail, in: directory), near: Self.values, "an sRGB photo's thumbnail")
    }

    /// A profile that is not one (cut short, or bytes of something else) leaves
    /// the picture's values as they are, and its thumbnail is still made.
    @Test(arguments: [0, 1, 2])
    func aProfileThatCannotBeReadLeavesTheValues(damage: Int) throws {
        let directory = TemporaryDirectory()
        let real = try #require(try Thumbnailer.thumbnailImage(path: Self.displayP3, spec: ThumbnailSpec()).iccProfile)
        let profile: [UInt8] =
            switch damage {
            case 0: Array(real.prefix(200))  // its tag table points past its end
            case 1: Array(repeating: 0x41, count: 600)
            default: Array(real.prefix(128)) + [0xFF, 0xFF, 0xFF, 0xFF] + Array(real.dropFirst(132))  // 4 billion tags
            }
        #expect(!ICCProfile.describesSRGB(profile))
        let pixels = (0..<(16 * 16)).flatMap { _ in Self.values.map { UInt8($0) } }
        let image = try VipsImageHandle.fromRGB(pixels, width: 16, height: 16)
        let thumbnail = try image.tagged(iccProfile: profile).thumbnail(spec: ThumbnailSpec(size: 16))
        Self.expect(try Self.centre(thumbnail, in: directory), near: Self.values, "damaged profile \(damage)")
    }
}
