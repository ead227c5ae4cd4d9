import SystemCalls

/// The size a JPEG's frame header (SOFn) declares, read from the file's markers
/// without decoding: what libvips' header gives for the JPEGs it reads, for the
/// ones only libavcodec reads (12-bit, lossless), whose size libavformat learns
/// only by decoding.
enum JPEGFrameSize {
    /// How far into the file the frame header is looked for (APPn segments, EXIF
    /// and ICC profiles included, come before it).
    static let searchLimit = 1 << 20

    /// Width and height from the first SOFn marker; nil when there is none in
    /// the first ``searchLimit`` bytes, or the file cannot be read.
    static func read(path: String) -> (width: Int, height: Int)? {
        guard let file = try? FileDescriptor.openForReading(path) else { return nil }
        return read(descriptor: file.raw)
    }

    /// The same, from an open descriptor (read with `pread` from offset 0: its
    /// position is left alone).
    static func read(descriptor fd: Int32) -> (width: Int, height: Int)? {
        guard let bytes = try? FileDescriptor(borrowing: fd).read(count: searchLimit, at: 0, path: "the JPEG") else { return nil }
        return parse(bytes[...])
    }

    /// Walks the marker segments from SOI to the first frame header.
    static func parse(_ b: ArraySlice<UInt8>) -> (width: Int, height: Int)? {
        var i = b.startIndex
        guard b.count >= 4, b[i] == 0xFF, b[i + 1] == 0xD8 else { return nil }
        i += 2
        while i + 4 <= b.endIndex {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill byte
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }  // no length
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard length >= 2 else { return nil }
            // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC).
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard i + 9 <= b.endIndex else { return nil }
                let height = Int(b[i + 5]) << 8 | Int(b[i + 6])
                let width = Int(b[i + 7]) << 8 | Int(b[i + 8])
                return (width, height)
            }
            if marker == 0xDA { return nil }  // scan data before any frame header
            i += 2 + length
        }
        return nil
    }
}
