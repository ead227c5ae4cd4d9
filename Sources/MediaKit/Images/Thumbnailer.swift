import CShims
import CVips
import Glibc
import MediaFormats

extension DamageTolerance {
    var vipsFailOn: VipsFailOn {
        switch self {
        case .none: VIPS_FAIL_ON_NONE
        case .truncated: VIPS_FAIL_ON_TRUNCATED
        case .error: VIPS_FAIL_ON_ERROR
        }
    }
}

/// Makes image thumbnails with libvips' shrink-on-load path (`vips_thumbnail` on
/// the file): JPEG DCT scaling, HEIF/WebP embedded or reduced decodes, PDF pages
/// rendered at the right scale. EXIF orientation is applied, the first frame of
/// an animation is used, and nothing is upscaled.
public enum Thumbnailer {
    /// Thumbnails the image (or first PDF page) at `path`.
    public static func thumbnail(path: String, spec: ThumbnailSpec) throws(VipsError) -> Thumbnail {
        try thumbnail(path: path, spec: spec) { (image) throws(VipsError) in try image.thumbnail(spec: spec) }
    }

    /// The pixels ``thumbnail(path:spec:)`` encodes and hashes, held in memory (for tests).
    static func thumbnailImage(path: String, spec: ThumbnailSpec) throws(VipsError) -> VipsImageHandle {
        try thumbnail(path: path, spec: spec) { (image) throws(VipsError) in try image.inMemory() }
    }

    private static func thumbnail<T>(
        path: String, spec: ThumbnailSpec, finish: (VipsImageHandle) throws(VipsError) -> T
    ) throws(VipsError) -> T {
        let file = try OpenedFile.forVips(path)
        return try withExtendedLifetime(file) { () throws(VipsError) in
            let input = ImageInput.descriptor(file.descriptor)
            let loader = try input.loader()
            let header = loader.hasPrefix(JPEGScale.loader) ? try ImageHeader.read(input, loader: loader) : nil
            return try thumbnail(input, header: header, spec: spec, finish: finish)
        }
    }

    /// Thumbnails the image (or first page) `input` holds. With its `header`, a
    /// JPEG is decoded at the smallest scale that still covers the thumbnail
    /// (``JPEGScale``).
    public static func thumbnail(_ input: ImageInput, header: ImageHeader? = nil, spec: ThumbnailSpec) throws(VipsError)
        -> Thumbnail
    {
        try thumbnail(input, header: header, spec: spec) { (image) throws(VipsError) in try image.thumbnail(spec: spec)
        }
    }

    /// The picture `input` holds, shrunk on load to `spec`'s size and its time
    /// limit set, handed to `finish` (which computes it: a thumbnail's JPEG,
    /// or pixels for a contact sheet, ``PicturePixels``).
    static func thumbnail<T>(
        _ input: ImageInput, header: ImageHeader?, spec: ThumbnailSpec, finish: (VipsImageHandle) throws(VipsError) -> T
    ) throws(VipsError) -> T {
        try Vips.start()
        let jpegShrink = header.flatMap { JPEGScale.shrink(for: $0, size: spec.decodeSize) }
        return try Vips.withExactErrors { () throws(VipsError) in
            try input.withVips { (vips) throws(VipsError) in
                try makeThumbnail(vips, jpegShrink: jpegShrink, spec: spec, finish: finish)
            }
        }
    }

    private static func makeThumbnail<T>(
        _ input: VipsInputPointer, jpegShrink: Int?, spec: ThumbnailSpec,
        finish: (VipsImageHandle) throws(VipsError) -> T
    ) throws(VipsError) -> T {
        let image = try VipsImageHandle.make(jpegShrink == nil ? "vips_thumbnail_source" : "vips_jpegload_source") {
            input.thumbnail($0, size: spec.decodeSize, jpegShrink: jpegShrink, failOn: spec.damageTolerance.vipsFailOn)
        }
        var deadline: Int64?
        if let limit = spec.timeLimit {
            deadline = Int64(g_get_monotonic_time()) + Int64(limit * 1_000_000)
            shim_vips_set_deadline(image.pointer, deadline!)
        }
        do {
            return try finish(image)
        } catch {
            if let deadline, Int64(g_get_monotonic_time()) > deadline { throw error.killed() }
            throw error
        }
    }

    /// Scales an already decoded picture (a video frame) to fit `spec.size`, then
    /// rotates it clockwise, mirrors it left to right when asked (EXIF orientations
    /// 2, 4, 5 and 7), and encodes it.
    public static func thumbnail(of image: VipsImageHandle, rotation: Int, mirrored: Bool = false, spec: ThumbnailSpec)
        throws(VipsError) -> Thumbnail
    {
        var image = image
        let longest = max(image.width, image.height)
        if longest > spec.decodeSize {
            let scale = Double(spec.decodeSize) / Double(longest)
            image = try VipsImageHandle.make("vips_resize") { shim_vips_resize(image.pointer, $0, scale) }
        }
        image = try image.rotated(clockwise: rotation)
        if mirrored {
            image = try VipsImageHandle.make("vips_flip") { shim_vips_flip_horizontal(image.pointer, $0) }
        }
        return try image.thumbnail(spec: spec)
    }
}

/// The scale a JPEG is decoded at for its thumbnail. libjpeg's DCT scaling
/// decodes at 1/2, 1/4 or 1/8 of the stored size for little more than the cost
/// of reading the entropy-coded data; `vips_thumbnail` stops one step short of
/// the smallest (it leaves its lanczos3 reduce a factor of at least 2: 1/4 for a
/// 12 MP photo at 360 px). This takes the smallest scale whose picture still
/// covers the thumbnail: 1/8 for 12 MP, about 20 % less CPU per photo.
///
/// At 1/8 each pixel is its 8x8 block's mean, a softer prefilter than lanczos3.
/// Measured on real phone photos against a thumbnail of the fully decoded
/// picture (BENCHMARKS.md, "JPEG at 1/8"): a mean absolute difference per
/// channel of 0.5–1.6 (1/4: 0.3–0.7), well under what the thumbnail's own JPEG
/// encoding at quality 80 changes (2.7–5.9).
public enum JPEGScale {
    /// The libvips loader class (name prefix) whose images this applies to.
    static let loader = "VipsForeignLoadJpeg"

    /// The factors libjpeg scales by, largest first.
    static let factors = [8, 4, 2]

    /// The largest factor that leaves the longest stored side at least `size`
    /// pixels and the shortest at least one, or nil where none does or `header`
    /// is not a one-picture JPEG (the thumbnail is then `vips_thumbnail`'s).
    /// (libvips 8.14's jpegload rounds a scaled side down, and aborts on a side
    /// of 0: a 7x5000 JPEG at 1/8.)
    public static func shrink(for header: ImageHeader, size: Int) -> Int? {
        guard header.loader.hasPrefix(loader), header.pages == 1, size > 0 else { return nil }
        let longest = max(header.storedWidth, header.storedHeight)
        let shortest = min(header.storedWidth, header.storedHeight)
        return factors.first { longest >= size * $0 && shortest >= $0 }
    }
}
