import CTimeZoneGrid

/// The IANA time zone in force at a position on Earth, looked up offline in a
/// grid of 1/64° linked into the binary (`CTimeZoneGrid`, built by
/// scripts/build-time-zone-grid.py from the boundaries timezonefinder ships:
/// timezone-boundary-builder's, from OpenStreetMap, ODbL 1.0). A position
/// within a grid cell (about 1.7 km) of a border may get the neighbour's zone;
/// the oceans have their `Etc/GMT±N` zones.
///
/// A lookup is a few array reads: the 1° cell's entry, then at most six
/// quadtree steps down to the 1/64° cell. Positions are untrusted (a file's
/// GPS); ``zone(latitude:longitude:)`` answers nil for any that is not finite
/// and in range; the data's header and size are checked when it is first
/// used, and every step of a lookup stays inside it.
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

    /// The grid in `data` (static, never freed); nil when its header, names,
    /// cells or nodes do not fit the data or point outside it.
    init?(data: UnsafeBufferPointer<UInt8>) {
        self.data = data
        guard data.count >= 12, Array(data[0..<4]) == Array("TZG1".utf8) else { return nil }
        func u16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        let zones = u16(4)
        perDegree = u16(6)
        nodeCount = u32(8)
        guard zones > 0, zones < 0x7FFF, perDegree >= 1, perDegree <= 1024, perDegree & (perDegree - 1) == 0 else { return nil }
        var at = 12
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
        nodesStart = at + 360 * 180 * 4
        guard nodesStart + nodeCount * 8 == data.count else { return nil }
        // Where an entry leads is checked by each lookup (a node index inside the nodes, a zone id among
        // the names): walking all 2 million entries here cost a fifth of a debug `share ingest` of one photo.
    }

    /// The IANA name of the zone at `latitude`, `longitude` (degrees, WGS84);
    /// nil for a position that is not finite and within ±90°, ±180°, or where
    /// the grid has no zone.
    public func zone(latitude: Double, longitude: Double) -> String? {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) else { return nil }
        let columns = 360 * perDegree, rows = 180 * perDegree
        let column = min(columns - 1, max(0, Int(((longitude + 180) * Double(perDegree)).rounded(.down))))
        let row = min(rows - 1, max(0, Int(((90 - latitude) * Double(perDegree)).rounded(.down))))
        let at = cellsStart + ((row / perDegree) * 360 + column / perDegree) * 4
        let entry = Int(data[at]) | Int(data[at + 1]) << 8 | Int(data[at + 2]) << 16 | Int(data[at + 3]) << 24
        if entry & 0x8000_0000 != 0 { return name(entry & 0x7FFF) }
        guard entry < nodeCount else { return nil }
        var (x, y, size, node) = (column % perDegree, row % perDegree, perDegree, entry)
        let base = entry
        while size > 1 {
            let half = size / 2
            let quarter = (y >= half ? 2 : 0) + (x >= half ? 1 : 0)
            let slot = nodesStart + node * 8 + quarter * 2
            let child = Int(data[slot]) | Int(data[slot + 1]) << 8
            if child & 0x8000 != 0 { return name(child & 0x7FFF) }
            (x, y, size, node) = (x % half, y % half, half, base + child)
            guard node < nodeCount else { return nil }
        }
        return nil
    }

    private func name(_ id: Int) -> String? { id < zoneNames.count ? zoneNames[id] : nil }
}
