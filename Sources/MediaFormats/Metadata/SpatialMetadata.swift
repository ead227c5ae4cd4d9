// Reads what says how a picture is meant to be shown (``Projection``, a stereo
// pair, an HDR gain map) from the untrusted bytes, by random access: only JPEG
// marker segments (and those of the images an MPF index lists), a HEIF's `ftyp`
// and `meta` boxes and its small `mime` items, a movie's sample descriptions.
// Runs in the decoder; nothing here traps on bad input.
//
// - GPano XMP (`GPano:ProjectionType` and the sizes) in a JPEG's APP1 XMP packet
//   or a HEIF `mime` item: ``Projection``.
// - Stereo: a HEIF `grpl` box's `ster` entity group (its first entity the left
//   eye, ISO/IEC 23008-12), as Apple's spatial photos carry it; an MV-HEVC movie
//   (an `hvc1`/`hev1` sample entry with a `vexu` or `lhvC` box), Apple's spatial video.
// - Gain map: Ultra HDR (XMP `hdrgm:Version` in the primary JPEG's packet or in
//   that of an image the MPF index lists), Apple's HEIC (an auxiliary image of
//   type `urn:com:apple:photo:2020:aux:hdrgainmap`), an AVIF/HEIF `tmap` item.

/// What ``SpatialMetadata/read(_:format:)`` found.
package struct SpatialFacts: Sendable, Hashable {
    /// The GPano projection type and sizes, as written (nil: not written).
    package var projectionType: Projection.Kind?
    package var fullWidth: Int?
    package var fullHeight: Int?
    package var cropLeft: Int?
    package var cropTop: Int?
    package var croppedWidth: Int?
    package var croppedHeight: Int?
    /// True for a stereo pair.
    package var stereo = false
    /// A HEIF stereo pair's left eye, when it is not the primary item.
    package var leftEye: HEIFItemID?
    /// True when an HDR gain map is there.
    package var gainMap = false

    /// The projection, the full size defaulting to the picture's
    /// (`width`×`height`) and the crop to all of it; nil without a type.
    package func projection(width: Int?, height: Int?) -> Projection? {
        guard let type = projectionType, let fullWidth = fullWidth ?? width, let fullHeight = fullHeight ?? height
        else { return nil }
        return Projection(
            type: type, fullWidth: fullWidth, fullHeight: fullHeight, cropLeft: cropLeft ?? 0, cropTop: cropTop ?? 0,
            croppedWidth: croppedWidth ?? width ?? fullWidth, croppedHeight: croppedHeight ?? height ?? fullHeight)
    }
}

/// Reads ``SpatialFacts``.
package enum SpatialMetadata {
    static let panoramaNamespace = "http://ns.google.com/photos/1.0/panorama/"
    static let gainMapNamespace = "http://ns.adobe.com/hdr-gain-map/1.0/"
    static let appleGainMap = "urn:com:apple:photo:2020:aux:hdrgainmap"
    /// The largest XMP packet read.
    static let maximumXMP = 1 << 20

    /// The facts of the file in `source`, of the sniffed `format`.
    package static func read(_ source: any RandomAccessBytes, format: MediaFormat) -> SpatialFacts {
        switch format.id {
        case "jpeg": return jpeg(source)
        case "heic", "heif", "avif": return heif(source)
        case "mov", "mp4", "m4v": return SpatialFacts(stereo: isMultiviewHEVC(source))
        default: return SpatialFacts()
        }
    }

    // MARK: - XMP

    /// Reads GPano and `hdrgm` from one XMP packet into `facts`.
    static func xmp(_ bytes: [UInt8], into facts: inout SpatialFacts) {
        let text = String(decoding: bytes, as: UTF8.self)
        if let prefix = prefix(of: panoramaNamespace, in: text) {
            if let type = value("\(prefix):ProjectionType", in: text).flatMap({
                Projection.Kind(rawValue: $0.lowercased())
            }) {
                facts.projectionType = type
                func integer(_ name: String) -> Int? { value("\(prefix):\(name)", in: text).flatMap { Int($0) } }
                facts.fullWidth = integer("FullPanoWidthPixels")
                facts.fullHeight = integer("FullPanoHeightPixels")
                facts.cropLeft = integer("CroppedAreaLeftPixels")
                facts.cropTop = integer("CroppedAreaTopPixels")
                facts.croppedWidth = integer("CroppedAreaImageWidthPixels")
                facts.croppedHeight = integer("CroppedAreaImageHeightPixels")
            }
        }
        if let prefix = prefix(of: gainMapNamespace, in: text), value("\(prefix):Version", in: text) != nil {
            facts.gainMap = true
        }
    }

    /// The prefix an XMP packet declares for `namespace` (`xmlns:GPano="…"`).
    static func prefix(of namespace: String, in text: String) -> String? {
        for quote in ["\"", "'"] {
            guard let found = text.firstRange(of: "=" + quote + namespace + quote) else { continue }
            let before = text[..<found.lowerBound]
            guard let start = before.ranges(of: "xmlns:").last else { continue }
            let name = before[start.upperBound...]
            if !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }) {
                return String(name)
            }
        }
        return nil
    }

    /// A property's value, written as an attribute (`name="v"`) or an element (`<name>v</name>`).
    static func value(_ name: String, in text: String) -> String? {
        var from = text.startIndex
        while let found = text[from...].firstRange(of: name) {
            from = found.upperBound
            // Not a longer name that ends with this one (`xGPano:…`).
            if found.lowerBound > text.startIndex {
                let previous = text[text.index(before: found.lowerBound)]
                if previous.isLetter || previous.isNumber || previous == ":" { continue }
            }
            var rest = text[found.upperBound...].drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            if rest.first == "=" {
                rest = rest.dropFirst().drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
                guard let quote = rest.first, quote == "\"" || quote == "'" else { continue }
                let body = rest.dropFirst()
                guard let end = body.firstIndex(of: quote) else { return nil }
                return String(body[..<end]).trimmingCharacters(in: " ")
            }
            if rest.first == ">", found.lowerBound > text.startIndex, text[text.index(before: found.lowerBound)] == "<"
            {
                let body = rest.dropFirst()
                guard let end = body.firstIndex(of: "<") else { return nil }
                return String(body[..<end]).trimmingCharacters(in: " ")
            }
        }
        return nil
    }

    // MARK: - JPEG

    /// A JPEG's marker segments before its first scan: (marker, payload).
    static func segments(_ source: any RandomAccessBytes, at start: Int) -> [(marker: UInt8, payload: Range<Int>)] {
        guard source.read(start..<(start + 2)) == [0xFF, 0xD8] else { return [] }
        var found: [(marker: UInt8, payload: Range<Int>)] = []
        var position = start + 2
        for _ in 0..<512 {
            guard let head = source.read(position..<(position + 4)), head[0] == 0xFF else { break }
            if head[1] == 0xFF {
                position += 1
                continue
            }
            let length = Int(head[2]) << 8 | Int(head[3])
            guard head[1] != 0xDA, head[1] != 0xD9, length >= 2 else { break }
            let payload = (position + 4)..<(position + 2 + length)
            found.append((head[1], payload))
            position = payload.upperBound
        }
        return found
    }

    static let mpfSignature = Array("MPF\0".utf8)

    static func jpeg(_ source: any RandomAccessBytes) -> SpatialFacts {
        var facts = SpatialFacts()
        let primary = segments(source, at: 0)
        for packet in xmpPackets(source, primary) { xmp(packet, into: &facts) }
        // Ultra HDR: the gain map is a second image the MPF index lists.
        guard !facts.gainMap else { return facts }
        let images = mpfImages(source, primary)
        for image in images {
            var secondary = SpatialFacts()
            for packet in xmpPackets(source, segments(source, at: image.start)) { xmp(packet, into: &secondary) }
            if secondary.gainMap {
                facts.gainMap = true
                return facts
            }
        }
        // Apple's JPEG gain map: an MPF second image, marked by Apple's XMP or with the headroom in the maker note (no `hdrgm`).
        if !images.isEmpty, appleMakerNoteHeadroom(source, primary) != nil { facts.gainMap = true }
        if images.contains(where: { image in
            xmpPackets(source, segments(source, at: image.start)).contains {
                isAppleGainMap(xmp: String(decoding: $0, as: UTF8.self))
            }
        }) {
            facts.gainMap = true
        }
        return facts
    }

    /// The further images (after the first) that an MPF index (APP2 `MPF\0`)
    /// among a JPEG's primary `segments` lists, in its order: where each starts in
    /// the file (the index's offsets count from its own TIFF header) and its
    /// stated size. Entries whose offset is 0 (the first image's) or overflows
    /// are left out; what lies beyond the file is the reader's to check.
    static func mpfImages(_ source: any RandomAccessBytes, _ segments: [(marker: UInt8, payload: Range<Int>)]) -> [(
        start: Int, size: Int
    )] {
        var images: [(start: Int, size: Int)] = []
        for segment in segments
        where segment.marker == 0xE2
            && source.read(segment.payload.lowerBound..<(segment.payload.lowerBound + 4)) == mpfSignature
        {
            let base = segment.payload.lowerBound + 4
            guard let reader = TIFFReader(source, base: base), let ifd = reader.ifd(at: reader.firstIFD),
                let entry = reader.entry(0xB002, in: ifd.entries),
                let length = entry.byteCount, length >= 32, length <= 16 * 64,
                let raw = source.read(entry.valueOffset..<(entry.valueOffset + length))
            else { continue }
            func u32(_ at: Int) -> Int {
                let b = raw[at..<(at + 4)].map(Int.init)
                return reader.bigEndian
                    ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
            }
            for index in 1..<(length / 16) {
                let size = u32(index * 16 + 4)
                let offset = u32(index * 16 + 8)
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard offset > 0, !overflow else { continue }
                images.append((start, size))
            }
        }
        return images
    }

    /// The standard XMP packets among `segments`.
    static func xmpPackets(_ source: any RandomAccessBytes, _ segments: [(marker: UInt8, payload: Range<Int>)])
        -> [[UInt8]]
    {
        let signature = MomentReader.xmpSignature
        return segments.compactMap { segment in
            guard segment.marker == 0xE1, segment.payload.count > signature.count,
                source.read(segment.payload.lowerBound..<(segment.payload.lowerBound + signature.count)) == signature
            else { return nil }
            return source.read((segment.payload.lowerBound + signature.count)..<segment.payload.upperBound)
        }
    }

    // MARK: - HEIF

    static func heif(_ source: any RandomAccessBytes) -> SpatialFacts {
        var facts = SpatialFacts()
        let (top, _) = MomentReader.topLevelBoxes(source)
        guard let (file, copied) = MomentReader.heifStructure(source, boxes: top) else { return facts }
        for item in file.items.values.sorted(by: { $0.id < $1.id }) {
            if item.type == "tmap" { facts.gainMap = true }
            for case .auxiliaryType(let type) in file.properties(of: item) where type == appleGainMap {
                facts.gainMap = true
            }
            if item.type == "mime", let data = file.bytes(of: item, in: source, copied: copied, limit: maximumXMP) {
                xmp(data, into: &facts)
            }
        }
        // The `ster` entity group, in `meta`'s `grpl`.
        guard let meta = ISOBox.list(copied, in: 0..<copied.count, limit: 16).first(where: { $0.type == "meta" }),
            meta.payload.count > 4,
            let grpl = ISOBox.list(copied, in: (meta.payload.lowerBound + 4)..<meta.payload.upperBound, limit: 64)
                .first(where: { $0.type == "grpl" })
        else { return facts }
        for group in ISOBox.list(copied, in: grpl.payload, limit: 256) where group.type == "ster" {
            let bytes = BigEndianBytes(bytes: Array(copied[group.payload]))
            // Full box header, group_id, num_entities_in_group, then the entity ids.
            guard let count = bytes.u32(8), count == 2, let left = bytes.u32(12), let right = bytes.u32(16),
                let leftItem = file.items[HEIFItemID(truncatingIfNeeded: left)],
                file.items[HEIFItemID(truncatingIfNeeded: right)] != nil
            else { continue }
            facts.stereo = true
            if leftItem.id != file.primaryItemID { facts.leftEye = leftItem.id }
            break
        }
        return facts
    }

    // MARK: - Movies

    /// HEVC sample entry types.
    static let hevcEntries: Set<String> = ["hvc1", "hev1", "dvh1", "dvhe"]

    /// True when a track's HEVC sample entry carries a second layer: a `vexu`
    /// (video extended usage) or `lhvC` (layered HEVC configuration) box.
    static func isMultiviewHEVC(_ source: any RandomAccessBytes) -> Bool {
        guard let moov = ISOBox.list(source, in: 0..<source.count, limit: 4096).first(where: { $0.type == "moov" })
        else { return false }
        for trak in ISOBox.list(source, in: moov.payload, limit: 4096) where trak.type == "trak" {
            guard let stsd = ISOBox.find(source, in: trak.payload, path: ["mdia", "minf", "stbl", "stsd"]),
                stsd.payload.count > 8
            else { continue }
            for entry in ISOBox.list(source, in: (stsd.payload.lowerBound + 8)..<stsd.payload.upperBound, limit: 16)
            where hevcEntries.contains(entry.type) {
                // A visual sample entry's fixed fields take 78 bytes before its boxes.
                guard entry.payload.count > 78 else { continue }
                let children = ISOBox.list(
                    source, in: (entry.payload.lowerBound + 78)..<entry.payload.upperBound, limit: 64)
                if children.contains(where: { $0.type == "vexu" || $0.type == "lhvC" }) { return true }
            }
        }
        return false
    }
}
