/// How much damage a loader tolerates (libvips' `fail_on`).
public enum DamageTolerance: String, Sendable, Codable, Hashable, CaseIterable {
    /// Partial images of truncated files are thumbnailed.
    case none
    /// A truncated file is an error.
    case truncated
    /// Any decoder error is an error.
    case error
}

/// How previews are encoded.
public enum PreviewFormat: String, Sendable, Codable, Hashable, CaseIterable {
    /// `image/jpeg`, `.jpg`.
    case jpeg
    /// `image/webp`, `.webp` (lossy).
    case webp

    /// The MIME type of a preview in this format.
    public var mimeType: String { self == .jpeg ? "image/jpeg" : "image/webp" }
    /// The file extension, without the dot.
    public var fileExtension: String { self == .jpeg ? "jpg" : "webp" }
}

/// A thumbnail's settings, as a pipeline sets them.
public struct ThumbnailSpec: Sendable, Codable, Hashable {
    /// The longest side of the thumbnail, in pixels.
    public var size: Int
    /// JPEG quality, 1–100.
    public var quality: Int
    /// What a truncated or damaged image gives (a partial thumbnail or a failure).
    public var damageTolerance: DamageTolerance
    /// Decoding is abandoned after this many seconds.
    public var timeLimit: Double?
    /// A video's poster is the keyframe nearest to this many seconds (clamped into the video).
    public var posterTime: Double
    /// Larger pictures made from the same decode as the thumbnail (nil: none,
    /// the default); each is encoded as `previews.format`.
    public var previews: PreviewSizes?
    /// A photo's HDR gain map is carried into its thumbnail and JPEG previews
    /// (issue 54; the default). False: they stay SDR, as a photo without one gets,
    /// and no time is spent on the map.
    public var gainMaps = true
    /// A picture with an ICC profile is converted from it to sRGB (the default:
    /// a thumbnail or preview carries no profile). False: its values are kept
    /// in the profile's colours (a compatible copy, which carries the profile).
    public var convertsToSRGB = true

    /// A spec with the `default` pipeline's values unless given.
    public init(
        size: Int = 360, quality: Int = 80, damageTolerance: DamageTolerance = .truncated, timeLimit: Double? = 30,
        posterTime: Double = 1
    ) {
        self.size = size
        self.quality = quality
        self.damageTolerance = damageTolerance
        self.timeLimit = timeLimit
        self.posterTime = posterTime
    }
}

/// The previews a thumbnail spec asks for beside the thumbnail: longest sides
/// (each larger than the thumbnail's, ascending) and their encoding.
public struct PreviewSizes: Sendable, Codable, Hashable {
    /// Longest sides in pixels, ascending, each larger than the thumbnail's size.
    public var sizes: [Int]
    /// How they are encoded.
    public var format: PreviewFormat

    /// Previews of `sizes` (longest sides), encoded as `format`.
    public init(sizes: [Int], format: PreviewFormat) {
        self.sizes = sizes
        self.format = format
    }
}

extension ThumbnailSpec {
    /// The longest side the picture is decoded at: the largest preview's, else
    /// the thumbnail's ``size`` (with no previews every decode is what it was).
    public var decodeSize: Int { max(size, previews?.sizes.max() ?? 0) }
}

/// A picture encoded at one of the sizes a pipeline asked for.
public struct EncodedPicture: Sendable, Codable, Hashable {
    /// The encoded bytes (JPEG or WebP).
    public let bytes: [UInt8]
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// How `bytes` are encoded.
    public let format: PreviewFormat
    /// A JPEG preview's gain map (an Ultra HDR source's), when there is one.
    public var gainMap: GainMapPicture?

    /// A picture of `bytes`, `width`×`height`, encoded as `format`.
    public init(bytes: [UInt8], width: Int, height: Int, format: PreviewFormat) {
        self.bytes = bytes
        self.width = width
        self.height = height
        self.format = format
    }
}
