import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

/// The ThumbHash of thumbnails, bit for bit against the reference algorithm:
/// the oracle is the `thumbhash` package (0.1.2), patched where it differs from
/// Evan Wallace's JavaScript reference (scripts/thumbhash-oracle.py says how),
/// run in a virtual environment of its own (made here when missing, or by
/// scripts/setup.sh).
@Suite(.serialized) struct ThumbHashTests {
    /// The Python with the package: `THUMBHASH_PYTHON`, else `.build/thumbhash-venv` (made when missing).
    static let python: String = {
        if let given = ProcessInfo.processInfo.environment["THUMBHASH_PYTHON"] { return given }
        let venv = Fixtures.packageRoot.appendingPathComponent(".build/thumbhash-venv").path
        let python = venv + "/bin/python3"
        if !FileManager.default.fileExists(atPath: venv + "/.thumbhash-0.1.2") {
            _ = try? MediaTools.run("/usr/bin/python3", ["-m", "venv", venv])
            if (try? MediaTools.run(venv + "/bin/pip", ["install", "--quiet", "thumbhash==0.1.2"]))?.status == 0 {
                FileManager.default.createFile(atPath: venv + "/.thumbhash-0.1.2", contents: nil)
            }
        }
        return python
    }()

    /// The oracle's hashes of `images` (width, height, RGBA bytes), in order.
    static func oracle(_ images: [(width: Int, height: Int, rgba: [UInt8])]) throws -> [[UInt8]] {
        let directory = TemporaryDirectory()
        var arguments = [Fixtures.packageRoot.appendingPathComponent("scripts/thumbhash-oracle.py").path]
        for (i, image) in images.enumerated() {
            arguments += [String(image.width), String(image.height), try directory.add("\(i).rgba", bytes: image.rgba)]
        }
        let result = try MediaTools.run(python, arguments)
        try #require(
            result.status == 0, "the oracle failed (\(python)): is the thumbhash package installed? (scripts/setup.sh)")
        let lines = result.output.split(separator: "\n").map(String.init)
        try #require(lines.count == images.count)
        return lines.map { line in
            stride(from: 0, to: line.count, by: 2).map { UInt8(line.dropFirst($0).prefix(2), radix: 16)! }
        }
    }

    /// Pictures made here: noise (opaque and with random alpha), flat colours
    /// (some where rounding a half decides a bit),
    /// gradients, a fully transparent one, a partly transparent one, at the
    /// sizes that change the luminance grid (square, landscape, portrait, a
    /// line, one pixel, 100×100).
    static func generated() -> [(width: Int, height: Int, rgba: [UInt8])] {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt8 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: seed >> 33)
        }
        var images: [(width: Int, height: Int, rgba: [UInt8])] = []
        for (w, h) in [(1, 1), (100, 100), (100, 37), (23, 100), (100, 1), (7, 5), (64, 48)] {
            images.append((w, h, (0..<w * h * 4).map { $0 % 4 == 3 ? 255 : next() }))
            images.append((w, h, (0..<w * h * 4).map { _ in next() }))
        }
        for (w, h) in [(100, 75), (30, 90)] {
            var gradient: [UInt8] = []
            var holes: [UInt8] = []
            for y in 0..<h {
                for x in 0..<w {
                    gradient += [UInt8(x * 255 / (w - 1)), UInt8(y * 255 / (h - 1)), UInt8((x + y) % 256), 255]
                    let inside =
                        (x - w / 2) * (x - w / 2) + (y - h / 2) * (y - h / 2) < (min(w, h) / 3) * (min(w, h) / 3)
                    holes += [200, UInt8(x % 256), 40, inside ? 255 : 0]
                }
            }
            images.append((w, h, gradient))
            images.append((w, h, holes))
            images.append((w, h, [UInt8](repeating: 0, count: w * h * 4)))
            images.append((w, h, (0..<w * h).flatMap { _ in [UInt8(17), 130, 250, 255] }))
            images.append((w, h, (0..<w * h).flatMap { _ in [UInt8(255), 255, 255, 128] }))
        }
        // Flat colours where a coefficient lands on a half (found by searching
        // with the oracle): the reference's Math.round rounds it up, Python's
        // round() to even.
        for colour: [UInt8] in [[0, 0, 170, 255], [0, 5, 45, 255], [0, 5, 215, 255]] {
            images.append((1, 1, colour))
            images.append((8, 6, Array([[UInt8]](repeating: colour, count: 48).joined())))
        }
        return images
    }

    @Test func generatedPicturesHashAsTheReferenceDoes() throws {
        let images = Self.generated()
        let expected = try Self.oracle(images)
        for (image, oracle) in zip(images, expected) {
            let hash = try #require(ThumbHash.encode(width: image.width, height: image.height, rgba: image.rgba))
            #expect(hash == oracle, "\(image.width)×\(image.height)")
            #expect(hash.count <= 40)
        }
    }

    /// Real files: the thumbnail's own pixels (what the thumbnail JPEG is
    /// encoded from), scaled to fit 100×100, hash as the reference hashes them,
    /// and that hash is the one the thumbnail carries.
    @Test func thumbnailsOfRealFilesCarryTheReferenceHashOfTheirPixels() throws {
        let names = [
            "media/photo.jpg", "media/portrait-exif6.jpg", "media/gray.jpg", "media/cmyk.jpg", "media/image.heic",
            "media/alpha.png",
            "media/png16.png", "media/screenshot.png", "media/wide-2000x10.png", "heif/alpha.heic",
            "heif/grid-2048-exif6.heic",
        ]
        var inputs: [(width: Int, height: Int, rgba: [UInt8])] = []
        var carried: [[UInt8]] = []
        for name in names {
            let path = Fixtures.testdata(name)
            let image = try Thumbnailer.thumbnailImage(path: path, spec: ThumbnailSpec())
            let input = try image.thumbHashInput()
            #expect(max(input.width, input.height) == min(100, max(image.width, image.height)), "\(name)")
            inputs.append(input)
            let thumbnail = try Thumbnailer.thumbnail(path: path, spec: ThumbnailSpec())
            carried.append(try #require(thumbnail.thumbHash, "\(name) has no ThumbHash"))
        }
        let expected = try Self.oracle(inputs)
        for (i, name) in names.enumerated() {
            #expect(carried[i] == expected[i], "\(name)")
            let hasAlpha = carried[i][2] & 0x80 != 0
            #expect(hasAlpha == (name.hasSuffix("alpha.png") || name.hasSuffix("alpha.heic")), "\(name): alpha flag")
        }
    }

    @Test func picturesTheReferenceRefusesHaveNoHash() {
        #expect(ThumbHash.encode(width: 101, height: 10, rgba: [UInt8](repeating: 0, count: 101 * 10 * 4)) == nil)
        #expect(ThumbHash.encode(width: 0, height: 10, rgba: []) == nil)
        #expect(ThumbHash.encode(width: 2, height: 2, rgba: [1, 2, 3]) == nil)
    }
}

/// The scale that fits a thumbnail into ThumbHash's 100×100: each output
/// pixel the mean of the source area it covers.
@Suite struct AreaAverageTests {
    @Test func wholePixelBoxesAreTheirMeans() throws {
        // 4×2 → 2×1: each output pixel averages a 2×2 box.
        let rgba: [UInt8] = [
            0, 10, 100, 255, 4, 20, 100, 255, 200, 0, 0, 0, 100, 0, 0, 255,
            8, 30, 100, 255, 12, 40, 100, 255, 0, 0, 255, 255, 100, 0, 255, 0,
        ]
        let out = try #require(AreaAverage.fitting(width: 4, height: 2, rgba: rgba, longestSide: 2))
        #expect(out.width == 2 && out.height == 1)
        #expect(out.rgba == [6, 25, 100, 255, 100, 0, 128, 128])
    }

    @Test func partlyCoveredPixelsCountByTheirShare() throws {
        // 3 columns → 2: the middle column is half in each output pixel.
        let rgba: [UInt8] = [0, 0, 0, 255, 90, 90, 90, 255, 240, 240, 240, 255]
        let out = try #require(AreaAverage.fitting(width: 3, height: 1, rgba: rgba, longestSide: 2))
        #expect(out.width == 2 && out.height == 1)
        // (0 × 1 + 90 × 0.5) / 1.5 = 30; (90 × 0.5 + 240 × 1) / 1.5 = 190.
        #expect(out.rgba == [30, 30, 30, 255, 190, 190, 190, 255])
    }

    @Test func aFlatPictureStaysFlatAndTheLongestSideFits() throws {
        for (w, h) in [(360, 270), (270, 360), (360, 2), (101, 100), (1000, 999)] {
            let pixel: [UInt8] = [17, 130, 250, 77]
            let rgba = [UInt8]([[UInt8]](repeating: pixel, count: w * h).joined())
            let out = try #require(AreaAverage.fitting(width: w, height: h, rgba: rgba, longestSide: 100))
            #expect(max(out.width, out.height) == 100, "\(w)×\(h)")
            #expect(
                min(out.width, out.height) == max(1, Int((Double(min(w, h)) * 100 / Double(max(w, h))).rounded())),
                "\(w)×\(h)")
            #expect(
                out.rgba == [UInt8]([[UInt8]](repeating: pixel, count: out.width * out.height).joined()), "\(w)×\(h)")
        }
    }

    @Test func smallPicturesAreUnchangedAndBadOnesRefused() {
        let rgba: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        #expect(AreaAverage.fitting(width: 2, height: 1, rgba: rgba, longestSide: 100)?.rgba == rgba)
        #expect(AreaAverage.fitting(width: 2, height: 2, rgba: rgba, longestSide: 100) == nil)
        #expect(AreaAverage.fitting(width: 0, height: 1, rgba: [], longestSide: 100) == nil)
    }
}

/// A hash drawn back as the placeholder it stands for (`ThumbHash.decode`, the
/// reference's `thumbHashToRGBA`), as the HTML report shows it: the picture's
/// aspect ratio at most 32 px a side, its colours where they were.
@Suite struct ThumbHashDecodeTests {
    /// `width`×`height`, red on the left half and blue on the right, opaque
    /// (or, when `fade`, the right half transparent).
    static func halves(_ width: Int, _ height: Int, fade: Bool = false) -> [UInt8] {
        var rgba: [UInt8] = []
        for _ in 0..<height {
            for x in 0..<width {
                rgba += x < width / 2 ? [220, 30, 30, 255] : fade ? [30, 30, 220, 0] : [30, 30, 220, 255]
            }
        }
        return rgba
    }

    @Test func aLandscapePictureComesBackLandscapeRedLeftBlueRight() throws {
        let hash = try #require(ThumbHash.encode(width: 60, height: 30, rgba: Self.halves(60, 30)))
        let image = try #require(ThumbHash.decode(hash))
        // 7 × 4 luminance terms: the ratio 1.75, so 32 × 18.
        #expect(image.width == 32 && image.height == 18)
        #expect(image.rgba.count == 32 * 18 * 4)
        func pixel(_ x: Int, _ y: Int) -> [UInt8] {
            Array(image.rgba[((y * image.width + x) * 4)..<((y * image.width + x) * 4 + 4)])
        }
        let left = pixel(3, 9)
        let right = pixel(28, 9)
        #expect(left[0] > left[2] + 80 && left[3] == 255, "left: \(left)")
        #expect(right[2] > right[0] + 80 && right[3] == 255, "right: \(right)")
    }

    @Test func aPortraitPictureWithTransparencyKeepsItsAlpha() throws {
        let hash = try #require(ThumbHash.encode(width: 40, height: 80, rgba: Self.halves(40, 80, fade: true)))
        let image = try #require(ThumbHash.decode(hash))
        #expect(image.height == 32 && image.width < 32, "\(image.width)×\(image.height)")
        let y = image.height / 2
        let left = image.rgba[(y * image.width + 1) * 4 + 3]
        let right = image.rgba[(y * image.width + image.width - 2) * 4 + 3]
        #expect(left > 200 && right < 60, "alpha left \(left), right \(right)")
    }

    @Test func bytesTooShortForTheirHeaderAreNoHash() {
        #expect(ThumbHash.decode([1, 2, 3]) == nil)
        #expect(ThumbHash.decode([0x20, 0xD8, 0x0D, 0x3D, 0x84]) == nil, "a header with no factors after it")
    }
}
