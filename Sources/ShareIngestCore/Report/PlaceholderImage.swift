import Foundation
import MediaFormats

/// An entry's ThumbHash drawn as the placeholder it stands for: decoded
/// (``ThumbHash/decode(_:)``, at most 32×32 pixels) and encoded here as a PNG
/// for a `data:` URI, so the page stays self-contained and this process links no
/// image library. The PNG is RGBA, 8 bits a channel, its zlib stream of stored
/// (uncompressed) blocks: a placeholder is a few kilobytes at most.
enum PlaceholderImage {
    /// The picture `thumbhash` (base64, as the manifest has it) stands for, as
    /// `data:image/png;base64,…` with its size; nil when it is not a ThumbHash.
    static func dataURI(thumbhash: String) -> (uri: String, width: Int, height: Int)? {
        guard thumbhash.count <= 64, let hash = Data(base64Encoded: thumbhash),
            let image = ThumbHash.decode(Array(hash))
        else { return nil }
        let png = png(width: image.width, height: image.height, rgba: image.rgba)
        return ("data:image/png;base64," + Data(png).base64EncodedString(), image.width, image.height)
    }

    /// A PNG of `width`×`height` RGBA pixels.
    static func png(width: Int, height: Int, rgba: [UInt8]) -> [UInt8] {
        // Each row preceded by its filter type, 0 (none).
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (1 + width * 4))
        for y in 0..<height {
            raw.append(0)
            raw += rgba[(y * width * 4)..<((y + 1) * width * 4)]
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, raw.count - offset)
            let last: UInt8 = offset + count == raw.count ? 1 : 0
            zlib += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            zlib += raw[offset..<(offset + count)]
            offset += count
        } while offset < raw.count
        zlib += bigEndian(adler32(raw))

        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 6, 0, 0, 0]  // 8 bits, RGBA, deflate, adaptive filtering, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib)
            + chunk("IEND", [])
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
