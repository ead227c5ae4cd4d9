// The seam between the pipeline and the code that parses untrusted media bytes.
// Everything here is plain data (Codable, Sendable), so a request and its answer
// can cross a process boundary: the pipeline hands a `DecodeRequest` to a
// `MediaDecoder`, in-process (MediaKit's `InProcessDecoder`) or in a sandboxed
// helper process, and gets back facts and thumbnail bytes, or a typed
// `MediaError` whose kind was decided where the library's answer was understood.

/// Decodes media: reads what a file is (type, displayed size, duration) and
/// makes its thumbnail. Implementations own their threads' library state and
/// must be safe to call from several pipeline workers at once.
public protocol MediaDecoder: Sendable {
    /// Sets up what must exist before any worker thread decodes: called once per
    /// batch on the thread that starts the workers, before it starts them (libvips
    /// must be initialised single-threaded; a helper pool starts its helpers).
    /// Idempotent. A failure here surfaces as each item's decoding error.
    func prepare()

    /// True when a crash inside a decoding library cannot take the caller's
    /// process down (the decoder runs in helper processes). When false, the
    /// pipeline itself watches for files that kill the process (poison items).
    var containsCrashes: Bool { get }

    /// Decodes the file `request` names. Throws only when the file is not usable
    /// media of the requested kind (damaged, over a limit, not what it claims to
    /// be); a thumbnail that could not be made is reported in the result.
    func decode(_ request: DecodeRequest) throws(MediaError) -> DecodedMedia

    /// Told that an item of the batch is to be decoded: the pipeline calls it
    /// when an item's sniff finds media a stage will decode, from that item's
    /// worker thread (so perhaps many times, and at once). A decoder that starts
    /// its decoding processes only when one is needed starts them here, without
    /// waiting for them, so that they load while the item is copied. Never
    /// needed for correctness: ``decode(_:)`` starts what it needs.
    func willDecode()

    /// Told, before a batch is planned, that its inputs' names say media (a
    /// hint: the sniff decides what is decoded). A decoder whose processes are
    /// slow to start may start the slow part now (the helper template loading
    /// its libraries), without waiting for it, so that it loads while the
    /// journal is written and the first item copied. Never needed for
    /// correctness, and never a decode: a wrong hint costs one start.
    func mayDecode()
}

extension MediaDecoder {
    /// Nothing to start ahead (an in-process decoder is set up by ``prepare()``).
    public func willDecode() {}

    /// Nothing to start ahead.
    public func mayDecode() {}
}

/// What to decode and how.
public struct DecodeRequest: Sendable, Codable, Hashable {
    /// The file: the copy in the container (its bytes are untrusted).
    public var path: String
    /// The name people know it by, for messages (`holiday/IMG_0001.HEIC`).
    public var label: String
    /// The format the content sniffer recognised; it decides the decoder.
    public var format: MediaFormat
    /// Frames or images with more pixels than this are refused before decoding.
    public var pixelLimit: Int
    /// Seconds opening and reading the file's facts may take.
    public var timeLimit: Double
    /// The thumbnail wanted, if any (its own time limit is in the spec).
    public var thumbnail: ThumbnailSpec?
    /// The batch the item belongs to (the pipeline gives the batch's UUID). A
    /// decoder that runs helper processes never lets a helper that decoded for
    /// one batch decode for another.
    public var batch: String?
    /// True to read what makes the file part of a moment as well
    /// (``DecodedMedia/moments``): a motion photo's embedded video, Apple's
    /// content identifier, the capture time, a QuickTime still-image time.
    public var moments: Bool
    /// What the request is for: the media (facts, and the thumbnail and
    /// compatible copy when asked for), or only where the file records a location.
    public var task: DecodeTask
    /// The full-resolution JPEG wanted, if any (``CompatibleCopySpec``); never
    /// asked for together with a thumbnail.
    public var compatibleCopy: CompatibleCopySpec?
    /// The bytes of Google Takeout JSON sidecars of the file (each at most
    /// ``TakeoutJSON/maximumSize``), read with it in the same request: the
    /// answer has one ``TakeoutReading`` for each (``DecodedMedia/takeouts``).
    /// Untrusted bytes like the file's, so they are parsed where the file is.
    /// Not part of the request's JSON: the helper protocol carries them raw
    /// after it, as it carries a thumbnail's bytes after the answer's JSON.
    public var takeoutJSONs: [[UInt8]] = []
    /// For a ``DecodeTask/locationMetadata`` request: true when the names of
    /// the place go too (a city, a country), not only its coordinates.
    public var placeNames = false

    /// The most Takeout JSONs one request carries.
    public static let maximumTakeoutJSONs = 4

    /// A request for `path`'s facts, and its thumbnail when `thumbnail` is given;
    /// its ``MomentFacts`` too when `moments` is true.
    public init(
        path: String, label: String, format: MediaFormat, pixelLimit: Int = 100_000_000, timeLimit: Double = 30,
        thumbnail: ThumbnailSpec? = nil,
        batch: String? = nil, moments: Bool = false, task: DecodeTask = .media,
        compatibleCopy: CompatibleCopySpec? = nil
    ) {
        self.path = path
        self.label = label
        self.format = format
        self.pixelLimit = pixelLimit
        self.timeLimit = timeLimit
        self.thumbnail = thumbnail
        self.batch = batch
        self.moments = moments
        self.task = task
        self.compatibleCopy = compatibleCopy
    }

    private enum CodingKeys: String, CodingKey {
        case path, label, format, pixelLimit, timeLimit, thumbnail, batch, moments, task, compatibleCopy, placeNames
    }

    /// Reads a request; one without `task` (an older sender) is a media request,
    /// one without `moments` asks for none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        path = try c.decode(String.self, forKey: .path)
        label = try c.decode(String.self, forKey: .label)
        format = try c.decode(MediaFormat.self, forKey: .format)
        pixelLimit = try c.decode(Int.self, forKey: .pixelLimit)
        timeLimit = try c.decode(Double.self, forKey: .timeLimit)
        thumbnail = try c.decodeIfPresent(ThumbnailSpec.self, forKey: .thumbnail)
        batch = try c.decodeIfPresent(String.self, forKey: .batch)
        moments = try c.decodeIfPresent(Bool.self, forKey: .moments) ?? false
        task = try c.decodeIfPresent(DecodeTask.self, forKey: .task) ?? .media
        compatibleCopy = try c.decodeIfPresent(CompatibleCopySpec.self, forKey: .compatibleCopy)
        placeNames = try c.decodeIfPresent(Bool.self, forKey: .placeNames) ?? false
    }
}

/// What a ``DecodeRequest`` is for.
public enum DecodeTask: String, Sendable, Codable, Hashable {
    /// Decode the media: its facts, and the thumbnail and compatible copy when asked for.
    case media
    /// Find where the file records a location (``LocationMetadata``), for
    /// location privacy: only metadata structures are read, no pixel is
    /// decoded, and the reply's facts are the format's kind alone (no size).
    /// (Where a Google Takeout JSON records a place is such a request of the
    /// text format.)
    case locationMetadata
    /// Decode the picture to pixels its caller composes into a picture of its
    /// own (the contact sheet's tiles: thumbnails this program made, whose
    /// bytes a decoder helper chose): shrunk on load to fit the request's
    /// ``DecodeRequest/thumbnail`` size (never enlarged, EXIF orientation
    /// applied, alpha over white), as ``DecodedPixels``. The facts are the
    /// kind alone.
    case pixels
    /// Draw a contact sheet: the file is a ``ContactSheetPlan`` (``ContactSheetPlan/encoded()``:
    /// the tiles' pixels, captions and layout, made by the process that asked),
    /// and the answer is the sheet as the thumbnail (a JPEG at exactly the
    /// plan's ``ContactSheetPlan/size``, the request's thumbnail size its longer
    /// side), with facts of an image of that size. No media file is read.
    case contactSheet
}

/// Pixels a decoder made for its caller to compose (``DecodeTask/pixels``):
/// 8-bit sRGB, three samples (R, G, B) a pixel, rows of `width × 3` bytes one
/// after the other (`stride` is that).
public struct DecodedPixels: Sendable, Codable, Hashable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Bytes from one row to the next: `width × 3`.
    public let stride: Int
    /// `stride × height` bytes.
    public let bytes: [UInt8]

    /// Pixels of the given size, or nil unless `width` and `height` are
    /// positive, `stride` is `width × 3` and there are exactly `stride × height` bytes.
    public init?(width: Int, height: Int, stride: Int, bytes: [UInt8]) {
        guard width > 0, height > 0, width <= 1 << 15, height <= 1 << 15, stride == width * 3,
            bytes.count == stride * height
        else { return nil }
        self.width = width
        self.height = height
        self.stride = stride
        self.bytes = bytes
    }

    private enum CodingKeys: String, CodingKey { case width, height, stride, bytes }

    /// Reads pixels, refusing any whose sizes do not agree (as ``init(width:height:stride:bytes:)``).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard
            let pixels = DecodedPixels(
                width: try c.decode(Int.self, forKey: .width), height: try c.decode(Int.self, forKey: .height),
                stride: try c.decode(Int.self, forKey: .stride), bytes: try c.decode([UInt8].self, forKey: .bytes))
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .bytes, in: c, debugDescription: "pixels whose sizes do not agree")
        }
        self = pixels
    }
}

/// What a Google Takeout JSON sent with a media request
/// (``DecodeRequest/takeoutJSONs``) was read as: its few facts, or why it is
/// not one (not JSON, nested too deep, no `title`, too large).
public enum TakeoutReading: Sendable, Codable, Hashable {
    /// What the JSON says.
    case read(TakeoutSidecar)
    /// Why it was not read as a Takeout JSON, in words.
    case refused(String)
}

/// What decoding found out.
public struct DecodedMedia: Sendable, Codable, Hashable {
    /// The media's facts.
    public var facts: MediaFacts
    /// The thumbnail, when one was asked for: made, or why not.
    public var thumbnail: ThumbnailOutcome?
    /// What makes the file part of a moment, when ``DecodeRequest/moments`` asked
    /// for it (nil when the file holds none of it).
    public var moments: MomentFacts?
    /// Where the file records a location, for a ``DecodeTask/locationMetadata`` request.
    public var location: LocationMetadata?
    /// The compatible copy, when one was asked for: made, or why not.
    public var compatibleCopy: CompatibleCopyOutcome?
    /// One reading of each Takeout JSON the request carried
    /// (``DecodeRequest/takeoutJSONs``), in their order.
    public var takeouts: [TakeoutReading]
    /// The pixels a ``DecodeTask/pixels`` request asked for.
    public var pixels: DecodedPixels?

    /// Facts and, when asked for, the thumbnail's outcome, the moment facts,
    /// the location metadata found, the compatible copy's outcome and the
    /// readings of the Takeout JSONs sent with the file.
    public init(
        facts: MediaFacts, thumbnail: ThumbnailOutcome? = nil, moments: MomentFacts? = nil,
        location: LocationMetadata? = nil,
        compatibleCopy: CompatibleCopyOutcome? = nil, takeouts: [TakeoutReading] = []
    ) {
        self.takeouts = takeouts
        self.facts = facts
        self.thumbnail = thumbnail
        self.moments = moments
        self.location = location
        self.compatibleCopy = compatibleCopy
    }
}

/// A thumbnail, or the reason there is none.
public enum ThumbnailOutcome: Sendable, Codable, Hashable {
    /// The JPEG was made.
    case made(Thumbnail)
    /// It could not be made (for an image this fails the item; for a video or a
    /// document it is a warning).
    case failed(MediaError)
}

/// What a file turned out to be once opened.
public struct MediaFacts: Sendable, Codable, Hashable {
    /// What the content is, as a person would say.
    public enum Kind: String, Sendable, Codable, Hashable {
        /// A still or animated image (or a document's first page, for documents).
        case image
        /// Moving pictures: at least one decodable video stream that is not cover art.
        case video
        /// Sound only (cover art does not make it a video).
        case audio
        /// A document (PDF): a page, not a photo.
        case document
        /// A format the decoders here cannot read; delivered as a plain file.
        case unreadable
    }

    /// What the content is.
    public var kind: Kind
    /// Displayed width: after EXIF orientation, video rotation, square pixels and crop.
    public var width: Int?
    /// Displayed height (see ``width``).
    public var height: Int?
    /// Duration in milliseconds, `round(seconds * 1000)` (video and audio).
    public var durationMilliseconds: Double?
    /// Frames of an animation or pages of a document (nil for a single picture).
    public var frameCount: Int?
    /// The MIME type when opening the file corrected the sniffer's (an MP4 with only
    /// audio is `audio/mp4`).
    public var mimeType: String?
    /// Things a person should know that do not fail the item.
    public var warnings: [String]
    /// How a video plays (codec, frame rate, HDR, rotation, audio); nil for other kinds.
    public var video: VideoFacts?
    /// A panorama's projection (GPano XMP); nil for a flat picture.
    public var projection: Projection?
    /// True for a stereo pair: a HEIC with a `ster` entity group, an MV-HEVC video.
    public var stereo: Bool?
    /// True for a photo that carries an HDR gain map (Ultra HDR, Apple's, a `tmap` item).
    public var gainMap: Bool?

    /// Facts of a file of `kind`.
    public init(
        kind: Kind, width: Int? = nil, height: Int? = nil, durationMilliseconds: Double? = nil, frameCount: Int? = nil,
        mimeType: String? = nil, warnings: [String] = []
    ) {
        self.kind = kind
        self.width = width
        self.height = height
        self.durationMilliseconds = durationMilliseconds
        self.frameCount = frameCount
        self.mimeType = mimeType
        self.warnings = warnings
    }
}

/// An encoded thumbnail and its size.
public struct Thumbnail: Sendable, Codable, Hashable {
    /// JPEG bytes.
    public let jpeg: [UInt8]
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The ThumbHash of the thumbnail's pixels (``ThumbHash``), when one was made.
    public let thumbHash: [UInt8]?
    /// The 64-bit perceptual hash of the thumbnail's pixels (``PerceptualHash``),
    /// when one was made: what near-duplicates are found by.
    public var perceptualHash: UInt64?
    /// The mean colours of a 4×4 grid of cells over the thumbnail
    /// (``PerceptualHash/colourCells(width:height:rgba:)``), made with its
    /// perceptual hash: the second check before naming a near-duplicate.
    public var colourCells: [UInt8]?
    /// The previews the spec asked for (``ThumbnailSpec/previews``), smallest
    /// first, made from the same decode; nil when none were asked for.
    public var previews: [EncodedPicture]?
    /// The gain map carried into the thumbnail (an Ultra HDR source's), when
    /// there is one: written with it as an Ultra HDR JPEG.
    public var gainMap: GainMapPicture?

    /// A thumbnail of `jpeg` bytes, `width`×`height`.
    public init(jpeg: [UInt8], width: Int, height: Int, thumbHash: [UInt8]? = nil) {
        self.jpeg = jpeg
        self.width = width
        self.height = height
        self.thumbHash = thumbHash
    }
}

/// Why media could not be decoded: a kind decided where the library's answer was
/// understood (the pipeline matches on it, never on message text), and the
/// message a person reads, naming the file and what the library said.
public struct MediaError: Error, Sendable, Codable, Hashable, CustomStringConvertible {
    /// The kinds of decoding failure.
    public enum Kind: String, Sendable, Codable, Hashable, CaseIterable {
        /// Truncated or corrupt: the content is the claimed format but broken.
        case damaged
        /// The bytes are not the format the sniffer saw (a fallback loader would read them as something else).
        case contentMismatch
        /// A frame or image larger than the pixel limit; refused before decoding.
        case tooManyPixels
        /// Took longer than its time limit.
        case timeLimit
        /// Needed more memory than its limit (a decoder helper's address-space limit).
        case memoryLimit
        /// The decoder process died (a signal: a crash in a decoding library).
        case decoderCrashed
        /// The decoder process answered with something the caller's checks refuse
        /// (facts outside the limits, a thumbnail that is not the JPEG asked for),
        /// or its sandbox was weaker than required: it was stopped.
        case decoderMisbehaved
        /// No decoder here reads this variant of the format.
        case unsupported
        /// Reading the file failed (I/O error, vanished).
        case unreadable
    }

    /// What kind of failure.
    public let kind: Kind
    /// The message for people.
    public let message: String

    /// A failure of `kind`, with its message.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The ``message``.
    public var description: String { message }
}

// MARK: - Location privacy

/// Where a file records a location, found by the decoder (which alone parses
/// the untrusted bytes) and removed by its caller: each place as the byte
/// ranges of the copy to overwrite, never a new layout. Blanking values and
/// structures in place keeps every other offset in the file valid, so nothing
/// else (pixels, capture date, orientation, other metadata) changes.
public struct LocationMetadata: Sendable, Codable, Hashable {
    /// Each place the file records a location, in file order.
    public var found: [LocationRecord]
    /// Location metadata that cannot be removed in place (a compressed XMP
    /// packet, a structure the parser cannot read), each said in words: a file
    /// with any is not delivered under location privacy.
    public var unremovable: [String]

    /// What a scan found.
    public init(found: [LocationRecord] = [], unremovable: [String] = []) {
        self.found = found
        self.unremovable = unremovable
    }

    /// True when the file records no location at all.
    public var isEmpty: Bool { found.isEmpty && unremovable.isEmpty }
}

/// One place a file records a location, and how to remove it.
public struct LocationRecord: Sendable, Codable, Hashable {
    /// What it is, for people and reports: `EXIF GPS (GPSLatitude, GPSLongitude, …)`,
    /// `XMP exif:GPSLatitude`, `QuickTime ©xyz`, `QuickTime com.apple.quicktime.location.ISO6709`, `MP4 loci`.
    public var name: String
    /// The overwrites that remove it.
    public var edits: [MetadataEdit]

    /// A place named `name`, removed by `edits`.
    public init(name: String, edits: [MetadataEdit]) {
        self.name = name
        self.edits = edits
    }
}

/// One overwrite of a byte range of the copy, with bytes its caller makes
/// itself: zeros, spaces, an ISO box turned into `free`, or a PNG chunk's
/// CRC recomputed. The decoder says where, never what bytes to write, so a
/// decoder taken over by a hostile file can destroy bytes of the copy it was
/// given but never put content of its own into it.
public struct MetadataEdit: Sendable, Codable, Hashable {
    /// What is written over the range.
    public enum Fill: String, Sendable, Codable, Hashable, CaseIterable {
        /// Zero bytes (binary values and structures: a TIFF IFD, a box's payload).
        case zeros
        /// ASCII spaces: XML stays well formed where an XMP property was.
        case spaces
        /// The range is a whole ISO box with a 32-bit size (which must equal the
        /// range's length): its type becomes `free` and its payload zeros, so
        /// readers skip it.
        case freeBox
        /// The range is a whole PNG chunk (length, type, data, CRC): its CRC is
        /// recomputed over its type and data as they now are.
        case pngCRC
    }

    /// Where the range starts in the file.
    public var offset: Int
    /// Its length in bytes.
    public var length: Int
    /// What is written over it.
    public var fill: Fill
    /// Edits are made in steps, each durable (fsynced) before the next: values
    /// first (0), then the tables that point at them (1), then counts and
    /// pointers (2), then checksums (3). Interrupted anywhere, a file still
    /// shows the structures that lead to what is left, so scanning it again
    /// finds and removes the rest.
    public var step: Int

    /// An overwrite of `length` bytes at `offset`.
    public init(offset: Int, length: Int, fill: Fill, step: Int) {
        self.offset = offset
        self.length = length
        self.fill = fill
        self.step = step
    }

    /// The range in the file.
    public var range: Range<Int> { offset..<(offset + length) }
}

// MARK: - Compatible copy

/// A full-resolution JPEG of a photo, for apps that cannot open its format
/// (HEIC/HEIF, AVIF, JPEG XL, camera RAW): iOS's "Most Compatible". Made by
/// the decoder from the same pictures as the thumbnail (orientation applied,
/// HDR and wide gamut converted to SDR sRGB, a RAW from its largest preview),
/// at their full size, with the capture metadata kept.
public struct CompatibleCopySpec: Sendable, Codable, Hashable {
    /// JPEG quality (1–100).
    public var quality: Int
    /// Whether its EXIF may carry the source's GPS (false under location privacy).
    public var keepsLocation: Bool
    /// Seconds making it may take (nil: the request's own limit).
    public var timeLimit: Double?
    /// The largest JPEG that may come back, in bytes.
    public var maximumBytes: Int

    /// A spec; the defaults: quality 90, no location, 60 s, 48 MiB.
    public init(quality: Int = 90, keepsLocation: Bool = false, timeLimit: Double? = 60, maximumBytes: Int = 48 << 20) {
        self.quality = quality
        self.keepsLocation = keepsLocation
        self.timeLimit = timeLimit
        self.maximumBytes = maximumBytes
    }
}

/// A compatible copy, or the reason there is none.
public enum CompatibleCopyOutcome: Sendable, Codable, Hashable {
    /// The JPEG was made.
    case made(CompatibleCopy)
    /// It could not be made (the item is still delivered, with a warning).
    case failed(MediaError)
}

/// A compatible copy: JPEG bytes, their size, and what metadata they carry.
public struct CompatibleCopy: Sendable, Codable, Hashable {
    /// JPEG bytes.
    public let jpeg: [UInt8]
    /// Width in pixels (upright).
    public let width: Int
    /// Height in pixels (upright).
    public let height: Int
    /// What the JPEG carries over from the source, in words (`EXIF: Make,
    /// Model, DateTimeOriginal, …`, `ICC profile (548 bytes)`).
    public let metadata: [String]

    /// A copy of `jpeg` bytes, `width`×`height`.
    public init(jpeg: [UInt8], width: Int, height: Int, metadata: [String] = []) {
        self.jpeg = jpeg
        self.width = width
        self.height = height
        self.metadata = metadata
    }

    /// Whether the copy is what a photo displayed at `width`×`height` should
    /// get: its full size (within two pixels of rounding), or, from a RAW's
    /// embedded `preview`, at most that size and of its shape within 2 %.
    public func fits(width mediaWidth: Int, height mediaHeight: Int, preview: Bool) -> Bool {
        guard width >= 1, height >= 1, mediaWidth >= 1, mediaHeight >= 1, width <= mediaWidth + 2,
            height <= mediaHeight + 2
        else { return false }
        guard preview else { return abs(width - mediaWidth) <= 2 && abs(height - mediaHeight) <= 2 }
        let skew = abs(Double(width) / Double(height) / (Double(mediaWidth) / Double(mediaHeight)) - 1)
        return skew <= 0.02 || abs(width * mediaHeight - height * mediaWidth) <= 2 * max(mediaWidth, mediaHeight)
    }
}
