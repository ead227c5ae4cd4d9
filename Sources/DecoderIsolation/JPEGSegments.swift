import MediaFormats

/// The JPEG segments the parent keeps of a thumbnail or a compatible copy a
/// helper sent: what a viewer needs to show the picture, and the metadata the
/// parent itself checks. A helper taken over by an earlier file could
/// otherwise hide anything in an APPn or COM segment of a later item's
/// pictures (that file's bytes, say), which would be stored as sent.
///
/// Kept: SOI; DQT, SOF0–SOF15 (but DHT, JPG and DAC), DHT, DRI; each SOS with
/// its entropy-coded data (RST markers and stuffed bytes included); EOI, and
/// nothing after it. In a compatible copy also the first APP1 `Exif` segment
/// (unless the copy must carry no location and it holds a GPS IFD) and the
/// APP2 `ICC_PROFILE` segments, which MediaKit writes and the copy's notes
/// name. Every other APPn (JFIF, XMP, Adobe …), COM, DAC, DNL and any unknown
/// marker is dropped.
package enum JPEGSegments {
    /// `jpeg` with only the kept segments; nil when it is not a well-formed
    /// JPEG (a segment running past the end, no EOI).
    package static func filtered(_ jpeg: ArraySlice<UInt8>, keepingMetadata: Bool, allowsLocation: Bool) -> [UInt8]? {
        let bytes = Array(jpeg)
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(bytes.count)
        var position = 2
        var keptEXIF = false
        while position + 1 < bytes.count {
            guard bytes[position] == 0xFF else { return nil }
            // Fill bytes before a marker.
            var markerAt = position + 1
            while markerAt < bytes.count, bytes[markerAt] == 0xFF { markerAt += 1 }
            guard markerAt < bytes.count else { return nil }
            let marker = bytes[markerAt]
            position = markerAt + 1
            if marker == 0xD9 {
                out += [0xFF, 0xD9]
                return out
            }
            // Standalone markers outside a scan (TEM, stray RSTn): dropped.
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }
            guard position + 2 <= bytes.count else { return nil }
            let length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
            guard length >= 2, position + length <= bytes.count else { return nil }
            let segment = bytes[(markerAt - 1)..<(position + length)]
            let payload = bytes[(position + 2)..<(position + length)]
            position += length
            switch marker {
            case 0xDB, 0xC4, 0xDD:
                out += [0xFF, marker] + segment.dropFirst(2)
            case 0xC0...0xCF where marker != 0xC8 && marker != 0xCC:
                // SOF0–SOF15 (0xC4 is DHT, above; 0xC8 JPG and 0xCC DAC are dropped).
                out += [0xFF, marker] + segment.dropFirst(2)
            case 0xDA:
                out += [0xFF, marker] + segment.dropFirst(2)
                // The entropy-coded data: up to the next marker that is neither a
                // stuffed 0x00 nor a restart marker.
                let start = position
                while position + 1 < bytes.count {
                    if bytes[position] == 0xFF {
                        let next = bytes[position + 1]
                        if next != 0x00, next != 0xFF, !(0xD0...0xD7).contains(next) { break }
                    }
                    position += 1
                }
                guard position + 1 < bytes.count else { return nil }
                out += bytes[start..<position]
            case 0xE1 where keepingMetadata && !keptEXIF && payload.starts(with: exifSignature):
                keptEXIF = true
                if allowsLocation || !hasGPS(Array(payload.dropFirst(exifSignature.count))) { out += segment }
            case 0xE2 where keepingMetadata && payload.starts(with: iccSignature):
                out += segment
            default:
                continue
            }
        }
        return nil
    }

    package static let exifSignature: [UInt8] = Array("Exif".utf8) + [0, 0]
    package static let iccSignature: [UInt8] = Array("ICC_PROFILE".utf8) + [0]

    /// Whether the TIFF structure `tiff` has a GPS IFD pointer (tag 0x8825) in
    /// its first IFD; true when that IFD cannot be read (kept out, to be safe).
    package static func hasGPS(_ tiff: [UInt8]) -> Bool {
        guard tiff.count >= 8 else { return true }
        let little: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return true
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return little ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let high = u16(little ? at + 2 : at), let low = u16(little ? at : at + 2) else { return nil }
            return high << 16 | low
        }
        guard let ifd = u32(4), let count = u16(ifd) else { return true }
        for index in 0..<count {
            guard let tag = u16(ifd + 2 + index * 12) else { return true }
            if tag == 0x8825 { return true }
        }
        return false
    }
}
