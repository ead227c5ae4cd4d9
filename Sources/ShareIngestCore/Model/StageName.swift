/// The name of a pipeline stage (`sniff`, `copy`, …, `manifest`): how pipeline
/// documents, records and reports name it. Which names exist, and in which
/// order their stages run, is the ``StageCatalog``'s (``StageCatalog/builtin``
/// for the built-in stages).
public struct StageName: Hashable, Sendable, Codable, CodingKeyRepresentable, CustomStringConvertible {
    /// The name as written.
    public let rawValue: String

    /// Any stage name: a stage's own definition names itself so (a stage that is
    /// not built in gets its name here too).
    init(_ rawValue: String) { self.rawValue = rawValue }

    /// Reads the head of a source (never the whole file): format, extension, MIME
    /// type. Its first 4096 bytes; 4096 more where an ID3v2 tag longer than
    /// those ends; for an MP4 or MOV video whose size they do not hold, up to 16
    /// top-level box headers to find `moov`, and its first 4096 bytes (``SniffStage``).
    public static let sniff = StageName("sniff")
    /// Copies the source into the container under `<UUID>.<ext>`.
    public static let copy = StageName("copy")
    /// Location privacy: blanks the location metadata in the copy (never the source).
    public static let location = StageName("location")
    /// Opens the media: confirms the type, reads dimensions and duration.
    public static let probe = StageName("probe")
    /// Makes the JPEG thumbnail (images, video posters, PDF first pages).
    public static let thumbnail = StageName("thumbnail")
    /// Copies a motion photo's embedded video out as an item file of its own
    /// (probed, with a poster); Live Photo halves are paired by the fan-in.
    public static let motion = StageName("motion")
    /// Writes a full-resolution JPEG beside a HEIC, AVIF, JPEG XL or RAW photo.
    public static let compatible = StageName("compatible")
    /// Fan-in: writes the batch's manifest once every item has finished.
    public static let manifest = StageName("manifest")

    /// The ``rawValue``.
    public var description: String { rawValue }

    /// Reads a name as recorded (any name: whether a catalog has it is checked where it is used).
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Records the name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// As a dictionary key (seconds per stage): any name, so a record that
    /// names a stage this process does not know still reads.
    public init?<Key: CodingKey>(codingKey: Key) { self.init(codingKey.stringValue) }
    /// The name as a dictionary key.
    public var codingKey: any CodingKey { Key(stringValue: rawValue) }

    private struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}

extension StageName {
    /// The stages of a progress line, each with its count, in `order` (the run
    /// order of the pipeline's catalog; names it lacks come last, by name):
    /// `sniff 4 · copy 4 · checksum 4 · probe 4`.
    package static func progress(_ counts: [StageName: Int], order: [StageName] = allCases) -> String {
        let positions = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return counts.keys.sorted { (positions[$0] ?? .max, $0.rawValue) < (positions[$1] ?? .max, $1.rawValue) }
            .map { "\($0.rawValue) \(counts[$0] ?? 0)" }.joined(separator: " · ")
    }
}
