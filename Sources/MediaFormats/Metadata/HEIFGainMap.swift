import Glibc

// Where a HEIF's (HEIC's, AVIF's) gain map is and how it applies, in the terms
// of ``GainMapMetadata`` (ISO 21496-1's model, which Ultra HDR's `hdrgm` XMP
// shares), read in the decoder from the file's item structure:
//
// - An ISO 21496-1 `tmap` item (AVIF and HEIF; iPhones since iOS 18 write one
//   beside Apple's own map): its `dimg` references are the base image and the
//   gain map, its data the metadata. Carried only when the base is the SDR
//   rendition (base headroom below the alternate's): an HDR base with a map
//   down to SDR keeps its tone-mapped thumbnail (the note in docs/media.md's HDR
//   section says why).
// - Apple's map (iPhone 12 and later): a hidden auxiliary image of type
//   `urn:com:apple:photo:2020:aux:hdrgainmap` (`auxl` to the primary), whose
//   HDR rendition is, per Apple's "Applying Apple HDR effect to your photos",
//   HDR = SDR · (1 + (H − 1) · g) in linear light, g the map value through the
//   sRGB curve, H the headroom (the aux image's XMP `HDRGainMapHeadroom`, else
//   the maker note's tags 0x21 and 0x30 through Apple's formula). That is
//   ISO 21496-1's HDR = SDR · 2^(log2 H · r) with r = log2(1 + (H − 1) g) / log2 H,
//   gain map minimum 0, maximum and capacity log2 H, gamma 1, no offsets: the
//   map's values are re-encoded through ``HEIFGainMap/values`` (256 entries),
//   nothing else is approximated.
//
// Nothing here traps on bad input; what does not add up is no gain map.

/// A HEIF's gain map image and how it applies (``HEIFGainMap/find(in:bytes:)``).
package struct HEIFGainMap: Sendable, Hashable {
    /// Where the description came from.
    package enum Kind: String, Sendable, Hashable {
        /// An ISO 21496-1 `tmap` item.
        case iso21496
        /// Apple's auxiliary image and headroom.
        case apple
    }

    /// The gain map image item (a coded picture or a grid).
    package var item: HEIFItemID
    /// Which description was used.
    package var kind: Kind
    /// How the map applies to the SDR base.
    package var metadata: GainMapMetadata
    /// Each 8-bit map value's value in ``metadata``'s terms (256 entries), when
    /// they are not the map's own: one table for every channel (Apple's maps)
    /// or one per channel, red, green, blue (a three-channel `tmap`'s:
    /// ``GainMapMetadata/threeChannel(toneMap:)``); nil: the map as it is.
    package var values: [[UInt8]]?

    /// The gain map of the file in `bytes` whose structure is `file`, for its
    /// primary image: a `tmap` item whose base is the primary (SDR base only),
    /// else Apple's auxiliary image with a headroom above 1; nil otherwise.
    package static func find(in file: HEIFFile, bytes: [UInt8]) -> HEIFGainMap? {
        guard let primary = file.primaryItemID else { return nil }
        for item in file.items.values.sorted(by: { $0.id < $1.id }) where item.type == "tmap" {
            let inputs = file.references(from: item.id, type: "dimg")
            guard inputs.count == 2, inputs[0] == primary, let map = file.items[inputs[1]], map.id != primary,
                let data = try? file.data(of: item, in: bytes, limit: 4096),
                let metadata = GainMapMetadata(toneMap: data), metadata.problem == nil
            else { continue }
            return HEIFGainMap(item: map.id, kind: .iso21496, metadata: metadata, values: nil)
        }
        // A three-channel tmap: one set of numbers for all channels, the map's values re-encoded per channel.
        for item in file.items.values.sorted(by: { $0.id < $1.id }) where item.type == "tmap" {
            let inputs = file.references(from: item.id, type: "dimg")
            guard inputs.count == 2, inputs[0] == primary, let map = file.items[inputs[1]], map.id != primary,
                let data = try? file.data(of: item, in: bytes, limit: 4096),
                let (metadata, tables) = GainMapMetadata.threeChannel(toneMap: data)
            else { continue }
            return HEIFGainMap(item: map.id, kind: .iso21496, metadata: metadata, values: tables)
        }
        for auxiliary in file.items(referring: primary, type: "auxl") {
            guard file.properties(of: auxiliary).contains(.auxiliaryType(SpatialMetadata.appleGainMap)),
                let headroom = appleHeadroom(file, bytes: bytes, map: auxiliary.id, primary: primary),
                let (metadata, values) = apple(headroom: headroom)
            else { continue }
            return HEIFGainMap(item: auxiliary.id, kind: .apple, metadata: metadata, values: [values])
        }
        return nil
    }

    /// Apple's map of headroom `headroom` in ``GainMapMetadata``'s terms (gain
    /// map minimum 0, maximum and capacity log2 H, gamma 1, no offsets) and its
    /// values re-encoded (``appleValues(headroom:)``), when the headroom is above 1
    /// and at most 2^16; nil otherwise. The rule for Apple's maps in a HEIC and in a JPEG.
    package static func apple(headroom: Double) -> (metadata: GainMapMetadata, values: [UInt8])? {
        guard headroom.isFinite, headroom > 1, headroom <= 65536 else { return nil }
        let stops = log2(headroom)
        let metadata = GainMapMetadata(
            gainMapMin: 0, gainMapMax: stops, gamma: 1, offsetSDR: 0, offsetHDR: 0, hdrCapacityMin: 0,
            hdrCapacityMax: stops)
        guard metadata.problem == nil else { return nil }
        return (metadata, appleValues(headroom: headroom))
    }

    /// Why the file in `bytes` whose structure is `file`, which has a gain map
    /// that ``find(in:bytes:)`` does not take, is not carried, when it is a
    /// layout named here (a `tmap` item of the primary with a three-channel
    /// map); nil otherwise. A warning's words.
    package static func uncarried(in file: HEIFFile, bytes: [UInt8]) -> String? {
        guard let primary = file.primaryItemID else { return nil }
        for item in file.items.values.sorted(by: { $0.id < $1.id }) where item.type == "tmap" {
            let inputs = file.references(from: item.id, type: "dimg")
            guard inputs.count == 2, inputs[0] == primary, let data = try? file.data(of: item, in: bytes, limit: 4096),
                let channels = GainMapMetadata.toneMapChannels(data)
            else { continue }
            return
                "a \(channels == 3 ? "three" : String(channels))-channel map (its tmap item has \(channels) sets of values) whose numbers are refused (offsets that differ by channel, a base that is HDR, or out of range)"
        }
        return nil
    }

    // MARK: - Apple

    /// Apple's XMP namespace for its gain map's version and headroom.
    static let appleNamespace = "http://ns.apple.com/HDRGainMap/1.0/"

    /// The headroom of Apple's gain map `map` of `primary`: `HDRGainMapHeadroom`
    /// in the map's XMP (a `mime` item describing it) or the primary's, else
    /// the primary's EXIF maker note tags 0x21 and 0x30 (``appleHeadroom(makerNote33:makerNote48:)``).
    static func appleHeadroom(_ file: HEIFFile, bytes: [UInt8], map: HEIFItemID, primary: HEIFItemID) -> Double? {
        for described in [map, primary] {
            for item in file.items(referring: described, type: "cdsc") where item.type == "mime" {
                guard let data = try? file.data(of: item, in: bytes, limit: SpatialMetadata.maximumXMP) else {
                    continue
                }
                if let value = appleHeadroom(xmp: String(decoding: data, as: UTF8.self)) { return value }
            }
        }
        for item in file.items(referring: primary, type: "cdsc") where item.type == "Exif" {
            guard let data = try? file.data(of: item, in: bytes, limit: 1 << 20), data.count > 8 else { continue }
            // exif_tiff_header_offset, then (after that many bytes) the TIFF header.
            let skip = Int(data[0]) << 24 | Int(data[1]) << 16 | Int(data[2]) << 8 | Int(data[3])
            guard skip >= 0, skip < data.count - 8, let tiff = TIFFReader(Array(data[(4 + skip)...])),
                let (tag33, tag48) = appleMakerNoteHeadroom(tiff)
            else { continue }
            return appleHeadroom(makerNote33: tag33, makerNote48: tag48)
        }
        return nil
    }

    /// `HDRGainMap:HDRGainMapHeadroom` of an XMP packet (Apple's namespace, any
    /// prefix), when it is a finite number.
    static func appleHeadroom(xmp text: String) -> Double? {
        guard let prefix = SpatialMetadata.prefix(of: appleNamespace, in: text),
            let value = SpatialMetadata.value("\(prefix):HDRGainMapHeadroom", in: text).flatMap(Double.init),
            value.isFinite
        else { return nil }
        return value
    }

    /// Apple maker note tags 0x21 and 0x30 of the EXIF `tiff`, when both are numbers.
    static func appleMakerNoteHeadroom(_ tiff: TIFFReader) -> (Double, Double)? {
        guard let ifd0 = tiff.ifd(at: tiff.firstIFD),
            let exifOffset = tiff.integer(StillMoments.Tag.exifIFD, in: ifd0.entries),
            let exif = tiff.ifd(at: exifOffset), let note = tiff.blob(StillMoments.Tag.makerNote, in: exif.entries),
            note.count > 16,
            let head = tiff.source.read(note.lowerBound..<(note.lowerBound + 14)),
            Array(head[0..<10]) == StillMoments.appleSignature,
            head[12] == head[13], head[12] == UInt8(ascii: "M") || head[12] == UInt8(ascii: "I")
        else { return nil }
        let apple = TIFFReader(
            tiff.source, bigEndian: head[12] == UInt8(ascii: "M"), base: note.lowerBound, firstIFD: 14)
        guard let entries = apple.ifd(at: 14)?.entries, let tag33 = apple.real(0x21, in: entries),
            let tag48 = apple.real(0x30, in: entries),
            tag33.isFinite, tag48.isFinite
        else { return nil }
        return (tag33, tag48)
    }

    /// The headroom Apple's maker note tags 33 (0x21) and 48 (0x30) stand for
    /// ("Applying Apple HDR effect to your photos": stops by a piecewise-linear
    /// formula, headroom 2^stops, at least 1).
    package static func appleHeadroom(makerNote33: Double, makerNote48: Double) -> Double {
        let stops: Double
        if makerNote33 < 1 {
            stops = makerNote48 <= 0.01 ? -20 * makerNote48 + 1.8 : -0.101 * makerNote48 + 1.601
        } else {
            stops = makerNote48 <= 0.01 ? -70 * makerNote48 + 3 : -0.303 * makerNote48 + 2.303
        }
        return pow(2, max(stops, 0))
    }

    /// Apple's map values re-encoded for ``GainMapMetadata`` with gain map
    /// minimum 0, maximum log2 `headroom`, gamma 1, no offsets: value v (a linear
    /// gain g = sRGB⁻¹(v / 255), HDR = SDR · (1 + (H − 1) g)) becomes
    /// 255 · log2(1 + (H − 1) g) / log2 H, rounded. Exact up to that rounding
    /// (at most half a step: 2^(log2 H / 510), under 0.6 % of the boost at H = 8).
    package static func appleValues(headroom: Double) -> [UInt8] {
        let stops = log2(headroom)
        return (0..<256).map { v in
            let encoded = Double(v) / 255
            let linear = encoded <= 0.04045 ? encoded / 12.92 : pow((encoded + 0.055) / 1.055, 2.4)
            let r = log2(1 + (headroom - 1) * linear) / stops
            return UInt8(max(0, min(255, (r * 255).rounded())))
        }
    }
}

extension GainMapMetadata {
    /// The metadata of an ISO 21496-1 `tmap` item's data (a version byte 0, then
    /// the standard's `GainMapMetadata`: minimum and writer versions, flags —
    /// multichannel 0x80, base colour space 0x40, backward direction 0x04, one
    /// common denominator 0x08 — the base and alternate HDR headrooms, and per
    /// channel the gain map minimum, maximum and gamma and the base and alternate
    /// offsets, each a fraction), when the base is SDR (its headroom below the
    /// alternate's), the direction forward, and the channels one (or three equal);
    /// nil otherwise.
    package init?(toneMap data: [UInt8]) {
        guard let read = Self.toneMapValues(data), read.base < read.alternate else { return nil }
        let values = read.channels
        // One set of values for every channel, as Ultra HDR's `hdrgm` XMP here carries it.
        guard values.allSatisfy({ $0 == values[0] }), values[0][2] > 0 else { return nil }
        let v = values[0]
        self.init(
            gainMapMin: v[0], gainMapMax: v[1], gamma: v[2], offsetSDR: v[3], offsetHDR: v[4],
            hdrCapacityMin: read.base,
            hdrCapacityMax: read.alternate)
    }

    /// A three-channel `tmap` item's data (the multichannel flag, values that
    /// differ by channel) made one set of numbers for all channels and a table
    /// per channel (``channelTables(minima:maxima:gammas:)``), as a JPEG's
    /// three-channel `hdrgm` map is (``threeChannel(xmp:)``): the base SDR, the
    /// direction forward, the base and alternate offsets the same in every
    /// channel (they are not in the map); nil otherwise.
    package static func threeChannel(toneMap data: [UInt8]) -> (metadata: GainMapMetadata, tables: [[UInt8]])? {
        guard let read = toneMapValues(data), read.base < read.alternate, read.channels.count == 3,
            !read.channels.allSatisfy({ $0 == read.channels[0] })
        else { return nil }
        let channels = read.channels
        let minima = channels.map { $0[0] }
        let maxima = channels.map { $0[1] }
        let gammas = channels.map { $0[2] }
        guard channels.allSatisfy({ $0[3] == channels[0][3] && $0[4] == channels[0][4] }),
            (minima + maxima + gammas).allSatisfy(\.isFinite),
            gammas.allSatisfy({ $0 > 0 && $0 <= 16 }), zip(minima, maxima).allSatisfy({ $0 <= $1 }),
            let low = minima.min(), let high = maxima.max(),
            high > low
        else { return nil }
        let metadata = GainMapMetadata(
            gainMapMin: low, gainMapMax: high, gamma: 1, offsetSDR: channels[0][3], offsetHDR: channels[0][4],
            hdrCapacityMin: read.base,
            hdrCapacityMax: read.alternate)
        guard metadata.problem == nil else { return nil }
        return (metadata, channelTables(minima: minima, maxima: maxima, gammas: gammas))
    }

    /// The number of channels of an ISO 21496-1 `tmap` item's data whose values
    /// differ (a three-channel, colour, map: 3), when they do; nil otherwise.
    package static func toneMapChannels(_ data: [UInt8]) -> Int? {
        guard let values = toneMapValues(data)?.channels, values.count > 1, !values.allSatisfy({ $0 == values[0] })
        else { return nil }
        return values.count
    }

    /// The headrooms and per-channel values (minimum, maximum, gamma, base and
    /// alternate offsets) of a `tmap` item's data, forward direction only.
    static func toneMapValues(_ data: [UInt8]) -> (base: Double, alternate: Double, channels: [[Double]])? {
        var reader = ByteReader(data, range: 0..<data.count)
        guard let version = try? reader.u8(), version == 0, let minimumVersion = try? reader.u16(), minimumVersion == 0,
            (try? reader.u16()) != nil, let flags = try? reader.u8(), flags & 0x04 == 0
        else { return nil }
        let channels = flags & 0x80 != 0 ? 3 : 1
        let common = flags & 0x08 != 0
        func fraction(signed: Bool, denominator: UInt32?) -> Double? {
            guard let word = try? reader.u32() else { return nil }
            let numerator = signed ? Double(Int32(bitPattern: word)) : Double(word)
            guard let d = denominator ?? (try? reader.u32()), d != 0 else { return nil }
            return numerator / Double(d)
        }
        var shared: UInt32?
        if common {
            guard let d = try? reader.u32(), d != 0 else { return nil }
            shared = d
        }
        guard let baseHeadroom = fraction(signed: false, denominator: shared),
            let alternateHeadroom = fraction(signed: false, denominator: shared)
        else { return nil }
        var values: [[Double]] = []
        for _ in 0..<channels {
            var channel: [Double] = []
            for signed in [true, true, false, true, true] {
                guard let value = fraction(signed: signed, denominator: shared) else { return nil }
                channel.append(value)
            }
            values.append(channel)
        }
        return (baseHeadroom, alternateHeadroom, values)
    }
}

extension TIFFReader {
    /// The single number of `tag`: a (signed) rational, a float or a double, or an integer.
    func real(_ tag: Int, in entries: [TIFFEntry]) -> Double? {
        guard let entry = entry(tag, in: entries), entry.count >= 1 else { return nil }
        let size = TIFFEntry.size(ofType: entry.type)
        guard size > 0, let bytes = source.read(entry.valueOffset..<(entry.valueOffset + size)) else { return nil }
        switch entry.type {
        case 5:
            let d = u32(bytes, 4)
            return d == 0 ? nil : Double(u32(bytes, 0)) / Double(d)
        case 10:
            let d = Int32(truncatingIfNeeded: u32(bytes, 4))
            return d == 0 ? nil : Double(Int32(truncatingIfNeeded: u32(bytes, 0))) / Double(d)
        case 11:
            return Double(Float(bitPattern: UInt32(truncatingIfNeeded: u32(bytes, 0))))
        case 12:
            let high = UInt64(UInt32(truncatingIfNeeded: u32(bytes, bigEndian ? 0 : 4)))
            let low = UInt64(UInt32(truncatingIfNeeded: u32(bytes, bigEndian ? 4 : 0)))
            return Double(bitPattern: high << 32 | low)
        default:
            return integers(of: entry, limit: 1)?.first.map(Double.init)
        }
    }
}
