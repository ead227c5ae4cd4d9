import CShims
import CVips
import MediaFormats

extension Thumbnailer {
    /// The image (or first page) at `path` at each of `sizes` (longest side;
    /// never enlarged), encoded as `format`, smallest first, from ONE decode:
    /// shrink-on-load to the largest size (``thumbnail(path:spec:)``'s path,
    /// JPEG DCT scaling included), held in memory, and every smaller size
    /// downscaled from that picture (`vips_resize`), never from the file again.
    public static func pictures(path: String, spec: ThumbnailSpec, sizes: [Int], format: PreviewFormat)
        throws(VipsError) -> [EncodedPicture]
    {
        let wanted = Array(Set(sizes.filter { $0 > 0 })).sorted()
        guard let largest = wanted.last else { return [] }
        var decodeSpec = spec
        decodeSpec.size = largest
        var decoded = try thumbnailImage(path: path, spec: decodeSpec)
        if spec.convertsToSRGB { decoded = try decoded.inSRGBColours().inMemory() }
        return try Vips.withExactErrors { () throws(VipsError) in
            try wanted.map { (size) throws(VipsError) in
                try decoded.scaled(toFit: size).encoded(as: format, quality: spec.quality)
            }
        }
    }
}

extension VipsImageHandle {
    /// The thumbnail `spec` asks for, made from this picture (decoded at
    /// ``ThumbnailSpec/decodeSize``): without previews exactly
    /// ``thumbnail(quality:about:)``, in sRGB's colours unless `spec` keeps its
    /// ICC profile's (``inSRGBColours()``, converted once, before any scaling
    /// from it); with previews the picture is held in memory
    /// once, the thumbnail (JPEG, ThumbHash) scaled from it to `spec.size`, and
    /// each preview scaled from it to its size and encoded as asked.
    public func thumbnail(spec: ThumbnailSpec, about path: String? = nil) throws(VipsError) -> Thumbnail {
        let picture = spec.convertsToSRGB ? inSRGBColours() : self
        guard let previews = spec.previews, !previews.sizes.isEmpty else {
            return try picture.thumbnail(quality: spec.quality, about: path)
        }
        let image = try picture.inMemory()
        var made = try image.scaled(toFit: spec.size).thumbnail(quality: spec.quality, about: path)
        made.previews = try previews.sizes.map { (size) throws(VipsError) in
            try image.scaled(toFit: size).encoded(as: previews.format, quality: spec.quality)
        }
        return made
    }

    /// This picture with its longest side at most `size` (itself when it already fits).
    func scaled(toFit size: Int) throws(VipsError) -> VipsImageHandle {
        let longest = max(width, height)
        guard longest > size else { return self }
        let scale = Double(size) / Double(longest)
        return try Self.make("vips_resize") { shim_vips_resize(pointer, $0, scale) }
    }

    /// Encoded as `format` (JPEG: ``jpegData(quality:about:)``; WebP: sRGB,
    /// 8-bit, alpha kept).
    func encoded(as format: PreviewFormat, quality: Int) throws(VipsError) -> EncodedPicture {
        switch format {
        case .jpeg:
            return EncodedPicture(bytes: try jpegData(quality: quality), width: width, height: height, format: .jpeg)
        case .webp:
            let image = try inSRGB8()
            var buffer: UnsafeMutableRawPointer?
            var length = 0
            guard shim_vips_webpsave_buffer(image.pointer, &buffer, &length, Int32(quality)) == 0, let buffer else {
                throw VipsError("vips_webpsave_buffer")
            }
            defer { g_free(buffer) }
            return EncodedPicture(
                bytes: Array(UnsafeRawBufferPointer(start: buffer, count: length)), width: image.width,
                height: image.height, format: .webp)
        }
    }
}
