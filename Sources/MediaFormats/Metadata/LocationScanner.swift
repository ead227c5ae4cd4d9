// Where a file records a location, for location privacy: run by the decoder
// (in a sandboxed helper) over the copy's untrusted bytes, read by random
// access (only metadata structures are read, never the picture or the sound).
// What it returns is a list of overwrites (``MetadataEdit``) that remove each
// place in place; the caller checks them against the file and makes them.
//
// Covered: EXIF GPS (a TIFF GPS IFD) in JPEG (APP1, Photoshop's APP13, and in
// MPF secondary images), HEIC/HEIF/AVIF (`Exif` items), PNG (`eXIf`), WebP (`EXIF`), JPEG XL
// (`Exif` box), TIFF, DNG and the TIFF-based RAWs (IFD0, and the Photoshop
// resources of its tag 34377), PSD (its image resources), RAF (its JPEG), CR3
// (`CMT4`); XMP `exif:GPS*` in each of those containers (JPEG APP1 and its
// extended XMP, Photoshop's resource 0x0424, HEIF `mime` items, PNG `iTXt`, WebP `XMP `, JPEG XL `xml `,
// TIFF tag 700, MP4/MOV `uuid` and `XMP_`); QuickTime `©xyz` and the
// `com.apple.quicktime.location.*` keys, and 3GPP `loci`, in MP4/MOV (and in
// the video a motion photo carries after its JPEG or in a HEIC's `mpvd`).
// With `placeNames`, the names of the place too: IPTC IIM's city, sub-location,
// state and country (``PhotoshopLocation``: Photoshop's resource 0x0404 in a
// JPEG's APP13, a TIFF's tag 34377 or a PSD, and a TIFF's IPTC tag 33723), XMP's (``XMPLocation/isPlaceName(_:namespace:)``).
// Text files: XMP sidecars (``XMPLocation/scanDocument(_:strict:into:)``) and
// JSON documents, Takeout's and any other (``JSONLocation``); a file that
// must be one of those (``LocationScanner/jsonDocument``,
// ``LocationScanner/xmpDocument``) and cannot be read to its end is not removable.

/// Finds the location metadata of a file (see the file's header comment).
package enum LocationScanner {
    /// The location metadata of `file`, whose content the sniffer recognised
    /// as `format`: its coordinates, and with `placeNames` the names of its
    /// place too (IPTC IIM's city, sub-location, state and country; XMP's
    /// `photoshop:City`, …, IPTC Extension's `LocationCreated` and `LocationShown` whole).
    package static func scan(_ file: any RandomAccessBytes, format: MediaFormat, placeNames: Bool = false)
        -> LocationMetadata
    {
        var findings = Findings(placeNames: placeNames)
        let whole = SegmentedBytes(file)
        switch format.id {
        case "jpeg": JPEGLocation.scan(whole, into: &findings, depth: 0)
        case "png": PNGLocation.scan(whole, into: &findings)
        case "webp": WebPLocation.scan(whole, into: &findings)
        case "heic", "heif", "avif", "heics", "heifs", "avifs": HEIFLocation.scan(whole, into: &findings)
        case "jxl": JXLLocation.scan(whole, into: &findings)
        case "tiff", "dng", "nef", "cr2", "arw", "orf", "rw2": TIFFLocation.scanFile(whole, into: &findings)
        case "raf": RAFLocation.scan(whole, into: &findings)
        case "psd": PSDLocation.scan(whole, into: &findings)
        case "cr3", "mp4", "mov", "m4v", "3gp", "m4a":
            ISOLocation.scan(whole, in: 0..<whole.count, into: &findings, depth: 0)
        case jsonDocument.id: JSONLocation.scan(whole, strict: true, into: &findings)
        case xmpDocument.id: XMPLocation.scanDocument(whole, strict: true, into: &findings)
        default:
            if format.kind == .text { scanText(whole, into: &findings) }
        }
        return findings.metadata
    }

    /// A JSON document, for a location request: read as JSON to its end
    /// (Takeout's sidecars; any file named `.json`); not being JSON is not removable.
    package static let jsonDocument = MediaFormat(
        id: "json-document", name: "JSON", kind: .text, mimeType: "application/json", extensions: ["json"])
    /// An XMP document (a sidecar), for a location request: followed to its
    /// end; one that cannot be is not removable.
    package static let xmpDocument = MediaFormat(
        id: "xmp-document", name: "XMP", kind: .text, mimeType: "application/rdf+xml", extensions: ["xmp"])

    /// Any other text: JSON when it starts with `{` or `[`, XML (that may
    /// carry XMP) when it starts with `<`, else nothing to find.
    static func scanText(_ whole: SegmentedBytes, into findings: inout Findings) {
        var offset = 0
        while let byte = whole.read(offset..<min(whole.count, offset + 1))?.first {
            if offset == 0, byte == 0xEF, whole.read(0..<min(whole.count, 3)) == [0xEF, 0xBB, 0xBF] {
                offset = 3
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                offset += 1
                guard offset < 4096 else { return }
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["): JSONLocation.scan(whole, strict: false, into: &findings)
            case UInt8(ascii: "<"): XMPLocation.scanDocument(whole, strict: false, into: &findings)
            default: break
            }
            return
        }
    }

    /// The formats whose location metadata ``scan(_:format:placeNames:)`` reads.
    package static let formats: Set<String> = [
        "jpeg", "png", "webp", "heic", "heif", "avif", "heics", "heifs", "avifs", "jxl", "tiff", "dng", "nef", "cr2",
        "arw", "orf", "rw2", "raf", "cr3",
        "psd", "mp4", "mov", "m4v", "3gp", "m4a",
    ]

    /// Most records and edits a scan returns (a real file has a handful).
    static let maximumRecords = 256
    static let maximumEdits = 4096
}

/// What a scan has found so far.
struct Findings {
    /// Whether the names of the place are found too (not only its coordinates).
    let placeNames: Bool
    private(set) var found: [LocationRecord] = []
    private(set) var unremovable: [String] = []
    private var edits = 0
    /// Ranges already claimed, so the same structure is never reported twice
    /// (a HEIF `Exif` item that two references name, a trailer found two ways).
    private var claimed: Set<Int> = []

    init(placeNames: Bool = false) { self.placeNames = placeNames }

    mutating func add(_ record: LocationRecord) {
        guard !record.edits.isEmpty, let first = record.edits.first, claimed.insert(first.offset).inserted else {
            return
        }
        guard found.count < LocationScanner.maximumRecords, edits + record.edits.count <= LocationScanner.maximumEdits
        else {
            notRemovable(
                "more location metadata than one file should hold (over \(LocationScanner.maximumRecords) places)")
            return
        }
        edits += record.edits.count
        found.append(record)
    }

    mutating func add(_ records: [LocationRecord]) { for record in records { add(record) } }

    mutating func notRemovable(_ what: String) {
        if !unremovable.contains(what), unremovable.count < 64 { unremovable.append(what) }
    }

    /// What was found, with no byte blanked twice: each zeros or spaces
    /// overwrite keeps only the bytes no earlier one (of its step or an earlier
    /// step, in record order) blanks already. Two structures a crafted file makes
    /// share bytes (a GPS value inside another, a value inside an XMP packet)
    /// would otherwise answer overlapping overwrites, which the parent refuses
    /// from an honest helper (Fuzz/corpus/exif/exif-overlapping-gps-values.tiff).
    /// Every byte is still blanked, no later than its own step asked.
    var metadata: LocationMetadata {
        var unremovable = unremovable
        let records = Self.disjoint(found)
        if records.reduce(0, { $0 + $1.edits.count }) > LocationScanner.maximumEdits {
            unremovable.append(
                "more location metadata than one file should hold (over \(LocationScanner.maximumEdits) overwrites)")
            return LocationMetadata(found: [], unremovable: unremovable)
        }
        return LocationMetadata(found: records, unremovable: unremovable)
    }

    /// `records` whose zeros and spaces overwrites are trimmed of the bytes
    /// blanked already (see ``metadata``); the others (a `free` box, a CRC) as they are.
    static func disjoint(_ records: [LocationRecord]) -> [LocationRecord] {
        func blanks(_ edit: MetadataEdit) -> Bool { edit.fill == .zeros || edit.fill == .spaces }
        // Steps in order, records in order within a step: an earlier claim wins.
        let order = records.indices.flatMap { r in records[r].edits.indices.map { (r, $0) } }
            .filter { blanks(records[$0.0].edits[$0.1]) }
            .sorted { (records[$0.0].edits[$0.1].step, $0.0, $0.1) < (records[$1.0].edits[$1.1].step, $1.0, $1.1) }
        var covered: [Range<Int>] = []  // disjoint, sorted
        var pieces: [Int: [Int: [MetadataEdit]]] = [:]
        for (r, e) in order {
            let edit = records[r].edits[e]
            let range = edit.offset..<(edit.offset + edit.length)
            var left: [Range<Int>] = []
            var from = range.lowerBound
            for claimed in covered where claimed.upperBound > range.lowerBound && claimed.lowerBound < range.upperBound
            {
                if claimed.lowerBound > from { left.append(from..<claimed.lowerBound) }
                from = max(from, claimed.upperBound)
            }
            if from < range.upperBound { left.append(from..<range.upperBound) }
            pieces[r, default: [:]][e] = left.map {
                MetadataEdit(offset: $0.lowerBound, length: $0.count, fill: edit.fill, step: edit.step)
            }
            // Merge the range into what is covered.
            var merged = range
            covered.removeAll { claimed in
                guard claimed.upperBound >= merged.lowerBound, claimed.lowerBound <= merged.upperBound else {
                    return false
                }
                merged = min(merged.lowerBound, claimed.lowerBound)..<max(merged.upperBound, claimed.upperBound)
                return true
            }
            covered.insert(merged, at: covered.firstIndex { $0.lowerBound > merged.lowerBound } ?? covered.endIndex)
        }
        return records.indices.map { r in
            let edits = records[r].edits.indices.flatMap { e in pieces[r]?[e] ?? [records[r].edits[e]] }
            return LocationRecord(name: records[r].name, edits: edits)
        }
    }
}

// MARK: - TIFF (EXIF)

/// The GPS IFD of a TIFF structure (EXIF is one).
enum TIFFLocation {
    /// Names of the GPS tags (EXIF 2.32 and 3.0), for reports.
    static let gpsTagNames: [Int: String] = [
        0: "GPSVersionID", 1: "GPSLatitudeRef", 2: "GPSLatitude", 3: "GPSLongitudeRef", 4: "GPSLongitude",
        5: "GPSAltitudeRef", 6: "GPSAltitude",
        7: "GPSTimeStamp", 8: "GPSSatellites", 9: "GPSStatus", 10: "GPSMeasureMode", 11: "GPSDOP", 12: "GPSSpeedRef",
        13: "GPSSpeed",
        14: "GPSTrackRef", 15: "GPSTrack", 16: "GPSImgDirectionRef", 17: "GPSImgDirection", 18: "GPSMapDatum",
        19: "GPSDestLatitudeRef",
        20: "GPSDestLatitude", 21: "GPSDestLongitudeRef", 22: "GPSDestLongitude", 23: "GPSDestBearingRef",
        24: "GPSDestBearing",
        25: "GPSDestDistanceRef", 26: "GPSDestDistance", 27: "GPSProcessingMethod", 28: "GPSAreaInformation",
        29: "GPSDateStamp",
        30: "GPSDifferential", 31: "GPSHPositioningError",
    ]

    /// The EXIF GPS IFD of the TIFF structure at `base` in `stream` (whose
    /// IFD0's GPSInfo tag points at it; or, `gpsFirst`, whose first IFD is it:
    /// a CR3's `CMT4`), and with `xmp` the XMP packet of IFD0's tag 700.
    static func scan(
        _ stream: SegmentedBytes, base: Int, container: String, gpsFirst: Bool = false, xmp: Bool = false,
        into findings: inout Findings
    ) {
        guard let reader = TIFFReader(stream, base: base) else { return }
        let gpsIFD: Int
        if gpsFirst {
            gpsIFD = reader.firstIFD
        } else {
            guard let ifd0 = reader.ifd(at: reader.firstIFD) else { return }
            if xmp, let packet = reader.blob(700, in: ifd0.entries) {
                findings.add(
                    XMPLocation.records(
                        in: stream.slice(packet), container: "XMP (TIFF tag 700)", placeNames: findings.placeNames))
            }
            // A TIFF's IPTC IIM (tag 33723) and Photoshop image resources (tag 34377: EXIF, XMP and IIM again).
            if xmp, findings.placeNames, let iim = reader.blob(33723, in: ifd0.entries) {
                findings.add(PhotoshopLocation.placeNames(inIIM: stream, iim))
            }
            if xmp, let resources = reader.blob(34377, in: ifd0.entries) {
                PhotoshopLocation.resources(stream, in: resources, container: "TIFF tag 34377", into: &findings)
            }
            guard let pointer = reader.entry(0x8825, in: ifd0.entries),
                let offset = reader.integers(of: pointer, limit: 1)?.first
            else { return }
            gpsIFD = offset
        }
        if let record = gpsRecord(reader, stream: stream, ifd: gpsIFD, container: container) { findings.add(record) }
    }

    /// The record that empties the GPS IFD at `ifd` (relative to the reader's
    /// base): its values (step 0), its entries and next-IFD pointer (step 1),
    /// its entry count (step 2). The IFD stays where it is, with no entries:
    /// IFD0's GPSInfo tag still points at it, and no reader finds a GPS tag.
    static func gpsRecord(_ reader: TIFFReader, stream: SegmentedBytes, ifd: Int, container: String) -> LocationRecord?
    {
        guard let start = reader.absolute(ifd), let countBytes = stream.read(start..<(start + 2)) else { return nil }
        let count = reader.u16(countBytes, 0)
        guard count > 0, count <= TIFFReader.maximumEntries else { return nil }
        let tableEnd = min(stream.count, start + 2 + count * 12 + 4)
        guard let table = stream.read((start + 2)..<min(tableEnd, start + 2 + count * 12)), table.count == count * 12
        else { return nil }
        var values: [MetadataEdit] = []
        var names: [String] = []
        for i in 0..<count {
            let at = i * 12
            let tag = reader.u16(table, at)
            let type = reader.u16(table, at + 2)
            let n = reader.u32(table, at + 4)
            names.append(gpsTagNames[tag] ?? "GPS tag \(tag)")
            guard let length = TIFFEntry(tag: tag, type: type, count: n, valueOffset: 0).byteCount, length > 4,
                let valueStart = reader.absolute(reader.u32(table, at + 8))
            else { continue }
            let value = valueStart..<min(stream.count, valueStart + length)
            // Never a range that overlaps the IFD itself (a damaged or hostile offset).
            guard !value.isEmpty, !value.overlaps(start..<tableEnd) else { continue }
            values += stream.edits(value, .zeros, step: 0)
        }
        let edits =
            values + stream.edits((start + 2)..<tableEnd, .zeros, step: 1)
            + stream.edits(start..<(start + 2), .zeros, step: 2)
        return LocationRecord(name: "\(container) GPS (\(names.joined(separator: ", ")))", edits: edits)
    }

    /// A TIFF file or a TIFF-based RAW: IFD0's GPS IFD and XMP; a RW2's
    /// embedded JPEG (`JpgFromRaw`, where Panasonic keeps the EXIF).
    static func scanFile(_ stream: SegmentedBytes, into findings: inout Findings) {
        scan(stream, base: 0, container: "EXIF", xmp: true, into: &findings)
        guard let reader = TIFFReader(stream, base: 0), let ifd0 = reader.ifd(at: reader.firstIFD) else { return }
        if let jpeg = reader.blob(0x002E, in: ifd0.entries) {
            JPEGLocation.scan(stream.slice(jpeg), into: &findings, depth: 1)
        }
    }
}

// MARK: - JPEG

enum JPEGLocation {
    static let exifHeader: [UInt8] = Array("Exif\0\0".utf8)
    static let xmpHeader: [UInt8] = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
    static let extendedXMPHeader: [UInt8] = Array("http://ns.adobe.com/xmp/extension/\0".utf8)
    static let mpfHeader: [UInt8] = Array("MPF\0".utf8)

    /// A JPEG's segments up to its first scan (EXIF, XMP and extended XMP, and
    /// MPF's secondary images, each a JPEG of its own), then, after its end, a
    /// video appended to it (a motion photo's MP4).
    static func scan(_ stream: SegmentedBytes, into findings: inout Findings, depth: Int) {
        guard depth <= 2, let head = stream.read(0..<min(stream.count, 2)), head == [0xFF, 0xD8] else { return }
        var position = 2
        var extended: [String: [(offset: Int, range: Range<Int>)]] = [:]
        var secondary: [Range<Int>] = []
        var firstScan: Int?
        while position + 4 <= stream.count, let marker = stream.read(position..<(position + 4)), marker[0] == 0xFF {
            let type = marker[1]
            if type == 0xFF {
                position += 1
                continue
            }
            if type == 0xD8 || type == 0x01 || (0xD0...0xD7).contains(type) {
                position += 2
                continue
            }
            if type == 0xD9 { return }
            if type == 0xDA {
                firstScan = position
                break
            }
            let length = Int(marker[2]) << 8 | Int(marker[3])
            guard length >= 2 else { return }
            let payload = (position + 4)..<min(stream.count, position + 2 + length)
            if type == 0xE1 || type == 0xE2 {
                let prefix = stream.read(payload.lowerBound..<min(payload.upperBound, payload.lowerBound + 40)) ?? []
                if type == 0xE1, prefix.starts(with: exifHeader) {
                    TIFFLocation.scan(
                        stream.slice((payload.lowerBound + 6)..<payload.upperBound), base: 0, container: "EXIF",
                        into: &findings)
                } else if type == 0xE1, prefix.starts(with: xmpHeader) {
                    findings.add(
                        XMPLocation.records(
                            in: stream.slice((payload.lowerBound + xmpHeader.count)..<payload.upperBound),
                            container: "XMP", placeNames: findings.placeNames))
                } else if type == 0xE1, prefix.starts(with: extendedXMPHeader),
                    let header = stream.read(payload.lowerBound..<(payload.lowerBound + extendedXMPHeader.count + 40))
                {
                    // GUID (32 hexadecimal digits), full length, this chunk's offset, then the chunk.
                    let guid = String(
                        decoding: header[extendedXMPHeader.count..<(extendedXMPHeader.count + 32)], as: UTF8.self)
                    let o = extendedXMPHeader.count + 36
                    let offset =
                        Int(header[o]) << 24 | Int(header[o + 1]) << 16 | Int(header[o + 2]) << 8 | Int(header[o + 3])
                    extended[guid, default: []].append((offset, (payload.lowerBound + o + 4)..<payload.upperBound))
                } else if type == 0xE2, prefix.starts(with: mpfHeader) {
                    secondary += mpfImages(stream, tiff: payload.lowerBound + 4, end: payload.upperBound)
                }
            } else if type == 0xED {
                PhotoshopLocation.scan(stream, payload: payload, into: &findings)
            }
            position = payload.upperBound
        }
        for (_, chunks) in extended.sorted(by: { $0.key < $1.key }) {
            let ordered = chunks.sorted { $0.offset < $1.offset }
            // Chunks must join without gaps or overlaps to be one packet.
            var expected = 0
            guard
                ordered.allSatisfy({ chunk in
                    defer { expected = chunk.offset + chunk.range.count }
                    return chunk.offset == expected
                })
            else { continue }
            let packet = SegmentedBytes(stream.file, segments: ordered.flatMap { stream.fileRanges(of: $0.range) })
            findings.add(XMPLocation.records(in: packet, container: "XMP (extended)", placeNames: findings.placeNames))
        }
        for image in secondary { scan(stream.slice(image), into: &findings, depth: depth + 1) }
        guard depth == 0, let firstScan, let end = endOfImage(stream, from: firstScan) else { return }
        // A video after the picture (and after its MPF images): a motion photo.
        let trailerStart = max(end, secondary.map(\.upperBound).max() ?? end)
        if trailerStart < stream.count, let ftyp = ISOLocation.findFileType(stream, from: trailerStart) {
            ISOLocation.scan(stream, in: ftyp..<stream.count, into: &findings, depth: 1)
        }
    }

    /// The end of the entropy-coded data from the scan at `scan` on: just past
    /// the first EOI (FF D9; inside scans FF is followed only by 00 or a restart marker).
    static func endOfImage(_ stream: SegmentedBytes, from scan: Int) -> Int? {
        let chunk = 1 << 20
        var position = scan
        var previousFF = false
        while position < stream.count {
            guard let bytes = stream.read(position..<min(stream.count, position + chunk)), !bytes.isEmpty else {
                return nil
            }
            let found: Int? = bytes.withUnsafeBufferPointer { buffer in
                if previousFF, buffer[0] == 0xD9 { return 0 }
                var i = 1
                while i < buffer.count {
                    // Look at every other byte: an FF D9 pair always has one of its bytes at an odd index.
                    let byte = buffer[i]
                    if byte == 0xD9, buffer[i - 1] == 0xFF { return i }
                    if byte == 0xFF, i + 1 < buffer.count, buffer[i + 1] == 0xD9 { return i + 1 }
                    i += 2
                }
                return nil
            }
            if let found { return position + found + 1 }
            previousFF = bytes.last == 0xFF
            position += bytes.count
        }
        return nil
    }

    /// The secondary images an MPF index lists (the MP entries after the
    /// first, which is the primary image): offsets count from the MPF header.
    static func mpfImages(_ stream: SegmentedBytes, tiff: Int, end: Int) -> [Range<Int>] {
        let index = stream.slice(tiff..<end)
        guard let reader = TIFFReader(index, base: 0), let ifd = reader.ifd(at: reader.firstIFD),
            let entries = reader.blob(0xB002, in: ifd.entries), let table = index.read(entries)
        else { return [] }
        var images: [Range<Int>] = []
        for i in 1..<max(1, min(64, table.count / 16)) {
            let at = i * 16
            let size = reader.u32(table, at + 4)
            let offset = reader.u32(table, at + 8)
            guard size > 0, offset > 0 else { continue }
            let start = tiff + offset
            guard start < stream.count else { continue }
            images.append(start..<min(stream.count, start + size))
        }
        return images
    }
}

// MARK: - PNG

enum PNGLocation {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A PNG's `eXIf` chunk and its XMP (`iTXt`/`tEXt` keyword
    /// `XML:com.adobe.xmp`): each chunk changed gets its CRC recomputed, last.
    /// XMP or EXIF kept compressed (`zTXt`, a compressed `iTXt`, ImageMagick's
    /// "Raw profile type" chunks) cannot be edited in place.
    static func scan(_ stream: SegmentedBytes, into findings: inout Findings) {
        guard stream.read(0..<8) == signature else { return }
        var position = 8
        var chunks = 0
        while position + 12 <= stream.count, chunks < 100_000, let header = stream.read(position..<(position + 8)) {
            chunks += 1
            let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let type = String(decoding: header[4..<8], as: UTF8.self)
            let data = (position + 8)..<(position + 8 + length)
            let chunk = position..<(data.upperBound + 4)
            guard length >= 0, chunk.upperBound <= stream.count else { return }
            var records: [LocationRecord] = []
            switch type {
            case "eXIf":
                var inner = Findings(placeNames: findings.placeNames)
                let skip =
                    stream.read(data.lowerBound..<min(data.upperBound, data.lowerBound + 6)) == JPEGLocation.exifHeader
                    ? 6 : 0
                TIFFLocation.scan(
                    stream.slice((data.lowerBound + skip)..<data.upperBound), base: 0, container: "EXIF (PNG eXIf)",
                    into: &inner)
                records = inner.metadata.found
            case "iTXt", "tEXt", "zTXt":
                let head = stream.read(data.lowerBound..<min(data.upperBound, data.lowerBound + 80)) ?? []
                guard let nul = head.firstIndex(of: 0) else { break }
                let keyword = String(decoding: head[..<nul], as: UTF8.self)
                if keyword.hasPrefix("Raw profile type") {
                    let kind = String(keyword.dropFirst("Raw profile type".count)).trimmingCharacters(in: " ")
                        .lowercased()
                    if ["exif", "app1", "xmp"].contains(kind) {
                        findings.notRemovable(
                            "PNG \(type) \"\(keyword)\": \(kind == "xmp" ? "XMP" : "EXIF") kept hex-encoded\(type == "zTXt" ? " and compressed" : "") cannot be edited in place"
                        )
                    }
                    break
                }
                guard keyword == "XML:com.adobe.xmp" else { break }
                if type == "zTXt" {
                    findings.notRemovable("PNG zTXt XMP: compressed, it cannot be edited in place")
                    break
                }
                var textStart = data.lowerBound + nul + 1
                if type == "iTXt" {
                    // compression flag, method, language tag NUL, translated keyword NUL
                    guard head.count > nul + 2 else { break }
                    if head[nul + 1] != 0 {
                        findings.notRemovable("PNG iTXt XMP: compressed, it cannot be edited in place")
                        break
                    }
                    guard let rest = stream.read((nul + 3 + data.lowerBound)..<data.upperBound),
                        let language = rest.firstIndex(of: 0),
                        let translated = rest[(language + 1)...].firstIndex(of: 0)
                    else { break }
                    textStart = data.lowerBound + nul + 3 + translated + 1
                }
                records = XMPLocation.records(
                    in: stream.slice(textStart..<data.upperBound), container: "XMP (PNG \(type))",
                    placeNames: findings.placeNames)
            default:
                break
            }
            for var record in records {
                // The CRC after everything else in the chunk (one step after the last).
                record.edits += stream.edits(chunk, .pngCRC, step: 3)
                findings.add(record)
            }
            if type == "IEND" { return }
            position = chunk.upperBound
        }
    }
}

// MARK: - WebP

enum WebPLocation {
    /// A WebP's `EXIF` and `XMP ` chunks (RIFF: no checksums).
    static func scan(_ stream: SegmentedBytes, into findings: inout Findings) {
        guard let header = stream.read(0..<12), header.starts(with: Array("RIFF".utf8)),
            Array(header[8..<12]) == Array("WEBP".utf8)
        else { return }
        var position = 12
        var chunks = 0
        while position + 8 <= stream.count, chunks < 100_000, let chunk = stream.read(position..<(position + 8)) {
            chunks += 1
            let type = String(decoding: chunk[0..<4], as: UTF8.self)
            let size = Int(chunk[4]) | Int(chunk[5]) << 8 | Int(chunk[6]) << 16 | Int(chunk[7]) << 24
            let data = (position + 8)..<min(stream.count, position + 8 + size)
            switch type {
            case "EXIF":
                let skip =
                    stream.read(data.lowerBound..<min(data.upperBound, data.lowerBound + 6)) == JPEGLocation.exifHeader
                    ? 6 : 0
                TIFFLocation.scan(
                    stream.slice((data.lowerBound + skip)..<data.upperBound), base: 0, container: "EXIF (WebP)",
                    into: &findings)
            case "XMP ":
                findings.add(
                    XMPLocation.records(
                        in: stream.slice(data), container: "XMP (WebP)", placeNames: findings.placeNames))
            default:
                break
            }
            position += 8 + size + (size & 1)
        }
    }
}

// MARK: - JPEG XL

enum JXLLocation {
    static let containerSignature: [UInt8] = [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    /// A JPEG XL container's `Exif` box (a 4-byte offset, then TIFF) and `xml `
    /// box; a Brotli-compressed one (`brob`) cannot be edited in place. A bare
    /// codestream has no metadata.
    static func scan(_ stream: SegmentedBytes, into findings: inout Findings) {
        guard stream.read(0..<12) == containerSignature else { return }
        for box in ISOBox.list(stream, in: 0..<stream.count, limit: 10_000) {
            switch box.type {
            case "Exif":
                guard
                    let prefix = stream.read(
                        box.payload.lowerBound..<min(box.payload.upperBound, box.payload.lowerBound + 4)),
                    prefix.count == 4
                else { continue }
                let offset = Int(prefix[0]) << 24 | Int(prefix[1]) << 16 | Int(prefix[2]) << 8 | Int(prefix[3])
                guard offset >= 0, box.payload.lowerBound + 4 + offset < box.payload.upperBound else { continue }
                TIFFLocation.scan(
                    stream.slice((box.payload.lowerBound + 4 + offset)..<box.payload.upperBound), base: 0,
                    container: "EXIF (JPEG XL)", into: &findings)
            case "xml ":
                findings.add(
                    XMPLocation.records(
                        in: stream.slice(box.payload), container: "XMP (JPEG XL)", placeNames: findings.placeNames))
            case "brob":
                let inner = stream.read(
                    box.payload.lowerBound..<min(box.payload.upperBound, box.payload.lowerBound + 4)
                ).map { String(decoding: $0, as: UTF8.self) }
                if inner == "Exif" || inner == "xml " {
                    findings.notRemovable(
                        "JPEG XL \(inner == "Exif" ? "EXIF" : "XMP") compressed with Brotli (brob): it cannot be edited in place"
                    )
                }
            default:
                break
            }
        }
    }
}

// MARK: - RAF

enum RAFLocation {
    /// A Fujifilm RAF keeps its EXIF in its embedded JPEG (offset and length at 84 and 88).
    static func scan(_ stream: SegmentedBytes, into findings: inout Findings) {
        guard let header = stream.read(0..<92), header.starts(with: Array("FUJIFILMCCD-RAW".utf8)) else { return }
        let bytes = BigEndianBytes(bytes: header)
        guard let offset = bytes.u32(84), let length = bytes.u32(88), offset > 0, length > 0, offset < stream.count
        else { return }
        JPEGLocation.scan(stream.slice(offset..<min(stream.count, offset + length)), into: &findings, depth: 1)
    }
}
