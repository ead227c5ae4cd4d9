// The item structure of a HEIF, HEIC or AVIF file (ISO/IEC 23008-12): which item
// is the primary image, what it is made of (a coded picture, or a grid of coded
// tiles), its properties (codec configuration, size, rotation, mirror, crop,
// colour, bit depth), its thumbnails and its EXIF. Pure Swift over the file's
// bytes, so it can be fuzzed; the decoders in MediaKit read the pixels.

/// An item ID (`iinf`/`iloc`/`iref`/`ipma`).
package typealias HEIFItemID = UInt32

/// One item of the `meta` box.
package struct HEIFItem: Sendable, Hashable {
    /// The item's ID.
    package let id: HEIFItemID
    /// Its type: `hvc1`, `av01`, `grid`, `iden`, `iovl`, `Exif`, `mime`, …
    package let type: String
    /// A hidden item (a grid tile) is not shown on its own.
    package let hidden: Bool
    /// Where its bytes are: `iloc` construction method (0 file offsets, 1 `idat`) and extents.
    let construction: Int
    let extents: [(offset: Int, length: Int)]
    /// Indexes into ``HEIFFile/properties`` and whether each is essential, in `ipma` order.
    package internal(set) var associations: [(index: Int, essential: Bool)] = []

    package static func == (a: HEIFItem, b: HEIFItem) -> Bool {
        a.id == b.id && a.type == b.type && a.hidden == b.hidden && a.construction == b.construction
            && a.extents.elementsEqual(b.extents) { $0 == $1 }
            && a.associations.elementsEqual(b.associations) { $0 == $1 }
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// The HEVC decoder configuration (`hvcC`) an `hvc1` item is coded with.
package struct HEVCConfiguration: Sendable, Hashable {
    /// The whole `hvcC` payload, as libavcodec takes it for extradata.
    package let record: [UInt8]
    /// `chroma_format_idc`: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
    package let chromaFormat: Int
    /// Luma bit depth (8 for phone photos, 10 for HDR).
    package let bitDepthLuma: Int
    /// Chroma bit depth.
    package let bitDepthChroma: Int
    /// Bytes of each NAL unit's length prefix in the item data (1, 2 or 4).
    package let nalLengthSize: Int
}

/// The AV1 codec configuration (`av1C`) an `av01` item is coded with (AV1-ISOBMFF §2.3).
package struct AV1Configuration: Sendable, Hashable {
    /// The whole `av1C` payload, as libavcodec takes it for extradata.
    package let record: [UInt8]
    /// As HEVC's `chroma_format_idc`: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
    package let chromaFormat: Int
    /// Bits per sample, luma and chroma alike (8, 10 or 12).
    package let bitDepth: Int

    /// Reads the four fixed bytes of an `av1C` record (marker and version 1,
    /// profile and level, then tier, `high_bitdepth`, `twelve_bit`, `monochrome`
    /// and the chroma subsampling); nil when they are not an `av1C`.
    package init?(record: [UInt8]) {
        guard record.count >= 4, record[0] == 0x81 else { return nil }
        let flags = record[2]
        let high = flags & 0x40 != 0
        let twelve = flags & 0x20 != 0
        let monochrome = flags & 0x10 != 0
        let subsampledX = flags & 0x08 != 0
        let subsampledY = flags & 0x04 != 0
        guard !subsampledY || subsampledX else { return nil }
        self.record = record
        bitDepth = high ? (twelve ? 12 : 10) : 8
        chromaFormat = monochrome ? 0 : subsampledY ? 1 : subsampledX ? 2 : 3
    }
}

/// Colour information (`colr`).
package enum HEIFColour: Sendable, Hashable {
    /// Coding-independent code points (ISO/IEC 23091-2).
    case nclx(primaries: Int, transfer: Int, matrix: Int, fullRange: Bool)
    /// An ICC profile (`prof` or `rICC`): where its bytes are in the file.
    case icc(profile: Range<Int>)
}

/// A property of the `ipco` box that the decoders use.
package enum HEIFProperty: Sendable, Hashable {
    /// HEVC configuration.
    case hevcConfiguration(HEVCConfiguration)
    /// AV1 configuration (`av1C`).
    case av1Configuration(AV1Configuration)
    /// Image spatial extents (`ispe`): the coded (or grid output) size.
    case spatialExtents(width: Int, height: Int)
    /// Image rotation (`irot`): quarter turns anticlockwise.
    case rotation(quarterTurns: Int)
    /// Image mirror (`imir`): `leftRight` (axis 1) swaps left and right, otherwise
    /// top and bottom, as libheif 1.15 reads the axis.
    case mirror(leftRight: Bool)
    /// Clean aperture (`clap`): a centred crop, as fractions.
    case cleanAperture(HEIFCleanAperture)
    /// Colour information.
    case colour(HEIFColour)
    /// Bits per channel (`pixi`).
    case pixelInformation(bitsPerChannel: [Int])
    /// Auxiliary type (`auxC`): an alpha or depth plane's URN.
    case auxiliaryType(String)
    /// Any other property, by its box type.
    case other(String)
}

/// A `clap` box: width, height and centre offsets as fractions.
package struct HEIFCleanAperture: Sendable, Hashable {
    let widthN: Int64, widthD: Int64, heightN: Int64, heightD: Int64
    let horizontalN: Int64, horizontalD: Int64, verticalN: Int64, verticalD: Int64

    /// The crop of an image `width`×`height`, rounded as libheif 1.15 rounds it:
    /// first and last column and row, inclusive, clamped into the image; nil when
    /// empty, or when the values are too large to compute with exactly (no real
    /// file has a denominator over 2^16 or an aperture over 2^24 pixels).
    package func crop(width: Int, height: Int) -> (left: Int, top: Int, right: Int, bottom: Int)? {
        let limit: Int64 = 1 << 24
        guard width > 0, height > 0, width <= limit, height <= limit,
            [widthD, heightD, horizontalD, verticalD].allSatisfy({ $0 > 0 && $0 <= 1 << 16 }),
            [widthN, heightN, horizontalN, verticalN].allSatisfy({ abs($0) <= limit * (1 << 16) })
        else { return nil }
        // left = horizOff + (width - 1)/2 - (clapWidth - 1)/2, rounded down; top rounded to nearest.
        func origin(_ offN: Int64, _ offD: Int64, _ size: Int, _ apN: Int64, _ apD: Int64, roundDown: Bool) -> Int64 {
            // offN/offD + (size-1)/2 - (apN/apD - 1)/2 over the common denominator 2*offD*apD.
            let d = 2 * offD * apD
            let n = 2 * offN * apD + Int64(size - 1) * offD * apD - (apN - apD) * offD
            return roundDown ? n / d : (n + d / 2) / d
        }
        func rounded(_ n: Int64, _ d: Int64) -> Int64 { (n + d / 2) / d }
        var left = origin(horizontalN, horizontalD, width, widthN, widthD, roundDown: true)
        var top = origin(verticalN, verticalD, height, heightN, heightD, roundDown: false)
        // right = clapWidth - 1 + left, rounded; bottom likewise.
        var right = rounded(widthN - widthD + left * widthD, widthD)
        var bottom = rounded(heightN - heightD + top * heightD, heightD)
        left = max(0, left)
        top = max(0, top)
        right = min(right, Int64(width) - 1)
        bottom = min(bottom, Int64(height) - 1)
        guard left <= right, top <= bottom else { return nil }
        return (Int(left), Int(top), Int(right), Int(bottom))
    }
}

/// A geometric transform of an item, in the order it is applied.
package enum HEIFTransform: Sendable, Hashable {
    /// Quarter turns anticlockwise (1–3).
    case rotate(quarterTurns: Int)
    /// A mirror: left↔right, or top↔bottom.
    case mirror(leftRight: Bool)
    /// A crop to the clean aperture.
    case crop(HEIFCleanAperture)
}

/// A grid item's layout (`ImageGrid`): tiles in rows, cropped to the output size.
package struct HEIFGrid: Sendable, Hashable {
    /// Tile rows.
    package let rows: Int
    /// Tile columns.
    package let columns: Int
    /// The composed picture's size (the tiles' canvas is cropped to it).
    package let outputWidth: Int
    /// See ``outputWidth``.
    package let outputHeight: Int
    /// The tile items, row by row.
    package let tiles: [HEIFItemID]
}

/// A file's items, properties and references, parsed from its `meta` box.
package struct HEIFFile: Sendable {
    /// The `ftyp` major brand (`heic`, `mif1`, `avif`, `avis`, `msf1`, …).
    package let majorBrand: String
    /// The `ftyp` compatible brands.
    package let compatibleBrands: [String]
    /// True when the file has a top-level `moov`: an image sequence (`msf1`, `avis`) or a track.
    package let hasMovie: Bool
    /// The primary item (`pitm`); nil when the file has no `meta` (a pure sequence).
    package let primaryItemID: HEIFItemID?
    /// Items by ID.
    package let items: [HEIFItemID: HEIFItem]
    /// The `ipco` properties, in order (an `ipma` index `i` is `properties[i - 1]`).
    package let properties: [HEIFProperty]
    /// `iref` references: type, from, to (in order).
    package let references: [(type: String, from: HEIFItemID, to: [HEIFItemID])]
    /// Where the `idat` payload is in the file (construction method 1).
    let itemDataBox: Range<Int>?
    /// The file's size in bytes.
    package let fileSize: Int

    /// Limits that keep a hostile file from costing more than its bytes: items and
    /// references per file, extents per item.
    static let maximumItems = 10_000
    static let maximumExtents = 10_000

    /// Reads the structure of the HEIF file in `bytes` (the whole file: item data is
    /// located, not copied).
    package static func parse(_ bytes: [UInt8]) throws(HEIFFormatError) -> HEIFFile {
        let top = try boxes(in: bytes, range: 0..<bytes.count, truncatedLast: true)
        guard let ftyp = top.first, ftyp.type == "ftyp" else { throw HEIFFormatError("no ftyp box first") }
        var reader = ByteReader(bytes, range: ftyp.payload)
        let major = try reader.fourCC()
        try reader.skip(min(4, reader.remaining))
        var compatible: [String] = []
        while reader.remaining >= 4, compatible.count < 64 { compatible.append(try reader.fourCC()) }
        let hasMovie = top.contains { $0.type == "moov" }
        guard let meta = top.first(where: { $0.type == "meta" }) else {
            guard hasMovie else { throw HEIFFormatError("no meta box") }
            return HEIFFile(
                majorBrand: major, compatibleBrands: compatible, hasMovie: true, primaryItemID: nil, items: [:],
                properties: [],
                references: [], itemDataBox: nil, fileSize: bytes.count)
        }
        return try parseMeta(bytes, meta: meta, major: major, compatible: compatible, hasMovie: hasMovie)
    }

    private static func parseMeta(_ bytes: [UInt8], meta: Box, major: String, compatible: [String], hasMovie: Bool)
        throws(HEIFFormatError) -> HEIFFile
    {
        var header = ByteReader(bytes, range: meta.payload)
        _ = try header.fullBoxHeader()
        let children = try boxes(in: bytes, range: header.position..<meta.payload.upperBound)
        func child(_ type: String) -> Box? { children.first { $0.type == type } }

        guard let hdlr = child("hdlr") else { throw HEIFFormatError("meta has no hdlr box") }
        var reader = ByteReader(bytes, range: hdlr.payload)
        _ = try reader.fullBoxHeader()
        try reader.skip(4)
        let handler = try reader.fourCC()
        guard handler == "pict" else { throw HEIFFormatError("meta handler is '\(handler)', not 'pict'") }

        var primary: HEIFItemID?
        if let pitm = child("pitm") {
            var reader = ByteReader(bytes, range: pitm.payload)
            let (version, _) = try reader.fullBoxHeader()
            primary = version == 0 ? HEIFItemID(try reader.u16()) : try reader.u32()
        }

        var types: [HEIFItemID: (type: String, hidden: Bool)] = [:]
        if let iinf = child("iinf") { types = try parseItemInfo(bytes, iinf) }
        var locations: [HEIFItemID: (construction: Int, extents: [(offset: Int, length: Int)])] = [:]
        if let iloc = child("iloc") { locations = try parseItemLocations(bytes, iloc) }
        var references: [(type: String, from: HEIFItemID, to: [HEIFItemID])] = []
        if let iref = child("iref") { references = try parseItemReferences(bytes, iref) }

        var properties: [HEIFProperty] = []
        var associations: [HEIFItemID: [(index: Int, essential: Bool)]] = [:]
        if let iprp = child("iprp") {
            let inside = try boxes(in: bytes, range: iprp.payload)
            if let ipco = inside.first(where: { $0.type == "ipco" }) {
                properties = try boxes(in: bytes, range: ipco.payload).map { box throws(HEIFFormatError) in
                    try parseProperty(bytes, box)
                }
            }
            for ipma in inside where ipma.type == "ipma" {
                try parseAssociations(bytes, ipma, into: &associations)
            }
        }

        var items: [HEIFItemID: HEIFItem] = [:]
        for (id, info) in types {
            let location = locations[id] ?? (0, [])
            var item = HEIFItem(
                id: id, type: info.type, hidden: info.hidden, construction: location.construction,
                extents: location.extents)
            item.associations = (associations[id] ?? []).filter { $0.index >= 1 && $0.index <= properties.count }
                .map { (index: $0.index - 1, essential: $0.essential) }
            items[id] = item
        }
        return HEIFFile(
            majorBrand: major, compatibleBrands: compatible, hasMovie: hasMovie, primaryItemID: primary, items: items,
            properties: properties, references: references, itemDataBox: child("idat")?.payload, fileSize: bytes.count)
    }

    private static func parseItemInfo(_ bytes: [UInt8], _ iinf: Box) throws(HEIFFormatError) -> [HEIFItemID: (
        type: String, hidden: Bool
    )] {
        var reader = ByteReader(bytes, range: iinf.payload)
        let (version, _) = try reader.fullBoxHeader()
        let count = version == 0 ? Int(try reader.u16()) : Int(try reader.u32())
        guard count <= maximumItems else { throw HEIFFormatError("\(count) items") }
        var types: [HEIFItemID: (type: String, hidden: Bool)] = [:]
        for entry in try boxes(in: bytes, range: reader.position..<iinf.payload.upperBound) where entry.type == "infe" {
            var infe = ByteReader(bytes, range: entry.payload)
            let (version, flags) = try infe.fullBoxHeader()
            guard version >= 2 else { continue }  // versions 0 and 1 predate item types (no images)
            let id = version == 2 ? HEIFItemID(try infe.u16()) : try infe.u32()
            try infe.skip(2)  // item_protection_index
            let type = try infe.fourCC()
            types[id] = (type, flags & 1 != 0)
        }
        return types
    }

    private static func parseItemLocations(_ bytes: [UInt8], _ iloc: Box) throws(HEIFFormatError) -> [HEIFItemID: (
        construction: Int, extents: [(offset: Int, length: Int)]
    )] {
        var reader = ByteReader(bytes, range: iloc.payload)
        let (version, _) = try reader.fullBoxHeader()
        guard version <= 2 else { throw HEIFFormatError("iloc version \(version)") }
        let sizes = try reader.u16()
        let offsetSize = Int(sizes >> 12)
        let lengthSize = Int(sizes >> 8 & 0xF)
        let baseOffsetSize = Int(sizes >> 4 & 0xF)
        let indexSize = version == 0 ? 0 : Int(sizes & 0xF)
        for size in [offsetSize, lengthSize, baseOffsetSize, indexSize] where ![0, 4, 8].contains(size) {
            throw HEIFFormatError("iloc field size \(size)")
        }
        let count = version < 2 ? Int(try reader.u16()) : Int(try reader.u32())
        guard count <= maximumItems else { throw HEIFFormatError("\(count) item locations") }
        var locations: [HEIFItemID: (construction: Int, extents: [(offset: Int, length: Int)])] = [:]
        for _ in 0..<count {
            let id = version < 2 ? HEIFItemID(try reader.u16()) : try reader.u32()
            let construction = version == 0 ? 0 : Int(try reader.u16() & 0xF)
            try reader.skip(2)  // data_reference_index: 0, this file
            let base = try reader.offset(baseOffsetSize)
            let extentCount = Int(try reader.u16())
            guard extentCount <= maximumExtents else { throw HEIFFormatError("\(extentCount) extents") }
            var extents: [(offset: Int, length: Int)] = []
            for _ in 0..<extentCount {
                _ = try reader.uint(indexSize)
                let offset = try reader.offset(offsetSize)
                let length = try reader.offset(lengthSize)
                extents.append((base + offset, length))
            }
            locations[id] = (construction, extents)
        }
        return locations
    }

    private static func parseItemReferences(_ bytes: [UInt8], _ iref: Box) throws(HEIFFormatError) -> [(
        type: String, from: HEIFItemID, to: [HEIFItemID]
    )] {
        var reader = ByteReader(bytes, range: iref.payload)
        let (version, _) = try reader.fullBoxHeader()
        var references: [(type: String, from: HEIFItemID, to: [HEIFItemID])] = []
        for box in try boxes(in: bytes, range: reader.position..<iref.payload.upperBound) {
            var entry = ByteReader(bytes, range: box.payload)
            let from = version == 0 ? HEIFItemID(try entry.u16()) : try entry.u32()
            let count = Int(try entry.u16())
            var to: [HEIFItemID] = []
            to.reserveCapacity(count)
            for _ in 0..<count { to.append(version == 0 ? HEIFItemID(try entry.u16()) : try entry.u32()) }
            references.append((box.type, from, to))
            guard references.count <= maximumItems else { throw HEIFFormatError("too many references") }
        }
        return references
    }

    private static func parseAssociations(
        _ bytes: [UInt8], _ ipma: Box, into associations: inout [HEIFItemID: [(index: Int, essential: Bool)]]
    ) throws(HEIFFormatError) {
        var reader = ByteReader(bytes, range: ipma.payload)
        let (version, flags) = try reader.fullBoxHeader()
        let count = Int(try reader.u32())
        guard count <= maximumItems else { throw HEIFFormatError("\(count) property associations") }
        for _ in 0..<count {
            let id = version < 1 ? HEIFItemID(try reader.u16()) : try reader.u32()
            let n = Int(try reader.u8())
            var list = associations[id] ?? []
            for _ in 0..<n {
                if flags & 1 != 0 {
                    let value = try reader.u16()
                    list.append((Int(value & 0x7FFF), value & 0x8000 != 0))
                } else {
                    let value = try reader.u8()
                    list.append((Int(value & 0x7F), value & 0x80 != 0))
                }
            }
            associations[id] = list
        }
    }

    private static func parseProperty(_ bytes: [UInt8], _ box: Box) throws(HEIFFormatError) -> HEIFProperty {
        var reader = ByteReader(bytes, range: box.payload)
        switch box.type {
        case "hvcC":
            let record = Array(bytes[box.payload])
            guard record.count >= 23 else { throw HEIFFormatError("hvcC of \(record.count) bytes") }
            return .hevcConfiguration(
                HEVCConfiguration(
                    record: record, chromaFormat: Int(record[16] & 3), bitDepthLuma: Int(record[17] & 7) + 8,
                    bitDepthChroma: Int(record[18] & 7) + 8, nalLengthSize: Int(record[21] & 3) + 1))
        case "av1C":
            // One that does not read as an av1C is kept as unknown: no decoder here takes its item.
            guard let configuration = AV1Configuration(record: Array(bytes[box.payload])) else { return .other("av1C") }
            return .av1Configuration(configuration)
        case "ispe":
            _ = try reader.fullBoxHeader()
            return .spatialExtents(width: Int(try reader.u32()), height: Int(try reader.u32()))
        case "irot":
            return .rotation(quarterTurns: Int(try reader.u8() & 3))
        case "imir":
            return .mirror(leftRight: try reader.u8() & 1 != 0)
        case "clap":
            var v: [Int64] = []
            for i in 0..<8 {
                let word = try reader.u32()
                // Offsets (4 and 6) are signed; everything else unsigned, and must fit 31 bits, as in libheif.
                if i == 4 || i == 6 {
                    v.append(Int64(Int32(bitPattern: word)))
                } else {
                    guard word <= UInt32(Int32.max) else { throw HEIFFormatError("clap value out of range") }
                    v.append(Int64(word))
                }
            }
            guard v[1] > 0, v[3] > 0, v[5] > 0, v[7] > 0 else { throw HEIFFormatError("clap with a zero denominator") }
            return .cleanAperture(
                HEIFCleanAperture(
                    widthN: v[0], widthD: v[1], heightN: v[2], heightD: v[3], horizontalN: v[4], horizontalD: v[5],
                    verticalN: v[6], verticalD: v[7]))
        case "colr":
            let type = try reader.fourCC()
            if type == "nclx" {
                let primaries = Int(try reader.u16())
                let transfer = Int(try reader.u16())
                let matrix = Int(try reader.u16())
                let full = try reader.u8() & 0x80 != 0
                return .colour(.nclx(primaries: primaries, transfer: transfer, matrix: matrix, fullRange: full))
            }
            if type == "prof" || type == "rICC" {
                return .colour(.icc(profile: reader.position..<box.payload.upperBound))
            }
            return .other("colr")
        case "pixi":
            _ = try reader.fullBoxHeader()
            let channels = Int(try reader.u8())
            var bits: [Int] = []
            for _ in 0..<channels { bits.append(Int(try reader.u8())) }
            return .pixelInformation(bitsPerChannel: bits)
        case "auxC":
            _ = try reader.fullBoxHeader()
            return .auxiliaryType(reader.cString())
        default:
            return .other(box.type)
        }
    }
}

extension HEIFFile {
    /// The primary item, if the file names one that exists.
    package var primaryItem: HEIFItem? { primaryItemID.flatMap { items[$0] } }

    /// True for an image sequence: a `moov` track (brands `msf1`, `avis`) that
    /// carries the pictures.
    package var isSequence: Bool {
        hasMovie
            && (["msf1", "avis"].contains(majorBrand) || compatibleBrands.contains("msf1")
                || compatibleBrands.contains("avis") || primaryItem == nil)
    }

    /// `item`'s properties, in `ipma` order.
    package func properties(of item: HEIFItem) -> [HEIFProperty] {
        item.associations.map { properties[$0.index] }
    }

    /// Items `from` refers to with references of `type` (`dimg`: a grid's tiles, in order).
    package func references(from id: HEIFItemID, type: String) -> [HEIFItemID] {
        references.first { $0.type == type && $0.from == id }?.to ?? []
    }

    /// Items that refer to `id` with references of `type` (`thmb`: its thumbnails;
    /// `cdsc`: its EXIF; `auxl`: its alpha or depth planes).
    package func items(referring id: HEIFItemID, type: String) -> [HEIFItem] {
        references.filter { $0.type == type && $0.to.contains(id) }.compactMap { items[$0.from] }
    }

    /// `item`'s coded (or composed) size from its `ispe`.
    package func spatialExtents(of item: HEIFItem) -> (width: Int, height: Int)? {
        for property in properties(of: item) {
            if case .spatialExtents(let width, let height) = property { return (width, height) }
        }
        return nil
    }

    /// `item`'s HEVC configuration, if it is coded with HEVC.
    package func hevcConfiguration(of item: HEIFItem) -> HEVCConfiguration? {
        for property in properties(of: item) {
            if case .hevcConfiguration(let configuration) = property { return configuration }
        }
        return nil
    }

    /// `item`'s AV1 configuration, if it is coded with AV1.
    package func av1Configuration(of item: HEIFItem) -> AV1Configuration? {
        for property in properties(of: item) {
            if case .av1Configuration(let configuration) = property { return configuration }
        }
        return nil
    }

    /// `item`'s colour information (`colr`), nclx preferred when it has both.
    package func colour(of item: HEIFItem) -> HEIFColour? {
        var found: HEIFColour?
        for case .colour(let colour) in properties(of: item) {
            if case .nclx = colour { return colour }
            found = colour
        }
        return found
    }

    /// Where `item`'s ICC profile (`colr` `prof` or `rICC`) is in the file, if it has one.
    package func iccProfile(of item: HEIFItem) -> Range<Int>? {
        for case .colour(.icc(let profile)) in properties(of: item) { return profile }
        return nil
    }

    /// `item`'s geometric transforms (`irot`, `imir`, `clap`) in `ipma` order, the
    /// order libheif applies them in.
    package func transforms(of item: HEIFItem) -> [HEIFTransform] {
        properties(of: item).compactMap { property in
            switch property {
            case .rotation(let turns): turns == 0 ? nil : .rotate(quarterTurns: turns)
            case .mirror(let leftRight): .mirror(leftRight: leftRight)
            case .cleanAperture(let aperture): .crop(aperture)
            default: nil
            }
        }
    }

    /// The size `item` is displayed at after its transforms, from its `ispe`; nil
    /// when it has none, an empty one, or its crop leaves nothing.
    package func displayedSize(of item: HEIFItem) -> (width: Int, height: Int)? {
        guard var (width, height) = spatialExtents(of: item), width > 0, height > 0 else { return nil }
        for transform in transforms(of: item) {
            switch transform {
            case .rotate(let turns):
                if turns % 2 == 1 { swap(&width, &height) }
            case .mirror:
                break
            case .crop(let aperture):
                guard let crop = aperture.crop(width: width, height: height) else { return nil }
                width = crop.right - crop.left + 1
                height = crop.bottom - crop.top + 1
            }
        }
        return (width, height)
    }

    /// The bytes of `item` (its extents, joined), from the file in `bytes`. Fails
    /// when an extent lies outside the file (truncated) or the item is built from
    /// other items (construction method 2).
    package func data(of item: HEIFItem, in bytes: [UInt8], limit: Int = Int.max) throws(HEIFFormatError) -> [UInt8] {
        let base: Range<Int>
        switch item.construction {
        case 0: base = 0..<bytes.count
        case 1:
            guard let idat = itemDataBox else {
                throw HEIFFormatError("item \(item.id) is in an idat box the file lacks")
            }
            base = idat
        default: throw HEIFFormatError("item \(item.id) uses iloc construction method \(item.construction)")
        }
        guard !item.extents.isEmpty else { throw HEIFFormatError("item \(item.id) has no data") }
        var data: [UInt8] = []
        for extent in item.extents {
            let start = base.lowerBound + extent.offset
            // Length 0: the rest of the file (or of the idat).
            let end = extent.length == 0 ? base.upperBound : start + extent.length
            guard start >= base.lowerBound, start <= end, end <= base.upperBound else {
                throw HEIFFormatError("item \(item.id) lies past the end of the file (truncated)")
            }
            guard data.count + (end - start) <= limit else {
                throw HEIFFormatError("item \(item.id) is larger than \(limit) bytes")
            }
            data.append(contentsOf: bytes[start..<end])
        }
        return data
    }

    /// The layout of the grid item `item`: rows, columns, output size and tiles.
    package func grid(_ item: HEIFItem, in bytes: [UInt8]) throws(HEIFFormatError) -> HEIFGrid {
        let data = try self.data(of: item, in: bytes, limit: 64)
        var reader = ByteReader(data, range: 0..<data.count)
        let version = try reader.u8()
        guard version == 0 else { throw HEIFFormatError("grid version \(version)") }
        let flags = try reader.u8()
        let rows = Int(try reader.u8()) + 1
        let columns = Int(try reader.u8()) + 1
        let fieldSize = flags & 1 != 0 ? 4 : 2
        let width = Int(try reader.uint(fieldSize))
        let height = Int(try reader.uint(fieldSize))
        let tiles = references(from: item.id, type: "dimg")
        guard tiles.count == rows * columns else {
            throw HEIFFormatError("grid of \(rows)×\(columns) has \(tiles.count) tiles")
        }
        guard width > 0, height > 0 else { throw HEIFFormatError("grid of size \(width)×\(height)") }
        return HEIFGrid(rows: rows, columns: columns, outputWidth: width, outputHeight: height, tiles: tiles)
    }

    /// The EXIF Orientation (1–8) of `item` from its `Exif` item (`cdsc`), if any.
    package func exifOrientation(of item: HEIFItem, in bytes: [UInt8]) -> Int? {
        for exif in items(referring: item.id, type: "cdsc") where exif.type == "Exif" {
            guard let data = try? data(of: exif, in: bytes, limit: 1 << 20), data.count > 4 else { continue }
            // exif_tiff_header_offset, then (after that many bytes) the TIFF header.
            let offset = Int(data[0]) << 24 | Int(data[1]) << 16 | Int(data[2]) << 8 | Int(data[3])
            guard offset >= 0, offset < data.count - 4 else { continue }
            if let orientation = EXIF.orientation(tiff: Array(data[(4 + offset)...])) { return orientation }
        }
        return nil
    }
}
