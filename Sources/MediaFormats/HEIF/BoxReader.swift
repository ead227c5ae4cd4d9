// Bounds-checked reading of ISO base media file format (ISOBMFF) boxes from
// untrusted bytes. Nothing here traps on bad input: every read past the end of
// its box is a `HEIFFormatError`.

/// Why a HEIF file's structure could not be read.
package struct HEIFFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, for people.
    package let message: String

    /// A structure error with its message.
    package init(_ message: String) { self.message = message }

    /// The ``message``.
    package var description: String { message }
}

/// A cursor over a range of a byte array; every read is bounds-checked.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var position: Int
    let end: Int

    init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        self.position = max(0, min(range.lowerBound, bytes.count))
        self.end = max(position, min(range.upperBound, bytes.count))
    }

    var remaining: Int { end - position }
    var isAtEnd: Bool { position >= end }

    mutating func skip(_ count: Int) throws(HEIFFormatError) {
        guard count >= 0, count <= remaining else { throw HEIFFormatError("box ends early") }
        position += count
    }

    mutating func u8() throws(HEIFFormatError) -> UInt8 {
        guard remaining >= 1 else { throw HEIFFormatError("box ends early") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func u16() throws(HEIFFormatError) -> UInt16 {
        try UInt16(uint(2))
    }

    mutating func u32() throws(HEIFFormatError) -> UInt32 {
        try UInt32(uint(4))
    }

    mutating func u64() throws(HEIFFormatError) -> UInt64 {
        try uint(8)
    }

    /// A big-endian unsigned integer of `size` bytes (0, 1, 2, 4 or 8; 0 reads nothing and gives 0).
    mutating func uint(_ size: Int) throws(HEIFFormatError) -> UInt64 {
        guard size >= 0, size <= 8 else { throw HEIFFormatError("field of \(size) bytes") }
        guard remaining >= size else { throw HEIFFormatError("box ends early") }
        var value: UInt64 = 0
        for i in 0..<size { value = value << 8 | UInt64(bytes[position + i]) }
        position += size
        return value
    }

    /// An integer of `size` bytes that must fit an `Int` offset or length.
    mutating func offset(_ size: Int) throws(HEIFFormatError) -> Int {
        let value = try uint(size)
        guard value <= UInt64(Int32.max) * 1024 else { throw HEIFFormatError("offset \(value) out of range") }
        return Int(value)
    }

    mutating func fourCC() throws(HEIFFormatError) -> String {
        guard remaining >= 4 else { throw HEIFFormatError("box ends early") }
        defer { position += 4 }
        return Self.fourCC(bytes[position..<(position + 4)])
    }

    /// A NUL-terminated UTF-8 string (the rest of the box when the NUL is missing).
    mutating func cString() -> String {
        var stop = position
        while stop < end, bytes[stop] != 0 { stop += 1 }
        let text = String(decoding: bytes[position..<stop], as: UTF8.self)
        position = min(end, stop + 1)
        return text
    }

    mutating func take(_ count: Int) throws(HEIFFormatError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw HEIFFormatError("box ends early") }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    /// The version and flags of a full box.
    mutating func fullBoxHeader() throws(HEIFFormatError) -> (version: UInt8, flags: UInt32) {
        let word = try u32()
        return (UInt8(word >> 24), word & 0xFF_FFFF)
    }

    static func fourCC<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        String(decoding: bytes.map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}

/// One box: its type and where its payload lies in the file.
struct Box {
    let type: String
    /// The payload, after the size, type (and `uuid`) fields.
    let payload: Range<Int>
}

/// The boxes directly inside `range` of `bytes`, in order. A box whose size runs
/// past the range is an error, unless it is the last one and `truncatedLast`
/// allows it (a top-level `mdat` cut short: its payload is what is there); size 0
/// means "to the end of the range".
func boxes(in bytes: [UInt8], range: Range<Int>, truncatedLast: Bool = false, limit: Int = 100_000)
    throws(HEIFFormatError) -> [Box]
{
    var found: [Box] = []
    var reader = ByteReader(bytes, range: range)
    while reader.remaining >= 8 {
        let start = reader.position
        var size = Int(try reader.u32())
        let type = try reader.fourCC()
        var header = 8
        if size == 1 {
            let large = try reader.u64()
            guard large <= UInt64(Int.max / 2) else { throw HEIFFormatError("'\(type)' box too large") }
            size = Int(large)
            header = 16
        } else if size == 0 {
            size = range.upperBound - start
        }
        if type == "uuid" { header += 16 }
        if truncatedLast, size >= header, start + size > reader.end, start + header <= reader.end {
            found.append(Box(type: type, payload: (start + header)..<reader.end))
            break
        }
        guard size >= header, start + size <= reader.end else {
            throw HEIFFormatError("'\(type)' box of \(size) bytes runs past the end of its container")
        }
        found.append(Box(type: type, payload: (start + header)..<(start + size)))
        guard found.count <= limit else { throw HEIFFormatError("more than \(limit) boxes") }
        try reader.skip(start + size - reader.position)
    }
    return found
}
