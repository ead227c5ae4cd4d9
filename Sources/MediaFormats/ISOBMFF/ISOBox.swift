// ISO base media boxes read by random access (a RAW or a video of any size:
// only box headers and the small boxes asked for are read). Bounds-checked;
// nothing here traps on bad input.

/// One box: its type and where its payload is.
package struct ISOBox: Sendable, Hashable {
    package let type: String
    /// The payload (after the header, and after a `uuid` box's 16-byte identifier).
    package let payload: Range<Int>
    /// A `uuid` box's identifier.
    package let uuid: [UInt8]?
    /// The whole box, header included.
    package var extent: Range<Int> = 0..<0

    /// Most boxes listed in one range.
    static let maximumBoxes = 200_000

    /// The boxes in `range` of `source`, in order (a box that does not fit ends the list).
    package static func list(_ source: any RandomAccessBytes, in range: Range<Int>, limit: Int = maximumBoxes)
        -> [ISOBox]
    {
        var boxes: [ISOBox] = []
        var position = range.lowerBound
        while position + 8 <= range.upperBound, boxes.count < limit, let header = source.read(position..<(position + 8))
        {
            var size = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            // Latin-1: QuickTime's user data types start with © (0xA9).
            let type = String(String.UnicodeScalarView(header[4..<8].map { Unicode.Scalar($0) }))
            var start = position + 8
            if size == 1 {
                guard let large = source.read(start..<(start + 8)) else { break }
                var value = 0
                for byte in large {
                    guard value >> 55 == 0 else { return boxes }
                    value = value << 8 | Int(byte)
                }
                size = value
                start += 8
            } else if size == 0 {
                size = range.upperBound - position
            }
            guard size >= start - position, size <= range.upperBound - position else { break }
            var uuid: [UInt8]?
            if type == "uuid" {
                guard let identifier = source.read(start..<(start + 16)) else { break }
                uuid = identifier
                start += 16
            }
            boxes.append(
                ISOBox(type: type, payload: start..<(position + size), uuid: uuid, extent: position..<(position + size))
            )
            position += size
        }
        return boxes
    }

    /// The first child of type `type` (a path of types: `["mdia", "mdhd"]`).
    package static func find(_ source: any RandomAccessBytes, in range: Range<Int>, path: [String]) -> ISOBox? {
        var range = range
        var found: ISOBox?
        for type in path {
            guard let box = list(source, in: range, limit: 4096).first(where: { $0.type == type }) else { return nil }
            found = box
            range = box.payload
        }
        return found
    }
}

/// Big-endian reads from a box's bytes, nil past the end.
struct BigEndianBytes {
    let bytes: [UInt8]
    func u32(_ at: Int) -> Int? {
        guard at >= 0, at + 4 <= bytes.count else { return nil }
        return Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
    }
    func u64(_ at: Int) -> Int? {
        guard let high = u32(at), let low = u32(at + 4), high >> 31 == 0 else { return nil }
        return high << 32 | low
    }
}
