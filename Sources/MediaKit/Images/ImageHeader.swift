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

    /// The libvips loader that would read the file at `path`
    /// (`vips_foreign_find_load`: each file loader's sniff of the first bytes;
    /// nothing is loaded yet). Decoding asks the same of the open file
    /// (`vips_foreign_find_load_source`, see ``read(_:loader:)``), where loaders
    /// without a source variant (ImageMagick in 8.14) never answer.
    public static func loader(of path: String) throws(VipsError) -> String {
        try Vips.start()
        return try Vips.withExactErrors { () throws(VipsError) in
            guard let name = vips_foreign_find_load(path) else {
                throw VipsError("vips_foreign_find_load", about: path)
            }
            return String(cString: name)
        }
    }

    /// Reads the header of the image at `path` with the loader ``loader(of:)`` named.
    public static func read(path: String, loader: String) throws(VipsError) -> ImageHeader {
        let file = try OpenedFile.forVips(path)
        return try withExtendedLifetime(file) { () throws(VipsError) in
            try read(.descriptor(file.descriptor), loader: loader)
        }
    }

    /// Reads the header of the image `input` holds; `loader` is the class that
    /// libvips chose for it (``ImageInput/loader()``), checked by the caller
    /// before this builds it (building a loader parses the file).
    public static func read(_ input: ImageInput, loader: String) throws(VipsError) -> ImageHeader {
        try Vips.start()
        return try Vips.withExactErrors { () throws(VipsError) in
            try input.withVips { (vips) throws(VipsError) in try readHeader(vips, loader: loader) }
        }
    }

    private static func readHeader(_ input: VipsInputPointer, loader: String) throws(VipsError) -> ImageHeader {
        guard let pointer = input.header() else { throw VipsError("vips_image_new_from_source") }
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
