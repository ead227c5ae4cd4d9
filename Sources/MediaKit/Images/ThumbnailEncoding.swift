import CShims
import CVips
import MediaFormats

extension VipsImageHandle {
    /// This picture as a thumbnail: its pixels computed once (held in memory),
    /// encoded as JPEG, and hashed (``ThumbHash``, and ``PerceptualHash`` for
    /// finding near-duplicates) from those same pixels, alpha included where the
    /// picture has it (the JPEG flattens it over white). A picture whose pixels
    /// cannot be hashed still gets its JPEG, without a hash.
    public func thumbnail(quality: Int, about path: String? = nil) throws(VipsError) -> Thumbnail {
        let image = try inMemory()
        let jpeg = try image.jpegData(quality: quality, about: path)
        let pixels = try? image.rgbaPixels()
        let fitted = pixels.flatMap {
            AreaAverage.fitting(width: $0.width, height: $0.height, rgba: $0.rgba, longestSide: ThumbHash.maximumSide)
        }
        let hash = fitted.flatMap { ThumbHash.encode(width: $0.width, height: $0.height, rgba: $0.rgba) }
        var made = Thumbnail(jpeg: jpeg, width: image.width, height: image.height, thumbHash: hash)
        made.perceptualHash = pixels.flatMap { PerceptualHash.hash(width: $0.width, height: $0.height, rgba: $0.rgba) }
        if made.perceptualHash != nil {
            made.colourCells = pixels.flatMap {
                PerceptualHash.colourCells(width: $0.width, height: $0.height, rgba: $0.rgba)
            }
        }
        return made
    }

    /// What ``thumbnail(quality:about:)`` hashes: the picture in 8-bit sRGB as
    /// RGBA rows (opaque where it has no alpha; grey repeated into red, green and
    /// blue), scaled to fit 100×100 by area averaging (``AreaAverage``, never
    /// enlarged) as the reference's example scales it to fit.
    func thumbHashInput() throws(VipsError) -> (width: Int, height: Int, rgba: [UInt8]) {
        let (width, height, rgba) = try rgbaPixels()
        guard
            let fitted = AreaAverage.fitting(
                width: width, height: height, rgba: rgba, longestSide: ThumbHash.maximumSide)
        else {
            throw VipsError("thumbhash", message: "a \(width)×\(height) picture")
        }
        return fitted
    }

    /// The picture in 8-bit sRGB as RGBA rows, at its own size (opaque where it
    /// has no alpha; grey repeated into red, green and blue).
    func rgbaPixels() throws(VipsError) -> (width: Int, height: Int, rgba: [UInt8]) {
        let image = try inSRGB8()
        let width = image.width
        let height = image.height
        let bands = image.bands
        guard width > 0, height > 0, (1...4).contains(bands), width * height <= 4096 * 4096 else {
            throw VipsError("thumbhash", message: "a \(width)×\(height) picture of \(bands) bands")
        }
        var size = 0
        guard let memory = vips_image_write_to_memory(image.pointer, &size) else {
            throw VipsError("vips_image_write_to_memory")
        }
        defer { g_free(memory) }
        let count = width * height
        guard size >= count * bands else { throw VipsError("vips_image_write_to_memory", message: "short image") }
        let samples = UnsafeRawBufferPointer(start: memory, count: count * bands)
        var rgba = [UInt8](repeating: 255, count: count * 4)
        rgba.withUnsafeMutableBufferPointer { rgba in
            for i in 0..<count {
                let pixel = i * bands
                switch bands {
                case 1, 2:
                    rgba[4 * i] = samples[pixel]
                    rgba[4 * i + 1] = samples[pixel]
                    rgba[4 * i + 2] = samples[pixel]
                    if bands == 2 { rgba[4 * i + 3] = samples[pixel + 1] }
                default:
                    rgba[4 * i] = samples[pixel]
                    rgba[4 * i + 1] = samples[pixel + 1]
                    rgba[4 * i + 2] = samples[pixel + 2]
                    if bands == 4 { rgba[4 * i + 3] = samples[pixel + 3] }
                }
            }
        }
        return (width, height, rgba)
    }
}
