import Foundation
import MediaFormats
import ShareManifest
import TestSupport
import Testing

@testable import ShareIngestCore

/// The near-duplicate index (``HashIndex``, multi-index hashing whose
/// substrings follow the number of hashes): it finds exactly what a scan of
/// every hash finds, at every count, through each re-indexing.
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
    /// bucket and finds nothing; its first hash is found as any other; a batch
    /// of ten pictures is scanned, with no table.
    @Test func anEmptyIndexFindsNothingThenItsFirstHash() {
        var index = HashIndex(radius: SimilarPictures.threshold)
        #expect(index.near(0x0123_4567_89AB_CDEF).isEmpty)
        #expect(index.bytesHeld == 0)
        index.insert(0x0123_4567_89AB_CDEF)
        #expect(index.near(0x0123_4567_89AB_CDEE).map(\.id) == [0])
        #expect(index.near(0x0123_4567_89AB_CDEE).map(\.distance) == [1])
        var random = SplitMix(state: 10)
        for _ in 1..<10 { index.insert(random.next()) }
        #expect(index.substringCount == 0)
        #expect(index.bytesHeld <= 8 * 32)
    }

    /// The hashes within `radius` of `query`, by a scan of all of them, in the index's order.
    static func scan(_ hashes: [UInt64], _ query: UInt64, radius: Int) -> [Pair] {
        hashes.withUnsafeBufferPointer { hashes in
            var found: [Pair] = []
            for (id, hash) in hashes.enumerated() {
                let distance = (hash ^ query).nonzeroBitCount
                if distance <= radius { found.append(Pair(id: id, distance: distance)) }
            }
            return found.sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }
        }
    }

    struct Pair: Equatable, CustomStringConvertible {
        let id: Int
        let distance: Int
        var description: String { "\(id)@\(distance)" }
    }

    /// `hash` with `bits` bits flipped spread evenly over the 64 (from a random
    /// start): every substring gets its share, the case the pigeonhole bound is tight for.
    static func spreading(_ hash: UInt64, bits: Int, using random: inout SplitMix) -> UInt64 {
        guard bits > 0 else { return hash }
        let start = Int(random.next() % 64)
        return (0..<bits).reduce(hash) { $0 ^ (1 << UInt64((start + $1 * 64 / bits) % 64)) }
    }

    /// Queries near `hashes`: for each of `sources` (ids), one 0 to radius + 1
    /// bits away at random positions, one exactly `radius` bits away spread
    /// evenly, one `radius` + 1 away spread evenly; and a few random ones.
    static func queries(near hashes: [UInt64], sources: [Int], radius: Int, using random: inout SplitMix) -> [UInt64] {
        sources.flatMap { id in
            [
                flipping(hashes[id], bits: Int(random.next() % UInt64(radius + 2)), using: &random),
                spreading(hashes[id], bits: radius, using: &random),
                spreading(hashes[id], bits: min(radius + 1, 64), using: &random),
            ]
        } + (0..<4).map { _ in random.next() }
    }

    /// Checks `index` against a scan for `queries`; true when all agree (the first disagreement is recorded).
    @discardableResult
    static func agrees(_ index: HashIndex, _ hashes: [UInt64], _ queries: [UInt64], _ context: String) -> Bool {
        for query in queries {
            let found = index.near(query).map { Pair(id: $0.id, distance: $0.distance) }
            let scanned = scan(hashes, query, radius: index.radius)
            if found != scanned {
                Issue.record(
                    "\(context), radius \(index.radius), \(index.substringCount) substrings, query \(String(query, radix: 16)): found \(found.prefix(8)), a scan \(scanned.prefix(8))"
                )
                return false
            }
        }
        return true
    }

    /// Hashes added one at a time, checked against a scan just before and just
    /// after each re-indexing (each power of two from 32) and just after each
    /// packing of the recent hashes in between, with queries near the newest
    /// hashes (which a re-indexing or a packing must not drop) and near random
    /// ones; half of the hashes are near an earlier one. For several radii: 0
    /// (exact), not divisible by the substring count (3, 7), the threshold (8), and 12.
    @Test(arguments: [(0, 1 << 13), (3, 1 << 13), (7, 1 << 14), (8, (1 << 18) + 1), (12, 1 << 13)])
    func agreesWithAScanThroughItsReindexing(radius: Int, size: Int) {
        var random = SplitMix(state: UInt64(62 + radius))
        var index = HashIndex(radius: radius)
        var hashes: [UInt64] = []
        var layouts: Set<Int> = []
        var (idsInOrder, packings, packed) = (true, 0, 0)
        while hashes.count < size {
            let hash =
                hashes.isEmpty || random.next() % 2 == 0
                ? random.next()
                : Self.flipping(
                    hashes[Int(random.next() % UInt64(hashes.count))], bits: Int(random.next() % UInt64(radius + 3)),
                    using: &random)
            hashes.append(hash)
            idsInOrder = idsInOrder && index.insert(hash) == hashes.count - 1
            let count = hashes.count
            let packing = index.packedCount != packed && count & (count - 1) != 0
            (packings, packed) = (packings + (packing ? 1 : 0), index.packedCount)
            guard count >= 31, (count + 1) & count == 0 || count & (count - 1) == 0 || count == size || packing else {
                continue
            }
            layouts.insert(index.substringCount)
            let sources =
                Array(count - min(count, 6)..<count) + (0..<12).map { _ in Int(random.next() % UInt64(count)) }
            let queries = Self.queries(near: hashes, sources: sources, radius: radius, using: &random)
            guard Self.agrees(index, hashes, queries, "\(count) hashes") else { return }
        }
        #expect(idsInOrder)
        // It went from a scan to tables, re-indexed into other layouts on the
        // way, and packed its recent hashes between re-indexings.
        #expect(layouts.count >= (radius == 8 ? 4 : 2), "layouts: \(layouts.sorted())")
        #expect(packings >= (radius == 8 ? 40 : 20), "packings between re-indexings: \(packings)")
    }

    /// Hashes added many at a time (as the fan-in adds the earlier shares'),
    /// in runs of 1 to 20,000 that cross powers of two, stay within one layout,
    /// or fill the recent part past an eighth: the index finds what a scan
    /// finds after each run, with queries near its newest and near random
    /// hashes, and gives each run the ids that follow.
    @Test(arguments: [3, 8])
    func addsRunsOfHashesAsOneAtATime(radius: Int) {
        var random = SplitMix(state: 6200 + UInt64(radius))
        var index = HashIndex(radius: radius)
        var hashes: [UInt64] = []
        var runs = [1, 40, 1, 1, 100, 3000, 1, 20_000, 2, 500, 2500, 1, 7, 9000, 1, 1, 3, 12_000]
        runs += (0..<20).map { _ in 1 + Int(random.next() % 300) }
        for run in runs {
            let added = (0..<run).map { n in
                hashes.isEmpty || random.next() % 2 == 0
                    ? random.next()
                    : Self.flipping(
                        hashes[Int(random.next() % UInt64(hashes.count))],
                        bits: Int(random.next() % UInt64(radius + 3)),
                        using: &random)
            }
            let first = index.count
            index.insert(contentsOf: added)
            hashes += added
            #expect(first == hashes.count - run && index.count == hashes.count)
            let count = hashes.count
            let sources = Array(count - min(count, 4)..<count) + (0..<8).map { _ in Int(random.next() % UInt64(count)) }
            let queries = Self.queries(near: hashes, sources: sources, radius: radius, using: &random)
            guard Self.agrees(index, hashes, queries, "\(count) hashes after a run of \(run)") else { return }
        }
        #expect(index.substringCount > 1)
    }

    /// The packed and the recent tables at their limits: a stored hash and a
    /// query that differ by k bits in one substring (k up to its radius) and
    /// by the rest of the radius just above it, in the bits its fingerprints
    /// hold, are exactly the radius apart and found, once, whichever substring
    /// holds the k (a fingerprint that counted a bit twice would turn them
    /// away); and one hash added 50 times since the packing, a chain of 50 in
    /// each recent table, is found 50 times.
    @Test func findsHashesAtTheFingerprintsLimitAndLongRecentChains() {
        var random = SplitMix(state: 6208)
        let radius = SimilarPictures.threshold
        var index = HashIndex(radius: radius)
        var hashes = (0..<20_000).map { _ in random.next() }
        index.insert(contentsOf: hashes)
        let base = random.next()
        for n in 0..<150 {
            hashes.append(n % 3 == 0 ? base : random.next())
            index.insert(hashes[hashes.count - 1])
        }
        #expect(index.packedCount == 20_000)
        let repeats = hashes.indices.filter { hashes[$0] == base }
        #expect(index.near(base).map(\.id) == repeats)
        let layout = HashIndex.layout(capacity: 2 * 16_384, radius: radius)
        #expect(layout != nil && index.substringCount == layout?.substrings.count)
        for id in [0, 1, 19_999, 20_001, 20_149] {
            for substring in layout?.substrings ?? [] {
                for k in 0...substring.radius {
                    var query = hashes[id]
                    for bit in 0..<k { query ^= 1 << UInt64(substring.shift + bit) }
                    for bit in 0..<radius - k { query ^= 1 << UInt64((substring.shift + substring.bits + bit) % 64) }
                    let found = index.near(query).map { Pair(id: $0.id, distance: $0.distance) }
                    #expect(
                        found.contains(Pair(id: id, distance: radius)), "id \(id), bits from \(substring.shift), k \(k)"
                    )
                    Self.agrees(index, hashes, [query], "the fingerprints' limit")
                }
            }
        }
    }

    /// Adversarial sets: thousands of hashes that share all but their top 16
    /// bits (so every substring below them holds one long bucket), the same
    /// hash added again and again (found once per id, in the order added),
    /// hashes exactly at the radius, spread over every substring, and one bit
    /// beyond it.
    @Test(arguments: [7, 8])
    func hashesSharingSubstringsAndRepeated(radius: Int) {
        var random = SplitMix(state: 620 + UInt64(radius))
        let base: UInt64 = 0x9696_056B_D8A2_657B
        var index = HashIndex(radius: radius)
        var hashes: [UInt64] = []
        for n in 0..<6000 {
            let hash: UInt64
            switch n % 4 {
            case 0: hash = base ^ (random.next() << 48)
            case 1: hash = n % 40 == 1 ? base : base ^ (random.next() & 0xFFFF)
            case 2: hash = Self.spreading(base, bits: radius + Int(random.next() % 2), using: &random)
            default: hash = random.next()
            }
            hashes.append(hash)
            index.insert(hash)
        }
        let repeats = hashes.indices.filter { hashes[$0] == base }
        #expect(repeats.count >= 150)
        #expect(Array(index.near(base).prefix(repeats.count).map(\.id)) == repeats)
        var queries = [base, base ^ 1, base ^ 0xFF00_0000_0000_0000, base ^ 0x8000_0001]
        queries += Self.queries(
            near: hashes, sources: (0..<60).map { _ in Int(random.next() % UInt64(hashes.count)) }, radius: radius,
            using: &random)
        #expect(index.substringCount > 1)
        Self.agrees(index, hashes, queries, "shared substrings")
    }

    /// The layouts of radius 8, the threshold, up to a million: a scan below 32
    /// hashes, then fewer and longer substrings as the count grows (four of 16
    /// bits at a million); in each, every bit in one substring, and radii the pigeonhole
    /// bound needs (their sums plus one reach the radius plus one), so no hash
    /// within the radius can differ by more on every substring.
    @Test func theThresholdsLayoutsFollowTheCount() {
        var seen: [Int: Int] = [:]
        for power in 5...20 {
            let layout = HashIndex.layout(capacity: 1 << power, radius: SimilarPictures.threshold)
            seen[1 << power] = layout?.substrings.count ?? 0
            guard let layout else { continue }
            #expect(layout.substrings.map(\.bits).reduce(0, +) == 64)
            let radii = layout.substrings.map(\.radius)
            #expect(radii.map { $0 + 1 }.reduce(0, +) >= SimilarPictures.threshold + 1, "\(radii)")
        }
        let counts = seen.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        #expect(seen[32] == 0 && seen[1 << 20] == 4, "\(counts)")
        #expect(
            HashIndex.layout(capacity: 1 << 20, radius: SimilarPictures.threshold)?.substrings.map(\.bits) == [
                16, 16, 16, 16,
            ])
        #expect(Set(seen.values).count >= 4, "\(counts)")
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
