import CShims
import CTIFF
import Glibc
import MediaFormats

/// TIFF through libtiff itself, for the layouts `tiff2vips` rejects: floating-point
/// samples (16-, 32- and 64-bit: "samples out of range", "unsupported tiff image
/// type"), in one plane or one plane per sample, striped. The first page is read
/// scanline by scanline and averaged down to about twice the thumbnail size as it
/// goes, so memory stays small whatever the image's size.
///
/// libavcodec is no fallback here: its TIFF decoder reads half floats as integers.
struct TIFFStep: DecoderStep {
    var library: String { "libtiff" }

    func reads(_ format: MediaFormat) -> Bool { format.id == "tiff" }

    func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        guard let handle = shim_tiff_open_descriptor(descriptor, request.path) else {
            throw MediaError(.unreadable, "\(request.label): out of memory")
        }
        defer { shim_tiff_close(handle) }
        guard let tiff = handle.pointee.tiff else {
            throw MediaError(.unsupported, Self.message(handle, or: "not a TIFF libtiff can open"))
        }
        let layout = try Layout(tiff, label: request.label)
        try PixelLimit(request.pixelLimit).check(layout.width, layout.height, label: request.label)
        let sideways = layout.orientation.rotation % 180 != 0
        let facts = MediaFacts(
            kind: .image, width: sideways ? layout.height : layout.width,
            height: sideways ? layout.width : layout.height,
            frameCount: layout.pages > 1 ? layout.pages : nil)
        guard let spec = request.thumbnail else { return DecodedMedia(facts: facts) }
        do {
            let deadline = spec.timeLimit.map { Deadline(seconds: $0) }
            let picture = try layout.read(
                tiff, fitting: spec.decodeSize * 2, deadline: deadline,
                error: { Self.message(handle, or: "read failed") })
            let thumbnail = try PosterFrame.encode(
                picture, rotation: layout.orientation.rotation, mirrored: layout.orientation.mirrored, spec: spec)
            return DecodedMedia(facts: facts, thumbnail: .made(thumbnail))
        } catch let error as MediaError {
            return DecodedMedia(facts: facts, thumbnail: .failed(error))
        } catch {
            return DecodedMedia(facts: facts, thumbnail: .failed(MediaError(typing: error)))
        }
    }

    static func message(_ handle: UnsafeMutablePointer<shim_tiff>, or fallback: String) -> String {
        let text = withUnsafeBytes(of: handle.pointee.error) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return text.isEmpty ? fallback : text
    }

    /// The first page's layout, from its tags; `unsupported` for what is not read here.
    struct Layout {
        let width: Int
        let height: Int
        let bitsPerSample: Int
        let samplesPerPixel: Int
        /// 1 unsigned integer, 3 IEEE floating point.
        let sampleFormat: Int
        let planar: Bool
        let whiteIsZero: Bool
        let orientation: (rotation: Int, mirrored: Bool)
        let pages: Int

        init(_ tiff: OpaquePointer, label: String) throws(MediaError) {
            var width: UInt32 = 0
            var height: UInt32 = 0
            guard shim_tiff_get_u32(tiff, UInt32(TIFFTAG_IMAGEWIDTH), &width) == 1,
                shim_tiff_get_u32(tiff, UInt32(TIFFTAG_IMAGELENGTH), &height) == 1,
                width > 0, height > 0
            else { throw MediaError(.damaged, "\(label): TIFF without a size") }
            func field(_ tag: Int32) -> Int {
                var value: UInt16 = 0
                return shim_tiff_get_u16(tiff, UInt32(tag), &value) == 1 ? Int(value) : -1
            }
            self.width = Int(width)
            self.height = Int(height)
            bitsPerSample = field(TIFFTAG_BITSPERSAMPLE)
            samplesPerPixel = field(TIFFTAG_SAMPLESPERPIXEL)
            sampleFormat = field(TIFFTAG_SAMPLEFORMAT)
            planar = field(TIFFTAG_PLANARCONFIG) == Int(PLANARCONFIG_SEPARATE)
            let photometric = Int32(field(TIFFTAG_PHOTOMETRIC))
            whiteIsZero = photometric == PHOTOMETRIC_MINISWHITE
            orientation = Self.orientation(field(TIFFTAG_ORIENTATION))
            pages = Int(TIFFNumberOfDirectories(tiff))
            let supported =
                TIFFIsTiled(tiff) == 0
                && (1...4).contains(samplesPerPixel)
                && [PHOTOMETRIC_MINISWHITE, PHOTOMETRIC_MINISBLACK, PHOTOMETRIC_RGB].contains(photometric)
                && (photometric != PHOTOMETRIC_RGB || samplesPerPixel >= 3)
                && ((sampleFormat == Int(SAMPLEFORMAT_UINT) && [8, 16].contains(bitsPerSample))
                    || (sampleFormat == Int(SAMPLEFORMAT_IEEEFP) && [16, 32, 64].contains(bitsPerSample)))
            guard supported else {
                throw MediaError(
                    .unsupported,
                    "\(TIFFIsTiled(tiff) != 0 ? "tiled, " : "")\(samplesPerPixel) samples of \(bitsPerSample) bits, sample format \(sampleFormat), photometric \(photometric): not read here"
                )
            }
        }

        /// TIFF/EXIF orientation (1–8) as a clockwise rotation and a mirror after it.
        static func orientation(_ value: Int) -> (rotation: Int, mirrored: Bool) {
            switch value {
            case 2: (0, true)
            case 3: (180, false)
            case 4: (180, true)
            case 5: (90, true)
            case 6: (90, false)
            case 7: (270, true)
            case 8: (270, false)
            default: (0, false)
            }
        }

        /// Reads every scanline, averaging blocks of pixels so that the longest side
        /// fits `size` (or a little more), and returns 8-bit RGB (grey repeated,
        /// alpha flattened over white). Floating-point samples are shown as stored
        /// (0–1), scaled down when the image holds larger values.
        func read(_ tiff: OpaquePointer, fitting size: Int, deadline: Deadline?, error: () -> String) throws
            -> RGBPicture
        {
            let factor = max(1, (max(width, height) + size - 1) / size)
            let outWidth = (width + factor - 1) / factor
            let outHeight = (height + factor - 1) / factor
            let channels = samplesPerPixel
            var sums = [Double](repeating: 0, count: outWidth * outHeight * channels)
            var counts = [Int32](repeating: 0, count: outWidth * outHeight)
            var largest = 0.0
            let lineBytes = Int(TIFFScanlineSize64(tiff))
            let bytesPerSample = bitsPerSample / 8
            let samplesPerLine = planar ? width : width * channels
            guard lineBytes >= samplesPerLine * bytesPerSample else {
                throw MediaError(.damaged, "scanline of \(lineBytes) bytes is too short")
            }
            let line = UnsafeMutableRawPointer.allocate(byteCount: lineBytes, alignment: 16)
            defer { line.deallocate() }
            let planes = planar ? channels : 1
            for row in 0..<height {
                if row % 64 == 0, deadline?.hasPassed == true {
                    throw MediaError(.timeLimit, "time limit exceeded reading TIFF scanlines")
                }
                let outRow = row / factor
                for plane in 0..<planes {
                    guard TIFFReadScanline(tiff, line, UInt32(row), UInt16(plane)) == 1 else {
                        throw MediaError(.damaged, error())
                    }
                    for x in 0..<width {
                        let cell = outRow * outWidth + x / factor
                        if plane == 0 { counts[cell] += 1 }
                        for c in 0..<(planar ? 1 : channels) {
                            let value = sample(line, index: planar ? x : x * channels + c)
                            if value > largest { largest = value }
                            sums[cell * channels + (planar ? plane : c)] += value
                        }
                    }
                }
            }
            // Integers are already 0–1; floats beyond 1 are scaled by the largest value.
            let scale = sampleFormat == Int(SAMPLEFORMAT_IEEEFP) && largest > 1 ? 1 / largest : 1
            var pixels = [UInt8](repeating: 0, count: outWidth * outHeight * 3)
            for cell in 0..<(outWidth * outHeight) {
                let n = Double(max(1, counts[cell]))
                func value(_ c: Int) -> Double {
                    let v = min(1, max(0, sums[cell * channels + c] / n * scale))
                    return whiteIsZero ? 1 - v : v
                }
                let colour = channels >= 3 ? [value(0), value(1), value(2)] : [value(0), value(0), value(0)]
                let alpha =
                    channels == 2 || channels == 4
                    ? min(1, max(0, sums[cell * channels + channels - 1] / n * scale)) : 1
                for c in 0..<3 {
                    pixels[cell * 3 + c] = UInt8((255 * (colour[c] * alpha + (1 - alpha))).rounded())
                }
            }
            return RGBPicture(pixels: pixels, width: outWidth, height: outHeight)
        }

        /// Sample `index` of a scanline, as a number where integers span 0–1.
        private func sample(_ line: UnsafeMutableRawPointer, index: Int) -> Double {
            switch (Int32(sampleFormat), bitsPerSample) {
            case (SAMPLEFORMAT_UINT, 8): Double(line.load(fromByteOffset: index, as: UInt8.self)) / 255
            case (SAMPLEFORMAT_UINT, 16): Double(line.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)) / 65535
            case (_, 16):
                Self.finite(Double(Float16(bitPattern: line.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self))))
            case (_, 32): Self.finite(Double(line.loadUnaligned(fromByteOffset: index * 4, as: Float.self)))
            default: Self.finite(line.loadUnaligned(fromByteOffset: index * 8, as: Double.self))
            }
        }

        /// NaN and infinities count as 0.
        private static func finite(_ value: Double) -> Double { value.isFinite ? value : 0 }
    }
}
