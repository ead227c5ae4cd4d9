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
            case heif_error_Unsupported_filetype, heif_error_Unsupported_feature, heif_error_Plugin_loading_error: .unsupported
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

    /// Opens the file in `bytes` (its primary image); `threads` is libheif's grid tile threads.
    init(bytes: UnsafeRawBufferPointer, threads: Int) throws(Failure) {
        Self.start()
        context = heif_context_alloc()
        guard let context else { throw Failure(code: heif_error_Memory_allocation_error, message: "heif_context_alloc failed") }
        heif_context_set_max_decoding_threads(context, Int32(max(0, threads)))
        try Self.check(heif_context_read_from_memory_without_copy(context, bytes.baseAddress, bytes.count, nil))
        try Self.check(heif_context_get_primary_image_handle(context, &handle))
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

    /// Decodes the primary image, transforms applied, as 8-bit RGB (RGBA with alpha).
    func decode() throws(MediaError) -> VipsImageHandle {
        guard let handle else { throw MediaError(.damaged, "no primary image") }
        let alpha = heif_image_handle_has_alpha_channel(handle) != 0
        let options = heif_decoding_options_alloc()
        defer { heif_decoding_options_free(options) }
        options?.pointee.convert_hdr_to_8bit = 1
        var image: OpaquePointer?
        do {
            try Self.check(heif_decode_image(handle, &image, heif_colorspace_RGB, alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, options))
        } catch {
            throw MediaError(error.kind, "libheif: \(error)")
        }
        guard let image else { throw MediaError(.damaged, "libheif: no image") }
        defer { heif_image_release(image) }
        var stride: Int32 = 0
        let width = Int(heif_image_get_width(image, heif_channel_interleaved)), height = Int(heif_image_get_height(image, heif_channel_interleaved))
        guard width > 0, height > 0, let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride),
            heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved) == 8
        else { throw MediaError(.unsupported, "libheif gave no 8-bit RGB picture") }
        do {
            return try VipsImageHandle.fromPixels(plane, width: width, height: height, bands: alpha ? 4 : 3, stride: Int(stride))
        } catch {
            throw MediaError(.memoryLimit, "\(error)")
        }
    }

    private static func check(_ error: heif_error) throws(Failure) {
        guard error.code != heif_error_Ok else { return }
        let message = error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"
        throw Failure(code: error.code, message: message)
    }
}
