// Where an Ultra HDR JPEG's gain map is and how it applies: the image the
// primary's MPF index lists whose XMP has `hdrgm:Version`, its `hdrgm`
// values (``GainMapMetadata``), and the primary's EXIF orientation (the gain
// map has none of its own: it is turned with the primary). Read in the
// decoder, by random access; nothing here traps on bad input.

/// An Ultra HDR JPEG's gain map (``SpatialMetadata/ultraHDRGainMap(_:)``).
package struct UltraHDRGainMap: Sendable, Hashable {
    /// The gain map JPEG's bytes in the file.
    package var range: Range<Int>
    /// Its `hdrgm` values.
    package var metadata: GainMapMetadata
    /// The primary's EXIF orientation (1–8).
    package var orientation: Int
    /// Each 8-bit map value's value in ``metadata``'s terms (256 entries), when
    /// they are not the map's own: one table for every channel (Apple's map:
    /// ``HEIFGainMap/appleValues(headroom:)``) or one per channel, red, green,
    /// blue (a three-channel map: ``GainMapMetadata/threeChannel(xmp:)``); nil:
    /// the map as it is.
    package var values: [[UInt8]]? = nil
    /// Whether it is Apple's map (kept at a quarter of the picture's side at most, as a HEIC's).
    package var apple = false
}

extension SpatialMetadata {
    /// The largest gain map JPEG read (a 50 MP photo's quarter-size map is a few MB).
    static let maximumGainMap = 64 << 20

    /// The gain map of the Ultra HDR JPEG in `source`: the first further image
    /// its MPF index lists whose own XMP has `hdrgm:Version`, `GainMapMax` and
    /// an SDR base (else, without an index, the `GainMap` item its
    /// `Container:Directory` puts last); nil when there is none, or it lies
    /// outside the file.
    package static func ultraHDRGainMap(_ source: any RandomAccessBytes) -> UltraHDRGainMap? {
        let primary = segments(source, at: 0)
        for (start, size) in mpfImages(source, primary) {
            guard size > 4, size <= maximumGainMap, start <= source.count - size else { continue }
            let texts = xmpPackets(source, segments(source, at: start)).map { String(decoding: $0, as: UTF8.self) }
            // A three-channel map: one set of numbers for all channels, its values re-encoded per channel.
            if let (metadata, tables) = texts.lazy.compactMap(GainMapMetadata.threeChannel(xmp:)).first {
                return UltraHDRGainMap(
                    range: start..<(start + size), metadata: metadata, orientation: orientation(source, primary),
                    values: tables)
            }
            guard let metadata = texts.lazy.compactMap(GainMapMetadata.init(xmp:)).first, metadata.problem == nil else {
                continue
            }
            return UltraHDRGainMap(
                range: start..<(start + size), metadata: metadata, orientation: orientation(source, primary))
        }
        // No MPF index (an editor dropped it): the primary's `Container:Directory`, whose
        // last item is the gain map, its `Item:Length` bytes at the end of the file.
        for packet in xmpPackets(source, primary) {
            let text = String(decoding: packet, as: UTF8.self)
            guard let semantic = text.ranges(of: "Semantic=\"GainMap\"").last else { continue }
            let rest = text[semantic.upperBound...]
            guard !rest.contains("Semantic="), let found = rest.firstRange(of: "Length=\"") else { continue }
            let digits = rest[found.upperBound...].prefix { $0.isASCII && $0.isNumber }
            guard let size = Int(digits), size > 4, size <= maximumGainMap else { continue }
            // At the end of the file; a file cut shorter than its directory says (edited, or trimmed as
            // ExifTool's sample is) has it right after the primary's end of image, if anywhere.
            var start = source.count - size
            if start <= 0 || source.read(start..<(start + 2)) != [0xFF, 0xD8] {
                guard let scan = MomentReader.segments(source)?.scan,
                    let end = MomentReader.endOfImage(source, from: scan), end < source.count - 4
                else { continue }
                start = end
            }
            guard
                let metadata = xmpPackets(source, segments(source, at: start)).lazy
                    .compactMap({ GainMapMetadata(xmp: String(decoding: $0, as: UTF8.self)) }).first,
                metadata.problem == nil
            else { continue }
            return UltraHDRGainMap(
                range: start..<source.count, metadata: metadata, orientation: orientation(source, primary))
        }
        return appleJPEGGainMap(source, primary)
    }

    /// Apple's JPEG gain map (an iPhone's "Most Compatible" HDR photo): the first
    /// further image the MPF index lists whose XMP marks it as Apple's map
    /// (``isAppleGainMap(xmp:)``), with the HEIC's headroom rules
    /// (``HEIFGainMap/apple(headroom:)``): the map's XMP `HDRGainMapHeadroom`
    /// (iOS 18's layout), else the primary's, else the maker note's tags 0x21
    /// and 0x30 (the older layout, `HDRGainMapVersion` 65536 alone); nil when
    /// there is none, or no headroom above 1.
    static func appleJPEGGainMap(_ source: any RandomAccessBytes, _ primary: [(marker: UInt8, payload: Range<Int>)])
        -> UltraHDRGainMap?
    {
        for (start, size) in mpfImages(source, primary) {
            guard size > 4, size <= maximumGainMap, start <= source.count - size else { continue }
            let texts = xmpPackets(source, segments(source, at: start)).map { String(decoding: $0, as: UTF8.self) }
            guard texts.contains(where: isAppleGainMap(xmp:)),
                let headroom = appleHeadroom(source, primary, map: texts),
                let (metadata, values) = HEIFGainMap.apple(headroom: headroom)
            else { continue }
            return UltraHDRGainMap(
                range: start..<(start + size), metadata: metadata, orientation: orientation(source, primary),
                values: [values], apple: true)
        }
        return nil
    }

    /// Whether an XMP packet is that of Apple's gain map: `HDRGainMap:HDRGainMapVersion`
    /// in Apple's namespace, or `apdi:AuxiliaryImageType` its auxiliary type.
    static func isAppleGainMap(xmp text: String) -> Bool {
        if let prefix = prefix(of: HEIFGainMap.appleNamespace, in: text),
            value("\(prefix):HDRGainMapVersion", in: text) != nil
        {
            return true
        }
        return text.contains(appleGainMap)
    }

    /// The headroom of Apple's JPEG gain map whose XMP packets are `map`, by the
    /// HEIC's rules: `HDRGainMapHeadroom` in the map's XMP or the primary's, else
    /// the primary's EXIF maker note tags 0x21 and 0x30.
    static func appleHeadroom(
        _ source: any RandomAccessBytes, _ primary: [(marker: UInt8, payload: Range<Int>)], map: [String]
    ) -> Double? {
        let own = xmpPackets(source, primary).map { String(decoding: $0, as: UTF8.self) }
        if let value = (map + own).lazy.compactMap(HEIFGainMap.appleHeadroom(xmp:)).first { return value }
        return appleMakerNoteHeadroom(source, primary).map {
            HEIFGainMap.appleHeadroom(makerNote33: $0.0, makerNote48: $0.1)
        }
    }

    /// Why the JPEG in `source`, which has a gain map, has none that
    /// ``ultraHDRGainMap(_:)`` finds (nil when it finds one, or the file has
    /// none): a warning's words, naming the layout. Read in the decoder.
    package static func uncarriedGainMap(_ source: any RandomAccessBytes) -> String? {
        let primary = segments(source, at: 0)
        let images = mpfImages(source, primary).filter {
            $0.size > 4 && $0.size <= maximumGainMap && $0.start <= source.count - $0.size
        }
        for image in images {
            for packet in xmpPackets(source, segments(source, at: image.start)) {
                let text = String(decoding: packet, as: UTF8.self)
                guard let prefix = prefix(of: gainMapNamespace, in: text), value("\(prefix):Version", in: text) != nil
                else { continue }
                if let (name, count) = GainMapMetadata.severalChannels(xmp: text),
                    GainMapMetadata.threeChannel(xmp: text) == nil
                {
                    return
                        "a three-channel map (hdrgm:\(name) has \(count) values) whose numbers are refused (not one or three values each, offsets that differ by channel, or out of range)"
                }
                if let base = value("\(prefix):BaseRenditionIsHDR", in: text), base.lowercased() == "true" {
                    return "a map whose base is the HDR rendition (hdrgm:BaseRenditionIsHDR) is not carried"
                }
                if let problem = GainMapMetadata(xmp: text)?.problem {
                    return "its hdrgm numbers are refused (\(problem))"
                }
                return "its hdrgm XMP has no GainMapMax"
            }
        }
        for image in images {
            let texts = xmpPackets(source, segments(source, at: image.start)).map {
                String(decoding: $0, as: UTF8.self)
            }
            guard texts.contains(where: isAppleGainMap(xmp:)) else { continue }
            guard let headroom = appleHeadroom(source, primary, map: texts) else {
                return
                    "Apple's JPEG gain map has no headroom (no HDRGainMapHeadroom XMP, no maker note HDRHeadroom and HDRGain)"
            }
            if HEIFGainMap.apple(headroom: headroom) == nil {
                return "Apple's JPEG gain map has a headroom of \(headroom) (none above SDR)"
            }
            return "Apple's JPEG gain map could not be read"
        }
        if !images.isEmpty, appleMakerNoteHeadroom(source, primary) != nil {
            return "no image its MPF index lists is marked as Apple's gain map (HDRGainMap XMP)"
        }
        if xmpPackets(source, primary).contains(where: {
            let text = String(decoding: $0, as: UTF8.self)
            return prefix(of: gainMapNamespace, in: text).map { value("\($0):Version", in: text) != nil } ?? false
        }) {
            return images.isEmpty
                ? "the gain map its XMP declares is not in the file"
                : "no image its MPF index lists is the gain map its XMP declares"
        }
        return nil
    }

    /// Apple's maker note headroom tags (0x21, 0x30) in the EXIF among a JPEG's
    /// primary `segments`, when both are there (an iPhone's HDR photo).
    static func appleMakerNoteHeadroom(
        _ source: any RandomAccessBytes, _ segments: [(marker: UInt8, payload: Range<Int>)]
    ) -> (Double, Double)? {
        for segment in segments
        where segment.marker == 0xE1
            && source.read(segment.payload.lowerBound..<(segment.payload.lowerBound + 6)) == MomentReader.exifSignature
        {
            guard let tiff = TIFFReader(source, base: segment.payload.lowerBound + 6) else { return nil }
            return HEIFGainMap.appleMakerNoteHeadroom(tiff)
        }
        return nil
    }

    /// The EXIF orientation among a JPEG's `segments` (1 when absent or odd).
    static func orientation(_ source: any RandomAccessBytes, _ segments: [(marker: UInt8, payload: Range<Int>)]) -> Int
    {
        for segment in segments
        where segment.marker == 0xE1
            && source.read(segment.payload.lowerBound..<(segment.payload.lowerBound + 6)) == MomentReader.exifSignature
        {
            guard let tiff = TIFFReader(source, base: segment.payload.lowerBound + 6),
                let ifd0 = tiff.ifd(at: tiff.firstIFD),
                let value = tiff.integer(0x0112, in: ifd0.entries), (1...8).contains(value)
            else { return 1 }
            return value
        }
        return 1
    }
}
