// Bounds-checked reading of TIFF structures (IFDs and their values) from
// untrusted bytes, by random access: camera RAW files are TIFF structures tens
// of megabytes long whose directories point anywhere. Nothing here traps on bad
// input; a read outside the file is nil.

/// Random access to a file's bytes: the whole file in memory (tests, fuzzing,
/// the sniffer's prefix), or the decoder's descriptor read on demand.
package protocol RandomAccessBytes {
    /// The file's length in bytes.
    var count: Int { get }
    /// The bytes in `range`, or nil when the range is not inside the file (or
    /// cannot be read).
    func read(_ range: Range<Int>) -> [UInt8]?
}

extension Array: RandomAccessBytes where Element == UInt8 {
    package func read(_ range: Range<Int>) -> [UInt8]? {
        guard range.lowerBound >= 0, range.upperBound <= count else { return nil }
        return Array(self[range])
    }
}

/// One IFD entry: a tag, its type, its value count, and where its value is.
package struct TIFFEntry: Sendable, Hashable {
    package let tag: Int
    package let type: Int
    package let count: Int
    /// Where the value is in the file (inline values: inside the entry itself).
    package let valueOffset: Int

    /// Bytes per value of each TIFF type (0: unknown type).
    static func size(ofType type: Int) -> Int {
        switch type {
        case 1, 2, 6, 7: 1
        case 3, 8: 2
        case 4, 9, 11, 13: 4
        case 5, 10, 12, 16, 17, 18: 8
        default: 0
        }
    }

    /// The value's length in bytes (nil when the type is unknown or it overflows).
    package var byteCount: Int? {
        let size = Self.size(ofType: type)
        guard size > 0, count >= 0 else { return nil }
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        return overflow ? nil : total
    }
}

/// A TIFF structure inside a file: its byte order and where offsets count from
/// (`base`: 0 for the file itself, the start of an embedded TIFF header for EXIF
/// in a JPEG, a CR3 `CMT` box or a maker note).
package struct TIFFReader {
    package let source: any RandomAccessBytes
    package let bigEndian: Bool
    /// Where offsets in this structure count from.
    package let base: Int
    /// The first IFD's offset (relative to ``base``).
    package let firstIFD: Int

    /// Most entries an IFD may have (real ones have tens; a loop of garbage has thousands).
    static let maximumEntries = 1000

    /// Reads the 8-byte header at `base`: `II`/`MM`, then any 16-bit magic (42 for
    /// TIFF, `RO`/`RS` for Olympus, `U` for Panasonic), then the first IFD's offset.
    package init?(_ source: any RandomAccessBytes, base: Int = 0) {
        guard let header = source.read(base..<(base + 8)) else { return nil }
        if header[0] == 0x49, header[1] == 0x49 {
            bigEndian = false
        } else if header[0] == 0x4D, header[1] == 0x4D {
            bigEndian = true
        } else {
            return nil
        }
        self.source = source
        self.base = base
        let offset =
            bigEndian
            ? Int(header[4]) << 24 | Int(header[5]) << 16 | Int(header[6]) << 8 | Int(header[7])
            : Int(header[7]) << 24 | Int(header[6]) << 16 | Int(header[5]) << 8 | Int(header[4])
        firstIFD = offset
    }

    /// A structure whose byte order is known and which has no header of its own
    /// (an IFD that starts a maker note, offsets counting from `base`).
    package init(_ source: any RandomAccessBytes, bigEndian: Bool, base: Int, firstIFD: Int) {
        self.source = source
        self.bigEndian = bigEndian
        self.base = base
        self.firstIFD = firstIFD
    }

    func u16(_ b: [UInt8], _ at: Int) -> Int {
        bigEndian ? Int(b[at]) << 8 | Int(b[at + 1]) : Int(b[at + 1]) << 8 | Int(b[at])
    }

    func u32(_ b: [UInt8], _ at: Int) -> Int {
        bigEndian ? u16(b, at) << 16 | u16(b, at + 2) : u16(b, at + 2) << 16 | u16(b, at)
    }

    /// The file offset of a structure offset, if it is plausible.
    func absolute(_ offset: Int) -> Int? {
        let (position, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, offset >= 0, position >= 0, position < source.count else { return nil }
        return position
    }

    /// The entries of the IFD at `offset` (relative to ``base``) and the offset of
    /// the next IFD (0 when none), or nil when it is not inside the file.
    package func ifd(at offset: Int) -> (entries: [TIFFEntry], next: Int)? {
        guard offset >= 8 || base > 0, let start = absolute(offset), let countBytes = source.read(start..<(start + 2))
        else { return nil }
        let count = u16(countBytes, 0)
        guard count > 0, count <= Self.maximumEntries,
            let table = source.read((start + 2)..<(start + 2 + count * 12 + 4))
        else {
            return nil
        }
        var entries: [TIFFEntry] = []
        entries.reserveCapacity(count)
        for i in 0..<count {
            let at = i * 12
            let tag = u16(table, at)
            let type = u16(table, at + 2)
            let valueCount = u32(table, at + 4)
            let entry = TIFFEntry(tag: tag, type: type, count: valueCount, valueOffset: 0)
            guard let length = entry.byteCount else { continue }
            // Values of up to four bytes sit in the entry; longer ones at an offset.
            let valueOffset = length <= 4 ? start + 2 + at + 8 : (absolute(u32(table, at + 8)) ?? -1)
            guard valueOffset >= 0 else { continue }
            entries.append(TIFFEntry(tag: tag, type: type, count: valueCount, valueOffset: valueOffset))
        }
        return (entries, u32(table, count * 12))
    }

    /// The entry for `tag` in `entries`.
    package func entry(_ tag: Int, in entries: [TIFFEntry]) -> TIFFEntry? { entries.first { $0.tag == tag } }

    /// Up to `limit` integer values of `tag` (BYTE, SHORT, LONG, their signed
    /// kinds, IFD; RATIONALs rounded down), or nil when absent or unreadable.
    package func integers(_ tag: Int, in entries: [TIFFEntry], limit: Int = 4096) -> [Int]? {
        guard let entry = entry(tag, in: entries) else { return nil }
        return integers(of: entry, limit: limit)
    }

    /// The values of `entry` as integers (see ``integers(_:in:limit:)``).
    package func integers(of entry: TIFFEntry, limit: Int = 4096) -> [Int]? {
        let size = TIFFEntry.size(ofType: entry.type)
        let n = min(entry.count, limit)
        guard n > 0, size > 0, let bytes = source.read(entry.valueOffset..<(entry.valueOffset + n * size)) else {
            return nil
        }
        var values: [Int] = []
        values.reserveCapacity(n)
        for i in 0..<n {
            let at = i * size
            switch entry.type {
            case 1, 7: values.append(Int(bytes[at]))
            case 6: values.append(Int(Int8(bitPattern: bytes[at])))
            case 3: values.append(u16(bytes, at))
            case 8: values.append(Int(Int16(truncatingIfNeeded: u16(bytes, at))))
            case 4, 13: values.append(u32(bytes, at))
            case 9: values.append(Int(Int32(truncatingIfNeeded: u32(bytes, at))))
            case 5, 10:
                let numerator = u32(bytes, at)
                let denominator = u32(bytes, at + 4)
                values.append(denominator == 0 ? 0 : numerator / denominator)
            default: return nil
            }
        }
        return values
    }

    /// The single integer value of `tag`.
    package func integer(_ tag: Int, in entries: [TIFFEntry]) -> Int? { integers(tag, in: entries, limit: 1)?.first }

    /// The ASCII value of `tag`, up to its first NUL, trimmed.
    package func string(_ tag: Int, in entries: [TIFFEntry]) -> String? {
        guard let entry = entry(tag, in: entries), entry.type == 2, entry.count > 0, entry.count <= 4096,
            let bytes = source.read(entry.valueOffset..<(entry.valueOffset + entry.count))
        else { return nil }
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self).trimmingCharacters(in: " ")
    }

    /// Where the value of `tag` is in the file and its length, for values that are
    /// blobs (a maker note, an embedded JPEG stored as UNDEFINED bytes).
    package func blob(_ tag: Int, in entries: [TIFFEntry]) -> Range<Int>? {
        guard let entry = entry(tag, in: entries), let length = entry.byteCount, length > 0 else { return nil }
        let (end, overflow) = entry.valueOffset.addingReportingOverflow(length)
        guard !overflow, end <= source.count else { return nil }
        return entry.valueOffset..<end
    }
}

extension String {
    /// The string without leading and trailing `character`s.
    func trimmingCharacters(in character: Character) -> String {
        var slice = self[...]
        while slice.first == character { slice = slice.dropFirst() }
        while slice.last == character { slice = slice.dropLast() }
        return String(slice)
    }
}
