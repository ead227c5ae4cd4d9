import CShims
import CVips
import Glibc
import MediaFormats
import SystemCalls

/// A JPEG's own EXIF thumbnail (IFD1), used instead of decoding the photo when it
/// is at least as large as the thumbnail wanted and has the photo's shape: most
/// cameras and phones store 160×120 (some 320×240), smaller than the 360 px the
/// pipeline asks for, so this rarely applies (see BENCHMARKS.md for how often),
/// but when it does it skips the entropy decoding of a 12 MP photo.
enum EmbeddedJPEGThumbnail {
    /// Bytes read from the start of the file: the EXIF APP1 segment is at most 64 KiB.
    static let headLength = 65_600

    /// The thumbnail from the EXIF thumbnail of the JPEG behind `descriptor` (read
    /// with `pread` from its start), or nil when it has none that fits.
    /// `storedWidth`×`storedHeight` is the photo's coded size; `orientation` its EXIF Orientation.
    static func thumbnail(descriptor: Int32, storedWidth: Int, storedHeight: Int, orientation: Int, spec: ThumbnailSpec)
        -> Thumbnail?
    {
        guard let head = readHead(descriptor), let info = EXIF.jpeg(head), let range = info.thumbnail,
            range.upperBound <= head.count, let size = EXIF.jpegSize(head[range])
        else { return nil }
        guard isUsable(thumbnail: size, storedWidth: storedWidth, storedHeight: storedHeight, size: spec.decodeSize)
        else { return nil }
        let bytes = Array(head[range])
        do {
            try Vips.start()
            return try Vips.withExactErrors { () throws(VipsError) -> Thumbnail in
                var image = try VipsImageHandle.make("vips_thumbnail_buffer") {
                    shim_vips_thumbnail_buffer(
                        bytes, bytes.count, $0, Int32(spec.decodeSize), Int32(spec.decodeSize), VIPS_FAIL_ON_ERROR)
                }
                image = try image.oriented(exif: orientation)
                return try image.thumbnail(spec: spec)
            }
        } catch {
            return nil  // a broken embedded thumbnail: decode the photo instead
        }
    }

    /// True when a `thumbnail`-sized EXIF thumbnail can stand for a photo of
    /// `storedWidth`×`storedHeight`: its long side is at least the thumbnail's (or
    /// the photo's, for a photo smaller than that), and its shape is the photo's
    /// within 1 % (a 4:3 thumbnail of a 16:9 photo has black bars).
    static func isUsable(thumbnail: (width: Int, height: Int), storedWidth: Int, storedHeight: Int, size: Int) -> Bool {
        guard thumbnail.width > 0, thumbnail.height > 0, storedWidth > 0, storedHeight > 0 else { return false }
        let needed = min(size, max(storedWidth, storedHeight))
        guard max(thumbnail.width, thumbnail.height) >= needed else { return false }
        let aspect = Double(thumbnail.width) / Double(thumbnail.height) / (Double(storedWidth) / Double(storedHeight))
        return abs(aspect - 1) <= 0.01
    }

    private static func readHead(_ fd: Int32) -> [UInt8]? {
        try? FileDescriptor(borrowing: fd).read(count: headLength, at: 0, path: "the file")
    }
}
