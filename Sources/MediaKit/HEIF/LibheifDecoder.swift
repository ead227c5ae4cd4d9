import CHeif
import CVips
import MediaFormats

/// HEIF and AVIF through libheif's C API (libde265 for HEVC, dav1d/aom for AV1):
/// the fallback for what the libavcodec path does not take — AV1, 10-bit, alpha,
/// odd grids, files our parser refuses — and the reference the libavcodec path's
/// thumbnails are compared with. libheif applies `irot`, `imir` and `clap` itself
/// (libvips 8.14's heifload refuses some of these files: "bad image dimensions").
/// The file's bytes must outlive the decoder.
final class LibheifDecoder {
    private var context: OpaquePointer?
    private var handle: OpaquePointer?

    /// A libheif failure, with its error code class.
    struct Failure: Error, CustomStringConvertible {
        let code: heif_error_code
        let message: String
        var description: String { message }

        /// `unsupported` for a variant libheif cannot decode, `damaged` otherwise.
        var kind: MediaError.Kind {
            switch code {
            case heif_error_Unsupported_filetype, heif_error_Unsupported_feature, heif_error_Plugin_loading_error:
                .unsupported
            case heif_error_Memory_allocation_error: .memoryLimit
            default: .damaged
            }
        }
    }

    /// `heif_init` (libheif ≥ 1.13 asks for it before any other call; it runs the
    /// decoder plugins' own set-up, libde265's among them), once per process,
    /// under Swift's once-only initialisation of a static.
    private static let initialised: Bool = heif_init(nil).code == heif_error_Ok

    /// Initialises libheif once per process; idempotent.
    static func start() { _ = initialised }

    /// Opens the file in `bytes` (its primary image, or the top-level image `item`); `threads` is libheif's grid tile threads.
    init(bytes: UnsafeRawBufferPointer, threads: Int, item: HEIFItemID? = nil) throws(Failure) {
        Self.start()
        context = heif_context_alloc()
        guard let context else {
            throw Failure(code: heif_error_Memory_allocation_error, message: "heif_context_alloc failed")
        }
        heif_context_set_max_decoding_threads(context, Int32(max(0, threads)))
        try Self.check(heif_context_read_from_memory_without_copy(context, bytes.baseAddress, bytes.count, nil))
        if let item {
            try Self.check(heif_context_get_image_handle(context, heif_item_id(item), &handle))
        } else {
            try Self.check(heif_context_get_primary_image_handle(context, &handle))
        }
    }

    deinit {
        if let handle { heif_image_handle_release(handle) }
        if let context { heif_context_free(context) }
    }

    /// The displayed size of the primary image of the file in `bytes`.
    static func size(of bytes: [UInt8]) throws(Failure) -> (width: Int, height: Int) {
        let result: Result<(width: Int, height: Int), Failure> = bytes.withUnsafeBytes { buffer in
            do throws(Failure) {
                return .success(try LibheifDecoder(bytes: buffer, threads: 0).size)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Displayed size (after libheif's transforms).
    var size: (width: Int, height: Int) {
        guard let handle else { return (0, 0) }
        return (Int(heif_image_handle_get_width(handle)), Int(heif_image_handle_get_height(handle)))
    }

    /// Decodes the primary image, transforms applied, as 8-bit RGB (RGBA with
    /// alpha). A picture that is HDR or wider than sRGB (its `nclx` colour: PQ,
    /// HLG, BT.2020, P3) is decoded at its own bit depth, shrunk to fit
    /// `targetSize` and converted to SDR sRGB there (``ToneMapper``), with its
    /// content light level and mastering display when the file has them.
    func decode(targetSize: Int) throws(MediaError) -> VipsImageHandle {
        guard let handle else { throw MediaError(.damaged, "no primary image") }
        let alpha = heif_image_handle_has_alpha_channel(handle) != 0
        let bits = Int(heif_image_handle_get_luma_bits_per_pixel(handle))
        let stated = colour
        let deep = stated?.needsConversion == true && !alpha && bits > 8
        let options = heif_decoding_options_alloc()
        defer { heif_decoding_options_free(options) }
        options?.pointee.convert_hdr_to_8bit = deep ? 0 : 1
        let chroma =
            deep
            ? heif_chroma_interleaved_RRGGBB_LE : alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB
        var image: OpaquePointer?
        do {
            try Self.check(heif_decode_image(handle, &image, heif_colorspace_RGB, chroma, options))
        } catch {
            throw MediaError(error.kind, "libheif: \(error)")
        }
        guard let image else { throw MediaError(.damaged, "libheif: no image") }
        defer { heif_image_release(image) }
        var stride: Int32 = 0
        let width = Int(heif_image_get_width(image, heif_channel_interleaved))
        let height = Int(heif_image_get_height(image, heif_channel_interleaved))
        let range = Int(heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved))
        guard width > 0, height > 0,
            let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride),
            range == (deep ? bits : 8)
        else { throw MediaError(.unsupported, "libheif gave no \(deep ? bits : 8)-bit RGB picture") }
        do {
            guard var colour = stated, colour.needsConversion, !alpha else {
                let picture = try VipsImageHandle.fromPixels(
                    plane, width: width, height: height, bands: alpha ? 4 : 3, stride: Int(stride))
                return iccProfile.map { picture.tagged(iccProfile: $0) } ?? picture
            }
            if heif_image_has_content_light_level(image) != 0 {
                var light = heif_content_light_level()
                heif_image_get_content_light_level(image, &light)
                if light.max_content_light_level > 0 { colour.maxContentLight = Double(light.max_content_light_level) }
            }
            if heif_image_has_mastering_display_colour_volume(image) != 0 {
                var coded = heif_mastering_display_colour_volume()
                var decoded = heif_decoded_mastering_display_colour_volume()
                heif_image_get_mastering_display_colour_volume(image, &coded)
                if heif_mastering_display_colour_volume_decode(&coded, &decoded).code == heif_error_Ok,
                    decoded.max_display_mastering_luminance > 0
                {
                    colour.masteringPeak = Double(decoded.max_display_mastering_luminance)
                }
            }
            return try ColourConversion.convert(
                plane, width: width, height: height, stride: Int(stride), bitsPerSample: deep ? bits : 8,
                colour: colour, targetSize: targetSize)
        } catch {
            throw MediaError(.memoryLimit, "\(error)")
        }
    }

    /// The primary image's ICC profile (a `prof` or `rICC` colour box), nil when
    /// it has none or one larger than ``ICCProfile/largestSize``.
    var iccProfile: [UInt8]? {
        guard let handle else { return nil }
        let type = heif_image_handle_get_color_profile_type(handle)
        guard type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC else { return nil }
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        guard size > 0, size <= ICCProfile.largestSize else { return nil }
        var profile = [UInt8](repeating: 0, count: size)
        let error = profile.withUnsafeMutableBytes { heif_image_handle_get_raw_color_profile(handle, $0.baseAddress) }
        return error.code == heif_error_Ok ? profile : nil
    }

    /// The colour the primary image's `nclx` box states (nil for an ICC profile or none).
    var colour: ColourDescription? {
        guard let handle else { return nil }
        var profile: UnsafeMutablePointer<heif_color_profile_nclx>?
        guard heif_image_handle_get_nclx_color_profile(handle, &profile).code == heif_error_Ok, let profile else {
            return nil
        }
        defer { heif_nclx_color_profile_free(profile) }
        return ColourDescription(
            transferCode: Int(profile.pointee.transfer_characteristics.rawValue),
            primariesCode: Int(profile.pointee.color_primaries.rawValue))
    }

    private static func check(_ error: heif_error) throws(Failure) {
        guard error.code != heif_error_Ok else { return }
        let message = error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"
        throw Failure(code: error.code, message: message)
    }
}
