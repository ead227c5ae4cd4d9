// A picture's size from the first bytes of a file (the sniffer's prefix), where
// the format puts it there: for scheduling (costly items first) and memory
// budgets, never for facts (the decoder reads those). Pure Swift, bounds-checked.

/// The pixel size a file's header announces, from its first bytes.
package enum HeaderDimensions {
    /// Width and height read from `prefix` for a file of `format`, or nil when
    /// the prefix does not hold them (a JPEG whose frame header follows a large
    /// EXIF block, an MP4 whose `moov` is at the end, a format not read here).
    package static func size(of prefix: [UInt8], format: MediaFormat) -> (width: Int, height: Int)? {
        let size: (Int, Int)?
        switch format.id {
        case "png": size = png(prefix)
        case "gif": size = prefix.count >= 10 ? (le16(prefix, 6), le16(prefix, 8)) : nil
        case "jpeg": size = EXIF.jpegSize(prefix[...]).map { ($0.width, $0.height) }
        case "webp": size = webp(prefix)
        case "bmp":
            size =
                prefix.count >= 26
                ? (
                    abs(Int(Int32(bitPattern: UInt32(le32(prefix, 18))))),
                    abs(Int(Int32(bitPattern: UInt32(le32(prefix, 22)))))
                ) : nil
        case "heic", "heif", "avif", "heics", "heifs", "avifs": size = largest(prefix, box: "ispe", offset: 4)
        default:
            // ISO base media video: the largest track header (tkhd width/height, 16.16).
            size = format.kind == .video ? trackHeader(prefix) : nil
        }
        guard let (width, height) = size, width > 0, height > 0, width <= 1 << 20, height <= 1 << 20 else { return nil }
        return (width, height)
    }

    private static func png(_ b: [UInt8]) -> (Int, Int)? {
        guard b.count >= 24, b[12] == 0x49, b[13] == 0x48, b[14] == 0x44, b[15] == 0x52 else { return nil }
        return (be32(b, 16), be32(b, 20))
    }

    private static func webp(_ b: [UInt8]) -> (Int, Int)? {
        guard b.count >= 30 else { return nil }
        let chunk = String(decoding: b[12..<16], as: UTF8.self)
        switch chunk {
        case "VP8X":
            return (
                1 + (Int(b[24]) | Int(b[25]) << 8 | Int(b[26]) << 16),
                1 + (Int(b[27]) | Int(b[28]) << 8 | Int(b[29]) << 16)
            )
        case "VP8 ": return (le16(b, 26) & 0x3FFF, le16(b, 28) & 0x3FFF)
        case "VP8L":
            let bits = le32(b, 21)
            return (1 + bits & 0x3FFF, 1 + (bits >> 14) & 0x3FFF)
        default: return nil
        }
    }

    /// The largest width×height of the boxes of type `box` found anywhere in `b`
    /// (`offset` bytes after the type come width and height, 32 bits each).
    private static func largest(_ b: [UInt8], box: String, offset: Int) -> (Int, Int)? {
        let tag = Array(box.utf8)
        var best: (Int, Int)?
        var i = 4
        while i + 4 + offset + 8 <= b.count {
            if b[i] == tag[0], b[i + 1] == tag[1], b[i + 2] == tag[2], b[i + 3] == tag[3] {
                let w = be32(b, i + 4 + offset)
                let h = be32(b, i + 8 + offset)
                if w > 0, h > 0, w <= 1 << 20, h <= 1 << 20, best.map({ w * h > $0.0 * $0.1 }) ?? true { best = (w, h) }
            }
            i += 1
        }
        return best
    }

    private static func trackHeader(_ b: [UInt8]) -> (Int, Int)? {
        var best: (Int, Int)?
        var i = 4
        while i + 4 + 84 <= b.count {
            if b[i] == 0x74, b[i + 1] == 0x6B, b[i + 2] == 0x68, b[i + 3] == 0x64 {  // "tkhd"
                // Version 0: 4 + 80 bytes to width; version 1: 4 + 92.
                let version = b[i + 4]
                let at = i + 4 + (version == 1 ? 88 : 76)
                if at + 8 <= b.count {
                    let w = be32(b, at) >> 16
                    let h = be32(b, at + 4) >> 16
                    if w > 0, h > 0, best.map({ w * h > $0.0 * $0.1 }) ?? true { best = (w, h) }
                }
            }
            i += 1
        }
        return best
    }

    private static func be32(_ b: [UInt8], _ i: Int) -> Int {
        Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
    }
    private static func le16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
    private static func le32(_ b: [UInt8], _ i: Int) -> Int {
        Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24
    }
}
