import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

/// The perceptual hash thumbnails carry (``PerceptualHash``, issue 62's
/// `similarTo`), against an independent implementation: Python's
/// `imagehash.phash` of the same files, computed once by
/// scripts/phash-oracle.py into testdata/similar/expected.json (made with the
/// pictures by scripts/make-similar.sh; no network here).
@Suite struct PerceptualHashTests {
    static let folder = Fixtures.testdata("similar")

    static func expected() throws -> [String: UInt64] {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/expected.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        return object.compactMapValues(PerceptualHash.parse)
    }

    static func carried(_ name: String) throws -> UInt64 {
        let thumbnail = try Thumbnailer.thumbnail(path: folder + "/" + name, spec: ThumbnailSpec())
        return try #require(thumbnail.perceptualHash, "\(name) has no perceptual hash")
    }

    /// Each picture's hash, made from its thumbnail's pixels, is within 4 bits
    /// of imagehash's of the whole file (they differ in the scaling: the
    /// thumbnail's, then an area average, where imagehash uses a Lanczos
    /// kernel). Not the three made of pure patterns: a zone plate and a sine
    /// grating alias differently under each scaling, and a flat gradient's
    /// coefficients are all but zero, so their bits are the rounding's.
    @Test func thumbnailsCarryAHashWithinAFewBitsOfImagehash() throws {
        let expected = try Self.expected()
        #expect(expected.count == 14)
        let patterns: Set = ["distinct-zone.jpg", "distinct-sines.jpg", "distinct-gradient.jpg"]
        for (name, oracle) in expected.sorted(by: { $0.key < $1.key }) where !patterns.contains(name) {
            let hash = try Self.carried(name)
            print(
                "phash: \(name) \(PerceptualHash.hex(hash)) imagehash \(PerceptualHash.hex(oracle)): \(PerceptualHash.distance(hash, oracle)) bits"
            )
            #expect(
                PerceptualHash.distance(hash, oracle) <= 4,
                "\(name): \(PerceptualHash.hex(hash)) against imagehash's \(PerceptualHash.hex(oracle))")
        }
    }

    /// Every copy is within the fan-in's threshold of the original; every
    /// distinct picture is far from it and from each other.
    @Test func copiesAreNearAndDistinctPicturesFar() throws {
        let names = try Self.expected().keys.sorted()
        var hashes: [String: UInt64] = [:]
        for name in names { hashes[name] = try Self.carried(name) }
        let original = try #require(hashes["original.jpg"])
        for name in names where name.hasPrefix("copy") || name.hasPrefix("distinct") {
            print(
                "phash: \(name) is \(PerceptualHash.distance(try #require(hashes[name]), original)) bits from original.jpg"
            )
        }
        for name in names where name.hasPrefix("copy") {
            #expect(PerceptualHash.distance(try #require(hashes[name]), original) <= 8, "\(name)")
        }
        let distinct = names.filter { $0.hasPrefix("distinct") } + ["original.jpg"]
        for (i, a) in distinct.enumerated() {
            for b in distinct[(i + 1)...] {
                #expect(PerceptualHash.distance(try #require(hashes[a]), try #require(hashes[b])) > 16, "\(a) and \(b)")
            }
        }
    }

    /// A picture without detail (plain after scaling to 32×32) gets no hash:
    /// its AC terms are rounding noise, and every such picture hashed alike
    /// (``PerceptualHash/flatNoise``). A faint gradient of a few grey levels
    /// still gets one, as does a plain picture with a faint pattern on it.
    @Test func aPictureWithoutDetailGetsNoHash() throws {
        func picture(_ width: Int, _ height: Int, _ colour: (Int, Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
            var rgba: [UInt8] = []
            for y in 0..<height {
                for x in 0..<width {
                    let (r, g, b) = colour(x, y)
                    rgba += [r, g, b, 255]
                }
            }
            return rgba
        }
        #expect(PerceptualHash.hash(width: 64, height: 48, rgba: picture(64, 48) { _, _ in (128, 128, 128) }) == nil)
        #expect(PerceptualHash.hash(width: 48, height: 64, rgba: picture(48, 64) { _, _ in (40, 90, 200) }) == nil)
        #expect(PerceptualHash.hash(width: 1, height: 1, rgba: [0, 0, 0, 255]) == nil)
        // Four grey levels from left to right, and a one-level step: low contrast, but detail.
        let faint = picture(64, 48) { x, _ in (UInt8(100 + x / 16), UInt8(100 + x / 16), UInt8(100 + x / 16)) }
        #expect(PerceptualHash.hash(width: 64, height: 48, rgba: faint) != nil)
        let step = picture(64, 48) { x, _ in x < 32 ? (100, 100, 100) : (101, 101, 101) }
        #expect(PerceptualHash.hash(width: 64, height: 48, rgba: step) != nil)
        for name in ["plain-grey.jpg", "plain-blue.jpg"] {
            let thumbnail = try Thumbnailer.thumbnail(path: Fixtures.testdata("flat/" + name), spec: ThumbnailSpec())
            #expect(thumbnail.perceptualHash == nil, "\(name)")
        }
    }

    /// The second check: each quarter's mean colour. The tests' copies keep
    /// their original's colours within a few levels; the distinct pictures
    /// differ by more than the tolerance. An item's record keeps both; a
    /// record of the hash alone (older) still reads.
    @Test func colourCellsTellCopiesFromOtherPictures() throws {
        func cells(_ name: String) throws -> [UInt8] {
            let thumbnail = try Thumbnailer.thumbnail(path: Self.folder + "/" + name, spec: ThumbnailSpec())
            return try #require(thumbnail.colourCells, "\(name) has no colour cells")
        }
        let original = try cells("original.jpg")
        // Two smooth gradients, warm 4:3 and cool 2:3 (testdata/flat): hashes alike, colours not.
        let gradients = try ["gradient-warm.jpg", "gradient-cool.jpg"].map {
            try Thumbnailer.thumbnail(path: Fixtures.testdata("flat/" + $0), spec: ThumbnailSpec())
        }
        let (warm, cool) = (try #require(gradients[0].perceptualHash), try #require(gradients[1].perceptualHash))
        print("phash: gradients \(PerceptualHash.hex(warm)) \(PerceptualHash.hex(cool))")
        #expect(PerceptualHash.distance(warm, cool) <= 8)
        #expect(
            !PerceptualHash.coloursAlike(try #require(gradients[0].colourCells), try #require(gradients[1].colourCells))
        )
        for name in try Self.expected().keys.sorted() {
            #expect(PerceptualHash.coloursAlike(try cells(name), original) == !name.hasPrefix("distinct"), "\(name)")
        }
        // Red left, blue right, as 2×2 pixels: each quarter its pixel.
        let rgba: [UInt8] = [255, 0, 0, 255, 0, 0, 255, 255, 255, 0, 0, 255, 0, 0, 255, 255]
        #expect(
            PerceptualHash.colourCells(width: 2, height: 2, rgba: rgba) == [255, 0, 0, 0, 0, 255, 255, 0, 0, 0, 0, 255])
        #expect(
            PerceptualHash.colourCells(width: 1, height: 1, rgba: [9, 8, 7, 255]) == [
                9, 8, 7, 9, 8, 7, 9, 8, 7, 9, 8, 7,
            ])
        let record = PerceptualHash.record(0x9696_056b_d8a2_657b, colours: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255])
        #expect(record == "9696056bd8a2657b-000102030405060708090aff")
        #expect(PerceptualHash.parseRecord(record)?.colours == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255])
        #expect(PerceptualHash.parseRecord("9696056bd8a2657b")?.hash == 0x9696_056b_d8a2_657b)
        #expect(PerceptualHash.parseRecord("9696056bd8a2657b")?.colours == nil)
        for bad in ["9696056bd8a2657b-", "9696056bd8a2657b-00", "9696056bd8a2657b-000102030405060708090aff-00", "x"] {
            #expect(PerceptualHash.parseRecord(bad) == nil, "\(bad)")
        }
    }

    @Test func hashesAreSixteenHexadecimalDigits() throws {
        #expect(PerceptualHash.hash(width: 0, height: 30, rgba: []) == nil)
        #expect(PerceptualHash.hash(width: 2, height: 2, rgba: [1, 2, 3]) == nil)
        #expect(PerceptualHash.hex(0x00ab) == "00000000000000ab")
        #expect(PerceptualHash.parse("9696056BD8A2657B") == 0x9696_056b_d8a2_657b)
        #expect(PerceptualHash.parse("9696056bd8a2657") == nil)
        #expect(PerceptualHash.parse("9696056bd8a2657g") == nil)
    }
}
