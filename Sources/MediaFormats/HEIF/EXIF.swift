// The two things the decoders need from EXIF: the Orientation tag, and the
// embedded JPEG thumbnail (IFD1) with its size. Pure Swift over untrusted bytes.

/// Reading EXIF (a TIFF structure) from a HEIF `Exif` item or a JPEG's APP1 segment.
package enum EXIF {
    /// The Orientation (1–8) in the TIFF structure `tiff` (starting at its
    /// `II*\0`/`MM\0*` header; a leading `Exif\0\0` is skipped), or nil.
    package static func orientation(tiff: [UInt8]) -> Int? {
        guard let tiff = TIFF(tiff), let ifd0 = tiff.ifdOffset(at: 4) else { return nil }
        guard let value = tiff.entry(0x0112, inIFDAt: ifd0), (1...8).contains(value) else { return nil }
        return value
    }

    /// What a JPEG's EXIF says: its Orientation and where its embedded thumbnail is.
    package struct JPEGInfo: Sendable, Hashable {
        /// EXIF Orientation (1–8), 1 when absent.
        package let orientation: Int
        /// The embedded thumbnail's bytes (a JPEG) in the file, if it has one.
        package let thumbnail: Range<Int>?
    }

    /// Reads the EXIF of the JPEG whose first bytes are `head` (the APP1 segment
    /// sits right after SOI; 64 KiB covers it). Nil when there is no EXIF.
    package static func jpeg(_ head: [UInt8]) -> JPEGInfo? {
        guard head.count > 4, head[0] == 0xFF, head[1] == 0xD8 else { return nil }
        var position = 2
        while position + 4 <= head.count, head[position] == 0xFF {
            let marker = head[position + 1]
            let length = Int(head[position + 2]) << 8 | Int(head[position + 3])
            guard length >= 2 else { return nil }
            let payload = (position + 4)..<min(head.count, position + 2 + length)
            if marker == 0xE1, payload.count > 6, Array(head[payload.prefix(6)]) == [0x45, 0x78, 0x69, 0x66, 0, 0] {
                let start = payload.lowerBound + 6
                guard let tiff = TIFF(Array(head[start..<payload.upperBound])), let ifd0 = tiff.ifdOffset(at: 4) else {
                    return nil
                }
                let orientation = tiff.entry(0x0112, inIFDAt: ifd0).flatMap { (1...8).contains($0) ? $0 : nil } ?? 1
                var thumbnail: Range<Int>?
                if let ifd1 = tiff.nextIFD(after: ifd0),
                    let offset = tiff.entry(0x0201, inIFDAt: ifd1), let length = tiff.entry(0x0202, inIFDAt: ifd1),
                    offset > 0, length > 0, offset + length <= tiff.bytes.count
                {
                    thumbnail = (start + offset)..<(start + offset + length)
                }
                return JPEGInfo(orientation: orientation, thumbnail: thumbnail)
            }
            // Only APPn and COM segments come before the EXIF one; stop at anything else.
            guard (0xE0...0xEF).contains(marker) || marker == 0xFE else { return nil }
            position += 2 + length
        }
        return nil
    }

    /// The pixel size in a JPEG's SOF header (`bytes` is the whole JPEG), or nil.
    package static func jpegSize(_ bytes: ArraySlice<UInt8>) -> (width: Int, height: Int)? {
        JPEGFrameHeader(bytes).map { ($0.width, $0.height) }
    }
}

/// A TIFF structure: byte order and bounds-checked IFD reads.
private struct TIFF {
    let bytes: [UInt8]
    let bigEndian: Bool

    init?(_ raw: [UInt8]) {
        var bytes = raw
        if bytes.count >= 6, Array(bytes.prefix(6)) == [0x45, 0x78, 0x69, 0x66, 0, 0] {
            bytes = Array(bytes.dropFirst(6))
        }
        guard bytes.count >= 8 else { return nil }
        if bytes[0] == 0x4D, bytes[1] == 0x4D, bytes[2] == 0, bytes[3] == 42 {
            bigEndian = true
        } else if bytes[0] == 0x49, bytes[1] == 0x49, bytes[2] == 42, bytes[3] == 0 {
            bigEndian = false
        } else {
            return nil
        }
        self.bytes = bytes
    }

    func u16(_ at: Int) -> Int? {
        guard at >= 0, at + 2 <= bytes.count else { return nil }
        return bigEndian ? Int(bytes[at]) << 8 | Int(bytes[at + 1]) : Int(bytes[at + 1]) << 8 | Int(bytes[at])
    }

    func u32(_ at: Int) -> Int? {
        guard let a = u16(at), let b = u16(at + 2) else { return nil }
        return bigEndian ? a << 16 | b : b << 16 | a
    }

    /// The IFD offset stored at `at`, if it points inside the structure.
    func ifdOffset(at: Int) -> Int? {
        guard let offset = u32(at), offset >= 8, offset + 2 <= bytes.count else { return nil }
        return offset
    }

    /// The IFD after the one at `ifd`.
    func nextIFD(after ifd: Int) -> Int? {
        guard let count = u16(ifd), count <= 1000 else { return nil }
        let next = ifd + 2 + count * 12
        guard let offset = ifdOffset(at: next), offset != ifd else { return nil }
        return offset
    }

    /// The value of a SHORT or LONG `tag` with one value, in the IFD at `ifd`.
    func entry(_ tag: Int, inIFDAt ifd: Int) -> Int? {
        guard let count = u16(ifd), count <= 1000 else { return nil }
        for i in 0..<count {
            let at = ifd + 2 + i * 12
            guard let found = u16(at) else { return nil }
            guard found == tag, let type = u16(at + 2) else { continue }
            switch type {
            case 3: return u16(at + 8)
            case 4: return u32(at + 8)
            default: return nil
            }
        }
        return nil
    }
}
