import Glibc

// An HDR gain map's metadata (Adobe's `hdrgm` XMP, which Ultra HDR and
// ISO 21496-1 share), read from a source's gain map in the decoder, checked by
// the parent, and written by the parent into the Ultra HDR JPEG thumbnails it
// assembles (``UltraHDR``): the parent writes every byte of metadata itself,
// from checked numbers; of the helper's gain map JPEG it keeps only the
// segments a picture needs.

/// The values of a gain map's `hdrgm` XMP (one for all channels), log2 where
/// the format says so: HDR = (SDR + offsetSDR) · 2^(boost · weight) − offsetHDR,
/// boost = gainMapMin · (1 − r) + gainMapMax · r, r = (map / 255)^(1 / gamma),
/// weight = the display's headroom between `hdrCapacityMin` and `hdrCapacityMax` (1 at full headroom).
public struct GainMapMetadata: Sendable, Codable, Hashable {
    /// log2 of the smallest boost the map encodes (its value 0).
    public var gainMapMin: Double
    /// log2 of the largest boost (its value 255).
    public var gainMapMax: Double
    /// The map's encoding gamma.
    public var gamma: Double
    /// Added to the SDR base before the boost (linear, 0–1).
    public var offsetSDR: Double
    /// Taken from the result after it.
    public var offsetHDR: Double
    /// log2 of the display headroom from which the map starts to apply.
    public var hdrCapacityMin: Double
    /// log2 of the headroom at which it applies in full.
    public var hdrCapacityMax: Double

    /// Metadata; the defaults are the format's (Ultra HDR 1.0).
    public init(
        gainMapMin: Double = 0, gainMapMax: Double, gamma: Double = 1, offsetSDR: Double = 1.0 / 64,
        offsetHDR: Double = 1.0 / 64,
        hdrCapacityMin: Double = 0, hdrCapacityMax: Double
    ) {
        self.gainMapMin = gainMapMin
        self.gainMapMax = gainMapMax
        self.gamma = gamma
        self.offsetSDR = offsetSDR
        self.offsetHDR = offsetHDR
        self.hdrCapacityMin = hdrCapacityMin
        self.hdrCapacityMax = hdrCapacityMax
    }

    /// The largest boost accepted, in stops (2^16: far beyond any display's headroom).
    public static let maximumStops = 16.0

    /// What is wrong with these values (the parent's check); nil when sane:
    /// finite; gain map minimum at most its maximum, both within ±16 stops;
    /// a gamma in (0, 16]; offsets in [0, 1]; capacities within 0…16 stops,
    /// the minimum below the maximum.
    public var problem: String? {
        let all = [gainMapMin, gainMapMax, gamma, offsetSDR, offsetHDR, hdrCapacityMin, hdrCapacityMax]
        guard all.allSatisfy(\.isFinite) else { return "gain map metadata that is not finite" }
        guard abs(gainMapMin) <= Self.maximumStops, abs(gainMapMax) <= Self.maximumStops, gainMapMin <= gainMapMax
        else {
            return "a gain map range of \(gainMapMin) to \(gainMapMax) stops"
        }
        guard gamma > 0, gamma <= 16 else { return "a gain map gamma of \(gamma)" }
        guard (0...1).contains(offsetSDR), (0...1).contains(offsetHDR) else {
            return "gain map offsets of \(offsetSDR) and \(offsetHDR)"
        }
        guard hdrCapacityMin >= 0, hdrCapacityMax <= Self.maximumStops, hdrCapacityMin < hdrCapacityMax else {
            return "an HDR capacity of \(hdrCapacityMin) to \(hdrCapacityMax) stops"
        }
        return nil
    }

    /// The values of an `hdrgm` XMP packet (attributes or elements, any
    /// prefix bound to the namespace; per-channel `rdf:Seq` values: their
    /// first), when it has `Version` and `GainMapMax` and says its base is SDR
    /// (`BaseRenditionIsHDR` false or absent); nil otherwise.
    package init?(xmp text: String) {
        guard let prefix = SpatialMetadata.prefix(of: SpatialMetadata.gainMapNamespace, in: text),
            SpatialMetadata.value("\(prefix):Version", in: text) != nil
        else { return nil }
        func number(_ name: String) -> Double? {
            // An element's value is its text: empty when it holds an `rdf:Seq`, read below.
            if let value = SpatialMetadata.value("\(prefix):\(name)", in: text), !value.isEmpty { return Double(value) }
            // <hdrgm:GainMapMax><rdf:Seq><rdf:li>2.3</rdf:li>…
            guard let start = text.firstRange(of: "<\(prefix):\(name)>") else { return nil }
            let rest = text[start.upperBound...]
            guard let li = rest.firstRange(of: "<rdf:li>"), let end = rest[li.upperBound...].firstIndex(of: "<") else {
                return nil
            }
            return Double(String(rest[li.upperBound..<end]).trimmingCharacters(in: " "))
        }
        if let base = SpatialMetadata.value("\(prefix):BaseRenditionIsHDR", in: text), base.lowercased() == "true" {
            return nil
        }
        // A colour map (a value per channel, not all equal) is not one map for all channels.
        guard Self.severalChannels(xmp: text) == nil else { return nil }
        guard let maximum = number("GainMapMax") else { return nil }
        self.init(
            gainMapMin: number("GainMapMin") ?? 0, gainMapMax: maximum, gamma: number("Gamma") ?? 1,
            offsetSDR: number("OffsetSDR") ?? 1.0 / 64,
            offsetHDR: number("OffsetHDR") ?? 1.0 / 64, hdrCapacityMin: number("HDRCapacityMin") ?? 0,
            hdrCapacityMax: number("HDRCapacityMax") ?? maximum)
    }
}

extension GainMapMetadata {
    /// The first of `GainMapMin`, `GainMapMax` and `Gamma` that an `hdrgm` XMP
    /// packet gives per channel (an `rdf:Seq` of several values, not all equal:
    /// a three-channel, colour, map) and how many values it has; nil when every
    /// value is one for all channels.
    package static func severalChannels(xmp text: String) -> (name: String, count: Int)? {
        guard let prefix = SpatialMetadata.prefix(of: SpatialMetadata.gainMapNamespace, in: text) else { return nil }
        for name in ["GainMapMin", "GainMapMax", "Gamma"] {
            guard let start = text.firstRange(of: "<\(prefix):\(name)>") else { continue }
            let rest = text[start.upperBound...]
            let body = rest.firstRange(of: "</\(prefix):\(name)>").map { rest[..<$0.lowerBound] } ?? rest
            let values = body.ranges(of: "<rdf:li>").prefix(16).map { li in
                Double(
                    String(body[li.upperBound...].drop(while: \.isWhitespace).prefix { $0 != "<" && !$0.isWhitespace }))
            }
            // Several values, not all the same number (one that is no number differs from all).
            if values.count > 1, values.contains(where: { $0 == nil || $0 != values[0] }) {
                return (name, values.count)
            }
        }
        return nil
    }
}

extension GainMapMetadata {
    /// A three-channel (colour) `hdrgm` map's numbers made one set for all
    /// channels, and a table per channel (red, green, blue: 256 entries each)
    /// that re-encodes the map's values in them, exactly up to the rounding of
    /// each value (issue 62): gain map minimum the channels' least, maximum their
    /// greatest, gamma 1, a value v of channel c, boost_c = min_c · (1 − r) +
    /// max_c · r with r = (v / 255)^(1 / gamma_c), becomes
    /// 255 · (boost_c − min) / (max − min), rounded. Nil when the packet is not
    /// such a map (``severalChannels(xmp:)`` finds none), says its base is HDR,
    /// gives a number other than one or three times, gives offsets that differ
    /// by channel (they are not in the map: no table can carry them), or its
    /// numbers are refused (``problem``).
    package static func threeChannel(xmp text: String) -> (metadata: GainMapMetadata, tables: [[UInt8]])? {
        guard let prefix = SpatialMetadata.prefix(of: SpatialMetadata.gainMapNamespace, in: text),
            SpatialMetadata.value("\(prefix):Version", in: text) != nil, severalChannels(xmp: text) != nil
        else { return nil }
        if let base = SpatialMetadata.value("\(prefix):BaseRenditionIsHDR", in: text), base.lowercased() == "true" {
            return nil
        }
        // A number's three values (given once, or as an rdf:Seq of three), `fallback`'s when absent; nil when malformed.
        func channels(_ name: String, _ fallback: Double?) -> [Double]? {
            if let value = SpatialMetadata.value("\(prefix):\(name)", in: text), !value.isEmpty {
                return Double(value).map { [$0, $0, $0] }
            }
            guard let start = text.firstRange(of: "<\(prefix):\(name)>") else { return fallback.map { [$0, $0, $0] } }
            let rest = text[start.upperBound...]
            let body = rest.firstRange(of: "</\(prefix):\(name)>").map { rest[..<$0.lowerBound] } ?? rest
            let found = body.ranges(of: "<rdf:li>").prefix(4).map { li in
                Double(
                    String(body[li.upperBound...].drop(while: \.isWhitespace).prefix { $0 != "<" && !$0.isWhitespace }))
            }
            let numbers = found.compactMap { $0 }
            guard numbers.count == found.count, numbers.count == 1 || numbers.count == 3 else { return nil }
            return numbers.count == 3 ? numbers : [numbers[0], numbers[0], numbers[0]]
        }
        guard let minima = channels("GainMapMin", 0), let maxima = channels("GainMapMax", nil),
            let gammas = channels("Gamma", 1),
            let offsetSDR = channels("OffsetSDR", 1.0 / 64), let offsetHDR = channels("OffsetHDR", 1.0 / 64),
            let capacityMin = channels("HDRCapacityMin", 0), let capacityMax = channels("HDRCapacityMax", maxima.max()),
            [offsetSDR, offsetHDR, capacityMin, capacityMax].allSatisfy({ (values: [Double]) in
                values.allSatisfy { $0 == values[0] }
            }),
            (minima + maxima + gammas).allSatisfy(\.isFinite), gammas.allSatisfy({ $0 > 0 }),
            zip(minima, maxima).allSatisfy({ $0 <= $1 }), let low = minima.min(), let high = maxima.max(), high > low
        else { return nil }
        let metadata = GainMapMetadata(
            gainMapMin: low, gainMapMax: high, gamma: 1, offsetSDR: offsetSDR[0], offsetHDR: offsetHDR[0],
            hdrCapacityMin: capacityMin[0],
            hdrCapacityMax: capacityMax[0])
        guard metadata.problem == nil, gammas.allSatisfy({ $0 <= 16 }) else { return nil }
        return (metadata, channelTables(minima: minima, maxima: maxima, gammas: gammas))
    }

    /// The tables that re-encode a three-channel map (channel c: its minimum,
    /// maximum and gamma) for one set of numbers, minimum the least, maximum
    /// the greatest, gamma 1 (``threeChannel(xmp:)``, ``threeChannel(toneMap:)``).
    static func channelTables(minima: [Double], maxima: [Double], gammas: [Double]) -> [[UInt8]] {
        let low = minima.min() ?? 0
        let high = maxima.max() ?? 1
        return (0..<3).map { c in
            (0..<256).map { v -> UInt8 in
                let r = pow(Double(v) / 255, 1 / gammas[c])
                let boost = minima[c] * (1 - r) + maxima[c] * r
                return UInt8(max(0, min(255, (255 * (boost - low) / (high - low)).rounded())))
            }
        }
    }
}

/// A gain map made for a thumbnail or a JPEG preview: a JPEG of the
/// picture's size (grey, or three channels when the source's map has them)
/// and the metadata that says how to apply it.
public struct GainMapPicture: Sendable, Codable, Hashable {
    /// JPEG bytes (no metadata of their own).
    public var jpeg: [UInt8]
    /// Width in pixels: the picture's.
    public var width: Int
    /// Height in pixels: the picture's.
    public var height: Int
    /// How the map applies.
    public var metadata: GainMapMetadata

    /// A gain map picture.
    public init(jpeg: [UInt8], width: Int, height: Int, metadata: GainMapMetadata) {
        self.jpeg = jpeg
        self.width = width
        self.height = height
        self.metadata = metadata
    }
}
