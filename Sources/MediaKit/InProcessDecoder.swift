import MediaFormats

/// Decodes media in this process with libvips, libav and libheif: the decoder each
/// sniffed format is routed to is chosen here (``DecoderRoute``), libraries'
/// failures become typed ``MediaError`` kinds here, and nothing outside
/// MediaKit needs to know which library read what.
///
/// The bytes are untrusted: a bug in a decoding library can take this process
/// down. The pipeline runs it in sandboxed helper processes by default.
public struct InProcessDecoder: MediaDecoder {
    /// A decoder that runs libvips and libav on the calling thread.
    public init() {}

    /// False: a crash in libvips or libav here is a crash of the calling process.
    public var containsCrashes: Bool { false }

    /// Initialises libvips and libav (once per process; libvips requires its
    /// initialisation to happen before other threads use GLib).
    public func prepare() {
        try? Vips.start()
        LibAV.start()
        LibheifDecoder.start()
    }

    /// Facts first (header only; the pixel limit is checked before any pixel is
    /// decoded), then the thumbnail when asked for, from the same open file.
    public func decode(_ request: DecodeRequest) throws(MediaError) -> DecodedMedia {
        switch DecoderRoute(request.format) {
        case .vipsImage(let loader, let strict):
            return try VipsImageDecoding(request: request, loader: loader, strict: strict).decode()
        case .heif:
            return try HEIFDecoding(request: request).decode()
        case .libavStill:
            return try AVMediaDecoding(request: request).decodeStill()
        case .libavMedia:
            return try AVMediaDecoding(request: request).decodeMedia()
        case .vipsDocument:
            return VipsImageDecoding(request: request, loader: "VipsForeignLoadPdf", strict: false).decodeDocument()
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
    /// HEIC, HEIF and AVIF stills and sequences: our item parser, then libavcodec
    /// (HEVC tiles), libheif, or libavformat (sequences); see ``HEIFDecoding``.
    case heif
    /// A still image libvips here has no loader for: libav decodes its one frame.
    case libavStill
    /// Video and audio: libavformat and libavcodec.
    case libavMedia
    /// A document libvips renders (PDF through poppler): facts never fail it.
    case vipsDocument
    /// Nothing here decodes it.
    case none

    init(_ format: MediaFormat) {
        switch format.id {
        case "jpeg": self = .vipsImage(loader: "VipsForeignLoadJpeg", strict: true)
        case "png": self = .vipsImage(loader: "VipsForeignLoadPng", strict: true)
        case "gif": self = .vipsImage(loader: "VipsForeignLoadNsgif", strict: true)
        case "webp": self = .vipsImage(loader: "VipsForeignLoadWebp", strict: true)
        case "tiff": self = .vipsImage(loader: "VipsForeignLoadTiff", strict: true)
        case "heic", "heif", "avif", "heics", "heifs", "avifs": self = .heif
        case "jxl": self = .vipsImage(loader: "VipsForeignLoadJxl", strict: false)
        case "jp2": self = .vipsImage(loader: "VipsForeignLoadJp2k", strict: false)
        case "bmp": self = .libavStill
        case "pdf": self = .vipsDocument
        default:
            switch format.kind {
            case .video, .audio: self = .libavMedia
            case .image: self = .vipsImage(loader: "", strict: false)
            default: self = .none
            }
        }
    }
}

/// An image through libvips: header, loader check, pixel limit, then
/// `vips_thumbnail`'s shrink-on-load.
struct VipsImageDecoding {
    let request: DecodeRequest
    /// The loader class the format must be read by ("" accepts libvips' choice).
    let loader: String
    let strict: Bool

    func decode() throws(MediaError) -> DecodedMedia {
        let header: ImageHeader
        do {
            header = try ImageHeader.read(path: request.path)
        } catch {
            if strict || error.isHEIFDamage {
                throw MediaError(.damaged, "\(request.label): not a readable \(request.format.name) image: \(error)")
            }
            // A variant libvips here cannot read: the file is still delivered.
            let warning = "delivered as a file: libvips \(Vips.version) cannot read this \(request.format.name) image (\(error))"
            return DecodedMedia(facts: MediaFacts(kind: .unreadable, warnings: [warning]))
        }
        if !loader.isEmpty, !header.loader.hasPrefix(loader) {
            throw MediaError(.contentMismatch, "\(request.label): looks like \(request.format.name) but libvips would read it with \(header.loader); refused")
        }
        try PixelLimit(request.pixelLimit).check(header.storedWidth, header.storedHeight, label: request.label)
        let facts = MediaFacts(kind: .image, width: header.width, height: header.height, frameCount: header.pages > 1 ? header.pages : nil)
        return DecodedMedia(facts: facts, thumbnail: request.thumbnail.map { spec in
            // A JPEG's EXIF thumbnail, when it is at least as large as the one wanted.
            if request.format.id == "jpeg", let embedded = EmbeddedJPEGThumbnail.thumbnail(
                path: request.path, storedWidth: header.storedWidth, storedHeight: header.storedHeight,
                orientation: header.orientation, spec: spec)
            {
                return .made(embedded)
            }
            return thumbnail(spec)
        })
    }

    /// A document's first page: a thumbnail when it renders; a document either way.
    func decodeDocument() -> DecodedMedia {
        DecodedMedia(facts: MediaFacts(kind: .document), thumbnail: request.thumbnail.map(thumbnail))
    }

    private func thumbnail(_ spec: ThumbnailSpec) -> ThumbnailOutcome {
        do {
            return .made(try Thumbnailer.thumbnail(path: request.path, spec: spec))
        } catch {
            let kind: MediaError.Kind = error.wasKilled ? .timeLimit : .damaged
            return .failed(MediaError(kind, "\(request.label): cannot decode \(request.format.name) image: \(error)"))
        }
    }
}

/// Video, audio and libav-read stills: one open `MediaFile` for the facts and the poster.
struct AVMediaDecoding {
    let request: DecodeRequest

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
            let media = try MediaFile(path: request.path, timeLimit: request.timeLimit)
            return (media, try media.probe())
        } catch {
            throw MediaError(error.isTimeout ? .timeLimit : .damaged, "\(request.label): not a readable \(request.format.name) \(what): \(error)")
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
        // Sizes come from untrusted headers (a HEIF ispe is 2 × 32 bits): no overflow.
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        guard overflow || product > pixels else { return }
        guard !overflow else {
            throw MediaError(.tooManyPixels, "\(label): \(width)×\(height) is over the limit of \(Self.megapixels(pixels)) MP; not decoded")
        }
        throw MediaError(
            .tooManyPixels,
            "\(label): \(width)×\(height) is \(Self.megapixels(width * height)) MP, over the limit of \(Self.megapixels(pixels)) MP; not decoded")
    }

    static func megapixels(_ pixels: Int) -> String {
        let tenths = (pixels + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}
