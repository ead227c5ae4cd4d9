import Foundation
import MediaFormats
import ShareManifest
import TestSupport
import Testing

@testable import ShareIngestCore

/// The near-duplicate index (``HashIndex``, multi-index hashing over four
/// 16-bit chunks): it finds exactly what a scan of every hash finds.
@Suite struct SimilarIndexTests {
    /// A deterministic generator (SplitMix64), so a failure can be replayed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// `hash` with `bits` of its bits flipped (distinct ones).
    static func flipping(_ hash: UInt64, bits: Int, using random: inout SplitMix) -> UInt64 {
        var positions = Set<UInt64>()
        while positions.count < bits { positions.insert(random.next() % 64) }
        return positions.reduce(hash) { $0 ^ (1 << $1) }
    }

    @Test func findsWhatAScanFinds() {
        var random = SplitMix(state: 62)
        var index = HashIndex(radius: SimilarPictures.threshold)
        var hashes: [UInt64] = []
        for _ in 0..<2000 {
            // Half of them near an earlier one (0 to 12 bits away).
            let hash =
                hashes.isEmpty || random.next() % 2 == 0
                ? random.next()
                : Self.flipping(
                    hashes[Int(random.next() % UInt64(hashes.count))], bits: Int(random.next() % 13), using: &random)
            hashes.append(hash)
            index.insert(hash)
        }
        for _ in 0..<500 {
            let query = Self.flipping(
                hashes[Int(random.next() % UInt64(hashes.count))], bits: Int(random.next() % 12), using: &random)
            let scanned = hashes.enumerated().map {
                (id: $0.offset, distance: PerceptualHash.distance($0.element, query))
            }
            .filter { $0.distance <= SimilarPictures.threshold }.sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }
            let found = index.near(query)
            #expect(found.map(\.id) == scanned.map(\.id) && found.map(\.distance) == scanned.map(\.distance))
        }
    }

    /// An index with no hash yet (a first batch, a batch of text) holds no
    /// bucket and finds nothing; its first hash is found as any other.
    @Test func anEmptyIndexFindsNothingThenItsFirstHash() {
        var index = HashIndex(radius: SimilarPictures.threshold)
        #expect(index.near(0x0123_4567_89AB_CDEF).isEmpty)
        index.insert(0x0123_4567_89AB_CDEF)
        #expect(index.near(0x0123_4567_89AB_CDEE).map(\.id) == [0])
        #expect(index.near(0x0123_4567_89AB_CDEE).map(\.distance) == [1])
    }

    /// A record from before flat pictures went without a hash may carry the
    /// one they all shared (``PerceptualHash/flatNoise``): such an item, of this
    /// batch or of an earlier share, is neither similar nor anyone's original;
    /// a real picture's copy still names its original.
    @Test func theHashFlatPicturesSharedIsNoneInOldRecords() throws {
        let folder = TemporaryDirectory("similar-old-flat")
        let container = try ContainerDirectory(folder.path)
        let flat = PerceptualHash.hex(PerceptualHash.flatNoise)
        // An earlier share, still there, whose flat picture's copy is there too.
        let key = try ShareKey("earlier-share")
        try FileManager.default.createDirectory(atPath: container.manifestsDirectory, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: container.manifestPath(key: key), contents: Data("[]".utf8)))
        let earlier = EarlierHash(hash: PerceptualHash.flatNoise, batch: UUID(), index: 0, shareKey: key)
        var similar = SimilarPictures(earlier: [earlier], container: container) { _, _ in folder.path }
        func item(_ index: Int, _ hash: String) -> ItemState {
            var item = ItemState(index: index, id: UUID(), source: .text(""), label: "drop/\(index).jpg")
            (item.copyPath, item.thumbnailPath, item.perceptualHash) = ("/c/\(index).jpg", "/c/t/\(index).jpg", hash)
            return item
        }
        // A picture with detail whose hash happens to be 1 bit from the flat one names nothing.
        let nearFlat = PerceptualHash.hex(PerceptualHash.flatNoise ^ 1)
        var items = [
            item(0, flat), item(1, flat), item(2, "9696056bd8a2657b"), item(3, "9696056bd8a2657a"), item(4, nearFlat),
        ]
        for i in items.indices { _ = similar.resolve(&items[i]) }
        #expect(items.map(\.similarTo) == [nil, nil, nil, SimilarRecord(path: "/c/2.jpg", distance: 1), nil])
    }

    /// The second check: pictures whose hashes are near but whose colour cells
    /// differ by more than the tolerance (two smooth gradients, one warm, one
    /// cool) are not called similar; within it they are; an older record
    /// without cells is judged by its hash alone.
    @Test func nearHashesOfUnlikeColoursAreNotSimilar() throws {
        let folder = TemporaryDirectory("similar-colours")
        var similar = SimilarPictures(earlier: [], container: try ContainerDirectory(folder.path)) { _, _ in nil }
        func item(_ index: Int, _ record: String) -> ItemState {
            var item = ItemState(index: index, id: UUID(), source: .text(""), label: "drop/\(index).jpg")
            (item.copyPath, item.thumbnailPath, item.perceptualHash) = ("/c/\(index).jpg", "/c/t/\(index).jpg", record)
            return item
        }
        let warm = "d5aa55aa55aa55aa-c86432c86432c86432c86432"
        let cool = "d5aa55aa55aa55ab-3264c83264c83264c83264c8"
        let warmer = "d5aa55aa55aa55a8-d06c3ad06c3ad06c3ad06c3a"
        let old = "d5aa55aa55aa55bb"
        var items = [item(0, warm), item(1, cool), item(2, warmer), item(3, old)]
        for i in items.indices { _ = similar.resolve(&items[i]) }
        #expect(
            items.map(\.similarTo) == [
                nil, nil, SimilarRecord(path: "/c/0.jpg", distance: 1), SimilarRecord(path: "/c/1.jpg", distance: 1),
            ])
    }

    /// A benchmark driver (skipped unless `BENCH_SIMILAR` is set): lookups in
    /// an index of 100,000 and 1,000,000 random hashes, printed.
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["BENCH_SIMILAR"] != nil, "a benchmark driver: set BENCH_SIMILAR"))
    func lookupCost() {
        for size in [100_000, 1_000_000] {
            var random = SplitMix(state: UInt64(size))
            var index = HashIndex(radius: SimilarPictures.threshold)
            let built = ContinuousClock.now
            for _ in 0..<size { index.insert(random.next()) }
            let buildTime = ContinuousClock.now - built
            let queries = 10_000
            var hits = 0
            let started = ContinuousClock.now
            for q in 0..<queries {
                // Half near a stored hash (5 bits away), half random.
                let query =
                    q % 2 == 0
                    ? Self.flipping(index.hashes[Int(random.next() % UInt64(size))], bits: 5, using: &random)
                    : random.next()
                hits += index.near(query).isEmpty ? 0 : 1
            }
            let elapsed = ContinuousClock.now - started
            let perLookup =
                Double(elapsed.components.seconds) * 1e6 / Double(queries) + Double(elapsed.components.attoseconds)
                / 1e12 / Double(queries)
            print(
                "similar-index: \(size) hashes, built in \(buildTime), \(queries) lookups (\(hits) found), \(String(format: "%.1f", perLookup)) µs a lookup"
            )
        }
    }
}
