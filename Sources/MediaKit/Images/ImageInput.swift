import CShims
import CVips
import Glibc
import SystemCalls

/// Where libvips reads an image from: an open file descriptor (through a
/// `VipsSource`, which is how every loader routed here reads, in this process or
/// in a sandboxed helper that was handed the descriptor), or bytes in memory
/// (for ImageMagick, which has no source loader in libvips 8.14).
public enum ImageInput: Sendable {
    /// An open, seekable, readable descriptor; it is read from its start and
    /// never closed here.
    case descriptor(Int32)
    /// The whole file, in memory.
    case memory([UInt8])

    /// The largest file ``read(descriptor:limit:)`` loads into memory by default.
    public static let memoryLimit = 256 << 20

    /// The whole file behind `descriptor` (from its start) as ``memory(_:)``,
    /// for loaders that cannot read a source; at most `limit` bytes.
    public static func read(descriptor: Int32, limit: Int = memoryLimit) throws(VipsError) -> ImageInput {
        let file = FileDescriptor(borrowing: descriptor)
        let size: Int64
        do throws(SystemError) { size = try file.status(path: "the file").size } catch {
            throw VipsError("fstat", message: error.message)
        }
        guard size <= limit else {
            throw VipsError(
                "read",
                message: "the file is \(size) bytes, over the \(limit >> 20) MiB this loader may read into memory")
        }
        let bytes: [UInt8]
        do throws(SystemError) { bytes = try file.read(count: Int(size), at: 0, path: "the file") } catch {
            throw VipsError("read", message: error.message)
        }
        guard bytes.count == Int(size) else { throw VipsError("read", message: "the file is shorter than its size") }
        return .memory(bytes)
    }

    /// The loader libvips would choose for this input (its class name; each
    /// loader's sniff of the first bytes, nothing is built yet).
    public func loader() throws(VipsError) -> String {
        try Vips.start()
        // Its failure is the reason a file is refused or passed on: read alone (a
        // line another thread leaves in the buffer would be taken for it).
        return try Vips.withExactErrors { () throws(VipsError) -> String in
            try withVips { (vips) throws(VipsError) -> String in
                guard let name = vips.loaderName() else { throw VipsError("vips_foreign_find_load_source") }
                return name
            }
        }
    }

    /// Runs `body` with a fresh `VipsSource` over the descriptor (rewound to the
    /// start), or with the bytes' address; whatever libvips builds from them must
    /// be finished inside `body` (a lazily loaded image reads its input later).
    func withVips<T>(_ body: (VipsInputPointer) throws(VipsError) -> T) throws(VipsError) -> T {
        switch self {
        case .descriptor(let descriptor):
            try? FileDescriptor(borrowing: descriptor).rewind(path: "the file")
            guard let source = vips_source_new_from_descriptor(descriptor) else {
                throw VipsError("vips_source_new_from_descriptor")
            }
            defer { g_object_unref(source) }
            // A regular file is mapped, so the loaders' reads (libjpeg's are 4 KiB
            // each: about a thousand read calls for a 12 MP photo) come from
            // memory instead of one system call each (issue 35, bench/budget.sh).
            // Where it cannot be mapped, the loaders read as before.
            if vips_source_is_mappable(source) != 0, vips_source_map(source, nil) == nil { vips_error_clear() }
            return try body(.source(source))
        case .memory(let bytes):
            let result: Result<T, VipsError> = bytes.withUnsafeBytes { buffer in
                do throws(VipsError) { return .success(try body(.memory(buffer))) } catch { return .failure(error) }
            }
            return try result.get()
        }
    }
}

/// What a libvips call reads from, valid only inside ``ImageInput/withVips(_:)``.
enum VipsInputPointer {
    case source(UnsafeMutablePointer<VipsSource>)
    case memory(UnsafeRawBufferPointer)

    /// The loader libvips would choose (`vips_foreign_find_load_source` / `_buffer`).
    func loaderName() -> String? {
        let name: UnsafePointer<CChar>?
        switch self {
        case .source(let source): name = vips_foreign_find_load_source(source)
        case .memory(let buffer): name = vips_foreign_find_load_buffer(buffer.baseAddress, buffer.count)
        }
        return name.map { String(cString: $0) }
    }

    /// The header, lazily (sequential access: no pixel is decoded).
    func header() -> UnsafeMutablePointer<VipsImage>? {
        switch self {
        case .source(let source): shim_vips_image_header_source(source)
        case .memory(let buffer): shim_vips_image_header_buffer(buffer.baseAddress, buffer.count)
        }
    }

    /// `vips_thumbnail_source` / `vips_thumbnail_buffer`; with `jpegShrink`, a
    /// JPEG source decoded at 1/`jpegShrink` of its size (see ``JPEGScale``).
    func thumbnail(
        _ out: UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>, size: Int, jpegShrink: Int?, failOn: VipsFailOn
    ) -> Int32 {
        switch self {
        case .source(let source):
            if let jpegShrink {
                return shim_vips_jpeg_thumbnail_source(source, out, Int32(size), Int32(jpegShrink), failOn)
            }
            return shim_vips_thumbnail_source(source, out, Int32(size), Int32(size), failOn)
        case .memory(let buffer):
            return shim_vips_thumbnail_from_memory(
                buffer.baseAddress, buffer.count, out, Int32(size), Int32(size), failOn)
        }
    }
}
