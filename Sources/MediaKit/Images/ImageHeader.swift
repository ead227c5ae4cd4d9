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

    /// Reads the header of the image at `path`.
    public static func read(path: String) throws(VipsError) -> ImageHeader {
        let file = try OpenedFile.forVips(path)
        return try withExtendedLifetime(file) { () throws(VipsError) in try read(.descriptor(file.descriptor)) }
    }

    /// Reads the header of the image `input` holds.
    public static func read(_ input: ImageInput) throws(VipsError) -> ImageHeader {
        try Vips.start()
        return try Vips.withExactErrors { () throws(VipsError) in
            try input.withVips { (vips) throws(VipsError) in try readHeader(vips) }
        }
    }

    private static func readHeader(_ input: VipsInputPointer) throws(VipsError) -> ImageHeader {
        guard let loader = input.loaderName() else { throw VipsError("vips_foreign_find_load_source") }
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
