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
        try Vips.start()
        return try Vips.withExactErrors { () throws(VipsError) in try makeThumbnail(path: path, spec: spec) }
    }

    private static func makeThumbnail(path: String, spec: ThumbnailSpec) throws(VipsError) -> Thumbnail {
        let image = try VipsImageHandle.make("vips_thumbnail", about: path) {
            shim_vips_thumbnail(path, $0, Int32(spec.size), Int32(spec.size), spec.damageTolerance.vipsFailOn)
        }
        var deadline: Int64?
        if let limit = spec.timeLimit {
            deadline = Int64(g_get_monotonic_time()) + Int64(limit * 1_000_000)
            shim_vips_set_deadline(image.pointer, deadline!)
        }
        do {
            let jpeg = try image.jpegData(quality: spec.quality, about: path)
            return Thumbnail(jpeg: jpeg, width: image.width, height: image.height)
        } catch {
            if let deadline, Int64(g_get_monotonic_time()) > deadline { throw error.killed() }
            throw error
        }
    }

    /// Scales an already decoded picture (a video frame) to fit `spec.size`, then
    /// rotates it clockwise, mirrors it left to right when asked (EXIF orientations
    /// 2, 4, 5 and 7), and encodes it.
    public static func thumbnail(of image: VipsImageHandle, rotation: Int, mirrored: Bool = false, spec: ThumbnailSpec) throws(VipsError) -> Thumbnail {
        var image = image
        let longest = max(image.width, image.height)
        if longest > spec.size {
            let scale = Double(spec.size) / Double(longest)
            image = try VipsImageHandle.make("vips_resize") { shim_vips_resize(image.pointer, $0, scale) }
        }
        image = try image.rotated(clockwise: rotation)
        if mirrored {
            image = try VipsImageHandle.make("vips_flip") { shim_vips_flip_horizontal(image.pointer, $0) }
        }
        let jpeg = try image.jpegData(quality: spec.quality)
        return Thumbnail(jpeg: jpeg, width: image.width, height: image.height)
    }
}
