// The capture metadata a compatible copy carries over from its source: a new
// EXIF block written from the source's tags (camera, lens, exposure, capture
// date and time zone; GPS unless location privacy is on), never the source's
// block itself (its maker notes and thumbnails hold offsets of their own, and
// its Orientation and sizes describe the source's pixels, not the copy's), and
// the source's ICC profile when the copy's pixels are still in its colours.
// Pure Swift over untrusted bytes: runs in the decoder, bounds-checked.

/// The EXIF directories of a source: IFD0, the EXIF IFD and the GPS IFD, each
/// read by its own TIFF reader (a CR3 keeps them in three structures).
package struct CaptureMetadata {
    struct Directory {
        let reader: TIFFReader
        let entries: [TIFFEntry]
    }

    var ifd0: Directory?
    var exif: Directory?
    var gps: Directory?

    /// Nothing to carry over.
    package var isEmpty: Bool { ifd0 == nil && exif == nil && gps == nil }

    /// The directories of the TIFF structure at `base` of `source` (EXIF, or a
    /// TIFF-based RAW's own header).
    package init?(tiff source: any RandomAccessBytes, base: Int = 0) {
        guard let reader = TIFFReader(source, base: base), let ifd0 = reader.ifd(at: reader.firstIFD) else {
            return nil
        }
        self.ifd0 = Directory(reader: reader, entries: ifd0.entries)
        if let pointer = reader.integer(0x8769, in: ifd0.entries), let exif = reader.ifd(at: pointer) {
            self.exif = Directory(reader: reader, entries: exif.entries)
        }
        if let pointer = reader.integer(0x8825, in: ifd0.entries), let gps = reader.ifd(at: pointer) {
            self.gps = Directory(reader: reader, entries: gps.entries)
        }
    }

    init() {}

    /// The source metadata of a file of `format`: a HEIF's `Exif` item (the
    /// primary image's), a JPEG XL's `Exif` box, a TIFF-based RAW's own
    /// directories (a RW2's embedded JPEG's EXIF, a RAF's JPEG's), a CR3's
    /// `CMT1`, `CMT2` and `CMT4`, a PNG's `eXIf` chunk, a WebP's `EXIF` chunk.
    /// Nil when it has none.
    package static func read(_ file: any RandomAccessBytes, format: MediaFormat) -> CaptureMetadata? {
        let stream = SegmentedBytes(file)
        switch format.id {
        case "jxl": return ofJXL(stream)
        case "heic", "heif", "avif": return ofHEIF(stream)
        case "cr3": return ofCR3(stream)
        case "raf": return ofRAF(stream)
        case "rw2": return ofRW2(stream)
        case "tiff", "dng", "nef", "cr2", "arw", "orf":
            return CaptureMetadata(tiff: stream)
        case "png": return ofPNG(stream)
        case "webp": return ofWebP(stream)
        default:
            return nil
        }
    }

    /// The metadata of a JPEG XL's `Exif` box.
    private static func ofJXL(_ stream: SegmentedBytes) -> CaptureMetadata? {
        guard stream.read(0..<12) == JXLLocation.containerSignature else { return nil }
        for box in ISOBox.list(stream, in: 0..<stream.count, limit: 10_000) where box.type == "Exif" {
            guard let prefix = stream.read(box.payload.lowerBound..<(box.payload.lowerBound + 4)) else { continue }
            let offset = Int(prefix[0]) << 24 | Int(prefix[1]) << 16 | Int(prefix[2]) << 8 | Int(prefix[3])
            guard offset >= 0, box.payload.lowerBound + 4 + offset < box.payload.upperBound else { continue }
            return CaptureMetadata(
                tiff: stream.slice((box.payload.lowerBound + 4 + offset)..<box.payload.upperBound))
        }
        return nil
    }

    /// The metadata of a HEIF's `Exif` item (the primary image's).
    private static func ofHEIF(_ stream: SegmentedBytes) -> CaptureMetadata? {
        guard stream.count <= HEIFLocation.maximumSize, let bytes = stream.read(0..<stream.count),
            let heif = try? HEIFFile.parse(bytes),
            let primary = heif.primaryItem
        else { return nil }
        for item in heif.items(referring: primary.id, type: "cdsc") where item.type == "Exif" {
            guard let data = HEIFLocation.segments(of: item, in: heif, stream: stream),
                let prefix = data.read(0..<4)
            else { continue }
            let offset = Int(prefix[0]) << 24 | Int(prefix[1]) << 16 | Int(prefix[2]) << 8 | Int(prefix[3])
            guard offset >= 0, 4 + offset < data.count else { continue }
            if let metadata = CaptureMetadata(tiff: data.slice((4 + offset)..<data.count)) { return metadata }
        }
        return nil
    }

    /// The metadata of a CR3's `CMT1`, `CMT2` and `CMT4`.
    private static func ofCR3(_ stream: SegmentedBytes) -> CaptureMetadata? {
        var metadata = CaptureMetadata()
        guard let moov = ISOBox.list(stream, in: 0..<stream.count, limit: 1000).first(where: { $0.type == "moov" })
        else { return nil }
        for box in ISOBox.list(stream, in: moov.payload, limit: 1000)
        where box.type == "uuid" && box.uuid == ISOLocation.canonUUID {
            for inner in ISOBox.list(stream, in: box.payload, limit: 64) {
                guard let reader = TIFFReader(stream.slice(inner.payload), base: 0),
                    let ifd = reader.ifd(at: reader.firstIFD)
                else { continue }
                let directory = Directory(reader: reader, entries: ifd.entries)
                switch inner.type {
                case "CMT1": metadata.ifd0 = directory
                case "CMT2": metadata.exif = directory
                case "CMT4": metadata.gps = directory
                default: break
                }
            }
        }
        return metadata.isEmpty ? nil : metadata
    }

    /// The metadata of a RAF: its embedded JPEG's.
    private static func ofRAF(_ stream: SegmentedBytes) -> CaptureMetadata? {
        guard let header = stream.read(0..<92), header.starts(with: Array("FUJIFILMCCD-RAW".utf8)) else {
            return nil
        }
        let bytes = BigEndianBytes(bytes: header)
        guard let offset = bytes.u32(84), let length = bytes.u32(88) else { return nil }
        return jpeg(stream.slice(offset..<min(stream.count, offset + length)))
    }

    /// The metadata of a RW2: its embedded JPEG's EXIF, else its own directories.
    private static func ofRW2(_ stream: SegmentedBytes) -> CaptureMetadata? {
        guard let own = CaptureMetadata(tiff: stream) else { return nil }
        if let reader = own.ifd0?.reader, let entries = own.ifd0?.entries,
            let jpeg = reader.blob(0x002E, in: entries),
            let embedded = self.jpeg(stream.slice(jpeg))
        {
            return embedded
        }
        return own
    }

    /// The metadata of a PNG: its `eXIf` chunk (a TIFF structure; a few writers put `Exif\0\0` before it).
    private static func ofPNG(_ stream: SegmentedBytes) -> CaptureMetadata? {
        guard stream.read(0..<8) == PNGLocation.signature else { return nil }
        var position = 8
        for _ in 0..<100_000 {
            guard position + 12 <= stream.count, let header = stream.read(position..<(position + 8)) else {
                return nil
            }
            let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let data = (position + 8)..<(position + 8 + length)
            guard data.upperBound + 4 <= stream.count else { return nil }
            if header[4..<8].elementsEqual("eXIf".utf8) { return exifChunk(stream, data) }
            if header[4..<8].elementsEqual("IDAT".utf8) || header[4..<8].elementsEqual("IEND".utf8) { return nil }
            position = data.upperBound + 4
        }
        return nil
    }

    /// The metadata of a WebP: its `EXIF` chunk (RIFF, little-endian lengths, padded to even).
    private static func ofWebP(_ stream: SegmentedBytes) -> CaptureMetadata? {
        guard let header = stream.read(0..<12), header.starts(with: Array("RIFF".utf8)),
            header[8..<12].elementsEqual("WEBP".utf8)
        else { return nil }
        var position = 12
        for _ in 0..<100_000 {
            guard position + 8 <= stream.count, let chunk = stream.read(position..<(position + 8)) else {
                return nil
            }
            let size = Int(chunk[4]) | Int(chunk[5]) << 8 | Int(chunk[6]) << 16 | Int(chunk[7]) << 24
            let data = (position + 8)..<min(stream.count, position + 8 + size)
            if chunk[0..<4].elementsEqual("EXIF".utf8) { return exifChunk(stream, data) }
            position = data.upperBound + (size & 1)
        }
        return nil
    }

    /// The EXIF of a PNG's `eXIf` or a WebP's `EXIF` chunk: a TIFF structure,
    /// after `Exif\0\0` when a writer put one.
    static func exifChunk(_ stream: SegmentedBytes, _ data: Range<Int>) -> CaptureMetadata? {
        let skip =
            stream.read(data.lowerBound..<min(data.upperBound, data.lowerBound + 6)) == JPEGLocation.exifHeader ? 6 : 0
        guard data.lowerBound + skip < data.upperBound else { return nil }
        return CaptureMetadata(tiff: stream.slice((data.lowerBound + skip)..<data.upperBound))
    }

    /// The camera these directories name: IFD0 `Make` and `Model`, the EXIF
    /// IFD's `LensModel` (``CameraFacts/cleaned``); nil when they name none.
    package var camera: CameraFacts? {
        CameraFacts(
            make: ifd0.flatMap { $0.reader.string(0x010F, in: $0.entries) },
            model: ifd0.flatMap { $0.reader.string(0x0110, in: $0.entries) },
            lens: exif.flatMap { $0.reader.string(0xA434, in: $0.entries) }
        ).cleaned
    }

    /// The EXIF of the JPEG `stream` holds (its APP1 segment).
    static func jpeg(_ stream: SegmentedBytes) -> CaptureMetadata? {
        guard stream.read(0..<2) == [0xFF, 0xD8] else { return nil }
        var position = 2
        while position + 4 <= stream.count, let marker = stream.read(position..<(position + 4)), marker[0] == 0xFF,
            marker[1] != 0xDA
        {
            let length = Int(marker[2]) << 8 | Int(marker[3])
            guard length >= 2 else { return nil }
            let payload = (position + 4)..<min(stream.count, position + 2 + length)
            if marker[1] == 0xE1,
                stream.read(payload.lowerBound..<min(payload.upperBound, payload.lowerBound + 6))
                    == JPEGLocation.exifHeader
            {
                return CaptureMetadata(tiff: stream.slice((payload.lowerBound + 6)..<payload.upperBound))
            }
            position = payload.upperBound
        }
        return nil
    }

    // MARK: - Writing

    /// IFD0 tags carried over: ImageDescription, Make, Model, XResolution,
    /// YResolution, ResolutionUnit, Software, DateTime, Artist, Copyright.
    static let keptIFD0: Set<Int> = [0x010E, 0x010F, 0x0110, 0x011A, 0x011B, 0x0128, 0x0131, 0x0132, 0x013B, 0x8298]
    /// EXIF IFD tags carried over: exposure (time, f-number, program, ISO,
    /// shutter, aperture, brightness, bias, maximum aperture, metering, light
    /// source, flash, focal length and its 35 mm equivalent, exposure mode,
    /// white balance, scene type), the capture date and time (original,
    /// digitised, their time zones and fractions of seconds), the EXIF version
    /// and the lens (specification, make, model).
    static let keptEXIF: Set<Int> = [
        0x829A, 0x829D, 0x8822, 0x8827, 0x8830, 0x8832, 0x9000, 0x9003, 0x9004, 0x9010, 0x9011, 0x9012, 0x9201, 0x9202,
        0x9203, 0x9204, 0x9205,
        0x9207, 0x9208, 0x9209, 0x920A, 0x9290, 0x9291, 0x9292, 0xA402, 0xA403, 0xA405, 0xA406, 0xA432, 0xA433, 0xA434,
    ]
    /// The largest value copied (a longer one, such as a huge description, is left out).
    static let maximumValue = 4096

    /// The names of the tags ``exifSegment(width:height:keepsLocation:colourSpace:)`` keeps, for reports.
    static let tagNames: [Int: String] = [
        0x010E: "ImageDescription", 0x010F: "Make", 0x0110: "Model", 0x0131: "Software", 0x0132: "DateTime",
        0x013B: "Artist", 0x8298: "Copyright",
        0x829A: "ExposureTime", 0x829D: "FNumber", 0x8827: "ISO", 0x9003: "DateTimeOriginal", 0x9004: "CreateDate",
        0x9011: "OffsetTimeOriginal",
        0x920A: "FocalLength", 0xA434: "LensModel",
    ]

    /// A JPEG APP1 segment's payload (`Exif\0\0`, then a big-endian TIFF
    /// structure) for a `width`×`height` picture that is upright (Orientation 1):
    /// the kept tags of IFD0 and the EXIF IFD, PixelXDimension and
    /// PixelYDimension, ColorSpace (`colourSpace`: 1 sRGB, 0xFFFF uncalibrated
    /// when an ICC profile describes the pixels), and with `keepsLocation` the
    /// whole GPS IFD. Also the names of the notable tags written. Nil when the
    /// result would not fit one segment.
    package func exifSegment(width: Int, height: Int, keepsLocation: Bool, colourSpace: Int) -> (
        payload: [UInt8], tags: [String]
    )? {
        var ifd0 = copied(ifd0, keeping: Self.keptIFD0)
        ifd0.append(.short(0x0112, 1))
        var exifEntries = copied(exif, keeping: Self.keptEXIF)
        exifEntries.append(.long(0xA002, UInt32(clamping: width)))
        exifEntries.append(.long(0xA003, UInt32(clamping: height)))
        exifEntries.append(.short(0xA001, UInt16(clamping: colourSpace)))
        let gpsEntries = keepsLocation ? copied(gps, keeping: nil) : []
        let tags = (ifd0 + exifEntries).compactMap { Self.tagNames[$0.tag] } + (gpsEntries.isEmpty ? [] : ["GPS"])
        let tiff = Self.writeTIFF(ifd0: ifd0, exif: exifEntries, gps: gpsEntries)
        let payload = Array("Exif\0\0".utf8) + tiff
        guard payload.count + 2 <= 0xFFFF else { return nil }
        return (payload, tags)
    }

    /// One entry to write: tag, type, count and its value, big-endian.
    struct Entry {
        let tag: Int
        let type: Int
        let count: Int
        let value: [UInt8]

        static func short(_ tag: Int, _ value: UInt16) -> Entry {
            Entry(tag: tag, type: 3, count: 1, value: [UInt8(value >> 8), UInt8(value & 0xFF)])
        }
        static func long(_ tag: Int, _ value: UInt32) -> Entry {
            Entry(
                tag: tag, type: 4, count: 1,
                value: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
        }
    }

    /// The entries of `directory` whose tags are in `kept` (all when nil), their
    /// values read and turned big-endian; unknown types and over-long values left out.
    private func copied(_ directory: Directory?, keeping kept: Set<Int>?) -> [Entry] {
        guard let directory else { return [] }
        var entries: [Entry] = []
        var seen = Set<Int>()
        for entry in directory.entries where kept?.contains(entry.tag) ?? true {
            guard seen.insert(entry.tag).inserted, let length = entry.byteCount, length > 0,
                length <= Self.maximumValue,
                let raw = directory.reader.source.read(entry.valueOffset..<(entry.valueOffset + length))
            else { continue }
            entries.append(
                Entry(
                    tag: entry.tag, type: entry.type, count: entry.count,
                    value: Self.bigEndian(raw, type: entry.type, from: directory.reader.bigEndian)))
        }
        return entries
    }

    /// `raw` (in `bigEndian` or little-endian order) as big-endian values of `type`.
    static func bigEndian(_ raw: [UInt8], type: Int, from bigEndian: Bool) -> [UInt8] {
        guard !bigEndian else { return raw }
        let unit: Int
        switch type {
        case 3, 8: unit = 2
        case 4, 9, 11, 13, 5, 10: unit = 4  // rationals: two 32-bit words
        case 12, 16, 17, 18: unit = 8
        default: return raw
        }
        var out = raw
        var i = 0
        while i + unit <= out.count {
            out[i..<(i + unit)].reverse()
            i += unit
        }
        return out
    }

    /// A big-endian TIFF structure: IFD0 (with pointers to the EXIF IFD and,
    /// when it has entries, the GPS IFD), then those IFDs; each IFD's longer
    /// values follow it, at even offsets.
    static func writeTIFF(ifd0: [Entry], exif: [Entry], gps: [Entry]) -> [UInt8] {
        func size(_ entries: [Entry]) -> Int {
            2 + 12 * entries.count + 4 + entries.reduce(0) { $0 + ($1.value.count > 4 ? ($1.value.count + 1) & ~1 : 0) }
        }
        let pointers = 1 + (gps.isEmpty ? 0 : 1)
        let ifd0Offset = 8
        let ifd0Size = size(ifd0) + 12 * pointers
        let exifOffset = ifd0Offset + ifd0Size
        let gpsOffset = exifOffset + size(exif)
        var main = ifd0 + [.long(0x8769, UInt32(exifOffset))]
        if !gps.isEmpty { main.append(.long(0x8825, UInt32(gpsOffset))) }
        var out: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8]
        func append(_ entries: [Entry], at offset: Int) {
            let sorted = entries.sorted { $0.tag < $1.tag }
            var data = offset + 2 + 12 * sorted.count + 4
            var values: [UInt8] = []
            out += [UInt8(sorted.count >> 8), UInt8(sorted.count & 0xFF)]
            for entry in sorted {
                out += [
                    UInt8(entry.tag >> 8), UInt8(entry.tag & 0xFF), UInt8(entry.type >> 8), UInt8(entry.type & 0xFF),
                ]
                out += [
                    UInt8(entry.count >> 24 & 0xFF), UInt8(entry.count >> 16 & 0xFF), UInt8(entry.count >> 8 & 0xFF),
                    UInt8(entry.count & 0xFF),
                ]
                if entry.value.count <= 4 {
                    out += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
                } else {
                    out += [
                        UInt8(data >> 24 & 0xFF), UInt8(data >> 16 & 0xFF), UInt8(data >> 8 & 0xFF), UInt8(data & 0xFF),
                    ]
                    values += entry.value
                    if entry.value.count & 1 == 1 { values.append(0) }
                    data += (entry.value.count + 1) & ~1
                }
            }
            out += [0, 0, 0, 0]
            out += values
        }
        append(main, at: ifd0Offset)
        append(exif, at: exifOffset)
        if !gps.isEmpty { append(gps, at: gpsOffset) }
        return out
    }
}

/// Metadata segments put into a JPEG (libvips' encoder writes none).
package enum JPEGMetadataSegments {
    /// `jpeg` with an APP1 EXIF segment (`exif`, its payload) and the ICC
    /// profile `icc` (APP2 `ICC_PROFILE` segments, as many as it takes) after
    /// its SOI and JFIF APP0: where libjpeg and libvips put them.
    package static func inserting(exif: [UInt8]?, icc: [UInt8]?, into jpeg: [UInt8]) -> [UInt8] {
        guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return jpeg }
        var at = 2
        if jpeg[2] == 0xFF, jpeg[3] == 0xE0, jpeg.count > 6 {
            at = 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5]))
        }
        var segments: [UInt8] = []
        if let exif { segments += segment(0xE1, exif) }
        if let icc, !icc.isEmpty {
            let chunk = 65_519
            let count = (icc.count + chunk - 1) / chunk
            if count <= 255 {
                for index in 0..<count {
                    let part = icc[(index * chunk)..<min(icc.count, (index + 1) * chunk)]
                    segments += segment(0xE2, Array("ICC_PROFILE\0".utf8) + [UInt8(index + 1), UInt8(count)] + part)
                }
            }
        }
        return Array(jpeg[..<at]) + segments + Array(jpeg[at...])
    }

    private static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count + 2
        return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }
}
