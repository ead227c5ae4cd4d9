import CShims
import CVips
import Foundation
import Synchronization
import SystemCalls

/// An error reported by libvips, with the text of `vips_error_buffer()` at the
/// point of failure (the buffer is cleared so the next failure starts clean).
public struct VipsError: Error, Sendable, CustomStringConvertible {
    /// The libvips call that failed, e.g. `vips_thumbnail`.
    public let operation: String
    /// What libvips said (its error buffer, tidied).
    public let message: String
    /// True when the operation was stopped because its time budget ran out
    /// (`vips_image_set_kill` from the deadline's eval handler).
    public let wasKilled: Bool

    /// Takes the message from libvips' error buffer. The buffer is process-wide, so
    /// with several workers it can hold another file's failure too: when `path` is
    /// given, lines naming some other file are left out.
    init(_ operation: String, about path: String? = nil, killed: Bool = false) {
        self.operation = operation
        Vips.errorLock.lock()
        let text = vips_error_buffer().map { String(cString: $0) } ?? ""
        vips_error_clear()
        Vips.errorLock.unlock()
        self.message = Self.tidy(text, about: path)
        self.wasKilled = killed
    }

    /// The same failure, marked as stopped by its deadline.
    func killed() -> VipsError {
        VipsError(
            operation: operation, message: message.isEmpty ? "time limit exceeded (killed)" : message, wasKilled: true)
    }

    /// A failure described by `message` (not from libvips' error buffer).
    init(_ operation: String, message: String) {
        self.init(operation: operation, message: message, wasKilled: false)
    }

    /// A failure found outside libvips' error buffer (a bad parameter, a failed check).
    init(operation: String, message: String, wasKilled: Bool = false) {
        self.operation = operation
        self.message = message
        self.wasKilled = wasKilled
    }

    public var description: String { message.isEmpty ? "\(operation) failed" : message }

    /// libvips prefixes lines with the operation ("VipsForeignLoadJpegFile: ...") and
    /// repeats itself; keep distinct lines, joined.
    static func tidy(_ text: String, about path: String? = nil) -> String {
        var seen = Set<String>()
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && seen.insert($0).inserted }
            .filter { line in
                guard let path, !line.contains(path) else { return true }
                return !line.contains(" /") && !line.hasPrefix("/")
            }
        return lines.joined(separator: "; ")
    }
}

/// Process-wide libvips set-up (`vips_init`), done once before any other call,
/// and per-thread clean-up: a thread that used libvips releases its buffers
/// (`vips_thread_shutdown`) when it ends, through a thread-specific key's
/// destructor, so callers need not know which of their threads touched libvips.
public enum Vips {
    private static let setUp: Bool = {
        let onDemand = modulesOnDemand.load(ordering: .acquiring)
        let ok = shim_vips_setup(CommandLine.arguments.first ?? "share", 1, onDemand ? 0 : 1) == 0
        if ok { shim_vips_block_sandbox_only_loaders(1) }
        return ok
    }()

    /// Set by ``startWithModulesOnDemand()`` before libvips starts.
    private static let modulesOnDemand = Atomic(false)

    /// The libvips module (`vips-NAME.so`) that provides each loader class (by prefix).
    static let moduleLoaders = [
        "VipsForeignLoadPdf": "poppler", "VipsForeignLoadJxl": "jxl", "VipsForeignLoadMagick": "magick",
        "VipsForeignLoadHeif": "heif", "VipsForeignLoadOpenslide": "openslide",
    ]
    private static let loadedModules = Mutex<Set<String>>([])

    /// Starts libvips without loading its modules (poppler, libjxl, ImageMagick,
    /// libheif, OpenSlide); each is loaded when a loader it provides is first
    /// needed (``loadModule(providing:)``). Loading them all takes ~15 ms of a
    /// process's start: this is for the decoder helper template, whose start is
    /// on the way to the first thumbnail of every command. Call it first, while
    /// the process has a single thread (it sets an environment variable).
    public static func startWithModulesOnDemand() throws(VipsError) {
        modulesOnDemand.store(true, ordering: .releasing)
        try start()
    }

    /// Loads the module that provides `loader` (a loader class name or prefix)
    /// unless it is loaded: what libvips' own start does for every module, unless
    /// it started with ``startWithModulesOnDemand()``.
    static func loadModule(providing loader: String) {
        guard let module = moduleLoaders.first(where: { loader.hasPrefix($0.key) })?.value else { return }
        loadedModules.withLock { loaded in
            guard !loaded.contains(module) else { return }
            if shim_vips_load_module(module) == 0 { loaded.insert(module) }
        }
    }

    /// Runs `vips_thread_shutdown` on a thread's exit.
    private static let threadExit = ThreadExitAction { _ in vips_thread_shutdown() }

    /// Starts libvips if it is not started yet, and registers the calling thread
    /// for clean-up at its exit. Each caller thread uses one libvips thread: the
    /// pipeline's own worker count decides parallelism, so two cores are not
    /// oversubscribed.
    public static func start() throws(VipsError) {
        guard setUp else { throw VipsError("vips_init") }
        threadExit.registerCurrentThread()
    }

    /// Held while reading or clearing the error buffer, and during a retry.
    static let errorLock = NSRecursiveLock()

    /// Held shared by all libvips work (a whole decode request, ``working(_:)``),
    /// and alone by a retry (``withExactErrors(_:)``).
    private static let exclusive = ReadWriteLock()

    /// What the calling thread holds of `exclusive`: 0 nothing, n > 0 shared
    /// (n nested ``working(_:)`` calls), -1 alone (in a retry).
    private static let held = ThreadLocalInteger()

    /// Runs `body` as libvips work: while it runs, no retry of another thread's
    /// failed operation runs (nested calls hold the lock once). A decode request
    /// runs inside one, so every libvips call it makes, whichever file it is in,
    /// is kept out of another thread's retry: the error buffer is process-wide,
    /// and a line written during that retry would be read as its reason (a 12-bit
    /// JPEG's "Unsupported JPEG data precision" made a damaged TIFF look like an
    /// unsupported variant, and it was passed on as a file).
    package static func working<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let depth = held.value
        if depth == 0 { exclusive.lockShared() }
        if depth >= 0 { held.value = depth + 1 }
        defer {
            if depth >= 0 { held.value = depth }
            if depth == 0 { exclusive.unlock() }
        }
        return try body()
    }

    /// Runs `body` (as ``working(_:)``); if it fails, runs it once more with no
    /// other libvips work in flight and the error buffer cleared, so the error
    /// carries this operation's message. Failures are rare, so the second run
    /// costs little, except for one stopped by its time budget: that is never run
    /// again (it would take as long again, holding every other worker). A thread
    /// that holds the lock shared (its request) gives it up for the retry and
    /// takes it back after; one already alone retries as it is.
    static func withExactErrors<T>(_ body: () throws(VipsError) -> T) throws(VipsError) -> T {
        do {
            return try working(body)
        } catch {
            if error.wasKilled { throw error }
        }
        let depth = held.value
        if depth >= 0 {
            if depth > 0 { exclusive.unlock() }
            exclusive.lockExclusive()
            held.value = -1
        }
        defer {
            if depth >= 0 {
                exclusive.unlock()
                if depth > 0 { exclusive.lockShared() }
                held.value = depth
            }
        }
        errorLock.lock()
        vips_error_clear()
        errorLock.unlock()
        return try body()
    }

    /// Unblocks (or blocks again) the loaders libvips marks untrusted that only a
    /// sandboxed decoder helper may use: ImageMagick and SVG (librsvg). They are
    /// blocked from the start in every process. Process-wide.
    public static func allowSandboxOnlyLoaders(_ allowed: Bool) throws(VipsError) {
        try start()
        shim_vips_block_sandbox_only_loaders(allowed ? 0 : 1)
    }

    /// True when libvips' idle workers never leave, so that libvips 8.14's
    /// lost task (a worker leaving after 15 s idle as it is handed work, and
    /// the pipeline waiting for it for ever) cannot happen: this process's own
    /// `vips_semaphore_down_timeout`, which never times out, is the one the
    /// dynamic linker resolves (CShims/vips_threadset.c says why).
    public static var idleWorkersStay: Bool { shim_vips_idle_workers_never_leave() == 1 }

    /// The libvips version, e.g. "8.14.1".
    public static var version: String { String(cString: vips_version_string()) }
}

/// Owns one `VipsImage*` and unrefs it (`g_object_unref`) when released.
///
/// Images are immutable once built, so a handle may cross threads; libvips'
/// reference counting is thread-safe.
public final class VipsImageHandle: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<VipsImage>

    init(_ pointer: UnsafeMutablePointer<VipsImage>) { self.pointer = pointer }
    deinit { g_object_unref(pointer) }

    /// Wraps the output of a libvips call that returns an image through an out-parameter.
    static func make(
        _ operation: String, about path: String? = nil,
        _ call: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32
    ) throws(VipsError) -> VipsImageHandle {
        var out: UnsafeMutablePointer<VipsImage>?
        guard call(&out) == 0, let out else { throw VipsError(operation, about: path) }
        return VipsImageHandle(out)
    }

    public var width: Int { Int(vips_image_get_width(pointer)) }
    public var height: Int { Int(vips_image_get_height(pointer)) }
    public var bands: Int { Int(vips_image_get_bands(pointer)) }
    public var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }

    /// An integer metadata field (e.g. `orientation`, `n-pages`), if present.
    public func integer(_ field: String) -> Int? {
        guard vips_image_get_typeof(pointer, field) != 0 else { return nil }
        var value: Int32 = 0
        guard vips_image_get_int(pointer, field, &value) == 0 else {
            vips_error_clear()
            return nil
        }
        return Int(value)
    }

    /// Rotates by a multiple of 90 degrees clockwise (`vips_rot`).
    public func rotated(clockwise degrees: Int) throws(VipsError) -> VipsImageHandle {
        let angle: VipsAngle
        switch ((degrees % 360) + 360) % 360 {
        case 90: angle = VIPS_ANGLE_D90
        case 180: angle = VIPS_ANGLE_D180
        case 270: angle = VIPS_ANGLE_D270
        default: return self
        }
        return try Self.make("vips_rot") { shim_vips_rot(pointer, $0, angle) }
    }

    /// This picture in sRGB (or grey) with 8-bit samples, alpha kept: what the
    /// JPEG and WebP encoders and the ThumbHash take.
    func inSRGB8() throws(VipsError) -> VipsImageHandle {
        var image = self
        let interpretation = vips_image_get_interpretation(image.pointer)
        if interpretation != VIPS_INTERPRETATION_sRGB && interpretation != VIPS_INTERPRETATION_B_W {
            image = try Self.make("vips_colourspace") { shim_vips_to_srgb(image.pointer, $0) }
        }
        if vips_image_get_format(image.pointer) != VIPS_FORMAT_UCHAR {
            image = try Self.make("vips_cast") { shim_vips_cast_uchar(image.pointer, $0) }
        }
        return image
    }

    /// Encodes as JPEG (`vips_jpegsave_buffer`), first making the image something a
    /// JPEG can hold: alpha flattened over white, 16-bit cast to 8-bit, sRGB.
    public func jpegData(quality: Int, about path: String? = nil) throws(VipsError) -> [UInt8] {
        var image = self
        if image.hasAlpha {
            image = try Self.make("vips_flatten") { shim_vips_flatten(image.pointer, $0, 255, 255, 255) }
        }
        image = try image.inSRGB8()
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard shim_vips_jpegsave_buffer(image.pointer, &buffer, &length, Int32(quality)) == 0, let buffer else {
            throw VipsError("vips_jpegsave_buffer", about: path)
        }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    /// Wraps packed 8-bit RGB pixels (`vips_image_new_from_memory_copy`).
    public static func fromRGB(_ pixels: UnsafeRawBufferPointer, width: Int, height: Int) throws(VipsError)
        -> VipsImageHandle
    {
        guard
            let image = vips_image_new_from_memory_copy(
                pixels.baseAddress, pixels.count, Int32(width), Int32(height), 3, VIPS_FORMAT_UCHAR)
        else {
            throw VipsError("vips_image_new_from_memory_copy")
        }
        vips_image_set_int(image, "interpretation", Int32(VIPS_INTERPRETATION_sRGB.rawValue))
        return VipsImageHandle(image)
    }
}
