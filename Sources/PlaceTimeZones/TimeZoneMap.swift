import CTimeZoneGrid

/// The IANA time zone in force at a position on Earth, looked up offline in a
/// grid of 1/64° linked into the binary (`CTimeZoneGrid`, built by
/// scripts/build-time-zone-grid.py from the boundaries timezonefinder ships:
/// timezone-boundary-builder's, from OpenStreetMap, ODbL 1.0); the oceans have
/// their `Etc/GMT±N` zones.
///
/// A cell no border between two zones crosses has one zone: a lookup there is
/// a few array reads (the 1° cell's entry, then at most six quadtree steps down
/// to the 1/64° cell). A cell a border crosses (issue 62) keeps, for each
/// polygon whose edges cross it, the polygon's zone, whether the cell's centre
/// is inside it and those edges (timezonefinder's own coordinates, 1e-7°; an
/// edge two polygons share, as a border is, once with both as its owners), and
/// decides by point-in-polygon as timezonefinder does: the parity of the edges
/// crossed on a path inside the cell from the position to the centre (along
/// the position's meridian to the centre's parallel, then along it), with the
/// same half-open rule as the ray that decided the centre, in exact integer
/// arithmetic. Where polygons overlap (disputed areas) the polygon drawn last
/// wins, as the grid's cells do; a position inside none of a cell's polygons
/// (not seen) takes the zone of the cell's centre.
///
/// Positions are untrusted (a file's GPS); ``zone(latitude:longitude:)``
/// answers nil for any that is not finite and in range; the data's header and
/// size are checked when it is first used, and every step of a lookup stays
/// inside it.
public struct TimeZoneMap: @unchecked Sendable {  // `data` is the binary's read-only data, never written or freed
    /// The grid linked into this binary; nil if its data does not hold together.
    public static let shared: TimeZoneMap? = {
        var length = 0
        guard let start = share_time_zone_grid(&length) else { return nil }
        return TimeZoneMap(data: UnsafeBufferPointer(start: start, count: length))
    }()

    /// The zones' IANA names, by zone id.
    public let zoneNames: [String]
    private let data: UnsafeBufferPointer<UInt8>
    private let perDegree: Int
    private let cellsStart: Int
    private let nodesStart: Int
    private let nodeCount: Int
    private let firstBordersStart: Int
    private let borderOffsetsStart: Int
    private let bordersStart: Int
    private let borderCount: Int
    /// A 1/64° cell's side in timezonefinder's units (1e-7°): 156,250.
    private let side: Int64

    /// The grid in `data` (static, never freed); nil when its header, names,
    /// cells or nodes do not fit the data or point outside it.
    init?(data: UnsafeBufferPointer<UInt8>) {
        self.data = data
        guard data.count >= 20, Array(data[0..<4]) == Array("TZG2".utf8) else { return nil }
        func u16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        let zones = u16(4)
        perDegree = u16(6)
        nodeCount = u32(8)
        borderCount = u32(12)
        let borderBytes = u32(16)
        guard zones > 0, zones < 0x4000, perDegree >= 1, perDegree <= 1024, perDegree & (perDegree - 1) == 0,
            10_000_000 % (2 * perDegree) == 0
        else { return nil }
        side = Int64(10_000_000 / perDegree)
        var at = 20
        var names: [String] = []
        for _ in 0..<zones {
            guard at < data.count else { return nil }
            let length = Int(data[at])
            guard at + 1 + length <= data.count else { return nil }
            names.append(String(decoding: data[(at + 1)..<(at + 1 + length)], as: UTF8.self))
            at += 1 + length
        }
        zoneNames = names
        cellsStart = at
        firstBordersStart = at + 360 * 180 * 4
        nodesStart = firstBordersStart + 360 * 180 * 4
        borderOffsetsStart = nodesStart + nodeCount * 8
        bordersStart = borderOffsetsStart + (borderCount + 1) * 4
        guard bordersStart + borderBytes == data.count else { return nil }
        // Where an entry leads is checked by each lookup (a node index inside the nodes, a zone id among
        // the names): walking all 2 million entries here cost a fifth of a debug `share ingest` of one photo.
    }

    /// The IANA name of the zone at `latitude`, `longitude` (degrees, WGS84);
    /// nil for a position that is not finite and within ±90°, ±180°, or where
    /// the grid has no zone.
    public func zone(latitude: Double, longitude: Double) -> String? {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude)
        else { return nil }
        // timezonefinder's units, truncated toward zero as it does a query's
        let x = Int64(longitude * 1e7)
        let y = Int64(latitude * 1e7)
        let columns = 360 * perDegree
        let rows = 180 * perDegree
        let column = min(columns - 1, max(0, Int((x + 1_800_000_000) / side)))
        let row = min(rows - 1, max(0, Int((900_000_000 - y) / side)))
        let degreeCell = (row / perDegree) * 360 + column / perDegree
        let at = cellsStart + degreeCell * 4
        let entry = u32(at)
        if entry & 0x8000_0000 != 0 { return name(entry & 0x7FFF) }
        guard entry < nodeCount else { return nil }
        var (cx, cy, size, node) = (column % perDegree, row % perDegree, perDegree, entry)
        let base = entry
        while size > 1 {
            let half = size / 2
            let quarter = (cy >= half ? 2 : 0) + (cx >= half ? 1 : 0)
            let child = u16(nodesStart + node * 8 + quarter * 2)
            if child & 0x8000 != 0 {
                if child & 0x4000 == 0 { return name(child & 0x3FFF) }
                return border(
                    u32(firstBordersStart + degreeCell * 4) + (child & 0x3FFF), x: x, y: y, column: column, row: row)
            }
            (cx, cy, size, node) = (cx % half, cy % half, half, base + child)
            guard node < nodeCount else { return nil }
        }
        return nil
    }

    /// The zone at (`x`, `y`) (1e-7°) in border cell `index` (at `column`, `row`): for each of the
    /// cell's polygons, in drawing order, whether the centre is inside, flipped by every edge the
    /// path from the position to the centre crosses; the last polygon the position is inside wins.
    private func border(_ index: Int, x: Int64, y: Int64, column: Int, row: Int) -> String? {
        guard index < borderCount else { return nil }
        let start = bordersStart + u32(borderOffsetsStart + index * 4)
        let end = bordersStart + u32(borderOffsetsStart + index * 4 + 4)
        guard start + 4 <= end, end <= data.count else { return nil }
        let centreX = Int64(column) * side + side / 2 - 1_800_000_000
        let centreY = 900_000_000 - Int64(row) * side - side / 2
        let west = Int64(column) * side - 1_800_000_000
        let south = 900_000_000 - Int64(row + 1) * side
        let candidates = u16(start + 2)
        var at = start + 4 + candidates * 3
        guard at <= end else { return nil }
        return withUnsafeTemporaryAllocation(of: Bool.self, capacity: max(1, candidates)) { inside -> String? in
            for number in 0..<candidates { inside[number] = data[start + 4 + number * 3 + 2] & 1 != 0 }
            guard let chains = varint(&at, end) else { return nil }
            for _ in 0..<max(0, chains) {
                guard let owners = varint(&at, end), owners >= 0, owners <= 0xFFFF else { return nil }
                let ownersStart = at
                for _ in 0..<owners {
                    guard let owner = varint(&at, end), owner >= 0, owner < candidates else { return nil }
                }
                guard let count = varint(&at, end), let dx = varint(&at, end), let dy = varint(&at, end) else {
                    return nil
                }
                var (ax, ay) = (west &+ dx, south &+ dy)
                var flips = false
                var vertex: Int64 = 1
                while vertex < count {
                    guard let dx = varint(&at, end), let dy = varint(&at, end) else { return nil }
                    let (bx, by) = (ax &+ dx, ay &+ dy)
                    if Self.crosses(ax, ay, bx, by, x: x, y: y, centreX: centreX, centreY: centreY) { flips.toggle() }
                    (ax, ay) = (bx, by)
                    vertex += 1
                }
                if flips {
                    // the chain's edges are each of these polygons' (a border: both sides')
                    var owner = ownersStart
                    for _ in 0..<owners { if let number = varint(&owner, end) { inside[Int(number)].toggle() } }
                }
            }
            // in drawing order: the last polygon the position is inside wins; in none, the grid's zone
            var found = u16(start)
            for number in 0..<candidates where inside[number] { found = u16(start + 4 + number * 3) }
            return name(found)
        }
    }

    /// Whether the edge (`ax`, `ay`)–(`bx`, `by`) flips the parity between the position and the
    /// centre: it crosses the position's meridian between the two parallels, or the centre's
    /// parallel between the two meridians. An edge counts on a parallel when one end is above it
    /// and the other not (the generator's ray rule), on a meridian when one end is east of it and
    /// the other not; where it crosses is compared exactly (products of differences of at most
    /// 3.6e9 and 1.8e9 fit in 64 bits; wrapping arithmetic keeps a damaged edge from trapping).
    @inline(__always)
    static func crosses(
        _ ax: Int64, _ ay: Int64, _ bx: Int64, _ by: Int64, x: Int64, y: Int64, centreX: Int64, centreY: Int64
    ) -> Bool {
        // the leg along the centre's parallel (east of x and of the centre?), then the one along the
        // position's meridian (north of y and of the centre?): the same test with the axes swapped
        let alongParallel = separates(ax, ay, bx, by, line: centreY, x, centreX)
        let alongMeridian = separates(ay, ax, by, bx, line: x, y, centreY)
        return alongParallel != alongMeridian
    }

    /// True when the edge (au, av)–(bu, bv) crosses the line v = `line` at a u that lies between `p`
    /// and `q` (beyond one and not the other): it counts when one end is above the line and the
    /// other not, and where it crosses is compared exactly (see ``crosses(_:_:_:_:x:y:centreX:centreY:)``).
    @inline(__always)
    static func separates(_ au: Int64, _ av: Int64, _ bu: Int64, _ bv: Int64, line: Int64, _ p: Int64, _ q: Int64)
        -> Bool
    {
        guard (av > line) != (bv > line) else { return false }
        let (lu, lv, uu, uv) = av < bv ? (au, av, bu, bv) : (bu, bv, au, av)
        let across = (uu &- lu) &* (line &- lv)
        return (across > (p &- lu) &* (uv &- lv)) != (across > (q &- lu) &* (uv &- lv))
    }

    /// The zigzag LEB128 varint at `at` (before `end`), `at` moved past it; nil past `end` or
    /// longer than 64 bits.
    @inline(__always) private func varint(_ at: inout Int, _ end: Int) -> Int64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while at < end, shift < 64 {
            let byte = data[at]
            at += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }
            shift += 7
        }
        return nil
    }

    @inline(__always) private func u16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
    @inline(__always) private func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
    @inline(__always) private func i32(_ at: Int) -> Int32 { Int32(bitPattern: UInt32(truncatingIfNeeded: u32(at))) }

    private func name(_ id: Int) -> String? { id < zoneNames.count ? zoneNames[id] : nil }
}
