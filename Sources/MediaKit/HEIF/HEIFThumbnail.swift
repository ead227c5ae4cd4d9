import CShims
import CVips
import MediaFormats

/// The last steps every HEIF decode path shares: a decoded picture (full size or
/// already reduced) gets the item's transforms in `ipma` order (or, when the
/// file has none, its EXIF orientation), is fitted into the thumbnail box with
/// libvips' `vips_resize`, and is encoded. Both the libavcodec and the libheif
/// path end here, so they differ only in how the pixels were decoded.
enum HEIFThumbnail {
    /// `image` shows the item's coded picture at `image.width / sourceWidth` of its
    /// size (`sourceWidth`×`sourceHeight` is the coded or grid output size).
    static func finish(
        _ image: VipsImageHandle, sourceWidth: Int, sourceHeight: Int, transforms: [HEIFTransform],
        exifOrientation: Int?,
        spec: ThumbnailSpec
    ) throws(VipsError) -> Thumbnail {
        var image = try oriented(
            image, sourceWidth: sourceWidth, sourceHeight: sourceHeight, transforms: transforms,
            exifOrientation: exifOrientation)
        let longest = max(image.width, image.height)
        if longest > spec.decodeSize {
            let scale = Double(spec.decodeSize) / Double(longest)
            image = try VipsImageHandle.make("vips_resize") { shim_vips_resize(image.pointer, $0, scale) }
        }
        return try image.thumbnail(spec: spec)
    }

    /// `image` (the item's coded picture at `image.width / sourceWidth` of its
    /// size) with the item's transforms applied in `ipma` order, or, when the
    /// file has none, its EXIF orientation: the picture as displayed.
    static func oriented(
        _ image: VipsImageHandle, sourceWidth: Int, sourceHeight: Int, transforms: [HEIFTransform],
        exifOrientation: Int?
    ) throws(VipsError) -> VipsImageHandle {
        var image = image
        var width = sourceWidth
        var height = sourceHeight
        for transform in transforms {
            switch transform {
            case .rotate(let turns):
                // irot turns anticlockwise; vips_rot turns clockwise.
                image = try image.rotated(clockwise: 360 - 90 * turns)
                if turns % 2 == 1 { swap(&width, &height) }
            case .mirror(let leftRight):
                image = try image.flipped(leftRight: leftRight)
            case .crop(let aperture):
                guard let crop = aperture.crop(width: width, height: height) else {
                    throw VipsError(operation: "clap", message: "the clean aperture is empty")
                }
                // The crop in source pixels, mapped onto the (possibly reduced) picture.
                let sx = Double(image.width) / Double(width)
                let sy = Double(image.height) / Double(height)
                let left = Int((Double(crop.left) * sx).rounded())
                let top = Int((Double(crop.top) * sy).rounded())
                let right = min(image.width, max(left + 1, Int((Double(crop.right + 1) * sx).rounded())))
                let bottom = min(image.height, max(top + 1, Int((Double(crop.bottom + 1) * sy).rounded())))
                image = try image.cropped(left: left, top: top, width: right - left, height: bottom - top)
                width = crop.right - crop.left + 1
                height = crop.bottom - crop.top + 1
            }
        }
        if let orientation = exifOrientation { image = try image.oriented(exif: orientation) }
        return image
    }

    /// The power-of-two reduction to decode at: the largest that keeps the displayed
    /// picture's long side at least twice `size`, that divides `tileWidth` and
    /// `tileHeight` exactly (so tiles meet without seams), and at most 16. Twice,
    /// not once (JPEG shrink-on-load stops at once): libvips' own resize of a full
    /// picture box-shrinks to about twice the size and leaves the rest to lanczos3,
    /// and on real iPhone photos (4032×3024, k = 4 rather than 8) that halves the
    /// difference from libheif's thumbnail (mean absolute difference per channel
    /// 5.7 → 3.7 on the worst of four; 1.1 → 0.9 on the fixtures).
    static func reduction(displayedLongSide: Int, size: Int, tileWidth: Int, tileHeight: Int) -> Int {
        var k = 1
        while k < 16, displayedLongSide / (k * 2) >= 2 * size, tileWidth % (k * 2) == 0, tileHeight % (k * 2) == 0 {
            k *= 2
        }
        return k
    }
}

extension VipsImageHandle {
    /// Mirrors left↔right (`leftRight`) or top↔bottom (`vips_flip`).
    func flipped(leftRight: Bool) throws(VipsError) -> VipsImageHandle {
        try Self.make("vips_flip") {
            shim_vips_flip(pointer, $0, leftRight ? VIPS_DIRECTION_HORIZONTAL : VIPS_DIRECTION_VERTICAL)
        }
    }

    /// The area `width`×`height` at (`left`, `top`) (`vips_extract_area`).
    func cropped(left: Int, top: Int, width: Int, height: Int) throws(VipsError) -> VipsImageHandle {
        try Self.make("vips_extract_area") {
            shim_vips_extract_area(pointer, $0, Int32(left), Int32(top), Int32(width), Int32(height))
        }
    }

    /// Turned upright for an EXIF Orientation (1–8), as `vips_autorot` does.
    func oriented(exif orientation: Int) throws(VipsError) -> VipsImageHandle {
        switch orientation {
        case 2: return try flipped(leftRight: true)
        case 3: return try rotated(clockwise: 180)
        case 4: return try flipped(leftRight: false)
        case 5: return try rotated(clockwise: 270).flipped(leftRight: true)  // transpose
        case 6: return try rotated(clockwise: 90)
        case 7: return try rotated(clockwise: 90).flipped(leftRight: true)  // transverse
        case 8: return try rotated(clockwise: 270)
        default: return self
        }
    }

    /// Wraps packed RGB24 pixels.
    static func fromRGB(_ pixels: [UInt8], width: Int, height: Int) throws(VipsError) -> VipsImageHandle {
        guard
            let image = pixels.withUnsafeBytes({
                vips_image_new_from_memory_copy(
                    $0.baseAddress, width * height * 3, Int32(width), Int32(height), 3, VIPS_FORMAT_UCHAR)
            })
        else { throw VipsError("vips_image_new_from_memory_copy") }
        // The header field itself: vips_image_set_int cannot change a built-in field.
        image.pointee.Type = VIPS_INTERPRETATION_sRGB
        return VipsImageHandle(image)
    }

    /// Wraps packed 8-bit pixels of `bands` bands (3 RGB, 4 RGBA), rows `stride` bytes apart.
    static func fromPixels(_ base: UnsafeRawPointer, width: Int, height: Int, bands: Int, stride: Int) throws(VipsError)
        -> VipsImageHandle
    {
        let row = width * bands
        let packed: UnsafeMutablePointer<VipsImage>?
        if stride == row {
            packed = vips_image_new_from_memory_copy(
                base, row * height, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
        } else {
            var buffer = [UInt8](repeating: 0, count: row * height)
            buffer.withUnsafeMutableBytes { out in
                for y in 0..<height { (out.baseAddress! + y * row).copyMemory(from: base + y * stride, byteCount: row) }
            }
            packed = buffer.withUnsafeBytes {
                vips_image_new_from_memory_copy(
                    $0.baseAddress, row * height, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
            }
        }
        guard let packed else { throw VipsError("vips_image_new_from_memory_copy") }
        // sRGB (not the MULTIBAND default), so a fourth band counts as alpha.
        packed.pointee.Type = VIPS_INTERPRETATION_sRGB
        return VipsImageHandle(packed)
    }
}
