// Pure Swift (no C imports): the pipeline loader and its fuzz target use these
// without linking libvips.

/// How much damage a loader tolerates (libvips' `fail_on`).
public enum DamageTolerance: String, Sendable, Codable, CaseIterable {
    /// Partial images of truncated files are thumbnailed.
    case none
    /// A truncated file is an error.
    case truncated
    /// Any decoder error is an error.
    case error
}

/// A thumbnail's settings, as a pipeline sets them.
public struct ThumbnailSpec: Sendable, Hashable {
    /// The longest side of the thumbnail, in pixels.
    public var size: Int
    /// JPEG quality, 1–100.
    public var quality: Int
    public var damageTolerance: DamageTolerance
    /// Decoding is abandoned after this many seconds (`vips_image_set_kill`).
    public var timeLimit: Double?

    public init(size: Int = 360, quality: Int = 80, damageTolerance: DamageTolerance = .truncated, timeLimit: Double? = 30) {
        self.size = size
        self.quality = quality
        self.damageTolerance = damageTolerance
        self.timeLimit = timeLimit
    }
}
