// What makes a file part of a moment (a motion photo's video, a Live Photo's
// other half), as the decoder reads it from the untrusted bytes: plain data
// that crosses the process boundary with the facts, and that the parent checks
// (ranges within the file, identifiers of a sane length and alphabet, dates
// within a sane span) before it uses any of it.

/// What a file says about the moment it belongs to (``DecodeRequest/moments``).
public struct MomentFacts: Sendable, Codable, Hashable {
    /// The video a motion photo carries inside it, when there is one.
    public var embeddedVideo: EmbeddedVideo?
    /// True when the file's metadata says it is a motion photo (Google's XMP
    /// `MotionPhoto` or `MicroVideo`, a Samsung `MotionPhoto_Data` entry, an
    /// `mpvd` box), whether or not the video is still there: an editor that
    /// removed it often leaves the XMP.
    public var declaresMotionPhoto: Bool
    /// Apple's content identifier, which a Live Photo's still and video share: the
    /// still's Apple maker note tag 0x0011, the QuickTime movie's
    /// `com.apple.quicktime.content.identifier`.
    public var contentIdentifier: String?
    /// Apple's burst identifier, which the frames of one burst share: the
    /// still's Apple maker note tag 0x000B (`BurstUUID`). Same alphabet as
    /// ``contentIdentifier``.
    public var burstIdentifier: String?
    /// When the picture or the movie was taken.
    public var captureTime: CaptureTime?
    /// A QuickTime movie's `com.apple.quicktime.still-image-time` (timed
    /// metadata): the moment, in seconds from its start, that the Live Photo's
    /// still shows. The poster is that frame.
    public var stillImageTime: Double?
    /// Where the picture or movie was taken, as its metadata says (EXIF GPS,
    /// QuickTime's ISO 6709 location): only to find the capture time's offset
    /// from the place's time zone (never reported).
    public var position: CapturePosition?
    /// What took it, as its metadata says (EXIF `Make`, `Model`, `LensModel`;
    /// QuickTime's `com.apple.quicktime.make` and `model`).
    public var camera: CameraFacts?

    /// Moment facts; everything is optional.
    public init(
        embeddedVideo: EmbeddedVideo? = nil, declaresMotionPhoto: Bool = false, contentIdentifier: String? = nil,
        captureTime: CaptureTime? = nil,
        stillImageTime: Double? = nil, burstIdentifier: String? = nil, position: CapturePosition? = nil,
        camera: CameraFacts? = nil
    ) {
        self.embeddedVideo = embeddedVideo
        self.declaresMotionPhoto = declaresMotionPhoto
        self.contentIdentifier = contentIdentifier
        self.captureTime = captureTime
        self.stillImageTime = stillImageTime
        self.burstIdentifier = burstIdentifier
        self.position = position
        self.camera = camera
    }

    /// True when nothing was found.
    public var isEmpty: Bool {
        embeddedVideo == nil && !declaresMotionPhoto && contentIdentifier == nil && captureTime == nil
            && stillImageTime == nil && burstIdentifier == nil
            && position == nil && camera == nil
    }

    /// True for a content identifier a decoder may report and the parent
    /// accepts: 1–100 characters of `A–Z a–z 0–9 -` (Apple writes an upper-case
    /// UUID).
    public static func isValidIdentifier(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return (1...100).contains(bytes.count)
            && bytes.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D
            }
    }
}

/// The camera a file says took it: its maker, model and lens, each only where
/// the file says (never from a maker note). Each value is text a file may make
/// up, so only ``cleaned(_:)`` values are kept: the decoder cleans what it
/// reads, and the parent cleans a helper's reply again before it uses it.
public struct CameraFacts: Sendable, Codable, Hashable {
    /// The maker (EXIF `Make`, QuickTime `com.apple.quicktime.make` or `©mak`).
    public var make: String?
    /// The model (EXIF `Model`, QuickTime `com.apple.quicktime.model` or `©mod`).
    public var model: String?
    /// The lens (EXIF `LensModel`, as written).
    public var lens: String?

    /// Camera facts; nil values where the file says nothing.
    public init(make: String? = nil, model: String? = nil, lens: String? = nil) {
        self.make = make
        self.model = model
        self.lens = lens
    }

    /// The longest value kept, in UTF-8 bytes (after cleaning); a longer one is dropped.
    public static let maximumBytes = 64

    /// `text` as a value to keep: control characters (C0 with NUL, DEL, C1)
    /// made spaces, spaces trimmed at both ends (EXIF pads with them) and runs
    /// of them made one; nil when nothing is left or it is longer than
    /// ``maximumBytes``.
    public static func cleaned(_ text: String?) -> String? {
        guard let text, text.utf8.count <= 16 * maximumBytes else { return nil }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let value = scalar.value
            let kept: Unicode.Scalar = value < 0x20 || (0x7F...0x9F).contains(value) ? " " : scalar
            if kept == " ", scalars.last == " " || scalars.isEmpty { continue }
            scalars.append(kept)
        }
        while scalars.last == " " { scalars.removeLast() }
        let kept = String(scalars)
        return kept.isEmpty || kept.utf8.count > maximumBytes ? nil : kept
    }

    /// These facts with every value ``cleaned(_:)``; nil when none is left.
    public var cleaned: CameraFacts? {
        let facts = CameraFacts(make: Self.cleaned(make), model: Self.cleaned(model), lens: Self.cleaned(lens))
        return facts.make == nil && facts.model == nil && facts.lens == nil ? nil : facts
    }
}

/// A position on Earth (WGS84 degrees) a file's metadata gives. A decoder
/// reports only positions that are ``isPlausible``, and the parent refuses a
/// reply with any other (``problem``) before it looks one up.
public struct CapturePosition: Sendable, Codable, Hashable {
    /// Degrees north (negative: south), −90…90.
    public var latitude: Double
    /// Degrees east (negative: west), −180…180.
    public var longitude: Double

    /// A position.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Finite, within ±90° and ±180°, and not 0, 0 (what a device writes when it knows none).
    public var isPlausible: Bool { problem == nil }

    /// What is wrong with it; nil when it is plausible.
    public var problem: String? {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude)
        else {
            return "a position of \(latitude), \(longitude)"
        }
        return latitude == 0 && longitude == 0 ? "the position 0, 0" : nil
    }

    /// The position an ISO 6709 string in decimal degrees gives
    /// (`+48.8584+002.2945+035.000/`, `-33.8568+151.2153/`), as QuickTime's
    /// `©xyz` and `com.apple.quicktime.location.ISO6709` hold it; nil for any
    /// other text or an implausible position.
    public init?(iso6709 text: String) {
        var numbers: [Double] = []
        var current = ""
        for character in text {
            if character == "+" || character == "-" || character == "/" {
                if !current.isEmpty {
                    guard let value = Double(current) else { return nil }
                    numbers.append(value)
                }
                current = character == "/" ? "" : String(character)
                if character == "/" { break }
            } else if character.isASCII, character.isNumber || character == "." {
                guard !current.isEmpty, current.count < 32 else { return nil }
                current.append(character)
            } else {
                return nil
            }
        }
        if !current.isEmpty, let value = Double(current) { numbers.append(value) }
        guard numbers.count >= 2 else { return nil }
        self.init(latitude: numbers[0], longitude: numbers[1])
        guard isPlausible else { return nil }
    }
}

/// Where a motion photo's video is inside the file: a byte range the parent
/// copies out without parsing it.
public struct EmbeddedVideo: Sendable, Codable, Hashable {
    /// How the video was found.
    public enum Layout: String, Sendable, Codable, Hashable, CaseIterable {
        /// Google's motion photo XMP: `Container:Directory` item lengths
        /// (and paddings), counted from the end of the file.
        case containerDirectory
        /// The older Google XMP `GCamera:MicroVideoOffset`: the video's distance
        /// from the end of the file.
        case microVideo
        /// Samsung's trailer (`SEFH` … `SEFT` at the end of the file): its
        /// `MotionPhoto_Data` entry.
        case samsungTrailer
        /// An `mpvd` box in a HEIC/HEIF (Samsung, Android).
        case heifMotionBox
        /// No layout said where: an MP4 `ftyp` found after the primary image's
        /// end (a JPEG's EOI, a HEIF's last box).
        case appended
    }

    /// How it was found.
    public var layout: Layout
    /// Its first byte's offset in the file (an MP4 `ftyp` box).
    public var offset: Int
    /// Its length in bytes: its MP4 boxes, up to the end of the file when cut short.
    public var length: Int
    /// True when the file ends inside the video (a box runs past the end, or the
    /// metadata promised more bytes than the file holds).
    public var truncated: Bool

    /// A video at `offset`, `length` bytes long.
    public init(layout: Layout, offset: Int, length: Int, truncated: Bool = false) {
        self.layout = layout
        self.offset = offset
        self.length = length
        self.truncated = truncated
    }

    /// The byte range in the file.
    public var range: Range<Int> { offset..<(offset + length) }
}

/// When a picture or a movie was taken, as its metadata says: the wall-clock
/// time (EXIF `DateTimeOriginal`, QuickTime `creationdate`), the instant when
/// the zone is known (EXIF `OffsetTimeOriginal`, a QuickTime date's offset, an
/// `mvhd` time in UTC), or both.
public struct CaptureTime: Sendable, Codable, Hashable {
    /// Which metadata said it.
    public enum Source: String, Sendable, Codable, Hashable, CaseIterable {
        /// EXIF `DateTimeOriginal` (+ `SubSecTimeOriginal`, `OffsetTimeOriginal`).
        case exif
        /// QuickTime `com.apple.quicktime.creationdate` (with its offset).
        case quicktime
        /// The movie header's (`mvhd`) creation time, in UTC.
        case mp4
    }

    /// The wall-clock time as written, in seconds since 1970-01-01 00:00 of that clock (milliseconds kept).
    public var local: Double?
    /// The instant, in seconds since 1970-01-01 00:00 UTC.
    public var utc: Double?
    /// The instant the EXIF GPS date and time stamp (UTC) give, when the still
    /// has them: with ``local`` and no ``utc``, it recovers the offset.
    public var gps: Double?
    /// Where ``local`` and ``utc`` came from (nil in records written before it was kept).
    public var source: Source?

    /// A capture time; at least one of the two should be given.
    public init(local: Double? = nil, utc: Double? = nil, gps: Double? = nil, source: Source? = nil) {
        self.local = local
        self.utc = utc
        self.gps = gps
        self.source = source
    }

    /// True for a time cameras and tools write when they know none: the first
    /// day of 1970 (the Unix epoch) or of 1904 (QuickTime's), a day either side
    /// for the offsets. `0000:00:00` never parses at all.
    public static func isPlaceholder(_ seconds: Double) -> Bool {
        abs(seconds) < 2 * 86_400 || abs(seconds + 2_082_844_800) < 2 * 86_400
    }

    /// Seconds between two capture times when they can be compared (both
    /// instants, or both wall clocks); nil when they cannot.
    public func distance(to other: CaptureTime) -> Double? {
        if let a = utc, let b = other.utc { return abs(a - b) }
        if let a = local, let b = other.local { return abs(a - b) }
        return nil
    }

    /// The span the parent accepts: 1900-01-01 to 2200-01-01.
    public static let plausible: ClosedRange<Double> = -2_208_988_800...7_258_118_400
}
