import Foundation

/// What a Google Takeout JSON sidecar says about its photo: read at the sniff
/// (``TakeoutMetadata/read(_:)``), recorded on the sidecar, given to its media
/// by the fan-in.
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

/// Reads Google Takeout's JSON sidecars.
///
/// Why in this process and not in a decoder helper: the helpers exist to keep
/// the C libraries' memory-safety bugs (libvips, libav, libheif, …) away from
/// the journal and the container. This is no such library: the toolchain's
/// `JSONSerialization` (swift-corelibs-foundation's parser, written in Swift,
/// bounds-checked) over at most ``maximumSize`` bytes, after a byte scan that
/// refuses nesting deeper than ``maximumDepth`` (so no recursion runs deep),
/// strict (no fragments, no JSON5, UTF-8 only). Its cost is bounded by the
/// size. What it returns is checked as a helper's reply is: a timestamp within
/// 1826–2200, a description of at most ``maximumDescription`` printable
/// characters, coordinates within their ranges. Anything else, and any JSON
/// that is not an object, is "not Takeout's": the file is left alone.
enum TakeoutMetadata {
    /// The largest JSON read (Takeout's are a few KB; a longer description
    /// still fits).
    static let maximumSize = 1 << 20
    /// The deepest nesting accepted (Takeout's is 4).
    static let maximumDepth = 16
    /// The longest description kept, in characters.
    static let maximumDescription = 2000

    /// The facts of `bytes`, or nil when they are not a Takeout JSON a photo has.
    static func read(_ bytes: [UInt8]) -> TakeoutFacts? {
        guard bytes.count <= maximumSize, depthIsBounded(bytes) else { return nil }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any], object["title"] is String else { return nil }
        var facts = TakeoutFacts()
        if let taken = object["photoTakenTime"] as? [String: Any] {
            let stamp = (taken["timestamp"] as? String).flatMap { Int64($0) } ?? (taken["timestamp"] as? NSNumber)?.int64Value
            // 1826 (the oldest photograph) to 2200.
            if let stamp, (-4_575_744_000...7_258_118_400).contains(stamp) { facts.takenAt = stamp }
        }
        if let text = object["description"] as? String {
            let kept = String(text.unicodeScalars.filter { $0.properties.generalCategory != .control || $0 == "\n" || $0 == "\t" }.prefix(maximumDescription))
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if !kept.isEmpty { facts.description = kept }
        }
        facts.location = location(object["geoData"]) ?? location(object["geoDataExif"])
        return facts
    }

    /// A `geoData` object's place; Takeout writes all zeros for "none".
    static func location(_ value: Any?) -> TakeoutLocation? {
        guard let geo = value as? [String: Any], let latitude = (geo["latitude"] as? NSNumber)?.doubleValue,
            let longitude = (geo["longitude"] as? NSNumber)?.doubleValue, (-90...90).contains(latitude), (-180...180).contains(longitude),
            latitude != 0 || longitude != 0
        else { return nil }
        let altitude = (geo["altitude"] as? NSNumber)?.doubleValue.clamped(to: -20_000...100_000)
        return TakeoutLocation(latitude: latitude, longitude: longitude, altitude: altitude == 0 ? nil : altitude)
    }

    /// The JSON without its places (`geoData`, `geoDataExif`), for location
    /// privacy: the same object written again (keys sorted), or nil when there
    /// is no place to remove or the bytes are not a Takeout JSON.
    static func removingLocation(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count <= maximumSize, depthIsBounded(bytes),
            var object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any], object["title"] is String,
            object["geoData"] != nil || object["geoDataExif"] != nil
        else { return nil }
        object["geoData"] = nil
        object["geoDataExif"] = nil
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
            return nil
        }
        return Array(data) + [0x0A]
    }

    /// True when no object or array in `bytes` nests deeper than ``maximumDepth``
    /// (brackets inside strings are not counted).
    static func depthIsBounded(_ bytes: [UInt8]) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if depth > maximumDepth { return false }
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return true
    }

    /// `photoTakenTime` as RFC 3339, in UTC (`2019-07-01T16:53:20Z`).
    static func rfc3339(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

extension Double {
    fileprivate func clamped(to range: ClosedRange<Double>) -> Double { Swift.min(Swift.max(self, range.lowerBound), range.upperBound) }
}
