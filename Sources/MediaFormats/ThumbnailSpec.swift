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

    /// A spec with the `default` pipeline's values unless given.
    public init(size: Int = 360, quality: Int = 80, damageTolerance: DamageTolerance = .truncated, timeLimit: Double? = 30, posterTime: Double = 1) {
        self.size = size
        self.quality = quality
        self.damageTolerance = damageTolerance
        self.timeLimit = timeLimit
        self.posterTime = posterTime
    }
}
