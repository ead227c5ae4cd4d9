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

    /// A request for `path`'s facts, and its thumbnail when `thumbnail` is given;
    /// its ``MomentFacts`` too when `moments` is true.
    public init(
        path: String, label: String, format: MediaFormat, pixelLimit: Int = 100_000_000, timeLimit: Double = 30, thumbnail: ThumbnailSpec? = nil,
        batch: String? = nil, moments: Bool = false
    ) {
        self.path = path
        self.label = label
        self.format = format
        self.pixelLimit = pixelLimit
        self.timeLimit = timeLimit
        self.thumbnail = thumbnail
        self.batch = batch
        self.moments = moments
    }
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

    /// Facts and, when asked for, the thumbnail's outcome and the moment facts.
    public init(facts: MediaFacts, thumbnail: ThumbnailOutcome? = nil, moments: MomentFacts? = nil) {
        self.facts = facts
        self.thumbnail = thumbnail
        self.moments = moments
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

    /// A thumbnail of `jpeg` bytes, `width`×`height`.
    public init(jpeg: [UInt8], width: Int, height: Int) {
        self.jpeg = jpeg
        self.width = width
        self.height = height
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
