import CShims
import CVips
import Glibc

/// How much damage a loader tolerates (libvips' `fail_on`).
public enum DamageTolerance: String, Sendable, Codable, CaseIterable {
    /// Partial images of truncated files are thumbnailed.
    case none
    /// A truncated file is an error.
    case truncated
    /// Any decoder error is an error.
    case error

    var vipsFailOn: VipsFailOn {
        switch self {
        case .none: VIPS_FAIL_ON_NONE
        case .truncated: VIPS_FAIL_ON_TRUNCATED
        case .error: VIPS_FAIL_ON_ERROR
        }
    }
}

/// A thumbnail's settings, as a pipeline sets them.
public struct ThumbnailSpec: Sendable, Hashable {
    /// The longest side of the thumbnail, in pixels.
    public var size: Int
    /// JPEG quality, 1–100.
    public var quality: Int
    public var damageTolerance: DamageTolerance
    /// Decoding is abandoned after this many seconds (`vips_image_set_kill`).
    public var timeLimit: Double?

    public init(size: Int = 360, quality: Int = 80, damageTolerance: DamageTolerance = .truncated, timeLimit: Double? = 30) {
        self.size = size
        self.quality = quality
        self.damageTolerance = damageTolerance
        self.timeLimit = timeLimit
    }
}

/// An encoded thumbnail and its size.
public struct Thumbnail: Sendable {
    /// JPEG bytes.
    public let jpeg: [UInt8]
    public let width: Int
    public let height: Int
}

/// Makes image thumbnails with libvips' shrink-on-load path (`vips_thumbnail` on
/// the file): JPEG DCT scaling, HEIF/WebP embedded or reduced decodes, PDF pages
/// rendered at the right scale. EXIF orientation is applied, the first frame of
/// an animation is used, and nothing is upscaled.
public enum Thumbnailer {
    /// Thumbnails the image (or first PDF page) at `path`.
    public static func thumbnail(path: String, spec: ThumbnailSpec) throws(VipsError) -> Thumbnail {
        try Vips.start()
        let image = try VipsImageHandle.make("vips_thumbnail", about: path) {
            shim_vips_thumbnail(path, $0, Int32(spec.size), Int32(spec.size), spec.damageTolerance.vipsFailOn)
        }
        if let limit = spec.timeLimit {
            shim_vips_set_deadline(image.pointer, Int64(g_get_monotonic_time()) + Int64(limit * 1_000_000))
        }
        let jpeg = try image.jpegData(quality: spec.quality, about: path)
        return Thumbnail(jpeg: jpeg, width: image.width, height: image.height)
    }

    /// Scales an already decoded picture (a video frame) to fit `spec.size`, then
    /// rotates it clockwise and encodes it.
    public static func thumbnail(of image: VipsImageHandle, rotation: Int, spec: ThumbnailSpec) throws(VipsError) -> Thumbnail {
        var image = image
        let longest = max(image.width, image.height)
        if longest > spec.size {
            let scale = Double(spec.size) / Double(longest)
            image = try VipsImageHandle.make("vips_resize") { shim_vips_resize(image.pointer, $0, scale) }
        }
        image = try image.rotated(clockwise: rotation)
        let jpeg = try image.jpegData(quality: spec.quality)
        return Thumbnail(jpeg: jpeg, width: image.width, height: image.height)
    }
}
