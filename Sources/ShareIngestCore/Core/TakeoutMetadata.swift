import Foundation
import MediaFormats

/// What a Google Takeout JSON sidecar says about its photo: read by a decoder
/// with the photo, when the photo is probed (``TakeoutMetadata/facts(from:)``),
/// and given to the photo.
struct TakeoutFacts: Sendable, Hashable, Codable {
    /// `photoTakenTime.timestamp`: seconds since 1970 (UTC).
    var takenAt: Int64?
    /// `description`, when not empty.
    var description: String?
    /// `geoData` (else `geoDataExif`), when not Takeout's "no location" zeros.
    var location: TakeoutLocation?
}

/// A place a Takeout JSON records (degrees; altitude in metres).
struct TakeoutLocation: Sendable, Hashable, Codable {
    var latitude: Double
    var longitude: Double
    var altitude: Double?
}

/// What the pipeline keeps of a Google Takeout JSON sidecar. The JSON is
/// untrusted bytes like any file's, so it is parsed only where its photo is
/// decoded (MediaFormats' `TakeoutJSON`, its bytes sent with the photo's probe
/// request, in a sandboxed helper by default), which answers with a few typed
/// facts (``TakeoutSidecar``: title,
/// `photoTakenTime`, `description`, `geoData`, `geoDataExif`); the reply's
/// check bounds their lengths, and ``facts(from:)`` keeps what is sane: a
/// timestamp from 1825 to 2200, a description of printable characters,
/// coordinates within their ranges (Takeout's all-zero "no location" is none).
/// Location privacy removes `geoData` from the attached copy the same way as
/// from a photo: the helper says which byte ranges to blank (with spaces, so
/// the JSON stays valid), the location stage checks and makes the overwrites.
enum TakeoutMetadata {
    /// The largest JSON read (Takeout's are a few KB; a longer description
    /// still fits). A larger one is not sent to a helper.
    static let maximumSize = TakeoutJSON.maximumSize

    /// The `photoTakenTime` kept: from 1825-01-01 (before the oldest
    /// photograph) to 2200-01-01, UTC; ``takenAtYears`` are its years.
    static let takenAtRange: ClosedRange<Int64> = -4_575_744_000...7_258_118_400
    static let takenAtYears = 1825...2200

    /// What the pipeline keeps of a helper's (checked) reading of a Takeout JSON.
    static func facts(from sidecar: TakeoutSidecar) -> TakeoutFacts {
        var facts = TakeoutFacts()
        if let stamp = sidecar.photoTakenTime, takenAtRange.contains(stamp) { facts.takenAt = stamp }
        if let text = sidecar.description {
            let kept = String(
                String.UnicodeScalarView(
                    text.unicodeScalars.filter { $0.properties.generalCategory != .control || $0 == "\n" || $0 == "\t" }
                        .prefix(TakeoutJSON.maximumDescription))
            )
            .trimmingCharacters(in: .whitespacesAndNewlines)
            if !kept.isEmpty { facts.description = kept }
        }
        facts.location = location(sidecar.geoData) ?? location(sidecar.geoDataExif)
        return facts
    }

    /// A `geoData` object's place; Takeout writes all zeros for "none".
    static func location(_ place: TakeoutPlace?) -> TakeoutLocation? {
        guard let place, place.latitude.isFinite, place.longitude.isFinite, (-90...90).contains(place.latitude),
            (-180...180).contains(place.longitude),
            place.latitude != 0 || place.longitude != 0
        else { return nil }
        let altitude = place.altitude.flatMap { $0.isFinite ? $0.clamped(to: -20_000...100_000) : nil }
        return TakeoutLocation(
            latitude: place.latitude, longitude: place.longitude, altitude: altitude == 0 ? nil : altitude)
    }

    /// The `capturedAtSource` of a time a Takeout JSON gave.
    static let capturedAtSource = "takeout"

    /// The warning of a Takeout-looking JSON that was not read as one
    /// (`reason`, the decoder's or the pipeline's): it is delivered as a file.
    static func notRead(_ reason: String) -> String {
        "looks like a Google Takeout JSON sidecar but was not read as one (\(reason)): delivered as a file"
    }

    /// `photoTakenTime` as RFC 3339, in UTC (`2019-07-01T16:53:20Z`).
    /// (Nil outside ``takenAtYears``; written by hand, as capture dates are:
    /// a date formatter made per sidecar cost a tenth of a millisecond.)
    static func rfc3339(_ seconds: Int64) -> String? {
        CaptureDate.rfc3339(Double(seconds), offset: 0, accepted: takenAtYears)
    }
}

extension Double {
    fileprivate func clamped(to range: ClosedRange<Double>) -> Double {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
