/// The stages of a pipeline, in the only order they can run.
public enum StageName: String, Sendable, Codable, CodingKeyRepresentable, CaseIterable, Comparable {
    /// Reads the first KB of a source: format, extension, MIME type.
    case sniff
    /// Copies the source into the container under `<UUID>.<ext>`.
    case copy
    /// Location privacy: blanks the location metadata in the copy (never the source).
    case location
    /// Opens the media: confirms the type, reads dimensions and duration.
    case probe
    /// Makes the JPEG thumbnail (images, video posters, PDF first pages).
    case thumbnail
    /// Copies a motion photo's embedded video out as an item file of its own
    /// (probed, with a poster); Live Photo halves are paired by the fan-in.
    case motion
    /// Writes a full-resolution JPEG beside a HEIC, AVIF, JPEG XL or RAW photo.
    case compatible
    /// Fan-in: writes the batch's manifest once every item has finished.
    case manifest

    /// Pipeline order: `sniff < copy < location < probe < thumbnail < motion < compatible < manifest`.
    public static func < (a: StageName, b: StageName) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
