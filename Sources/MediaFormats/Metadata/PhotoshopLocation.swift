// Where Photoshop's image resources (`8BIM` blocks) record a position, for
// location privacy: a JPEG's Photoshop segment (APP13, `Photoshop 3.0`), a
// TIFF's Photoshop tag (34377) and a PSD file's image resources section hold
// the same blocks, and they may carry a copy of the EXIF (resource 0x0422)
// and of the XMP (0x0424) beside the IPTC IIM (0x0404); readers such as
// exiftool read them as they read APP1's. Their GPS is blanked as APP1's is:
// the EXIF's GPS IFD emptied in place, the XMP's GPS properties overwritten
// with spaces. When place names are to go, so do the IIM's datasets that name
// the place (city, sub-location, province or state, country), there and in a
// TIFF's IPTC tag (33723): each value zeroed, then its record and dataset
// numbers, so that no reader takes it for a city (an empty one) and every
// other dataset still reads.

/// The location metadata of Photoshop's image resources and IPTC IIM (see the file's header comment).
enum PhotoshopLocation {
    static let header: [UInt8] = Array("Photoshop 3.0\0".utf8)
    /// The image resources that hold a position.
    static let exifResource = 0x0422
    static let xmpResource = 0x0424
    static let iimResource = 0x0404
    /// The IIM application record's (2) datasets that name the place.
    static let placeDatasets: [Int: String] = [
        26: "Content Location Code", 27: "Content Location Name", 90: "City", 92: "Sub-location", 95: "Province-State",
        100: "Country-Primary Location Code", 101: "Country-Primary Location Name",
    ]
    /// Most resources read in one segment (a real one has a few dozen).
    static let maximumResources = 10_000

    /// The resources of the APP13 segment whose payload is `payload` of `stream`.
    static func scan(_ stream: SegmentedBytes, payload: Range<Int>, into findings: inout Findings) {
        guard stream.read(payload.lowerBound..<min(payload.upperBound, payload.lowerBound + header.count)) == header
        else { return }
        resources(
            stream, in: (payload.lowerBound + header.count)..<payload.upperBound, container: "Photoshop APP13",
            into: &findings)
    }

    /// The image resources in `range` of `stream` (an APP13 after its header,
    /// a TIFF's tag 34377, a PSD's image resources section), their records
    /// named after `container` (the IIM's as IPTC's own: `IPTC City`).
    static func resources(
        _ stream: SegmentedBytes, in range: Range<Int>, container: String, into findings: inout Findings
    ) {
        var position = range.lowerBound
        var resources = 0
        // A block: a signature, its id, a Pascal name padded to an even length, its size, its data padded to an even length.
        while position + 12 <= range.upperBound, resources < maximumResources,
            let head = stream.read(position..<(position + 7))
        {
            resources += 1
            guard
                [Array("8BIM".utf8), Array("PHUT".utf8), Array("AgHg".utf8), Array("DCSR".utf8)].contains(
                    Array(head[0..<4]))
            else { return }
            let id = Int(head[4]) << 8 | Int(head[5])
            let nameLength = Int(head[6])
            let sizeAt = position + 6 + ((nameLength + 2) & ~1)
            guard sizeAt + 4 <= range.upperBound, let sizeBytes = stream.read(sizeAt..<(sizeAt + 4)) else { return }
            let size = Int(sizeBytes[0]) << 24 | Int(sizeBytes[1]) << 16 | Int(sizeBytes[2]) << 8 | Int(sizeBytes[3])
            let data = (sizeAt + 4)..<min(range.upperBound, sizeAt + 4 + size)
            switch id {
            case exifResource:
                let skip =
                    stream.read(data.lowerBound..<min(data.upperBound, data.lowerBound + 6)) == JPEGLocation.exifHeader
                    ? 6 : 0
                TIFFLocation.scan(
                    stream.slice((data.lowerBound + skip)..<data.upperBound), base: 0, container: "EXIF (\(container))",
                    into: &findings)
            case iimResource where findings.placeNames:
                findings.add(placeNames(inIIM: stream, data))
            case xmpResource:
                findings.add(
                    XMPLocation.records(
                        in: stream.slice(data), container: "XMP (\(container))", placeNames: findings.placeNames))
            default:
                break
            }
            position = sizeAt + 4 + size + (size & 1)
        }
    }

    /// The datasets of the IIM block at `data` that name the place: each
    /// value zeroed (step 0), then its record and dataset numbers (step 1).
    /// An extended dataset (a length of 32 KiB or more) ends the reading: no place name is one.
    static func placeNames(inIIM stream: SegmentedBytes, _ data: Range<Int>) -> [LocationRecord] {
        var records: [LocationRecord] = []
        var position = data.lowerBound
        var datasets = 0
        while position + 5 <= data.upperBound, datasets < maximumResources,
            let head = stream.read(position..<(position + 5)), head[0] == 0x1C, head[3] & 0x80 == 0
        {
            datasets += 1
            let value = (position + 5)..<min(data.upperBound, position + 5 + (Int(head[3]) << 8 | Int(head[4])))
            if head[1] == 2, let name = placeDatasets[Int(head[2])] {
                records.append(
                    LocationRecord(
                        name: "IPTC \(name)",
                        edits: stream.edits(value, .zeros, step: 0)
                            + stream.edits((position + 1)..<(position + 3), .zeros, step: 1)))
            }
            position = value.upperBound
        }
        return records
    }
}

// MARK: - PSD

/// A Photoshop file (PSD, PSB): its image resources section, after the
/// 26-byte header and the colour mode data (each section its length, then its bytes).
enum PSDLocation {
    static func scan(_ stream: SegmentedBytes, into findings: inout Findings) {
        guard let header = stream.read(0..<min(stream.count, 30)), header.count == 30,
            header.starts(with: Array("8BPS".utf8))
        else { return }
        let colourModeData = Int(header[26]) << 24 | Int(header[27]) << 16 | Int(header[28]) << 8 | Int(header[29])
        let lengthAt = 30 + colourModeData
        guard lengthAt + 4 <= stream.count, let length = stream.read(lengthAt..<(lengthAt + 4)) else { return }
        let size = Int(length[0]) << 24 | Int(length[1]) << 16 | Int(length[2]) << 8 | Int(length[3])
        PhotoshopLocation.resources(
            stream, in: (lengthAt + 4)..<min(stream.count, lengthAt + 4 + size), container: "PSD", into: &findings)
    }
}
