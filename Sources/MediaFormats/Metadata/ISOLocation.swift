// Location metadata in ISO base media files (MP4, MOV, 3GP, M4V, CR3) and in
// HEIF's item structure.

enum ISOLocation {
    /// XMP's `uuid` box identifier (BE7ACFCB-97A9-42E8-9C71-999491E3AFAC).
    static let xmpUUID: [UInt8] = [
        0xBE, 0x7A, 0xCF, 0xCB, 0x97, 0xA9, 0x42, 0xE8, 0x9C, 0x71, 0x99, 0x94, 0x91, 0xE3, 0xAF, 0xAC,
    ]
    /// Canon's CR3 metadata `uuid` box (85C0B687-820F-11E0-8111-F4CE462B6A48), holding `CMT1`…`CMT4`.
    static let canonUUID: [UInt8] = [
        0x85, 0xC0, 0xB6, 0x87, 0x82, 0x0F, 0x11, 0xE0, 0x81, 0x11, 0xF4, 0xCE, 0x46, 0x2B, 0x6A, 0x48,
    ]
    /// Boxes whose children are boxes (`meta` separately: it may be a full box).
    static let containers: Set<String> = ["moov", "trak", "udta", "mdia", "minf", "stbl", "ilst"]
    /// How deep boxes are followed.
    static let maximumDepth = 12
    /// QuickTime metadata keys that hold a location.
    static let locationKeyPrefix = "com.apple.quicktime.location."

    /// The boxes in `range` of `stream` and, in the containers among them, theirs.
    static func scan(_ stream: SegmentedBytes, in range: Range<Int>, into findings: inout Findings, depth: Int) {
        guard depth <= maximumDepth else { return }
        let boxes = ISOBox.list(stream, in: range, limit: 10_000)
        for box in boxes {
            switch box.type {
            case "©xyz", "loci":
                // A whole box: its payload zeroed first, then its type made `free`.
                let name = box.type == "loci" ? "MP4 loci" : "QuickTime ©xyz"
                findings.add(freeBox(box, stream: stream, name: name))
            case "meta":
                scanMeta(stream, box, into: &findings, depth: depth)
            case "XMP_":
                findings.add(
                    XMPLocation.records(
                        in: stream.slice(box.payload), container: "XMP (QuickTime XMP_)",
                        placeNames: findings.placeNames))
            case "uuid" where box.uuid == xmpUUID:
                findings.add(
                    XMPLocation.records(
                        in: stream.slice(box.payload), container: "XMP (uuid box)", placeNames: findings.placeNames))
            case "uuid" where box.uuid == canonUUID:
                for inner in ISOBox.list(stream, in: box.payload, limit: 64) where inner.type == "CMT4" {
                    TIFFLocation.scan(
                        stream.slice(inner.payload), base: 0, container: "EXIF (CR3 CMT4)", gpsFirst: true,
                        into: &findings)
                }
            case let type where containers.contains(type):
                scan(stream, in: box.payload, into: &findings, depth: depth + 1)
            default:
                break
            }
        }
    }

    /// A `meta` box: QuickTime's keys (`keys` + `ilst`, where each `ilst` item's
    /// type is its key's index) and iTunes-style items (`ilst/©xyz`).
    static func scanMeta(_ stream: SegmentedBytes, _ meta: ISOBox, into findings: inout Findings, depth: Int) {
        // An ISO `meta` is a full box (4 bytes of version and flags before its
        // children); QuickTime's is not: its first child (`hdlr`) starts at once.
        var children = meta.payload
        if let head = stream.read(meta.payload.lowerBound..<min(meta.payload.upperBound, meta.payload.lowerBound + 8)),
            head.count == 8,
            Array(head[4..<8]) != Array("hdlr".utf8)
        {
            children = (meta.payload.lowerBound + 4)..<meta.payload.upperBound
        }
        let boxes = ISOBox.list(stream, in: children, limit: 1000)
        var locationKeys: [Int: String] = [:]
        if let keys = boxes.first(where: { $0.type == "keys" }) { locationKeys = self.locationKeys(stream, keys) }
        for box in boxes {
            switch box.type {
            case "ilst":
                for item in ISOBox.list(stream, in: box.payload, limit: 10_000) {
                    let header = stream.read(item.extent.lowerBound..<(item.extent.lowerBound + 8)) ?? []
                    let index =
                        header.count == 8
                        ? Int(header[4]) << 24 | Int(header[5]) << 16 | Int(header[6]) << 8 | Int(header[7]) : 0
                    if let key = locationKeys[index] {
                        findings.add(freeBox(item, stream: stream, name: "QuickTime \(key)"))
                    } else if item.type == "©xyz" {
                        findings.add(freeBox(item, stream: stream, name: "QuickTime ©xyz (ilst)"))
                    }
                }
            case "XMP_":
                findings.add(
                    XMPLocation.records(
                        in: stream.slice(box.payload), container: "XMP (QuickTime XMP_)",
                        placeNames: findings.placeNames))
            case let type where containers.contains(type) || type == "meta":
                scan(stream, in: box.payload, into: &findings, depth: depth + 1)
            default:
                break
            }
        }
    }

    /// The location keys of a `keys` box, by their index (from 1).
    static func locationKeys(_ stream: SegmentedBytes, _ keys: ISOBox) -> [Int: String] {
        guard
            let bytes = stream.read(
                keys.payload.lowerBound..<min(keys.payload.upperBound, keys.payload.lowerBound + (1 << 20)))
        else { return [:] }
        let reader = BigEndianBytes(bytes: bytes)
        guard let count = reader.u32(4) else { return [:] }
        var found: [Int: String] = [:]
        var position = 8
        for index in 1...max(1, min(count, 10_000)) {
            guard let size = reader.u32(position), size >= 8, position + size <= bytes.count else { break }
            let name = String(decoding: bytes[(position + 8)..<(position + size)], as: UTF8.self)
            if name.hasPrefix(locationKeyPrefix) { found[index] = name }
            position += size
        }
        return found
    }

    /// The record that turns `box` into a `free` box: payload zeroed (step 0),
    /// type `free` (step 1). Only a box with a plain 32-bit size whose bytes
    /// lie in one piece of the file.
    static func freeBox(_ box: ISOBox, stream: SegmentedBytes, name: String) -> LocationRecord {
        let file = stream.fileRanges(of: box.extent)
        guard file.count == 1, box.payload.lowerBound - box.extent.lowerBound == 8, box.extent.count >= 8 else {
            // A large-size box: its payload zeroed only.
            return LocationRecord(name: name, edits: stream.edits(box.payload, .zeros, step: 0))
        }
        return LocationRecord(
            name: name,
            edits: stream.edits(box.payload, .zeros, step: 0) + [
                MetadataEdit(offset: file[0].lowerBound, length: file[0].count, fill: .freeBox, step: 1)
            ])
    }

    /// Where an MP4 starts in `stream` at or after `from` (its `ftyp` box), if
    /// one does: a motion photo's video after its JPEG.
    static func findFileType(_ stream: SegmentedBytes, from: Int) -> Int? {
        let pattern = Array("ftyp".utf8)
        let chunk = 1 << 20
        var position = max(0, from)
        while position + 8 <= stream.count {
            guard let bytes = stream.read(position..<min(stream.count, position + chunk + 8)) else { return nil }
            var search = bytes[...]
            while let found = search.firstRange(of: pattern) {
                let start = position + found.lowerBound - 4
                if start >= from, found.lowerBound >= 4 {
                    let size =
                        Int(bytes[found.lowerBound - 4]) << 24 | Int(bytes[found.lowerBound - 3]) << 16 | Int(
                            bytes[found.lowerBound - 2]) << 8
                        | Int(bytes[found.lowerBound - 1])
                    if size >= 16, size <= 256 { return start }
                }
                search = bytes[found.upperBound...]
            }
            position += chunk
        }
        return nil
    }
}

// MARK: - HEIF

enum HEIFLocation {
    /// The largest HEIF file whose structure is read (it is read whole).
    static let maximumSize = 256 << 20

    /// A HEIF/AVIF's `Exif` items (a 4-byte offset, then TIFF) and XMP `mime`
    /// items, wherever their extents are; a Samsung motion photo's `mpvd` box
    /// (an MP4) and an image sequence's `moov`.
    static func scan(_ stream: SegmentedBytes, into findings: inout Findings) {
        guard stream.count <= maximumSize, let bytes = stream.read(0..<stream.count) else {
            findings.notRemovable("a HEIF file larger than \(maximumSize >> 20) MiB is not read for location metadata")
            return
        }
        let file: HEIFFile
        do {
            file = try HEIFFile.parse(bytes)
        } catch {
            findings.notRemovable("HEIF structure this parser cannot read (\(error)): its metadata cannot be checked")
            return
        }
        for item in file.items.values.sorted(by: { $0.id < $1.id }) where item.type == "Exif" || item.type == "mime" {
            guard let data = segments(of: item, in: file, stream: stream) else { continue }
            if item.type == "Exif" {
                guard let prefix = data.read(0..<min(4, data.count)), prefix.count == 4 else { continue }
                let offset = Int(prefix[0]) << 24 | Int(prefix[1]) << 16 | Int(prefix[2]) << 8 | Int(prefix[3])
                guard offset >= 0, 4 + offset < data.count else { continue }
                TIFFLocation.scan(data.slice((4 + offset)..<data.count), base: 0, container: "EXIF", into: &findings)
            } else if let head = data.read(0..<min(4096, data.count)), XMPLocation.looksLikeXMP(head[...]) {
                findings.add(XMPLocation.records(in: data, container: "XMP", placeNames: findings.placeNames))
            }
        }
        for box in ISOBox.list(stream, in: 0..<stream.count, limit: 10_000) {
            switch box.type {
            case "mpvd":
                // Samsung's motion photo: the MP4 is the box's payload.
                ISOLocation.scan(stream, in: box.payload, into: &findings, depth: 1)
            case "moov":
                ISOLocation.scan(stream, in: box.payload, into: &findings, depth: 1)
            default:
                break
            }
        }
    }

    /// The item's bytes as a stream over the file (construction method 0: file
    /// offsets; 1: offsets into the `idat` box); nil for items built otherwise.
    static func segments(of item: HEIFItem, in file: HEIFFile, stream: SegmentedBytes) -> SegmentedBytes? {
        let base: Range<Int>
        switch item.construction {
        case 0: base = 0..<stream.count
        case 1:
            guard let idat = file.itemDataBox else { return nil }
            base = idat
        default: return nil
        }
        var ranges: [Range<Int>] = []
        for extent in item.extents {
            let start = base.lowerBound + extent.offset
            let end = extent.length == 0 ? base.upperBound : start + extent.length
            guard start >= base.lowerBound, start <= end, end <= base.upperBound else { return nil }
            ranges.append(start..<end)
        }
        return ranges.isEmpty
            ? nil : SegmentedBytes(stream.file, segments: ranges.flatMap { stream.fileRanges(of: $0) })
    }
}
