/// A sniff's result as recorded with an item (the journal's and the queue's
/// rows): formats by their ``MediaFormat/id``. A record written before the
/// MIME type, `recognised` and the name's claims were kept reads them back as
/// the format implies (a format this version no longer knows reads as binary data).
extension SniffedContent: Codable {
    private enum CodingKeys: String, CodingKey {
        case format, fileExtension, mimeType, recognised, declaredExtension, contradictedFormat
    }

    /// Reads a recorded sniff.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let format = MediaFormat.known(id: try c.decode(String.self, forKey: .format)) ?? .binary
        self.init(
            format: format, fileExtension: try c.decode(String.self, forKey: .fileExtension),
            mimeType: try c.decodeIfPresent(String.self, forKey: .mimeType) ?? format.mimeType,
            recognised: try c.decodeIfPresent(Bool.self, forKey: .recognised) ?? (format != .binary && format != .text),
            declaredExtension: try c.decodeIfPresent(String.self, forKey: .declaredExtension),
            contradictedFormat: try c.decodeIfPresent(String.self, forKey: .contradictedFormat).flatMap(
                MediaFormat.known(id:)))
    }

    /// Records the sniff.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(format.id, forKey: .format)
        try c.encode(fileExtension, forKey: .fileExtension)
        try c.encode(mimeType, forKey: .mimeType)
        try c.encode(recognised, forKey: .recognised)
        try c.encodeIfPresent(declaredExtension, forKey: .declaredExtension)
        try c.encodeIfPresent(contradictedFormat?.id, forKey: .contradictedFormat)
    }
}
