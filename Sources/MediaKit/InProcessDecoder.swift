import Glibc
import MediaFormats

/// Decodes media in this process with libvips and libav: the decoder each
/// sniffed format is routed to is chosen here (``DecoderRoute``), libraries'
/// failures become typed ``MediaError`` kinds here, and nothing outside
/// MediaKit needs to know which library read what.
///
/// The bytes are untrusted: a bug in a decoding library can take this process
/// down. The `share` CLI runs it in sandboxed helper processes by default
/// (DecoderIsolation's `ProcessIsolatedDecoder`), each of which uses one of these.
///
/// Every decode reads from an open descriptor: ``decode(_:)`` opens the
/// request's path read-only and calls ``decode(_:descriptor:)``, which is what a
/// helper process calls with the descriptor its parent passed it.
public struct InProcessDecoder: MediaDecoder {
    /// Whether the loaders only a sandbox may run (SVG through librsvg, and
    /// ImageMagick for ICO and PSD) are used; otherwise those formats get no thumbnail.
    public let allowsSandboxOnlyLoaders: Bool

    /// A decoder that runs libvips and libav on the calling thread. Only a
    /// sandboxed helper process sets `allowsSandboxOnlyLoaders` (it unblocks the
    /// loaders process-wide, in ``prepare()``).
    public init(allowsSandboxOnlyLoaders: Bool = false) {
        self.allowsSandboxOnlyLoaders = allowsSandboxOnlyLoaders
    }

    /// False: a crash in libvips or libav here is a crash of the calling process.
    public var containsCrashes: Bool { false }

    /// Initialises libvips and libav (once per process; libvips requires its
    /// initialisation to happen before other threads use GLib).
    public func prepare() {
        try? Vips.start()
        if allowsSandboxOnlyLoaders { try? Vips.allowSandboxOnlyLoaders(true) }
        LibAV.start()
    }

    /// Opens the request's path read-only and decodes it (``decode(_:descriptor:)``).
    public func decode(_ request: DecodeRequest) throws(MediaError) -> DecodedMedia {
        let file: OpenedFile
        do {
            file = try OpenedFile(path: request.path)
        } catch {
            throw MediaError(.unreadable, "\(request.label): cannot open the copy: \(String(cString: strerror(error.code)))")
        }
        return try withExtendedLifetime(file) { () throws(MediaError) in try decode(request, descriptor: file.descriptor) }
    }

    /// Decodes the file behind `descriptor` (open, readable, seekable; read from
    /// its start and left open): facts first (header only; the pixel limit is
    /// checked before any pixel is decoded), then the thumbnail when asked for.
    /// `request.path` is used only as a name.
    public func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        var route = DecoderRoute(request.format)
        if route == .none, let sandboxOnly = DecoderRoute.sandboxOnly(request.format) {
            guard allowsSandboxOnlyLoaders else { return DecoderRoute.refusedOutsideSandbox(request) }
            route = sandboxOnly
        }
        switch route {
        case .vipsImage(let loader, let strict):
            return try VipsImageDecoding(request: request, input: .descriptor(descriptor), loader: loader, strict: strict).decode()
        case .libavStill:
            return try AVMediaDecoding(request: request, descriptor: descriptor).decodeStill()
        case .libavMedia:
            return try AVMediaDecoding(request: request, descriptor: descriptor).decodeMedia()
        case .vipsDocument(let loader):
            return VipsImageDecoding(request: request, input: .descriptor(descriptor), loader: loader, strict: false).decodeDocument()
        case .none:
            return DecodedMedia(facts: MediaFacts(kind: .unreadable))
        }
    }
}

/// Which library reads a format, decided from the sniffed content alone: a
/// fallback loader never decides what a file is.
enum DecoderRoute: Equatable {
    /// libvips, through this loader class (its name prefix); `strict` when libvips
    /// reads every file of the format, so a failure means damage, not a variant
    /// libvips lacks.
    case vipsImage(loader: String, strict: Bool)
    /// A still image libvips here has no loader for: libav decodes its one frame.
    case libavStill
    /// Video and audio: libavformat and libavcodec.
    case libavMedia
    /// A document or drawing libvips renders through this loader (PDF through
    /// poppler): facts never fail it.
    case vipsDocument(loader: String)
    /// Nothing here decodes it.
    case none

    init(_ format: MediaFormat) {
        switch format.id {
        case "jpeg": self = .vipsImage(loader: "VipsForeignLoadJpeg", strict: true)
        case "png": self = .vipsImage(loader: "VipsForeignLoadPng", strict: true)
        case "gif": self = .vipsImage(loader: "VipsForeignLoadNsgif", strict: true)
        case "webp": self = .vipsImage(loader: "VipsForeignLoadWebp", strict: true)
        case "tiff": self = .vipsImage(loader: "VipsForeignLoadTiff", strict: true)
        case "heic", "heif", "avif": self = .vipsImage(loader: "VipsForeignLoadHeif", strict: false)
        case "jxl": self = .vipsImage(loader: "VipsForeignLoadJxl", strict: false)
        case "jp2": self = .vipsImage(loader: "VipsForeignLoadJp2k", strict: false)
        case "bmp": self = .libavStill
        case "pdf": self = .vipsDocument(loader: "VipsForeignLoadPdf")
        default:
            switch format.kind {
            case .video, .audio: self = .libavMedia
            case .image: self = .vipsImage(loader: "", strict: false)
            default: self = .none
            }
        }
    }
}

// MARK: - Formats only a sandboxed helper decodes

extension DecoderRoute {
    /// Formats that only loaders libvips marks untrusted read (librsvg,
    /// ImageMagick): decoded only where ``InProcessDecoder/allowsSandboxOnlyLoaders``
    /// is set, i.e. in a sandboxed helper, and only when the table above has no
    /// route for the format. The sniffer's format picks the loader; libvips'
    /// choice must agree, so ImageMagick never decides what a file is.
    static func sandboxOnly(_ format: MediaFormat) -> DecoderRoute? {
        switch format.id {
        case "svg": .vipsDocument(loader: "VipsForeignLoadSvg")
        case "psd", "ico": .vipsDocument(loader: "VipsForeignLoadMagick")
        default: nil
        }
    }

    /// Loader class names (prefixes) that only the sandbox may run.
    static let sandboxOnlyLoaders = ["VipsForeignLoadSvg", "VipsForeignLoadMagick"]

    /// ImageMagick has no source loader in libvips 8.14: it reads the file from memory.
    static func readsFromMemory(loader: String) -> Bool { loader.hasPrefix("VipsForeignLoadMagick") }

    /// What an unsandboxed decoder says of a sandbox-only format: a file, with no thumbnail and the reason.
    static func refusedOutsideSandbox(_ request: DecodeRequest) -> DecodedMedia {
        let reason = MediaError(
            .unsupported,
            "\(request.label): \(request.format.name) thumbnails are made only in sandboxed decoder helpers (share --isolation process); this decoder runs in-process")
        return DecodedMedia(facts: MediaFacts(kind: .document), thumbnail: request.thumbnail.map { _ in .failed(reason) })
    }
}

/// An image through libvips: header, loader check, pixel limit, then
/// `vips_thumbnail`'s shrink-on-load.
struct VipsImageDecoding {
    let request: DecodeRequest
    let input: ImageInput
    /// The loader class the format must be read by ("" accepts libvips' choice,
    /// except a sandbox-only loader).
    let loader: String
    let strict: Bool

    func decode() throws(MediaError) -> DecodedMedia {
        let header: ImageHeader
        do {
            header = try ImageHeader.read(input)
        } catch {
            if strict || error.isHEIFDamage {
                throw MediaError(.damaged, "\(request.label): not a readable \(request.format.name) image: \(error)")
            }
            // A variant libvips here cannot read: the file is still delivered.
            let warning = "delivered as a file: libvips \(Vips.version) cannot read this \(request.format.name) image (\(error))"
            return DecodedMedia(facts: MediaFacts(kind: .unreadable, warnings: [warning]))
        }
        if !loader.isEmpty ? !header.loader.hasPrefix(loader) : DecoderRoute.sandboxOnlyLoaders.contains(where: header.loader.hasPrefix) {
            throw MediaError(.contentMismatch, "\(request.label): looks like \(request.format.name) but libvips would read it with \(header.loader); refused")
        }
        try PixelLimit(request.pixelLimit).check(header.storedWidth, header.storedHeight, label: request.label)
        let facts = MediaFacts(kind: .image, width: header.width, height: header.height, frameCount: header.pages > 1 ? header.pages : nil)
        return DecodedMedia(facts: facts, thumbnail: request.thumbnail.map(thumbnail))
    }

    /// A document's first page (or a drawing, an icon): a thumbnail when it
    /// renders with the route's loader; a document either way.
    func decodeDocument() -> DecodedMedia {
        DecodedMedia(facts: MediaFacts(kind: .document), thumbnail: request.thumbnail.map(documentThumbnail))
    }

    private func documentThumbnail(_ spec: ThumbnailSpec) -> ThumbnailOutcome {
        var input = input
        do {
            if DecoderRoute.readsFromMemory(loader: loader), case .descriptor(let descriptor) = input {
                input = try ImageInput.read(descriptor: descriptor)
            }
            let chosen = try input.loader()
            guard chosen.hasPrefix(loader) else {
                return .failed(MediaError(.contentMismatch, "\(request.label): looks like \(request.format.name) but libvips would read it with \(chosen); not rendered"))
            }
        } catch {
            return .failed(MediaError(.damaged, "\(request.label): cannot read \(request.format.name): \(error)"))
        }
        return VipsImageDecoding(request: request, input: input, loader: loader, strict: strict).thumbnail(spec)
    }

    private func thumbnail(_ spec: ThumbnailSpec) -> ThumbnailOutcome {
        do {
            return .made(try Thumbnailer.thumbnail(input, spec: spec))
        } catch {
            let kind: MediaError.Kind = error.wasKilled ? .timeLimit : .damaged
            return .failed(MediaError(kind, "\(request.label): cannot decode \(request.format.name) image: \(error)"))
        }
    }
}

/// Video, audio and libav-read stills: one open `MediaFile` for the facts and the poster.
struct AVMediaDecoding {
    let request: DecodeRequest
    let descriptor: Int32

    /// Video or audio: a video stream makes it a video; audio alone makes it audio.
    func decodeMedia() throws(MediaError) -> DecodedMedia {
        let (media, probe) = try open()
        if let video = probe.video {
            try PixelLimit(request.pixelLimit).check(video.storedWidth, video.storedHeight, label: request.label)
            let facts = MediaFacts(kind: .video, width: video.width, height: video.height, durationMilliseconds: probe.durationMilliseconds)
            let thumbnail = request.thumbnail.map { spec in
                poster(of: media, video: video, duration: probe.durationMilliseconds, at: spec.posterTime, spec: spec)
            }
            return DecodedMedia(facts: facts, thumbnail: thumbnail)
        }
        guard probe.hasAudio else {
            throw MediaError(.damaged, "\(request.label): \(request.format.name) file has no decodable video or audio stream")
        }
        let mime = request.format.kind == .video ? Self.audioMIMEType(for: request.format) : nil
        return DecodedMedia(facts: MediaFacts(kind: .audio, durationMilliseconds: probe.durationMilliseconds, mimeType: mime))
    }

    /// A still image libvips cannot read (BMP): its single frame, decoded by libav.
    func decodeStill() throws(MediaError) -> DecodedMedia {
        let (media, probe) = try open(what: "image")
        guard let video = probe.video else {
            throw MediaError(.damaged, "\(request.label): not a readable \(request.format.name) image")
        }
        try PixelLimit(request.pixelLimit).check(video.storedWidth, video.storedHeight, label: request.label)
        let thumbnail = request.thumbnail.map { spec -> ThumbnailOutcome in
            switch poster(of: media, video: video, duration: nil, at: 0, spec: spec) {
            case .made(let made): .made(made)
            case .failed(let error): .failed(MediaError(error.kind, "\(request.label): cannot decode \(request.format.name) image: \(error)"))
            }
        }
        return DecodedMedia(facts: MediaFacts(kind: .image, width: video.width, height: video.height), thumbnail: thumbnail)
    }

    private func open(what: String = "file") throws(MediaError) -> (MediaFile, MediaProbe) {
        do {
            let media = try MediaFile(descriptor: descriptor, name: request.path, timeLimit: request.timeLimit)
            return (media, try media.probe())
        } catch {
            let kind: MediaError.Kind = error.isTimeout ? .timeLimit : error.isOutOfMemory ? .memoryLimit : .damaged
            throw MediaError(kind, "\(request.label): not a readable \(request.format.name) \(what): \(error)")
        }
    }

    private func poster(of media: MediaFile, video: VideoStreamInfo, duration: Double?, at seconds: Double, spec: ThumbnailSpec) -> ThumbnailOutcome {
        media.restartClock(seconds: spec.timeLimit)
        do {
            return .made(try PosterFrame.thumbnail(
                of: media, video: video, durationMilliseconds: duration, at: seconds, spec: spec, pixelLimit: request.pixelLimit))
        } catch {
            return .failed(error)
        }
    }

    /// An audio-only file in a video container gets the audio MIME type.
    static func audioMIMEType(for format: MediaFormat) -> String {
        switch format.id {
        case "mp4", "m4v", "mov": "audio/mp4"
        case "webm": "audio/webm"
        case "mkv": "audio/x-matroska"
        case "ogv": "audio/ogg"
        case "3gp": "audio/3gpp"
        default: format.mimeType
        }
    }
}

/// The pipeline's pixel limit, checked against a header's size before decoding.
struct PixelLimit {
    let pixels: Int
    init(_ pixels: Int) { self.pixels = pixels }

    func check(_ width: Int, _ height: Int, label: String) throws(MediaError) {
        guard width * height > pixels else { return }
        throw MediaError(
            .tooManyPixels,
            "\(label): \(width)×\(height) is \(Self.megapixels(width * height)) MP, over the limit of \(Self.megapixels(pixels)) MP; not decoded")
    }

    static func megapixels(_ pixels: Int) -> String {
        let tenths = (pixels + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}
