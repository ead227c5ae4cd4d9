import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

/// HEIC/HEIF/AVIF stills and sequences as a user sees them: type, displayed size,
/// an upright thumbnail (red marker top-left) that is not black; and the
/// libavcodec path's thumbnails against libheif's (mean absolute difference per
/// channel), on the committed fixtures (testdata/fidelity, testdata/heif).
@Suite struct HEIFDecodingTests {
    static func fidelity(_ name: String) -> String {
        Fixtures.packageRoot.appendingPathComponent("testdata/fidelity/\(name)").path
    }
    static func heif(_ name: String) -> String {
        Fixtures.packageRoot.appendingPathComponent("testdata/heif/\(name)").path
    }

    static func request(_ path: String, size: Int = 360, pixelLimit: Int = 100_000_000) -> DecodeRequest {
        let head = [UInt8]((FileManager.default.contents(atPath: path) ?? Data()).prefix(4096))
        let format = ContentSniffer.sniff(head, fileName: (path as NSString).lastPathComponent).format
        return DecodeRequest(
            path: path, label: (path as NSString).lastPathComponent, format: format, pixelLimit: pixelLimit,
            thumbnail: ThumbnailSpec(size: size))
    }

    /// Decodes with the given paths; the thumbnail must be made.
    static func decode(_ path: String, paths: HEIFDecoding.Paths = .automatic, size: Int = 360) throws -> (
        facts: MediaFacts, thumbnail: Thumbnail, route: HEIFDecoding.Route?
    ) {
        let (media, route) = try HEIFDecoding(request: request(path, size: size), paths: paths).decodeWithRoute()
        guard case .made(let thumbnail) = try #require(media.thumbnail) else {
            Issue.record("no thumbnail: \(String(describing: media.thumbnail))")
            throw CancellationError()
        }
        return (media.facts, thumbnail, route)
    }

    /// The thumbnail's pixels (packed RGB), through `vips rawsave`.
    static func pixels(_ thumbnail: Thumbnail) throws -> [UInt8] {
        let directory = TemporaryDirectory()
        let jpeg = try directory.add("t.jpg", bytes: thumbnail.jpeg)
        let raw = directory.file("t.raw")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/vips")
        process.arguments = ["rawsave", jpeg, raw]
        try process.run()
        process.waitUntilExit()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        try #require(bytes.count == thumbnail.width * thumbnail.height * 3)
        return bytes
    }

    /// RGB at a point `fx`, `fy` of the way across (0–1).
    static func pixel(_ pixels: [UInt8], _ thumbnail: Thumbnail, _ fx: Double, _ fy: Double) -> [Int] {
        let x = min(thumbnail.width - 1, Int(Double(thumbnail.width) * fx))
        let y = min(thumbnail.height - 1, Int(Double(thumbnail.height) * fy))
        let i = (y * thumbnail.width + x) * 3
        return [Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2])]
    }

    static func isRed(_ rgb: [Int]) -> Bool { rgb[0] > 150 && rgb[1] < 100 && rgb[2] < 100 }
    static func isBlue(_ rgb: [Int]) -> Bool { rgb[2] > 150 && rgb[0] < 100 && rgb[1] < 100 }
    static func isGreen(_ rgb: [Int]) -> Bool { rgb[1] > 150 && rgb[0] < 100 && rgb[2] < 120 }

    static func meanLuma(_ pixels: [UInt8]) -> Double {
        var sum = 0.0
        for i in stride(from: 0, to: pixels.count, by: 3) {
            sum += 0.299 * Double(pixels[i]) + 0.587 * Double(pixels[i + 1]) + 0.114 * Double(pixels[i + 2])
        }
        return sum / Double(pixels.count / 3)
    }

    /// Mean absolute difference per channel of two thumbnails of one size.
    static func meanAbsoluteDifference(_ a: [UInt8], _ b: [UInt8]) -> [Double] {
        var sums = [0.0, 0.0, 0.0]
        for i in 0..<min(a.count, b.count) { sums[i % 3] += Double(abs(Int(a[i]) - Int(b[i]))) }
        return sums.map { $0 / Double(a.count / 3) }
    }

    struct Case: CustomStringConvertible, Sendable {
        let path: String
        let width: Int
        let height: Int
        let route: HEIFDecoding.Route
        var description: String { (path as NSString).lastPathComponent }
    }

    /// Every HEIF fixture: displayed size, the decoder that made the thumbnail,
    /// an upright (red top-left, blue bottom-right), not black thumbnail that fits 360.
    static let cases: [Case] = [
        Case(path: fidelity("heic-exif6-noirot.heic"), width: 480, height: 640, route: .libavcodec),
        Case(path: fidelity("heic-irot.heic"), width: 480, height: 720, route: .libavcodec),
        Case(path: fidelity("heic-imir.heic"), width: 720, height: 480, route: .libavcodec),
        Case(path: fidelity("grid.heic"), width: 720, height: 480, route: .libavcodec),
        Case(path: fidelity("grid-irot-exif6.heic"), width: 480, height: 720, route: .libavcodec),
        Case(path: fidelity("grid-clap.heic"), width: 696, height: 464, route: .libavcodec),
        Case(path: fidelity("avif-clap.avif"), width: 720, height: 480, route: .libheif),
        Case(path: fidelity("avif-irot.avif"), width: 480, height: 720, route: .libheif),
        Case(path: fidelity("sequence.avifs"), width: 360, height: 240, route: .sequence),
        Case(path: fidelity("sequence-msf1.heics"), width: 360, height: 240, route: .sequence),
        Case(path: heif("grid-2048-exif6.heic"), width: 2000, height: 1488, route: .libavcodec),
        Case(path: heif("thumb-320.heic"), width: 720, height: 480, route: .libavcodec),
        Case(path: heif("odd-size.heic"), width: 332, height: 250, route: .libavcodec),
        Case(path: heif("ten-bit.heic"), width: 320, height: 240, route: .libavcodec),
        Case(path: heif("alpha.heic"), width: 320, height: 240, route: .libheif),
    ]

    @Test(arguments: cases)
    func displayedSizeAndUprightThumbnail(_ c: Case) throws {
        let (facts, thumbnail, route) = try Self.decode(c.path)
        #expect(facts.kind == .image)
        #expect(facts.width == c.width && facts.height == c.height)
        #expect(route == c.route)
        let scale = min(1, 360 / Double(max(c.width, c.height)))
        #expect(abs(thumbnail.width - Int((Double(c.width) * scale).rounded())) <= 1)
        #expect(abs(thumbnail.height - Int((Double(c.height) * scale).rounded())) <= 1)
        let pixels = try Self.pixels(thumbnail)
        #expect(
            Self.isRed(Self.pixel(pixels, thumbnail, 0.03, 0.03)),
            "top-left \(Self.pixel(pixels, thumbnail, 0.03, 0.03))")
        if !c.description.hasPrefix("alpha") {
            #expect(
                Self.isBlue(Self.pixel(pixels, thumbnail, 0.97, 0.97)),
                "bottom-right \(Self.pixel(pixels, thumbnail, 0.97, 0.97))")
        }
        #expect(Self.meanLuma(pixels) > 60)
    }

    /// The libavcodec path (tiles decoded and shrunk one by one) gives the
    /// thumbnail libheif gives (full decode, then the same resize): mean absolute
    /// difference per channel, 0–255, on every HEVC fixture.
    @Test(arguments: cases.filter { $0.route == .libavcodec })
    func libavcodecMatchesLibheif(_ c: Case) throws {
        let ours = try Self.decode(c.path, paths: .primaryItem)
        let reference = try Self.decode(c.path, paths: .libheif)
        #expect(ours.route == .libavcodec)
        #expect(reference.route == .libheif)
        try #require(
            ours.thumbnail.width == reference.thumbnail.width && ours.thumbnail.height == reference.thumbnail.height)
        let difference = Self.meanAbsoluteDifference(
            try Self.pixels(ours.thumbnail), try Self.pixels(reference.thumbnail))
        #expect(difference.allSatisfy { $0 < 3.0 }, "MAD per channel \(difference)")
    }

    /// The same at smaller thumbnails, where tiles are shrunk by 2, 4 and 8 as they
    /// are decoded (2000 px wide, 512 px tiles).
    @Test(arguments: [240, 120, 60])
    func libavcodecMatchesLibheifAtReducedScale(size: Int) throws {
        let path = Self.heif("grid-2048-exif6.heic")
        let ours = try Self.decode(path, paths: .primaryItem, size: size)
        let reference = try Self.decode(path, paths: .libheif, size: size)
        #expect(ours.route == .libavcodec)
        try #require(
            ours.thumbnail.width == reference.thumbnail.width && ours.thumbnail.height == reference.thumbnail.height)
        #expect(ours.thumbnail.width == size && abs(ours.thumbnail.height - size * 1488 / 2000) <= 1)
        let difference = Self.meanAbsoluteDifference(
            try Self.pixels(ours.thumbnail), try Self.pixels(reference.thumbnail))
        #expect(difference.allSatisfy { $0 < 3.0 }, "MAD per channel \(difference)")
    }

    /// An embedded `thmb` at least as large as the thumbnail makes it (its marker
    /// is green); one smaller than the thumbnail is passed over.
    @Test func embeddedThumbnailIsUsedWhenLargeEnough() throws {
        let large = try Self.decode(Self.heif("thumb-480.heic"))
        #expect(large.route == .embeddedThumbnail)
        #expect(large.thumbnail.width == 360 && large.thumbnail.height == 240)
        #expect(Self.isGreen(Self.pixel(try Self.pixels(large.thumbnail), large.thumbnail, 0.03, 0.03)))
        // Asked for more than the embedded 480: the primary image.
        let larger = try Self.decode(Self.heif("thumb-480.heic"), size: 600)
        #expect(larger.route == .libavcodec)
        #expect(Self.isRed(Self.pixel(try Self.pixels(larger.thumbnail), larger.thumbnail, 0.03, 0.03)))
    }

    @Test func alphaIsFlattenedOverWhite() throws {
        let (_, thumbnail, _) = try Self.decode(Self.heif("alpha.heic"))
        // The right half is 50 % transparent: its blue marker comes out light.
        let corner = Self.pixel(try Self.pixels(thumbnail), thumbnail, 0.97, 0.97)
        #expect(corner[0] > 100 && corner[1] > 100 && corner[2] > 200, "\(corner)")
    }

    @Test func sequencesAreAnimatedImagesWithAFrameCount() throws {
        for name in ["sequence.avifs", "sequence-msf1.heics"] {
            let (facts, _, route) = try Self.decode(Self.fidelity(name))
            #expect(facts.kind == .image)
            #expect(facts.frameCount == 5)
            #expect(route == .sequence)
        }
    }

    /// The pixel limit covers the grid's output and its tiles, before any decoding.
    @Test func pixelLimitRefusesGridsBeforeDecoding() throws {
        let path = Self.heif("grid-2048-exif6.heic")
        // 2000×1488 = 2.98 MP of output; 12 tiles of 512×512 = 3.15 MP decoded.
        #expect(throws: MediaError.self) {
            try HEIFDecoding(request: Self.request(path, pixelLimit: 2_000_000)).decode()
        }
        do {
            _ = try HEIFDecoding(request: Self.request(path, pixelLimit: 3_000_000)).decode()
            Issue.record("the tiles' 3.15 MP passed a 3 MP limit")
        } catch {
            #expect(error.kind == .tooManyPixels)
        }
        let allowed = try HEIFDecoding(request: Self.request(path, pixelLimit: 3_200_000)).decode()
        #expect(allowed.facts.width == 2000)
    }

    /// A file cut short fails as damaged (its tiles are missing); garbage after a
    /// valid ftyp is damaged too.
    @Test func truncatedAndCorruptFilesAreDamaged() throws {
        let directory = TemporaryDirectory()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.fidelity("grid.heic"))))
        let truncated = try directory.add("truncated.heic", bytes: Array(bytes.prefix(bytes.count / 2)))
        let media = try HEIFDecoding(request: Self.request(truncated)).decode()
        guard case .failed(let error) = media.thumbnail else {
            Issue.record("a truncated grid made a thumbnail")
            return
        }
        #expect(error.kind == .damaged)
        let corrupt = try directory.add(
            "corrupt.heic", bytes: Array(bytes.prefix(24)) + [UInt8](repeating: 0x41, count: 4000))
        #expect(throws: MediaError.self) { try HEIFDecoding(request: Self.request(corrupt)).decode() }
    }

    /// A JPEG's EXIF thumbnail makes the thumbnail when it is at least as large
    /// (green marker), turned by the photo's EXIF Orientation; asked for more,
    /// the photo itself is decoded (red marker).
    @Test func jpegEXIFThumbnailIsUsedWhenLargeEnough() throws {
        let path = Self.heif("exif-thumb-480.jpg")
        func decode(size: Int) throws -> (MediaFacts, Thumbnail) {
            let media = try InProcessDecoder().decode(Self.request(path, size: size))
            guard case .made(let thumbnail) = try #require(media.thumbnail) else { throw CancellationError() }
            return (media.facts, thumbnail)
        }
        let (facts, small) = try decode(size: 360)
        #expect(facts.width == 900 && facts.height == 1200)
        #expect(small.width == 270 && small.height == 360)
        #expect(Self.isGreen(Self.pixel(try Self.pixels(small), small, 0.03, 0.03)))
        #expect(Self.isBlue(Self.pixel(try Self.pixels(small), small, 0.97, 0.97)))
        let (_, large) = try decode(size: 600)
        #expect(large.width == 450 && large.height == 600)
        #expect(Self.isRed(Self.pixel(try Self.pixels(large), large, 0.03, 0.03)))
    }
}

/// The `av1C` record's fixed bytes as an AV1 gain map's reader needs them
/// (AV1-ISOBMFF §2.3): bit depth, monochrome and chroma subsampling; a record
/// without the marker and version 1 is no configuration.
@Suite struct AV1ConfigurationTests {
    @Test func itsFixedBytesGiveTheBitDepthAndChromaFormat() {
        // (byte 2: tier, high_bitdepth, twelve_bit, monochrome, subsampling x, y, position) -> (depth, chroma format)
        let cases: [(UInt8, Int, Int)] = [
            (0b0000_1100, 8, 1), (0b0001_1100, 8, 0), (0b0100_1100, 10, 1), (0b0110_0000, 12, 3), (0b0000_1000, 8, 2),
            (0b1100_1100, 10, 1),
        ]
        for (flags, depth, chroma) in cases {
            let configuration = AV1Configuration(record: [0x81, 0x04, flags, 0x00])
            #expect(
                configuration?.bitDepth == depth && configuration?.chromaFormat == chroma,
                "flags \(String(flags, radix: 2)): \(String(describing: configuration))")
        }
        #expect(AV1Configuration(record: [0x01, 0x04, 0x0C, 0x00]) == nil)
        #expect(AV1Configuration(record: [0x81, 0x04, 0x0C]) == nil)
        // Subsampled vertically but not horizontally: no chroma format has that.
        #expect(AV1Configuration(record: [0x81, 0x04, 0x04, 0x00]) == nil)
    }

    /// The committed AVIF with an AV1 gain map: a 4:2:0 photo, a monochrome map,
    /// both 8-bit; the gain-map path takes the map, the photo path does not take
    /// the photo (libheif decodes AVIF photos, as before).
    @Test func theGainMapPathTakesAnAV1MapAndThePhotoPathLeavesAVIFToLibheif() throws {
        let bytes = Array(
            try Data(contentsOf: Fixtures.packageRoot.appendingPathComponent("testdata/spatial/sdr-tmap.avif")))
        let file = try HEIFFile.parse(bytes)
        let photo = try #require(file.primaryItem)
        let map = try #require(file.items[2])
        #expect(
            file.av1Configuration(of: photo)?.chromaFormat == 1 && file.av1Configuration(of: map)?.chromaFormat == 0)
        let layout = try CodedItemDecoder.layout(
            of: map, in: file, bytes: bytes, types: CodedItemDecoder.gainMapTypes, auxiliary: true)
        #expect(
            layout.coding.codec == .av1 && layout.bitDepth == 8 && layout.outputWidth == 320
                && layout.outputHeight == 240)
        #expect(throws: CodedItemDecoder.NotTaken.self) {
            try CodedItemDecoder.layout(of: photo, in: file, bytes: bytes)
        }
        let picture = try CodedItemDecoder(
            file: file, bytes: bytes, threads: 1, pixelLimit: 1 << 24, deadline: Deadline(seconds: 30)
        )
        .decode(layout, reduction: 4, raw: true, grey: true)
        #expect(picture.width == 80 && picture.height == 60 && picture.pixels.count == 80 * 60)
        // The map's shape: 255 in its top-left quarter, 0 in its bottom-right.
        #expect(
            picture.pixels[5 * 80 + 5] > 245 && picture.pixels[55 * 80 + 75] < 10,
            "\(picture.pixels[5 * 80 + 5]) \(picture.pixels[55 * 80 + 75])")
    }
}
