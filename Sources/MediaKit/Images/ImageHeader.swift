import CShims
import CVips

/// What an image file's header says, read without decoding pixels
/// (`vips_image_new_from_file` with sequential access is lazy).
public struct ImageHeader: Sendable, Hashable {
    /// Size as stored in the file.
    public let storedWidth: Int
    public let storedHeight: Int
    /// EXIF orientation (1–8), 1 when absent.
    public let orientation: Int
    /// Pages or animation frames (1 for a still image).
    public let pages: Int
    /// The libvips loader that claimed the file, e.g. `VipsForeignLoadJpegFile`.
    public let loader: String

    /// Size as displayed, after EXIF orientation: orientations 5–8 swap the sides.
    public var width: Int { orientation >= 5 ? storedHeight : storedWidth }
    public var height: Int { orientation >= 5 ? storedWidth : storedHeight }
    public var pixelCount: Int { storedWidth * storedHeight }

    /// The libvips loader that would read `path` (`vips_foreign_find_load`: each
    /// loader's sniff of the first bytes; nothing is loaded yet). Check it before
    /// ``read(path:loader:)``: building a loader parses the file.
    public static func loader(of path: String) throws(VipsError) -> String {
        try Vips.start()
        return try Vips.withExactErrors { () throws(VipsError) in
            guard let name = vips_foreign_find_load(path) else { throw VipsError("vips_foreign_find_load", about: path) }
            return String(cString: name)
        }
    }

    /// Reads the header of the image at `path` with the loader ``loader(of:)`` named.
    public static func read(path: String, loader: String) throws(VipsError) -> ImageHeader {
        try Vips.start()
        return try Vips.withExactErrors { () throws(VipsError) in try readHeader(path: path, loader: loader) }
    }

    private static func readHeader(path: String, loader: String) throws(VipsError) -> ImageHeader {
        guard let pointer = shim_vips_image_header(path) else { throw VipsError("vips_image_new_from_file", about: path) }
        let image = VipsImageHandle(pointer)
        let orientation = image.integer("orientation").flatMap { (1...8).contains($0) ? $0 : nil } ?? 1
        // Animated images report the height of one frame in `page-height`.
        let pages = max(1, image.integer("n-pages") ?? 1)
        let pageHeight = image.integer("page-height").flatMap { $0 > 0 ? $0 : nil } ?? image.height
        return ImageHeader(
            storedWidth: image.width, storedHeight: pages > 1 ? pageHeight : image.height,
            orientation: orientation, pages: pages, loader: loader)
    }
}
