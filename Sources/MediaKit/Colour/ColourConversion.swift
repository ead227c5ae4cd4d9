import CShims
import CVips

/// A decoded still picture in some ``ColourDescription`` to SDR sRGB: shrunk
/// first (libvips' `vips_resize`, at its own bit depth) to fit the thumbnail,
/// then converted by ``ToneMapper`` at that size.
enum ColourConversion {
    /// `width`×`height` interleaved RGB samples at `base`, `stride` bytes per row,
    /// 8 bits per sample or 16-bit little-endian words holding `bitsPerSample`
    /// bits; returns an 8-bit sRGB image that fits `targetSize`.
    static func convert(
        _ base: UnsafeRawPointer, width: Int, height: Int, stride: Int, bitsPerSample: Int, colour: ColourDescription,
        targetSize: Int
    ) throws(VipsError) -> VipsImageHandle {
        try Vips.start()
        let wide = bitsPerSample > 8
        let bytesPerSample = wide ? 2 : 1
        let row = width * 3 * bytesPerSample
        // libvips wants packed rows: rows are copied only when they are not.
        guard stride != row else {
            return try shrinkAndConvert(
                base, width: width, height: height, bitsPerSample: bitsPerSample, colour: colour, targetSize: targetSize
            )
        }
        let packed = [UInt8](unsafeUninitializedCapacity: row * height) { buffer, count in
            for y in 0..<height {
                UnsafeMutableRawPointer(buffer.baseAddress! + y * row).copyMemory(
                    from: base + y * stride, byteCount: row)
            }
            count = row * height
        }
        let result: Result<VipsImageHandle, VipsError> = packed.withUnsafeBytes { copy in
            do throws(VipsError) {
                return .success(
                    try shrinkAndConvert(
                        copy.baseAddress!, width: width, height: height, bitsPerSample: bitsPerSample, colour: colour,
                        targetSize: targetSize))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Packed rows at `source` (not copied: the image is shrunk and written out
    /// before this returns, while they exist), shrunk, then converted.
    private static func shrinkAndConvert(
        _ source: UnsafeRawPointer, width: Int, height: Int, bitsPerSample: Int, colour: ColourDescription,
        targetSize: Int
    ) throws(VipsError) -> VipsImageHandle {
        let wide = bitsPerSample > 8
        let bytesPerSample = wide ? 2 : 1
        guard
            let wrapped = vips_image_new_from_memory(
                source, width * 3 * bytesPerSample * height, Int32(width), Int32(height), 3,
                wide ? VIPS_FORMAT_USHORT : VIPS_FORMAT_UCHAR)
        else { throw VipsError("vips_image_new_from_memory") }
        var image = VipsImageHandle(wrapped)
        image.pointer.pointee.Type = wide ? VIPS_INTERPRETATION_RGB16 : VIPS_INTERPRETATION_sRGB
        let longest = max(width, height)
        if longest > targetSize {
            let scale = Double(targetSize) / Double(longest)
            image = try VipsImageHandle.make("vips_resize") { shim_vips_resize(image.pointer, $0, scale) }
        }
        var size = 0
        guard let memory = vips_image_write_to_memory(image.pointer, &size) else {
            throw VipsError("vips_image_write_to_memory")
        }
        defer { g_free(memory) }
        let w = image.width
        let h = image.height
        let count = w * h * 3
        guard size >= count * bytesPerSample else {
            throw VipsError("vips_image_write_to_memory", message: "short image")
        }
        // As full-scale 16-bit words: `bitsPerSample` bits widened by repeating
        // their top bits (1023 → 65535), 8-bit samples by repeating the byte.
        let shift = max(0, 16 - bitsPerSample)
        let samples = [UInt16](unsafeUninitializedCapacity: count) { buffer, filled in
            if wide {
                let words = memory.assumingMemoryBound(to: UInt16.self)
                for i in 0..<count {
                    let v = Int(UInt16(littleEndian: words[i]))
                    buffer[i] = UInt16(
                        truncatingIfNeeded: shift == 0 ? v : v << shift | v >> max(0, bitsPerSample - shift))
                }
            } else {
                let bytes = memory.assumingMemoryBound(to: UInt8.self)
                for i in 0..<count { buffer[i] = UInt16(bytes[i]) << 8 | UInt16(bytes[i]) }
            }
            filled = count
        }
        let rgb = samples.withUnsafeBufferPointer { ToneMapper(colour).convert($0, width: w, height: h, stride: w * 3) }
        return try VipsImageHandle.fromRGB(rgb, width: w, height: h)
    }
}
