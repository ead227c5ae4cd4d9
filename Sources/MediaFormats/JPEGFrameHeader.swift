/// A JPEG's frame header (SOFn): its size and coding process, found by walking
/// the segments from the start of image by their lengths, never past the end of
/// the bytes given (which may be only a file's first bytes). The one reader of
/// it: header sizes, RAW previews, EXIF thumbnails, the parent's check of a
/// helper's thumbnail and the test faults that forge one all use this.
package struct JPEGFrameHeader: Equatable, Sendable {
    /// Pixels across.
    package let width: Int
    /// Pixels down.
    package let height: Int
    /// The SOFn marker (0xC0 baseline, 0xC1 extended, 0xC2 progressive, 0xC3 lossless, …).
    package let marker: UInt8
    /// Where its segment (its 0xFF) starts in the bytes given.
    package let offset: Int

    /// True for the processes libjpeg decodes: Huffman-coded baseline, extended
    /// or progressive DCT (SOF0–SOF2); not lossless (SOF3, which raw sensor data
    /// uses) nor arithmetic coding.
    package var isHuffmanDCT: Bool { marker <= 0xC2 }

    /// The first frame header of the JPEG in `bytes` (starting with SOI), before
    /// any scan; nil when there is none within `bytes`, or the segments are malformed.
    package init?(_ bytes: ArraySlice<UInt8>) {
        var index = bytes.startIndex
        guard bytes.count >= 4, bytes[index] == 0xFF, bytes[index + 1] == 0xD8 else { return nil }
        index += 2
        while index + 4 <= bytes.endIndex {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            // Fill bytes before a marker, and markers without a length.
            if marker == 0xFF {
                index += 1
                continue
            }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {
                index += 2
                continue
            }
            guard marker != 0xD9, marker != 0xDA else { return nil }  // an end, or a scan, before any frame header
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2 else { return nil }
            // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard length >= 8, index + 9 <= bytes.endIndex else { return nil }
                let height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
                let width = Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
                guard width > 0, height > 0 else { return nil }
                (self.width, self.height, self.marker, self.offset) = (width, height, marker, index - bytes.startIndex)
                return
            }
            index += 2 + length
        }
        return nil
    }
}
