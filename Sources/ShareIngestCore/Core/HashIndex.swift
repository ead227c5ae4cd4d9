import Foundation

/// 64-bit hashes found by Hamming distance, exactly: multi-index hashing
/// (Norouzi, Punjani and Fleet, "Fast Search in Hamming Space with Multi-Index
/// Hashing") whose layout follows the number of hashes. Each hash is cut into m
/// substrings, each with a table from its value to the hashes that have it.
/// With `radius` = m · q + a (a < m), two hashes within `radius` bits agree
/// within q bits on one of the first a + 1 substrings, or within q − 1 on one
/// of the others (pigeonhole: otherwise they differ by (a + 1)(q + 1) + (m − a − 1) q
/// = `radius` + 1 bits at least), so a lookup reads, per substring, the buckets
/// of the values that near and checks only the hashes in them. m follows the
/// paper's m ≈ 64 / log2 n: it is the one a cost model (the buckets read, and the
/// hashes in them) finds cheapest for the count, and each table has about one
/// bucket a hash; both are re-made when the count reaches a power of two, so n
/// inserts re-insert fewer than 2n hashes. For a radius of 8: 9 substrings at 64
/// hashes, 4 of 16 bits at 100,000 (188 buckets a lookup, about 290 hashes in
/// them), 3 of 21–22 bits at 1,000,000 (718 buckets, about 680 hashes); about 34
/// bytes a hash at a million. Below 64 hashes, or where the model finds it
/// cheaper, the index scans its hashes and holds no table (an empty index holds
/// nothing).
struct HashIndex {
    /// The largest distance looked up.
    let radius: Int
    private(set) var hashes: [UInt64] = []
    /// Nil while the index scans.
    private var layout: Layout?
    /// Each substring's buckets (from its `start`, `1 << tableBits` of them):
    /// the id + 1 of the newest hash in the bucket, 0 for none.
    private var heads: [UInt32] = []
    /// At `id · m + s`: the id + 1 of the next older hash in `id`'s bucket of substring `s`, 0 for none.
    private var next: [UInt32] = []

    /// The fewest hashes the index holds tables for.
    static let minimumIndexed = 64
    /// The costs of the model, in bucket reads (one random read each): a hash
    /// found in a bucket (its hash and its link, two random reads), and a hash
    /// of a scan (read in order).
    private static let (candidateCost, scanCost) = (1.5, 0.25)

    /// One substring of the layout: `bits` bits from bit `shift`, looked up within `radius` bits.
    struct Substring {
        let shift: Int
        let bits: Int
        let radius: Int
        /// Its table has `1 << tableBits` buckets, from `start` in ``HashIndex/heads``.
        let tableBits: Int
        let start: Int
        /// The values of `bits` bits with at most `radius` bits set.
        let masks: [UInt64]

        func value(_ hash: UInt64) -> UInt64 {
            bits == 64 ? hash : hash >> UInt64(shift) & (1 << UInt64(bits) - 1)
        }

        /// The bucket of a value: itself when the table has a bucket for each
        /// value, otherwise its top bits after a multiplication (Fibonacci hashing).
        func bucket(_ value: UInt64) -> Int {
            start
                + (tableBits == bits
                    ? Int(value) : Int(truncatingIfNeeded: (value &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - tableBits)))
        }
    }

    /// The substrings of an index and the size of its tables.
    struct Layout {
        let substrings: [Substring]
        var bucketCount: Int { substrings.last.map { $0.start + 1 << $0.tableBits } ?? 0 }

        /// Whether a substring before the `s`th finds `other` for `hash` (so it was found there).
        func foundBefore(_ s: Int, _ other: UInt64, _ hash: UInt64) -> Bool {
            substrings[..<s].contains { ($0.value(other) ^ $0.value(hash)).nonzeroBitCount <= $0.radius }
        }
    }

    init(radius: Int) {
        precondition(radius >= 0, "a negative radius")
        self.radius = radius
    }

    var count: Int { hashes.count }
    /// How many substrings a lookup reads (0: it scans).
    var substringCount: Int { layout?.substrings.count ?? 0 }
    /// The bytes of the hashes and the tables, as allocated.
    var bytesHeld: Int { 8 * hashes.capacity + 4 * (heads.capacity + next.capacity) }

    /// Adds `hash`; its id is the number of hashes added before it.
    @discardableResult
    mutating func insert(_ hash: UInt64) -> Int {
        let id = hashes.count
        precondition(id < Int(UInt32.max), "more hashes than the tables' ids can hold")
        hashes.append(hash)
        if hashes.count & (hashes.count - 1) == 0 {
            reindex()
        } else if let layout {
            add(id, layout)
        }
        return id
    }

    /// The ids of the hashes within ``radius`` bits of `hash`, nearest first
    /// (then the earliest added), each once, with its distance.
    func near(_ hash: UInt64) -> [(id: Int, distance: Int)] {
        var found: [(id: Int, distance: Int)] = []
        let radius = radius
        if let layout {
            hashes.withUnsafeBufferPointer { hashes in
                heads.withUnsafeBufferPointer { heads in
                    next.withUnsafeBufferPointer { next in
                        let stride = layout.substrings.count
                        for (s, substring) in layout.substrings.enumerated() {
                            let value = substring.value(hash)
                            for mask in substring.masks {
                                let probe = value ^ mask
                                var link = heads[substring.bucket(probe)]
                                while link != 0 {
                                    let id = Int(link - 1)
                                    let other = hashes[id]
                                    // Only under its own value (a bucket may hold others), and at the first
                                    // substring that finds it, so each hash once.
                                    if substring.value(other) == probe {
                                        let distance = (other ^ hash).nonzeroBitCount
                                        if distance <= radius, !layout.foundBefore(s, other, hash) {
                                            found.append((id, distance))
                                        }
                                    }
                                    link = next[id * stride + s]
                                }
                            }
                        }
                    }
                }
            }
        } else {
            for (id, other) in hashes.enumerated() {
                let distance = (other ^ hash).nonzeroBitCount
                if distance <= radius { found.append((id, distance)) }
            }
        }
        return found.sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }
    }

    /// Makes the tables again for up to twice the count: the layout, every hash in it.
    private mutating func reindex() {
        layout = Self.layout(capacity: 2 * hashes.count, radius: radius)
        (heads, next) = ([], [])
        guard let layout else { return }
        heads = Array(repeating: 0, count: layout.bucketCount)
        next = Array(repeating: 0, count: layout.substrings.count * 2 * hashes.count)
        for id in hashes.indices { add(id, layout) }
    }

    private mutating func add(_ id: Int, _ layout: Layout) {
        for (s, substring) in layout.substrings.enumerated() {
            let bucket = substring.bucket(substring.value(hashes[id]))
            next[id * layout.substrings.count + s] = heads[bucket]
            heads[bucket] = UInt32(id + 1)
        }
    }

    /// The cheapest layout for an index of up to `capacity` hashes (from half
    /// of it), or nil when a scan is cheaper.
    static func layout(capacity: Int, radius: Int) -> Layout? {
        guard capacity >= minimumIndexed else { return nil }
        // About one bucket a hash: log2 of the capacity, rounded up.
        let tableBits = Int.bitWidth - (capacity - 1).leadingZeroBitCount
        let held = 0.75 * Double(capacity)
        var best: (cost: Double, m: Int)?
        for m in 1...min(radius + 1, 64) {
            let cost = zip(lengths(m), radii(m, radius)).reduce(0.0) { total, substring in
                let buckets = (0...substring.1).reduce(0.0) { $0 + binomial(substring.0, $1) }
                return total + buckets * (1 + candidateCost * held / exp2(Double(min(substring.0, tableBits))))
            }
            if cost < best?.cost ?? .infinity { best = (cost, m) }
        }
        guard let best, best.cost < scanCost * held else { return nil }
        var (shift, start) = (0, 0)
        var substrings: [Substring] = []
        for (bits, radius) in zip(lengths(best.m), radii(best.m, radius)) {
            let substring = Substring(
                shift: shift, bits: bits, radius: radius, tableBits: min(bits, tableBits), start: start,
                masks: masks(bits: bits, radius: radius))
            substrings.append(substring)
            (shift, start) = (shift + bits, start + 1 << substring.tableBits)
        }
        return Layout(substrings: substrings)
    }

    /// The lengths of m substrings of 64 bits, the shorter first.
    static func lengths(_ m: Int) -> [Int] { (0..<m).map { 64 / m + ($0 >= m - 64 % m ? 1 : 0) } }

    /// The radius looked up on each of m substrings (m ≤ `radius` + 1, so none is below 0).
    static func radii(_ m: Int, _ radius: Int) -> [Int] {
        let (q, a) = radius.quotientAndRemainder(dividingBy: m)
        return (0..<m).map { $0 <= a ? q : q - 1 }
    }

    private static func binomial(_ n: Int, _ k: Int) -> Double {
        (0..<k).reduce(1.0) { $0 * Double(n - $1) / Double($1 + 1) }
    }

    /// Every value of `bits` bits with at most `radius` of them set.
    static func masks(bits: Int, radius: Int) -> [UInt64] {
        var (masks, level): ([UInt64], [UInt64]) = ([0], [0])
        for _ in 0..<min(max(radius, 0), bits) {
            level = level.flatMap { mask in
                // One more bit, above the highest set one, so each value is made once.
                ((mask == 0 ? 0 : 64 - mask.leadingZeroBitCount)..<bits).map { mask | 1 << UInt64($0) }
            }
            masks += level
        }
        return masks
    }
}
