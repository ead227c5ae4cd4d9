import Glibc
import MediaFormats

/// Decodes media in this process with libvips, libav and libheif: the decoder each
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
    /// ImageMagick for PSD) are used; otherwise those formats get no thumbnail.
    public let allowsSandboxOnlyLoaders: Bool

    /// A decoder that runs libvips and libav on the calling thread. Only a
    /// sandboxed helper process sets `allowsSandboxOnlyLoaders` (it unblocks the
    /// loaders process-wide, in ``prepare()``).
    public init(allowsSandboxOnlyLoaders: Bool = false) {
        self.allowsSandboxOnlyLoaders = allowsSandboxOnlyLoaders
    }

    /// True for the formats only the loaders a sandbox may run decode (SVG, PSD):
    /// a helper pool starts helpers that load them only for these.
    public static func needsSandboxOnlyLoaders(_ format: MediaFormat) -> Bool {
        SandboxOnlyStep.loaders[format.id] != nil
    }

    /// False: a crash in libvips or libav here is a crash of the calling process.
    public var containsCrashes: Bool { false }

    /// Initialises libvips and libav (once per process; libvips requires its
    /// initialisation to happen before other threads use GLib).
    public func prepare() {
        try? Vips.start()
        if allowsSandboxOnlyLoaders { try? Vips.allowSandboxOnlyLoaders(true) }
        LibAV.start()
        LibheifDecoder.start()
    }

    /// Opens the request's path read-only and decodes it (``decode(_:descriptor:)``).
    public func decode(_ request: DecodeRequest) throws(MediaError) -> DecodedMedia {
        let file: OpenedFile
        do {
            file = try OpenedFile(path: request.path)
        } catch {
            throw MediaError(.unreadable, "\(request.label): cannot open the copy: \(error.description)")
        }
        return try withExtendedLifetime(file) { () throws(MediaError) in
            try decode(request, descriptor: file.descriptor)
        }
    }

    /// Decodes the file behind `descriptor` (open, readable; read from its start
    /// and left open): facts first (header only; the pixel limit is checked before
    /// any pixel is decoded), then the thumbnail when asked for, from the same
    /// file; each format's decoders tried in turn (``DecoderRoute``).
    /// `request.path` is used only as a name.
    /// With ``DecodeRequest/moments``, the file's ``MomentFacts`` are read too
    /// (MediaFormats' `MomentReader`: metadata, box headers and trailers, by
    /// random access), after its facts.
    ///
    /// A ``DecodeTask/locationMetadata`` request decodes nothing: it reads the
    /// file's metadata structures (``LocationScanner``) and answers with where
    /// it records a location. A request for a compatible copy decodes the
    /// full-size picture (``CompatibleCopyMaker``). A ``DecodeTask/pixels``
    /// request decodes the picture to pixels (``PicturePixels``).
    public func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        try Vips.working { () throws(MediaError) in try decodeAsLibvipsWork(request, descriptor: descriptor) }
    }

    /// ``decode(_:descriptor:)``'s body, inside ``Vips/working(_:)``.
    private func decodeAsLibvipsWork(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        let route = DecoderRoute(request.format, sandboxOnlyLoaders: allowsSandboxOnlyLoaders)
        switch request.task {
        case .locationMetadata:
            // Text too: a JSON's position members, an XMP sidecar's GPS properties (LocationScanner).
            var decoded = DecodedMedia(
                facts: MediaFacts(kind: Self.kind(of: request.format)),
                location: LocationScanner.scan(
                    DescriptorBytes(descriptor), format: request.format, placeNames: request.placeNames))
            // The position, read before it is removed, and the capture time: only for the capture time's
            // offset (issue 54), kept as that offset alone (issue 58: no zone name under location privacy).
            if request.moments, let read = MomentReader.read(DescriptorBytes(descriptor), format: request.format),
                let position = read.position
            {
                decoded.moments = MomentFacts(captureTime: read.captureTime, position: position)
            }
            return decoded
        case .pixels:
            return try PicturePixels.decode(request, descriptor: descriptor)
        case .contactSheet:
            return try Self.drawContactSheet(request, descriptor: descriptor)
        case .media:
            if let spec = request.compatibleCopy {
                return try CompatibleCopyMaker(request: request, spec: spec, descriptor: descriptor).make(route: route)
            }
            var decoded = try route.decode(request, descriptor: descriptor)
            if decoded.facts.kind == .image || decoded.facts.kind == .video {
                if request.moments {
                    decoded.moments = MomentReader.read(DescriptorBytes(descriptor), format: request.format)
                }
                Self.readSpatialFacts(into: &decoded, request: request, descriptor: descriptor)
            }
            decoded.takeouts = request.takeoutJSONs.map(Self.readTakeout)
            return decoded
        }
    }

    /// A panorama's projection, a stereo pair, a gain map (``SpatialMetadata``),
    /// read after the facts; a 360° photo's thumbnail is then its centre view
    /// (``CentreView``) when the picture is 2:1 and that view is at least the
    /// thumbnail's size (else the whole picture's thumbnail is kept), and a stereo pair's the left eye when that is not the
    /// primary image, made again from the file (kept as it was when that fails).
    /// The contact sheet of the plan in the file (``DecodeTask/contactSheet``),
    /// drawn with ``ContactSheet/render(_:title:layout:total:)`` and answered
    /// as the thumbnail.
    static func drawContactSheet(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        let file = DescriptorBytes(descriptor)
        guard file.count <= 1 << 30, let bytes = file.read(0..<file.count) else {
            throw MediaError(.damaged, "\(request.label): the contact sheet plan cannot be read")
        }
        let plan = try ContactSheetPlan(decoding: bytes)
        let sheet: ContactSheet
        do {
            sheet = try ContactSheet.render(plan.tiles, title: plan.title, layout: plan.layout, total: plan.total)
        } catch {
            throw MediaError(
                LibraryMessages.kind(of: error) ?? .damaged, "\(request.label): cannot draw the contact sheet: \(error)"
            )
        }
        var decoded = DecodedMedia(facts: MediaFacts(kind: .image, width: sheet.width, height: sheet.height))
        decoded.thumbnail = .made(Thumbnail(jpeg: sheet.jpeg, width: sheet.width, height: sheet.height))
        return decoded
    }

    /// A Takeout JSON sent with the file: its facts, or why it is not one.
    static func readTakeout(_ bytes: [UInt8]) -> TakeoutReading {
        guard bytes.count <= TakeoutJSON.maximumSize else {
            return .refused("it is larger than \(TakeoutJSON.maximumSize >> 20) MiB")
        }
        do { return .read(try TakeoutJSON.read(bytes)) } catch { return .refused(error.description) }
    }

    static func readSpatialFacts(into decoded: inout DecodedMedia, request: DecodeRequest, descriptor: Int32) {
        let found = SpatialMetadata.read(DescriptorBytes(descriptor), format: request.format)
        if found.stereo { decoded.facts.stereo = true }
        guard decoded.facts.kind == .image else { return }
        if found.gainMap { decoded.facts.gainMap = true }
        // A stereo pair whose left eye is not the primary image: the thumbnail is the left eye.
        if let left = found.leftEye, let spec = request.thumbnail, case .made = decoded.thumbnail,
            let eye = try? HEIFDecoding(request: request, descriptor: descriptor).thumbnail(ofItem: left, spec: spec)
        {
            decoded.thumbnail = .made(eye)
        }
        decoded.facts.projection = found.projection(width: decoded.facts.width, height: decoded.facts.height)
        if let spec = request.thumbnail, case .made = decoded.thumbnail, let width = decoded.facts.width,
            let height = decoded.facts.height,
            decoded.facts.projection?.isFullSphere(pictureWidth: width, pictureHeight: height) == true,
            CentreView.isLargeEnough(width: width, height: height, spec: spec),
            let view = try? CentreView.thumbnail(.descriptor(descriptor), width: width, height: height, spec: spec)
        {
            decoded.thumbnail = .made(view)
        }
        // A gain map (Ultra HDR JPEG; Apple's or ISO 21496-1's in a HEIC, HEIF or AVIF), carried into the primary
        // image's thumbnail and JPEG previews (not a centre view's, not a left eye's: issue 54), unless the pipeline says not.
        if found.gainMap, found.leftEye == nil, let spec = request.thumbnail, spec.gainMaps,
            case .made(let thumbnail) = decoded.thumbnail,
            decoded.facts.projection?.isFullSphere != true
        {
            do {
                switch request.format.id {
                case "jpeg":
                    let source = DescriptorBytes(descriptor)
                    let carried = try GainMapThumbnail.attach(
                        to: thumbnail, source: source, spec: spec, pixelLimit: request.pixelLimit)
                    decoded.thumbnail = .made(carried)
                    // Never silent: a map that is there but not carried is named.
                    if carried.gainMap == nil, let why = SpatialMetadata.uncarriedGainMap(source) {
                        decoded.facts.warnings.append(
                            "its HDR gain map is not carried into its thumbnail: \(why); the thumbnail is SDR")
                    }
                case "heic", "heif", "avif":
                    decoded.thumbnail = .made(
                        try HEIFGainMapThumbnail.attach(
                            to: thumbnail, request: request, descriptor: descriptor, spec: spec))
                default:
                    break
                }
            } catch {
                decoded.facts.warnings.append(
                    "its HDR gain map could not be carried into its thumbnail (\(error)): the thumbnail is SDR")
            }
        }
    }

    /// What a format's content is before it is opened (a location request's facts).
    static func kind(of format: MediaFormat) -> MediaFacts.Kind {
        switch format.kind {
        case .image: .image
        case .video: .video
        case .audio: .audio
        case .document: .document
        default: .unreadable
        }
    }
}

/// One library's way of reading some formats: a link in a format's chain of decoders.
protocol DecoderStep: Sendable {
    /// The library, named in messages ("libvips", "libavcodec", "libtiff").
    var library: String { get }
    /// True for the formats this step reads, or tries to.
    func reads(_ format: MediaFormat) -> Bool
    /// Decodes the file. Throws ``MediaError/Kind/unsupported`` when this library
    /// cannot read this variant of the format: the next step of the chain is tried.
    /// Any other error is final (damaged, over a limit, not what it claims to be).
    /// A thumbnail that failed as `unsupported` also hands over to the next step.
    /// The file is the open `descriptor` (read from its start; `request.path` is a name).
    func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia
}

/// Which libraries read a format, in the order they are tried, decided from the
/// sniffed content alone (a fallback loader never decides what a file is). A file
/// is refused only when a decoder finds it damaged; when no decoder here can read
/// its variant, it is delivered as a plain file with a warning saying why.
struct DecoderRoute {
    /// Every decoder, in the order they are tried; a format's chain is the steps
    /// that read it. Adding a decoder is one line here, at its place in the order.
    static let registry: [any DecoderStep] = [
        HEIFStep(),  // HEIC, HEIF, AVIF and their sequences: libavcodec, libheif, libavformat (HEIF/)
        RAWStep(),  // camera RAW: the largest embedded preview (RAW/)
        AVStillStep(first: ["jxl"]),  // JPEG XL: libjxl through libavcodec, which reports its colour encoding
        VipsImageStep(),  // the images libvips has a loader for
        AVStillStep(),  // BMP and ICO; JPEG libvips cannot read (12-bit, lossless)
        TIFFStep(),  // TIFF layouts tiff2vips rejects (float samples, ...)
        AVMediaStep(),  // video and audio
        VipsDocumentStep(),  // PDF
    ]

    /// The steps that read the format, in order.
    let chain: [any DecoderStep]
    let format: MediaFormat

    /// The chain for `format`; with `sandboxOnlyLoaders` (a sandboxed helper)
    /// it ends with the loaders only a sandbox may run (``SandboxOnlyStep``).
    init(_ format: MediaFormat, sandboxOnlyLoaders: Bool = false) {
        self.format = format
        chain = (Self.registry + [SandboxOnlyStep(allowed: sandboxOnlyLoaders)]).filter { $0.reads(format) }
    }

    /// The libraries of the chain, in order (for tests and messages).
    var libraries: [String] { chain.map(\.library) }

    /// Tries each step until one reads the file behind `descriptor`.
    func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        var declined: [(library: String, error: MediaError)] = []
        var withoutThumbnail: DecodedMedia?
        for step in chain {
            do {
                let decoded = try step.decode(request, descriptor: descriptor)
                if case .failed(let error)? = decoded.thumbnail, error.kind == .unsupported {
                    // Facts, but no picture: a later decoder may make the thumbnail.
                    withoutThumbnail = withoutThumbnail ?? decoded
                    declined.append((step.library, error))
                    continue
                }
                return decoded
            } catch  where error.kind == .unsupported {
                declined.append((step.library, error))
            }
        }
        if var decoded = withoutThumbnail {
            decoded.thumbnail = .failed(
                MediaError(
                    .damaged,
                    "\(request.label): no decoder here makes a picture of this \(request.format.name) image (\(Self.reasons(declined)))"
                ))
            return decoded
        }
        guard !chain.isEmpty else { return DecodedMedia(facts: MediaFacts(kind: .unreadable)) }
        // A variant no library here reads: the file is still delivered.
        let warning =
            "delivered as a file: no decoder here reads this \(request.format.name) \(format.kind == .image ? "image" : "file") (\(Self.reasons(declined)))"
        return DecodedMedia(facts: MediaFacts(kind: .unreadable, warnings: [warning]))
    }

    static func reasons(_ declined: [(library: String, error: MediaError)]) -> String {
        declined.map { "\($0.library): \($0.error.message)" }.joined(separator: "; ")
    }
}

/// Images through libvips: header, loader check, pixel limit, then
/// `vips_thumbnail`'s shrink-on-load.
struct VipsImageStep: DecoderStep {
    var library: String { "libvips \(Vips.version)" }

    /// The libvips loader class (its name prefix) each format must be read by, and
    /// whether libvips reads every file of the format (`strict`: a failure means
    /// damage, unless libvips names a variant it lacks).
    static let loaders: [String: (loader: String, strict: Bool)] = [
        "jpeg": ("VipsForeignLoadJpeg", true),
        "png": ("VipsForeignLoadPng", true),
        "gif": ("VipsForeignLoadNsgif", true),
        "webp": ("VipsForeignLoadWebp", true),
        "tiff": ("VipsForeignLoadTiff", true),
        "jxl": ("VipsForeignLoadJxl", false),
        "jp2": ("VipsForeignLoadJp2k", false),
        "netpbm": ("VipsForeignLoadPpm", true),
    ]

    func reads(_ format: MediaFormat) -> Bool { Self.loaders[format.id] != nil }

    func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        guard let (loader, strict) = Self.loaders[request.format.id] else {
            throw MediaError(.unsupported, "no libvips loader for \(request.format.name)")
        }
        return try VipsImageDecoding(request: request, input: .descriptor(descriptor), loader: loader, strict: strict)
            .decode()
    }
}

/// A document libvips renders (PDF through poppler): facts never fail it.
/// (SVG and PSD, also rendered as documents, are ``SandboxOnlyStep``'s.)
struct VipsDocumentStep: DecoderStep {
    var library: String { "libvips \(Vips.version)" }
    func reads(_ format: MediaFormat) -> Bool { format.id == "pdf" }
    func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        VipsImageDecoding(request: request, input: .descriptor(descriptor), loader: "VipsForeignLoadPdf", strict: false)
            .decodeDocument()
    }
}

/// HEIC, HEIF and AVIF, stills and sequences (see ``HEIFDecoding``): our item
/// parser for the facts; libavcodec for 8-bit HEVC pictures and grids, libheif's
/// C API for the rest, libavformat for sequences. libvips' heifload is not in
/// the chain: it reads through the same libheif, without EXIF orientation for
/// HEIF and refusing some AVIF crops and rotations.
struct HEIFStep: DecoderStep {
    var library: String { "libavcodec/libheif" }
    func reads(_ format: MediaFormat) -> Bool {
        ["heic", "heif", "avif", "heics", "heifs", "avifs"].contains(format.id)
    }
    func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        try HEIFDecoding(request: request, descriptor: descriptor).decode()
    }
}

/// Video and audio: libavformat and libavcodec.
struct AVMediaStep: DecoderStep {
    var library: String { "libavcodec" }
    func reads(_ format: MediaFormat) -> Bool { format.kind == .video || format.kind == .audio }
    func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        try AVMediaDecoding(request: request, descriptor: descriptor).decodeMedia()
    }
}

/// Still images through libavformat/libavcodec: the formats libvips here has no
/// loader for (BMP, which it reads only through ImageMagick; ICO), and JPEG
/// variants libjpeg-turbo cannot read (12-bit, lossless), which libavcodec's
/// mjpeg decoder can.
///
/// JPEG XL goes to libavcodec (FFmpeg's libjxl wrapper) before libvips: both
/// run libjxl 0.7, but libavcodec reports the image's colour encoding on the
/// frame (PQ, HLG, P3 primaries: converted to SDR sRGB like a video frame),
/// where libvips 8.14 hands over 16-bit PQ samples with only an ICC profile,
/// which a thumbnail shows washed out; and libvips refuses what libjxl 0.7
/// decodes only through its other API (CMYK with layers: "More than 4 channels
/// not supported"). A JPEG XL libavcodec cannot read goes on to libvips.
struct AVStillStep: DecoderStep {
    var library: String { "libavcodec" }
    /// Formats libav reads first: every file of them, so a failure is damage.
    static let primary: Set = ["bmp", "ico"]
    /// Formats libav reads after libvips declined them: a failure is one more "cannot".
    static let fallback: Set = ["jpeg"]
    /// Formats this step reads before libvips without being their only reader:
    /// a failure passes the file on. Empty for the step after libvips.
    let first: Set<String>

    init(first: Set<String> = []) { self.first = first }

    func reads(_ format: MediaFormat) -> Bool {
        first.isEmpty
            ? Self.primary.contains(format.id) || Self.fallback.contains(format.id) : first.contains(format.id)
    }

    func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        try AVMediaDecoding(request: request, descriptor: descriptor).decodeStill(
            primary: first.isEmpty && Self.primary.contains(request.format.id))
    }
}

// MARK: - Formats only a sandboxed helper decodes

/// SVG (librsvg) and Photoshop files (ImageMagick): read only by loaders libvips
/// marks untrusted, so only where ``InProcessDecoder/allowsSandboxOnlyLoaders``
/// is set, i.e. in a sandboxed helper; rendered as documents (type `file` with
/// a thumbnail). The sniffer's format picks the loader and libvips' choice must
/// agree, so ImageMagick never decides what a file is. Unsandboxed, the file is
/// a document whose thumbnail was not made, and the reason says where it would be.
struct SandboxOnlyStep: DecoderStep {
    /// Whether this process is a sandboxed helper.
    let allowed: Bool
    var library: String { allowed ? "libvips \(Vips.version) (sandboxed)" : "librsvg/ImageMagick" }

    /// The loader class (name prefix) of each format only the sandbox decodes.
    static let loaders = ["svg": "VipsForeignLoadSvg", "psd": "VipsForeignLoadMagick"]

    /// Loader class names (prefixes) that only the sandbox may run.
    static let sandboxOnlyLoaders = ["VipsForeignLoadSvg", "VipsForeignLoadMagick"]

    /// ImageMagick has no source loader in libvips 8.14: it reads the file from memory.
    static func readsFromMemory(loader: String) -> Bool { loader.hasPrefix("VipsForeignLoadMagick") }

    func reads(_ format: MediaFormat) -> Bool { Self.loaders[format.id] != nil }

    func decode(_ request: DecodeRequest, descriptor: Int32) throws(MediaError) -> DecodedMedia {
        guard let loader = Self.loaders[request.format.id] else {
            throw MediaError(.unsupported, "no loader for \(request.format.name)")
        }
        guard allowed else {
            let reason = MediaError(
                .unsupported,
                "\(request.label): \(request.format.name) thumbnails are made only in sandboxed decoder helpers (share --isolation process); this decoder runs in-process"
            )
            return DecodedMedia(
                facts: MediaFacts(kind: .document), thumbnail: request.thumbnail.map { _ in .failed(reason) })
        }
        return VipsImageDecoding(request: request, input: .descriptor(descriptor), loader: loader, strict: false)
            .decodeDocument()
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
        func failure(_ error: VipsError) -> MediaError {
            if (strict && !LibraryMessages.namesVariant(error)) || LibraryMessages.namesDamage(error) {
                return MediaError(.damaged, "\(request.label): not a readable \(request.format.name) image: \(error)")
            }
            // A variant libvips here cannot read: the next decoder may.
            return MediaError(.unsupported, "\(error)")
        }
        // The loader is checked before it is built (building one parses the file):
        // a fallback loader never reads what the sniffer did not recognise.
        let chosen: String
        do { chosen = try chosenLoader(input) } catch { throw failure(error) }
        if !loader.isEmpty, !chosen.hasPrefix(loader) {
            // Where libvips reads every valid file of the format, its own loader
            // declining one whose magic bytes matched means the file is damaged.
            if strict {
                throw MediaError(
                    .damaged,
                    "\(request.label): not a readable \(request.format.name) image: libvips' \(request.format.name) loader does not recognise it (only \(chosen) would try; refused)"
                )
            }
            throw MediaError(
                .contentMismatch,
                "\(request.label): looks like \(request.format.name) but libvips would read it with \(chosen); refused")
        }
        // Where any loader is accepted, still never one only a sandbox may run.
        if loader.isEmpty, SandboxOnlyStep.sandboxOnlyLoaders.contains(where: chosen.hasPrefix) {
            throw MediaError(
                .contentMismatch,
                "\(request.label): looks like \(request.format.name) but libvips would read it with \(chosen); refused")
        }
        let header: ImageHeader
        do { header = try ImageHeader.read(input, loader: chosen) } catch { throw failure(error) }
        try PixelLimit(request.pixelLimit).check(header.storedWidth, header.storedHeight, label: request.label)
        let facts = MediaFacts(
            kind: .image, width: header.width, height: header.height, frameCount: header.pages > 1 ? header.pages : nil)
        return DecodedMedia(
            facts: facts,
            thumbnail: request.thumbnail.map { spec in
                // A JPEG's EXIF thumbnail, when it is at least as large as the one wanted.
                if request.format.id == "jpeg", case .descriptor(let descriptor) = input,
                    let embedded = EmbeddedJPEGThumbnail.thumbnail(
                        descriptor: descriptor, storedWidth: header.storedWidth, storedHeight: header.storedHeight,
                        orientation: header.orientation, spec: spec)
                {
                    return .made(embedded)
                }
                return thumbnail(spec, header: header)
            })
    }

    /// The loader libvips would choose for `input`, once the module that provides
    /// the route's loader is loaded (see ``Vips/loadModule(providing:)``).
    private func chosenLoader(_ input: ImageInput) throws(VipsError) -> String {
        Vips.loadModule(providing: loader)
        return try input.loader()
    }

    /// A document's first page (or a drawing, an icon): a thumbnail when it
    /// renders with the route's loader; a document either way.
    func decodeDocument() -> DecodedMedia {
        DecodedMedia(facts: MediaFacts(kind: .document), thumbnail: request.thumbnail.map(documentThumbnail))
    }

    private func documentThumbnail(_ spec: ThumbnailSpec) -> ThumbnailOutcome {
        var input = input
        do {
            if SandboxOnlyStep.readsFromMemory(loader: loader), case .descriptor(let descriptor) = input {
                input = try ImageInput.read(descriptor: descriptor)
            }
            let chosen = try chosenLoader(input)
            guard chosen.hasPrefix(loader) else {
                return .failed(
                    MediaError(
                        .contentMismatch,
                        "\(request.label): looks like \(request.format.name) but libvips would read it with \(chosen); not rendered"
                    ))
            }
        } catch {
            return .failed(MediaError(.damaged, "\(request.label): cannot read \(request.format.name): \(error)"))
        }
        return VipsImageDecoding(request: request, input: input, loader: loader, strict: strict).thumbnail(spec)
    }

    private func thumbnail(_ spec: ThumbnailSpec, header: ImageHeader? = nil) -> ThumbnailOutcome {
        do {
            return .made(try Thumbnailer.thumbnail(input, header: header, spec: spec))
        } catch {
            // A loader that reads only some variants of its format (`strict` false:
            // JPEG XL through libjxl 0.7, JPEG 2000) passes a file it cannot
            // decode on to the next decoder, as a strict one does only for the
            // variants LibraryMessages names.
            let kind = LibraryMessages.kind(of: error) ?? (strict ? .damaged : .unsupported)
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
            var facts = MediaFacts(
                kind: .video, width: video.width, height: video.height, durationMilliseconds: probe.durationMilliseconds
            )
            if let dolbyVision = ColourDescription.StreamHints(media.stream(video.index)).dolbyVision,
                dolbyVision.hasNoCompatibleBase
            {
                // Its samples are IPTPQc2, not Y'CbCr: without Dolby Vision's reshaping
                // there are no true colours to show (see KeyframeDecoder).
                facts.warnings.append(
                    "Dolby Vision profile \(dolbyVision.profile) has no picture without Dolby Vision's own processing: its poster is shown in black and white"
                )
            }
            // A Live Photo's movie shows its still at its still-image time: that frame is the poster.
            let thumbnail = request.thumbnail.map { spec in
                if MomentReader.movieFormats.contains(request.format.id),
                    let stillImageTime = MomentReader.stillImageTime(DescriptorBytes(descriptor)),
                    let frame = exactPoster(of: media, video: video, at: stillImageTime, spec: spec)
                {
                    return frame
                }
                return poster(
                    of: media, video: video, duration: probe.durationMilliseconds, at: spec.posterTime, spec: spec)
            }
            // After the poster: reading the first packets moves the file on.
            facts.video = VideoFactsReader.read(media, video: video)
            return DecodedMedia(facts: facts, thumbnail: thumbnail)
        }
        guard probe.hasAudio else {
            throw MediaError(
                .damaged, "\(request.label): \(request.format.name) file has no decodable video or audio stream")
        }
        let mime = request.format.kind == .video ? Self.audioMIMEType(for: request.format) : nil
        // Cover art (an attached picture) is the thumbnail; no cover, no thumbnail.
        let thumbnail = request.thumbnail.flatMap { spec in
            probe.coverArt.map { cover(of: media, picture: $0, spec: spec) }
        }
        return DecodedMedia(
            facts: MediaFacts(kind: .audio, durationMilliseconds: probe.durationMilliseconds, mimeType: mime),
            thumbnail: thumbnail)
    }

    /// An audio file's cover art: libavformat exposes ID3 APIC, MP4 `covr`, FLAC
    /// PICTURE and Vorbis METADATA_BLOCK_PICTURE as a stream whose one packet
    /// (`attached_pic`) is the picture; decoded like a still (its EXIF orientation
    /// applied), within the pixel limit.
    private func cover(of media: MediaFile, picture: VideoStreamInfo, spec: ThumbnailSpec) -> ThumbnailOutcome {
        do {
            try PixelLimit(request.pixelLimit).check(picture.storedWidth, picture.storedHeight, label: request.label)
            let stream = media.stream(picture.index)
            let decoder = try KeyframeDecoder(
                stream: stream, pixelLimit: request.pixelLimit, targetSize: spec.decodeSize,
                sampleAspect: picture.sampleAspect,
                strict: spec.damageTolerance != .none)
            guard let key = withUnsafeMutablePointer(to: &stream.pointee.attached_pic, { KeyPacket(copying: $0) }),
                key.packet.pointee.size > 0,
                let decoded = try decoder.decode(key)
            else { throw MediaError(.damaged, "the cover art does not decode") }
            return .made(
                try PosterFrame.encode(decoded, rotation: decoded.rotation, mirrored: decoded.mirrored, spec: spec))
        } catch {
            let typed = MediaError(typing: error)
            return .failed(
                MediaError(
                    typed.kind, "\(request.label): cannot decode the cover art (\(picture.codec)): \(typed.message)"))
        }
    }

    /// A still image read by libav: its largest picture (an ICO holds one per
    /// size; the first is often the smallest), its one frame decoded, which also
    /// gives a JPEG's EXIF orientation. `primary`: libav reads every file of the
    /// format, so a failure is damage; otherwise libav was asked after libvips
    /// declined, and a failure is one more `unsupported`.
    func decodeStill(primary: Bool) throws(MediaError) -> DecodedMedia {
        let failure: MediaError.Kind = primary ? .damaged : .unsupported
        // libavformat learns a JPEG's size only by decoding it: the frame header's
        // claim is checked first.
        if request.format == .jpeg, let size = JPEGFrameSize.read(descriptor: descriptor) {
            try PixelLimit(request.pixelLimit).check(size.width, size.height, label: request.label)
        }
        let media: MediaFile
        let probe: MediaProbe
        do {
            (media, probe) = try open(what: "image")
        } catch {
            throw MediaError(error.kind == .damaged ? failure : error.kind, error.message)
        }
        guard
            let picture = probe.pictures.max(by: { $0.storedWidth * $0.storedHeight < $1.storedWidth * $1.storedHeight }
            )
        else {
            throw MediaError(failure, "\(request.label): not a readable \(request.format.name) image")
        }
        try PixelLimit(request.pixelLimit).check(picture.storedWidth, picture.storedHeight, label: request.label)
        // Once libav has found the picture, a failure to decode it is damage (a
        // truncated file fails, as libvips' fail_on makes it, unless the pipeline
        // accepts partial images).
        let decoded: RGBPicture
        do {
            let strict = (request.thumbnail?.damageTolerance ?? .truncated) != .none
            let decoder = try KeyframeDecoder(
                stream: media.stream(picture.index), pixelLimit: request.pixelLimit,
                targetSize: request.thumbnail?.decodeSize ?? 64,
                sampleAspect: picture.sampleAspect, strict: strict)
            guard let key = try decoder.nextKeyPacket(in: media, anyPacket: true) else {
                throw MediaError(failure, "\(request.label): no \(request.format.name) picture data")
            }
            guard let frame = try decoder.decode(key) else {
                throw AVError("avcodec_send_packet", message: "the picture does not decode")
            }
            decoded = frame
        } catch {
            let typed = MediaError(typing: error)
            throw MediaError(
                typed.kind, "\(request.label): cannot decode \(request.format.name) image: \(typed.message)")
        }
        let sideways = decoded.rotation % 180 != 0
        let facts = MediaFacts(
            kind: .image, width: sideways ? picture.height : picture.width,
            height: sideways ? picture.width : picture.height)
        let thumbnail = request.thumbnail.map { spec -> ThumbnailOutcome in
            do {
                return .made(
                    try PosterFrame.encode(decoded, rotation: decoded.rotation, mirrored: decoded.mirrored, spec: spec))
            } catch {
                return .failed(MediaError(typing: error))
            }
        }
        return DecodedMedia(facts: facts, thumbnail: thumbnail)
    }

    private func open(what: String = "file") throws(MediaError) -> (MediaFile, MediaProbe) {
        do {
            let media = try MediaFile(
                descriptor: descriptor, name: request.path, timeLimit: request.timeLimit, pixelLimit: request.pixelLimit
            )
            return (media, try media.probe(duration: what != "image"))
        } catch {
            let kind = LibraryMessages.kind(of: error)
            throw MediaError(kind, "\(request.label): not a readable \(request.format.name) \(what): \(error)")
        }
    }

    private func poster(
        of media: MediaFile, video: VideoStreamInfo, duration: Double?, at seconds: Double, spec: ThumbnailSpec
    ) -> ThumbnailOutcome {
        media.restartClock(seconds: spec.timeLimit)
        do {
            return .made(
                try PosterFrame.thumbnail(
                    of: media, video: video, durationMilliseconds: duration, at: seconds, spec: spec,
                    pixelLimit: request.pixelLimit))
        } catch {
            return .failed(error)
        }
    }

    /// The frame shown at `seconds` (decoded forward from the keyframe before
    /// it), as the poster; nil when it cannot be had (the usual poster is made).
    private func exactPoster(of media: MediaFile, video: VideoStreamInfo, at seconds: Double, spec: ThumbnailSpec)
        -> ThumbnailOutcome?
    {
        media.restartClock(seconds: spec.timeLimit)
        do {
            return .made(
                try PosterFrame.exactFrame(
                    of: media, video: video, at: seconds, spec: spec, pixelLimit: request.pixelLimit))
        } catch {
            return nil
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
            throw MediaError(
                .tooManyPixels,
                "\(label): \(width)×\(height) is over the limit of \(Self.megapixels(pixels)) MP; not decoded")
        }
        throw MediaError(
            .tooManyPixels,
            "\(label): \(width)×\(height) is \(Self.megapixels(width * height)) MP, over the limit of \(Self.megapixels(pixels)) MP; not decoded"
        )
    }

    static func megapixels(_ pixels: Int) -> String {
        let tenths = (pixels + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}
