// What a camera RAW file holds that a thumbnail needs: the previews the camera
// embedded (JPEGs, sometimes plain 8-bit RGB), the photo's orientation and its
// size. Pure Swift over untrusted bytes, by random access (a RAW is tens of
// megabytes; only its directories and the chosen preview are read). The raw
// sensor data itself is never touched.
//
// Where each maker puts things:
// - TIFF-based (DNG, NEF, CR2, ARW, ORF, RW2): previews are IFDs (the IFD0
//   chain and SubIFDs) holding a JPEG (JPEGInterchangeFormat, or a single strip
//   with JPEG compression) or 8-bit RGB strips; DNG marks its previews with
//   NewSubfileType 1; Panasonic stores a JPEG as IFD0 tag 0x2E; Olympus keeps
//   its large preview in the maker note's CameraSettings (0x2020: 0x101/0x102).
// - CR3 (ISO base media, brand `crx `): `THMB` in Canon's `moov/uuid` box, the
//   `PRVW` JPEG in a top-level `uuid` box, TIFF structures in `CMT1`/`CMT2`.
// - RAF: a 16-byte `FUJIFILMCCD-RAW ` header; at offset 84 the big-endian
//   offset and length of a JPEG (with its own EXIF and EXIF thumbnail).

/// An embedded preview picture of a RAW file.
package struct RAWPreview: Sendable, Hashable {
    /// How the preview's pixels are stored.
    package enum Encoding: Sendable, Hashable {
        /// A JPEG (its size is in its frame header).
        case jpeg
        /// Packed 8-bit RGB, `width`×`height`, in the strips, in order.
        case rgb(width: Int, height: Int)
    }

    /// The byte ranges holding it (one for a JPEG; the strips of an RGB image).
    package let ranges: [Range<Int>]
    package let encoding: Encoding
    /// Where it was found, for messages and tests (`IFD0`, `SubIFD 1`, `PRVW`, ...).
    package let origin: String

    package init(ranges: [Range<Int>], encoding: Encoding, origin: String) {
        self.ranges = ranges
        self.encoding = encoding
        self.origin = origin
    }

    /// Total bytes.
    package var byteCount: Int { ranges.reduce(0) { $0 + $1.count } }
}

/// What a RAW file says about itself.
package struct RAWDescription: Sendable, Hashable {
    /// Every preview found, in file order (not yet checked: the decoder reads them).
    package var previews: [RAWPreview]
    /// EXIF Orientation of the photo (1–8; 1 when absent).
    package var orientation: Int
    /// The photo's size as stored (before orientation), most trustworthy first:
    /// DNG's DefaultCropSize or Panasonic's sensor borders, EXIF PixelX/YDimension,
    /// the raw image's own size. The decoder takes the first that is at least as
    /// large as the preview it shows.
    package var sizes: [Size]

    /// A width and a height.
    package struct Size: Sendable, Hashable {
        package let width: Int
        package let height: Int
        package init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }
}

/// Why a RAW file's structure could not be read.
package struct RAWFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Reads the previews, orientation and size of camera RAW files.
package enum RAWFile {
    /// Most IFDs followed in one file (IFD0 chain, SubIFDs, maker notes).
    static let maximumIFDs = 32

    /// Describes the RAW file in `source`, of `format` (one of ``MediaFormat/cameraRAW``).
    package static func describe(_ source: any RandomAccessBytes, format: MediaFormat) throws(RAWFormatError)
        -> RAWDescription
    {
        switch format.id {
        case "cr3": return try CR3.describe(source)
        case "raf": return try RAF.describe(source)
        default: return try TIFFBased.describe(source, format: format)
        }
    }
}

/// Which TIFF-based RAW a TIFF structure is, from its IFD0 (in the sniffer's prefix).
package enum TIFFMaker {
    /// DNG (a DNGVersion tag), NEF (Make NIKON and SubIFDs), ARW (Make SONY with
    /// Sony's private data or SubIFDs); nil for anything else (a TIFF).
    package static func rawFormat(_ prefix: [UInt8]) -> MediaFormat? {
        guard let tiff = TIFFReader(prefix), let (entries, _) = tiff.ifd(at: tiff.firstIFD) else { return nil }
        if tiff.entry(0xC612, in: entries) != nil { return .dng }
        let make = (tiff.string(0x010F, in: entries) ?? "").uppercased()
        let subIFDs = tiff.entry(0x014A, in: entries) != nil
        if make.hasPrefix("NIKON"), subIFDs { return .nef }
        if make.hasPrefix("SONY"), subIFDs || tiff.entry(0xC634, in: entries) != nil { return .arw }
        return nil
    }
}

// MARK: - TIFF-based RAW

enum TIFFBased {
    static func describe(_ source: any RandomAccessBytes, format: MediaFormat) throws(RAWFormatError) -> RAWDescription
    {
        guard let tiff = TIFFReader(source) else { throw RAWFormatError("no TIFF header") }
        var walk = Walk(tiff: tiff, isDNG: format.id == "dng")
        walk.follow(chainFrom: tiff.firstIFD, name: "IFD", depth: 0)
        guard let ifd0 = walk.ifds.first else { throw RAWFormatError("no readable IFD0") }

        var description = RAWDescription(previews: walk.previews, orientation: 1, sizes: [])
        if let orientation = tiff.integer(0x0112, in: ifd0.entries), (1...8).contains(orientation) {
            description.orientation = orientation
        }

        // Panasonic: a whole JPEG (with EXIF) as IFD0 tag 0x2E; the picture is the
        // sensor area inside its borders (tags 4–7).
        if format.id == "rw2" {
            if let range = tiff.blob(0x002E, in: ifd0.entries) {
                description.previews.append(RAWPreview(ranges: [range], encoding: .jpeg, origin: "JpgFromRaw"))
            }
            if let top = tiff.integer(4, in: ifd0.entries), let left = tiff.integer(5, in: ifd0.entries),
                let bottom = tiff.integer(6, in: ifd0.entries), let right = tiff.integer(7, in: ifd0.entries),
                right > left, bottom > top
            {
                description.sizes.append(.init(width: right - left, height: bottom - top))
            }
        }
        // DNG: the raw IFD's DefaultCropSize is the picture's size.
        if format.id == "dng", let raw = walk.ifds.first(where: { (tiff.integer(0x00FE, in: $0.entries) ?? 0) == 0 }) {
            if let crop = tiff.integers(0xC620, in: raw.entries, limit: 2), crop.count == 2, crop[0] > 0, crop[1] > 0 {
                description.sizes.append(.init(width: crop[0], height: crop[1]))
            }
        }
        // EXIF: PixelX/YDimension; the maker note (Olympus keeps its preview there).
        if let exifOffset = tiff.integer(0x8769, in: ifd0.entries), let (exif, _) = tiff.ifd(at: exifOffset) {
            if let width = tiff.integer(0xA002, in: exif), let height = tiff.integer(0xA003, in: exif), width > 0,
                height > 0
            {
                description.sizes.append(.init(width: width, height: height))
            }
            if format.id == "orf", let note = tiff.blob(0x927C, in: exif) {
                description.previews += Olympus.previews(makerNote: note, tiff: tiff)
            }
        }
        // The raw image's own size: the largest IFD holding sensor data.
        if let raw = walk.rawSizes.max(by: { $0.width * $0.height < $1.width * $1.height }) {
            description.sizes.append(raw)
        }
        return description
    }

    /// IFDs reached from IFD0: its chain, and SubIFDs (depth 2), each at most once.
    struct Walk {
        let tiff: TIFFReader
        let isDNG: Bool
        var ifds: [(name: String, entries: [TIFFEntry])] = []
        var previews: [RAWPreview] = []
        var rawSizes: [RAWDescription.Size] = []
        var visited: Set<Int> = []

        mutating func follow(chainFrom offset: Int, name: String, depth: Int) {
            var offset = offset
            var index = 0
            while offset != 0, ifds.count < RAWFile.maximumIFDs, visited.insert(offset).inserted,
                let (entries, next) = tiff.ifd(at: offset)
            {
                let label = "\(name)\(index)"
                ifds.append((label, entries))
                inspect(entries, name: label)
                if depth < 2, let subIFDs = tiff.integers(0x014A, in: entries, limit: 16) {
                    for (n, sub) in subIFDs.enumerated() {
                        follow(chainFrom: sub, name: "\(label).SubIFD\(n)-", depth: depth + 1)
                    }
                }
                offset = next
                index += 1
            }
        }

        /// A preview in this IFD, or the size of the raw image it holds.
        mutating func inspect(_ entries: [TIFFEntry], name: String) {
            let kind = tiff.integer(0x00FE, in: entries) ?? 0
            let photometric = tiff.integer(0x0106, in: entries)
            let compression = tiff.integer(0x0103, in: entries) ?? 1
            let width = tiff.integer(0x0100, in: entries) ?? 0
            let height = tiff.integer(0x0101, in: entries) ?? 0
            // Sensor data: colour filter array or linear raw, a maker's raw
            // compression, or (DNG) the main image.
            let rawPhotometric = photometric == 32803 || photometric == 34892
            let rawCompression = [32767, 32769, 32770, 32773, 34316, 34713, 65000].contains(compression)
            if rawPhotometric || rawCompression || (isDNG && kind == 0 && width > 0) {
                if width > 0, height > 0 { rawSizes.append(.init(width: width, height: height)) }
                return
            }
            // Masks (NewSubfileType bit 2) and DNG images not marked as previews are not pictures.
            if kind & 4 != 0 { return }
            if isDNG, kind != 1, kind != 0x10001 { return }
            if let offset = tiff.integer(0x0201, in: entries), let length = tiff.integer(0x0202, in: entries),
                length > 0,
                let start = tiff.absolute(offset), start + length <= tiff.source.count
            {
                previews.append(RAWPreview(ranges: [start..<(start + length)], encoding: .jpeg, origin: name))
                return
            }
            guard let offsets = tiff.integers(0x0111, in: entries, limit: 1024),
                let counts = tiff.integers(0x0117, in: entries, limit: 1024),
                offsets.count == counts.count, !offsets.isEmpty
            else { return }
            var ranges: [Range<Int>] = []
            for (offset, count) in zip(offsets, counts) {
                guard count > 0, let start = tiff.absolute(offset), start + count <= tiff.source.count else { return }
                ranges.append(start..<(start + count))
            }
            if compression == 6 || compression == 7, ranges.count == 1 {
                previews.append(RAWPreview(ranges: ranges, encoding: .jpeg, origin: name))
            } else if compression == 1, photometric == 2, (tiff.integer(0x0115, in: entries) ?? 1) == 3,
                (tiff.integers(0x0102, in: entries, limit: 3) ?? [1]).allSatisfy({ $0 == 8 }),
                (tiff.integer(0x011C, in: entries) ?? 1) == 1, width > 0, height > 0
            {
                previews.append(RAWPreview(ranges: ranges, encoding: .rgb(width: width, height: height), origin: name))
            }
        }
    }
}

/// Olympus maker notes: `OLYMPUS\0II\3\0` (offsets from the note's start) or
/// the older `OLYMP\0` (offsets from the file's TIFF header); the preview is in
/// the CameraSettings IFD (tag 0x2020): start 0x101, length 0x102.
enum Olympus {
    static func previews(makerNote: Range<Int>, tiff: TIFFReader) -> [RAWPreview] {
        guard let head = tiff.source.read(makerNote.lowerBound..<min(makerNote.upperBound, makerNote.lowerBound + 16)),
            head.count >= 12
        else { return [] }
        let note: TIFFReader
        if head.starts(with: Array("OLYMPUS\u{0}".utf8)) {
            guard head[8] == 0x49 || head[8] == 0x4D else { return [] }
            note = TIFFReader(tiff.source, bigEndian: head[8] == 0x4D, base: makerNote.lowerBound, firstIFD: 12)
        } else if head.starts(with: Array("OLYMP\u{0}".utf8)) {
            note = TIFFReader(
                tiff.source, bigEndian: tiff.bigEndian, base: tiff.base, firstIFD: makerNote.lowerBound + 8 - tiff.base)
        } else {
            return []
        }
        guard let (entries, _) = note.ifd(at: note.firstIFD), let settings = note.entry(0x2020, in: entries) else {
            return []
        }
        // The CameraSettings IFD: at an offset (IFD or LONG), or inline as a blob.
        let settingsIFD: Int
        if settings.type == 13 || settings.type == 4, let offset = note.integers(of: settings, limit: 1)?.first {
            settingsIFD = offset
        } else {
            settingsIFD = settings.valueOffset - note.base
        }
        guard let (camera, _) = note.ifd(at: settingsIFD), (note.integer(0x0100, in: camera) ?? 1) != 0,
            let start = note.integer(0x0101, in: camera), let length = note.integer(0x0102, in: camera), length > 0,
            let position = note.absolute(start), position + length <= tiff.source.count
        else { return [] }
        return [RAWPreview(ranges: [position..<(position + length)], encoding: .jpeg, origin: "Olympus CameraSettings")]
    }
}

// MARK: - CR3

enum CR3 {
    /// Canon's `moov/uuid` box (CMT1–CMT4, THMB).
    static let canonUUID: [UInt8] = [
        0x85, 0xC0, 0xB6, 0x87, 0x82, 0x0F, 0x11, 0xE0, 0x81, 0x11, 0xF4, 0xCE, 0x46, 0x2B, 0x6A, 0x48,
    ]
    /// The top-level `uuid` box holding `PRVW`.
    static let previewUUID: [UInt8] = [
        0xEA, 0xF4, 0x2B, 0x5E, 0x1C, 0x98, 0x4B, 0x88, 0xB9, 0xFB, 0xB7, 0xDC, 0x40, 0x6E, 0x4D, 0x16,
    ]

    /// A JPEG inside a box whose payload starts with a small header of its own
    /// (`THMB`, `PRVW`): from the first SOI marker in its first 64 bytes to the box's end.
    static func embeddedJPEG(_ source: any RandomAccessBytes, in payload: Range<Int>, origin: String) -> RAWPreview? {
        guard let head = source.read(payload.lowerBound..<min(payload.upperBound, payload.lowerBound + 64)) else {
            return nil
        }
        for i in 0..<max(0, head.count - 2) where head[i] == 0xFF && head[i + 1] == 0xD8 && head[i + 2] == 0xFF {
            return RAWPreview(ranges: [(payload.lowerBound + i)..<payload.upperBound], encoding: .jpeg, origin: origin)
        }
        return nil
    }

    static func describe(_ source: any RandomAccessBytes) throws(RAWFormatError) -> RAWDescription {
        let top = ISOBox.list(source, in: 0..<source.count)
        guard top.first?.type == "ftyp" else { throw RAWFormatError("no ftyp box") }
        var description = RAWDescription(previews: [], orientation: 1, sizes: [])
        if let moov = top.first(where: { $0.type == "moov" }) {
            let inner = ISOBox.list(source, in: moov.payload)
            if let canon = inner.first(where: { $0.type == "uuid" && $0.uuid == canonUUID }) {
                for box in ISOBox.list(source, in: canon.payload) {
                    switch box.type {
                    case "CMT1":
                        guard let tiff = TIFFReader(source, base: box.payload.lowerBound),
                            let (ifd0, _) = tiff.ifd(at: tiff.firstIFD)
                        else { continue }
                        if let orientation = tiff.integer(0x0112, in: ifd0), (1...8).contains(orientation) {
                            description.orientation = orientation
                        }
                        if let width = tiff.integer(0x0100, in: ifd0), let height = tiff.integer(0x0101, in: ifd0),
                            width > 0, height > 0
                        {
                            description.sizes.append(.init(width: width, height: height))
                        }
                    case "CMT2":
                        guard let tiff = TIFFReader(source, base: box.payload.lowerBound),
                            let (exif, _) = tiff.ifd(at: tiff.firstIFD)
                        else { continue }
                        if let width = tiff.integer(0xA002, in: exif), let height = tiff.integer(0xA003, in: exif),
                            width > 0, height > 0
                        {
                            description.sizes.insert(.init(width: width, height: height), at: 0)
                        }
                    case "THMB":
                        if let preview = embeddedJPEG(source, in: box.payload, origin: "THMB") {
                            description.previews.append(preview)
                        }
                    default: continue
                    }
                }
            }
        }
        for box in top where box.type == "uuid" && box.uuid == previewUUID {
            // Eight bytes, then the PRVW box.
            let inner = box.payload.lowerBound + 8
            for prvw in ISOBox.list(source, in: inner..<box.payload.upperBound) where prvw.type == "PRVW" {
                if let preview = embeddedJPEG(source, in: prvw.payload, origin: "PRVW") {
                    description.previews.append(preview)
                }
            }
        }
        return description
    }
}

// MARK: - RAF

enum RAF {
    static func describe(_ source: any RandomAccessBytes) throws(RAWFormatError) -> RAWDescription {
        guard let header = source.read(0..<100), header.starts(with: Array("FUJIFILMCCD-RAW ".utf8)) else {
            throw RAWFormatError("no RAF header")
        }
        func be32(_ at: Int) -> Int {
            Int(header[at]) << 24 | Int(header[at + 1]) << 16 | Int(header[at + 2]) << 8 | Int(header[at + 3])
        }
        let offset = be32(84)
        let length = be32(88)
        var description = RAWDescription(previews: [], orientation: 1, sizes: [])
        guard length > 0, offset > 0, offset + length <= source.count else { return description }
        description.previews.append(
            RAWPreview(ranges: [offset..<(offset + length)], encoding: .jpeg, origin: "RAF JPEG"))
        // The JPEG's EXIF: the photo's orientation and size, and a thumbnail.
        guard let exif = JPEGSegments.exifTIFF(source, jpegAt: offset, length: length),
            let (ifd0, next) = exif.ifd(at: exif.firstIFD)
        else {
            return description
        }
        if let orientation = exif.integer(0x0112, in: ifd0), (1...8).contains(orientation) {
            description.orientation = orientation
        }
        if let exifOffset = exif.integer(0x8769, in: ifd0), let (entries, _) = exif.ifd(at: exifOffset),
            let width = exif.integer(0xA002, in: entries), let height = exif.integer(0xA003, in: entries), width > 0,
            height > 0
        {
            description.sizes.append(.init(width: width, height: height))
        }
        if next != 0, let (ifd1, _) = exif.ifd(at: next), let thumbnail = exif.integer(0x0201, in: ifd1),
            let thumbnailLength = exif.integer(0x0202, in: ifd1), thumbnailLength > 0,
            let start = exif.absolute(thumbnail),
            start + thumbnailLength <= offset + length
        {
            description.previews.append(
                RAWPreview(
                    ranges: [start..<(start + thumbnailLength)], encoding: .jpeg, origin: "RAF JPEG EXIF thumbnail"))
        }
        return description
    }
}

/// The segments of a JPEG that come before its picture data.
package enum JPEGSegments {
    /// The TIFF structure of the EXIF APP1 segment of the JPEG at `offset`
    /// (`length` bytes) in `source`, offsets counting from its own header.
    static func exifTIFF(_ source: any RandomAccessBytes, jpegAt offset: Int, length: Int) -> TIFFReader? {
        guard let head = source.read(offset..<min(offset + length, offset + 65_600)) else { return nil }
        var position = 2
        guard head.count > 4, head[0] == 0xFF, head[1] == 0xD8 else { return nil }
        while position + 4 <= head.count, head[position] == 0xFF {
            let marker = head[position + 1]
            let segment = Int(head[position + 2]) << 8 | Int(head[position + 3])
            guard segment >= 2 else { return nil }
            if marker == 0xE1, position + 10 <= head.count,
                Array(head[(position + 4)..<(position + 10)]) == [0x45, 0x78, 0x69, 0x66, 0, 0]
            {
                return TIFFReader(source, base: offset + position + 10)
            }
            guard (0xE0...0xEF).contains(marker) || marker == 0xFE else { return nil }
            position += 2 + segment
        }
        return nil
    }
}
