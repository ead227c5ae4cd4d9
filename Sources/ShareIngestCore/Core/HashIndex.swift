import Foundation

/// 64-bit hashes found by Hamming distance, exactly: multi-index hashing
/// (Norouzi, Punjani and Fleet, "Fast Search in Hamming Space with Multi-Index
/// Hashing") whose layout follows the number of hashes. Each hash is cut into m
/// substrings, each with a table from its value to the hashes that have it.
/// With `radius` = m · q + a (a < m), two hashes within `radius` bits agree
/// within q bits on one of the first a + 1 substrings, or within q − 1 on one
/// of the others (pigeonhole: otherwise they differ by (a + 1)(q + 1) + (m − a − 1) q
/// = `radius` + 1 bits at least), so a lookup reads, per substring, the buckets
/// of the values that near and checks only the hashes in them. m is the one a
/// cost model (the buckets read, and the hashes in them) finds cheapest for the
/// count; the layout is re-made when the count reaches a power of two.
///
/// A million hashes' tables no longer fit in the cache, so they are laid out
/// for it: the hashes up to the last packing in ``Packed`` (each bucket's
/// entries side by side, each a fingerprint of other bits of its hash, which
/// turns away nearly every hash not within the radius unread), the few added
/// since in ``Chained``, packed in when they would pass an eighth of the
/// others; a lookup reads all its buckets at once (``lookUp(_:_:into:)``).
/// For a radius of 8: 9 substrings from 64 hashes, 5 from 8,192, 4 of 16 bits
/// from 262,144 to a million and more (188 buckets a lookup). Below 64 hashes,
/// or where the model finds it cheaper, the index scans its hashes and holds
/// no table (an empty index holds nothing).
struct HashIndex {
    /// The largest distance looked up.
    let radius: Int
    private(set) var hashes: [UInt64] = []
    /// Nil while the index scans.
    private var layout: Layout?
    /// The hashes of ids below `packed.count`.
    private var packed = Packed()
    /// The hashes added since the packing, at most `packed.count` / ``recentShare``.
    private var recent = Chained()

    /// The fewest hashes the index holds tables for.
    static let minimumIndexed = 64
    /// The packing is re-made when the hashes added since would pass this share of it.
    static let recentShare = 8
    /// The costs of the model, in bucket reads (one random read each): an
    /// entry of a bucket (a fingerprint read in order and compared; fitted to
    /// lookups with 3, 4 and 5 substrings from 100,000 to a million hashes),
    /// and a hash of a scan (read in order).
    private static let (candidateCost, scanCost) = (0.1, 0.25)

    /// One substring of the layout: `bits` bits from bit `shift`, looked up within `radius` bits.
    struct Substring {
        let shift: Int
        let bits: Int
        let radius: Int
        /// The values of `bits` bits with at most `radius` bits set.
        let masks: [UInt64]

        func value(_ hash: UInt64) -> UInt64 {
            bits == 64 ? hash : hash >> UInt64(shift) & (1 << UInt64(bits) - 1)
        }

        /// Up to 32 bits of `hash` from just above the substring on (wrapping
        /// round to bit 0), none of its own: how many of them differ, plus how
        /// many of the substring's, is at most two hashes' distance.
        func fingerprint(_ hash: UInt64) -> UInt32 {
            let turn = UInt64(shift + bits)
            return UInt32(truncatingIfNeeded: (hash &>> turn | hash &<< (64 &- turn)) & UInt64.max >> UInt64(bits))
        }

        /// How many buckets a table of about `1 << tableBits` has for this
        /// substring: one a value when its values are no more.
        func buckets(_ tableBits: Int) -> Int { 1 << min(bits, tableBits) }

        /// The bucket of a value: itself when the table has a bucket for each
        /// value, otherwise its top bits after a multiplication (Fibonacci hashing).
        func bucket(_ value: UInt64, _ tableBits: Int) -> Int {
            tableBits >= bits
                ? Int(value) : Int(truncatingIfNeeded: (value &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - tableBits))
        }
    }

    /// The substrings of an index and the size of its packed tables.
    struct Layout {
        let substrings: [Substring]
        /// About one bucket a hash of the capacity the layout was made for.
        let tableBits: Int

        /// Whether a substring before the `s`th finds `other` for `hash` (so it was found there).
        func foundBefore(_ s: Int, _ other: UInt64, _ hash: UInt64) -> Bool {
            substrings[..<s].contains { ($0.value(other) ^ $0.value(hash)).nonzeroBitCount <= $0.radius }
        }
    }

    /// The hashes of ids below `count`, packed as compressed sparse rows: for
    /// each substring, its entries sorted by bucket (by id within one) and
    /// where each bucket starts; an entry is a fingerprint and, in an array
    /// read only when the fingerprint is near enough, an id.
    struct Packed {
        private(set) var count = 0
        /// For each substring, its table's buckets + 1 offsets into its entries (the last: `count`).
        private(set) var starts: [UInt32] = []
        /// The `s`th substring's from `s · count`.
        private(set) var fingerprints: [UInt32] = []
        private(set) var ids: [UInt32] = []

        /// No hash, with room for `capacity` in `layout` (reserved, not yet touched).
        init(capacity: Int = 0, _ layout: Layout? = nil) {
            guard let layout else { return }
            starts = Array(repeating: 0, count: layout.substrings.reduce(0) { $0 + $1.buckets(layout.tableBits) + 1 })
            fingerprints.reserveCapacity(layout.substrings.count * capacity)
            ids.reserveCapacity(layout.substrings.count * capacity)
        }

        /// Adds the hashes of ids from `count` on, in place: for each substring,
        /// the last first, each bucket's old entries are moved up to where it
        /// now starts (the last bucket first, so none lands on entries not yet
        /// moved), then the added are put after them. Only the added are
        /// scattered; the rest is read and written in order.
        mutating func add(_ hashes: [UInt64], _ layout: Layout) {
            let grown = layout.substrings.count * (hashes.count - count)
            fingerprints.append(contentsOf: repeatElement(0, count: grown))
            ids.append(contentsOf: repeatElement(0, count: grown))
            Self.add(hashes, to: count, layout, &starts, &fingerprints, &ids)
            count = hashes.count
        }

        /// ``add(_:_:)`` on the arrays themselves, each written through a span of its own.
        private static func add(
            _ hashes: [UInt64], to old: Int, _ layout: Layout, _ starts: inout [UInt32],
            _ fingerprints: inout [UInt32], _ ids: inout [UInt32]
        ) {
            let (new, tableBits) = (hashes.count, layout.tableBits)
            var starts = starts.mutableSpan
            var fingerprints = fingerprints.mutableSpan
            var ids = ids.mutableSpan
            // For each bucket b: how many added hashes are in the buckets below
            // it, then where its next added one goes.
            var counts = [Int](repeating: 0, count: (layout.substrings.map { $0.buckets(tableBits) }.max() ?? 0) + 1)
            var next = counts.mutableSpan
            var base = starts.count
            for (s, substring) in layout.substrings.enumerated().reversed() {
                let buckets = substring.buckets(tableBits)
                base -= buckets + 1
                for bucket in 0...buckets { next[bucket] = 0 }
                for hash in hashes[old...] { next[substring.bucket(substring.value(hash), tableBits) + 1] += 1 }
                for bucket in 0..<buckets { next[bucket + 1] += next[bucket] }
                var oldEnd = old
                for bucket in (0..<buckets).reversed() {
                    let (oldStart, added) = (Int(starts[base + bucket]), next[bucket])
                    let (from, to, length) = (s * old + oldStart, s * new + oldStart + added, oldEnd - oldStart)
                    // From the end, as the two may overlap (`to` is never below `from`).
                    for k in (0..<length).reversed() {
                        (fingerprints[to + k], ids[to + k]) = (fingerprints[from + k], ids[from + k])
                    }
                    starts[base + bucket] = UInt32(oldStart + added)
                    (next[bucket], oldEnd) = (to + length, oldStart)
                }
                for (id, hash) in zip(old..<new, hashes[old...]) {
                    let at = substring.bucket(substring.value(hash), tableBits)
                    (fingerprints[next[at]], ids[next[at]]) = (substring.fingerprint(hash), UInt32(id))
                    next[at] += 1
                }
                starts[base + buckets] = UInt32(new)
            }
        }
    }

    /// The hashes added since the packing, from id `first`: per substring, the
    /// newest's position + 1 in each bucket (0: none); per hash and substring,
    /// the next older one's in its bucket beside its fingerprint.
    struct Chained {
        struct Link {
            let fingerprint: UInt32
            let next: UInt32
        }
        private(set) var first = 0
        /// About one bucket a hash of its capacity.
        private(set) var tableBits = 0
        private(set) var heads: [UInt32] = []
        /// At `position · m + s`, the `s`th substring's.
        private(set) var links: [Link] = []

        /// Tables for up to `capacity` hashes from id `first`, kept (emptied) as they are packed.
        init(first: Int = 0, capacity: Int = 0, _ layout: Layout? = nil) {
            guard let layout else { return }
            self.first = first
            tableBits = Int.bitWidth - max(capacity - 1, 1).leadingZeroBitCount
            heads = Array(repeating: 0, count: layout.substrings.reduce(0) { $0 + $1.buckets(tableBits) })
            links.reserveCapacity(capacity * layout.substrings.count)
        }

        /// No hash, the next from id `first`, in the same memory (not let go and taken again).
        mutating func empty(from first: Int) {
            self.first = first
            heads.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            links.removeAll(keepingCapacity: true)
        }

        mutating func add(_ hash: UInt64, _ layout: Layout) {
            let position = UInt32(links.count / layout.substrings.count)
            var base = 0
            for substring in layout.substrings {
                let bucket = base + substring.bucket(substring.value(hash), tableBits)
                links.append(Link(fingerprint: substring.fingerprint(hash), next: heads[bucket]))
                heads[bucket] = position + 1
                base += substring.buckets(tableBits)
            }
        }
    }

    init(radius: Int) {
        precondition(radius >= 0, "a negative radius")
        self.radius = radius
    }

    var count: Int { hashes.count }
    /// How many substrings a lookup reads (0: it scans).
    var substringCount: Int { layout?.substrings.count ?? 0 }
    /// How many hashes the last packing laid out (0: none).
    var packedCount: Int { packed.count }
    /// The bytes of the hashes and the tables, as allocated (the packed ones' room to grow included).
    var bytesHeld: Int {
        8 * (hashes.capacity + recent.links.capacity)
            + 4 * (packed.starts.capacity + packed.fingerprints.capacity + packed.ids.capacity + recent.heads.capacity)
    }

    /// Adds `hash`; its id is the number of hashes added before it.
    @discardableResult
    mutating func insert(_ hash: UInt64) -> Int {
        let id = hashes.count
        insert(contentsOf: CollectionOfOne(hash))
        return id
    }

    /// Adds `more` in order (ids from ``count`` on), as as many ``insert(_:)``
    /// would, laying the tables out once: all again in a new layout when the
    /// count passes a power of two, else the recent packed in when they would
    /// pass an eighth of the packed, else each chained.
    mutating func insert(contentsOf more: some Collection<UInt64>) {
        let old = hashes.count
        precondition(old + more.count < Int(UInt32.max), "more hashes than the tables' ids can hold")
        hashes.append(contentsOf: more)
        // The largest power of two up to the count: the layout's, made for twice it.
        let (power, oldPower) = (Self.powerOfTwo(upTo: hashes.count), Self.powerOfTwo(upTo: old))
        if power != oldPower {
            layout = Self.layout(capacity: 2 * power, radius: radius)
            (packed, recent) = (Packed(), Chained())
            guard let layout else { return }
            packed = Packed(capacity: 2 * power, layout)
            packed.add(hashes, layout)
            recent = Chained(first: hashes.count, capacity: 2 * power / Self.recentShare, layout)
        } else if let layout {
            if hashes.count - packed.count > packed.count / Self.recentShare {
                packed.add(hashes, layout)
                recent.empty(from: hashes.count)
            } else {
                for hash in hashes[old...] { recent.add(hash, layout) }
            }
        }
    }

    private static func powerOfTwo(upTo count: Int) -> Int {
        count == 0 ? 0 : 1 << (Int.bitWidth - 1 - count.leadingZeroBitCount)
    }

    /// The ids of the hashes within ``radius`` bits of `hash`, nearest first
    /// (then the earliest added), each once, with its distance.
    func near(_ hash: UInt64) -> [(id: Int, distance: Int)] {
        var found: [(id: Int, distance: Int)] = []
        if let layout {
            lookUp(hash, layout, into: &found)
        } else {
            for (id, other) in hashes.enumerated() {
                let distance = (other ^ hash).nonzeroBitCount
                if distance <= radius { found.append((id, distance)) }
            }
        }
        return found.sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }
    }

    /// A bucket a lookup reads: the value, the fingerprint and how many of its bits may differ (the radius less
    /// the value's own), the packed entries and their first and last fingerprints, the newest recent hash's.
    private struct Probe {
        let value: UInt64
        let print: UInt32
        let allowed: Int
        let substring: Int
        let entries: Range<Int>
        var newest: UInt32
        var ends: (first: UInt32, last: UInt32) = (0, 0)
        var link = Chained.Link(fingerprint: 0, next: 0)

        func passes(_ fingerprint: UInt32) -> Bool { (fingerprint ^ print).nonzeroBitCount <= allowed }
    }

    /// Reads, for each substring, the buckets within its radius of `hash`'s
    /// value, packed and recent, a pass over all of them at a time: where each
    /// bucket's entries are and its newest recent hash; the first and last of
    /// those entries (they may cross into a second line of the cache) and that
    /// hash's link; the rest; then the recent chains, a link a pass. In a pass
    /// no read waits for another, so the memory serves many at once (read one
    /// after the other, a million hashes' buckets waited for each miss in turn).
    /// A hash whose fingerprint differs by more than the probe allows is
    /// passed over unread; another is kept if a ``match(_:_:_:_:)``.
    private func lookUp(_ hash: UInt64, _ layout: Layout, into found: inout [(id: Int, distance: Int)]) {
        let (starts, fingerprints, links) = (packed.starts.span, packed.fingerprints.span, recent.links.span)
        let (m, tableBits, recentBits) = (layout.substrings.count, layout.tableBits, recent.tableBits)
        var probes: [Probe] = []
        probes.reserveCapacity(layout.substrings.reduce(0) { $0 + $1.masks.count })
        var (packedBase, recentBase) = (0, 0)
        for (s, substring) in layout.substrings.enumerated() {
            let (value, run, print) = (substring.value(hash), s * packed.count, substring.fingerprint(hash))
            for mask in substring.masks {
                let bucket = packedBase + substring.bucket(value ^ mask, tableBits)
                probes.append(
                    Probe(
                        value: value ^ mask, print: print, allowed: radius - mask.nonzeroBitCount, substring: s,
                        entries: run + Int(starts[bucket])..<run + Int(starts[bucket + 1]),
                        newest: recent.heads[recentBase + substring.bucket(value ^ mask, recentBits)]))
            }
            packedBase += substring.buckets(tableBits) + 1
            recentBase += substring.buckets(recentBits)
        }
        for i in probes.indices {
            if let first = probes[i].entries.first, let last = probes[i].entries.last {
                probes[i].ends = (fingerprints[first], fingerprints[last])
            }
            if probes[i].newest != 0 { probes[i].link = links[Int(probes[i].newest - 1) * m + probes[i].substring] }
        }
        for probe in probes {
            for k in probe.entries {
                let fingerprint =
                    k == probe.entries.first
                    ? probe.ends.first : k == probe.entries.last ? probe.ends.last : fingerprints[k]
                if probe.passes(fingerprint), let kept = match(Int(packed.ids[k]), hash, probe, layout) {
                    found.append(kept)
                }
            }
        }
        var walking = true
        while walking {
            walking = false
            for i in probes.indices where probes[i].newest != 0 {
                let (probe, position, link) = (probes[i], Int(probes[i].newest - 1), probes[i].link)
                if probe.passes(link.fingerprint), let kept = match(recent.first + position, hash, probe, layout) {
                    found.append(kept)
                }
                probes[i].newest = link.next
                if link.next != 0 {
                    probes[i].link = links[Int(link.next - 1) * m + probe.substring]
                    walking = true
                }
            }
        }
    }

    /// The hash of `id`, found by `probe`, with its distance when it has the
    /// probed value (a bucket may hold others), is within the radius, and no
    /// substring before finds it (so each once).
    private func match(_ id: Int, _ hash: UInt64, _ probe: Probe, _ layout: Layout) -> (id: Int, distance: Int)? {
        let other = hashes[id]
        guard layout.substrings[probe.substring].value(other) == probe.value else { return nil }
        let distance = (other ^ hash).nonzeroBitCount
        return distance <= radius && !layout.foundBefore(probe.substring, other, hash) ? (id, distance) : nil
    }

    /// The cheapest layout for an index of up to `capacity` hashes (from half
    /// of it), or nil when a scan is cheaper or they are fewer than ``minimumIndexed``.
    static func layout(capacity: Int, radius: Int) -> Layout? {
        guard capacity >= 2 * minimumIndexed else { return nil }
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
        var shift = 0
        var substrings: [Substring] = []
        for (bits, radius) in zip(lengths(best.m), radii(best.m, radius)) {
            substrings.append(
                Substring(shift: shift, bits: bits, radius: radius, masks: masks(bits: bits, radius: radius)))
            shift += bits
        }
        return Layout(substrings: substrings, tableBits: tableBits)
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
