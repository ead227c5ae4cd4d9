import MediaFormats
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
        guard let bytes = try? FileDescriptor(borrowing: fd).read(count: searchLimit, at: 0, path: "the JPEG") else {
            return nil
        }
        return parse(bytes[...])
    }

    /// The size in the first frame header (see ``JPEGFrameHeader``).
    static func parse(_ bytes: ArraySlice<UInt8>) -> (width: Int, height: Int)? {
        JPEGFrameHeader(bytes).map { ($0.width, $0.height) }
    }
}
