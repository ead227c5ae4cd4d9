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

    @Test func hashesAreSixteenHexadecimalDigits() throws {
        #expect(PerceptualHash.hash(width: 0, height: 30, rgba: []) == nil)
        #expect(PerceptualHash.hash(width: 2, height: 2, rgba: [1, 2, 3]) == nil)
        #expect(PerceptualHash.hex(0x00ab) == "00000000000000ab")
        #expect(PerceptualHash.parse("9696056BD8A2657B") == 0x9696_056b_d8a2_657b)
        #expect(PerceptualHash.parse("9696056bd8a2657") == nil)
        #expect(PerceptualHash.parse("9696056bd8a2657g") == nil)
    }
}
