import Foundation
import MediaFormats

// The parent's check of a helper's gain maps (issue 54), kept apart from the
// rest of ReplyCheck: a gain map travels base64 in the reply's JSON beside the
// thumbnail or JPEG preview it belongs to (``WireGainMap``), and is checked as
// a thumbnail is, then given to the parent, which writes the Ultra HDR JPEG
// itself (MediaFormats' `UltraHDR`: the XMP and the MPF index from checked
// numbers). Nothing else of it is parsed.

/// A gain map in a reply: its size, metadata and JPEG (base64).
package struct WireGainMap: Codable, Sendable, Hashable {
    package var width: Int
    package var height: Int
    package var metadata: GainMapMetadata
    package var jpeg: String

    package init(_ picture: GainMapPicture) {
        (width, height, metadata) = (picture.width, picture.height, picture.metadata)
        jpeg = Data(picture.jpeg).base64EncodedString()
    }
}

extension ReplyCheck {
    /// The gain maps of a reply whose thumbnail and previews passed, put on
    /// `made`: only when `spec` asks for them, only for an image whose facts say it has a gain map, only on the
    /// thumbnail and JPEG previews; each a JPEG (start and end of image, a frame
    /// header) of its picture's shape and at most its size, at most ``maximumPreviewBytes(size:)``,
    /// of which only the segments a picture needs are kept, with metadata whose
    /// numbers are finite and in range (``GainMapMetadata/problem``).
    package static func checkGainMaps(
        _ result: WireResult, facts: MediaFacts, spec: ThumbnailSpec, into made: inout Thumbnail
    ) throws(ReplyViolation) {
        let claimed = [result.thumbnailGainMap] + (result.previews ?? []).map(\.gainMap)
        guard claimed.contains(where: { $0 != nil }) else { return }
        guard spec.gainMaps else { throw ReplyViolation("a gain map nobody asked for") }
        guard facts.kind == .image, facts.gainMap == true else {
            throw ReplyViolation("a gain map of a picture that has none")
        }
        if let wire = result.thumbnailGainMap {
            made.gainMap = try checkGainMap(wire, width: made.width, height: made.height)
        }
        for (index, picture) in (result.previews ?? []).enumerated() {
            guard let wire = picture.gainMap else { continue }
            guard picture.format == .jpeg, var previews = made.previews, previews.indices.contains(index) else {
                throw ReplyViolation("a gain map on a \(picture.format.rawValue) preview")
            }
            previews[index].gainMap = try checkGainMap(
                wire, width: previews[index].width, height: previews[index].height)
            made.previews = previews
        }
    }

    /// One gain map, checked against the `width`×`height` picture it belongs to.
    package static func checkGainMap(_ wire: WireGainMap, width: Int, height: Int) throws(ReplyViolation)
        -> GainMapPicture
    {
        let limit = maximumPreviewBytes(size: max(width, height))
        guard wire.jpeg.utf8.count <= (limit + 2) / 3 * 4, let data = Data(base64Encoded: wire.jpeg),
            data.count <= limit
        else {
            throw ReplyViolation(
                "a gain map of \(wire.jpeg.utf8.count) base64 characters for a \(width)×\(height) picture")
        }
        guard let jpeg = JPEGSegments.filtered(Array(data)[...], keepingMetadata: false, allowsLocation: false),
            let frame = JPEGFrame(jpeg[...])
        else {
            throw ReplyViolation("gain map bytes that are not a JPEG")
        }
        // The picture's size or smaller (a phone's map is a quarter of its photo on each side), of its shape
        // within two pixels of rounding on the longer side, as a thumbnail is of its photo's.
        guard wire.width == frame.width, wire.height == frame.height, (1...width).contains(frame.width),
            (1...height).contains(frame.height),
            abs(frame.width * height - frame.height * width) <= 2 * max(width, height)
        else {
            throw ReplyViolation(
                "a \(frame.width)×\(frame.height) gain map (said \(wire.width)×\(wire.height)) of a \(width)×\(height) picture"
            )
        }
        if let problem = wire.metadata.problem { throw ReplyViolation(problem) }
        return GainMapPicture(jpeg: jpeg, width: frame.width, height: frame.height, metadata: wire.metadata)
    }
}
