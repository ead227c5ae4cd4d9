/// Writes an Ultra HDR JPEG (Android's format, version 1.0): the SDR base
/// JPEG as its primary image, with an XMP packet saying it has a gain map
/// (`hdrgm:Version`, a `Container:Directory` listing the primary and the gain
/// map) and an MPF index (APP2) listing both images, then the gain map JPEG
/// with its own XMP packet of ``GainMapMetadata``. Readers without gain-map
/// support show the primary as an ordinary JPEG. The parent writes it from
/// JPEGs of which it kept only the segments a picture needs and from checked
/// numbers: no byte of metadata comes from a helper.
public enum UltraHDR {
    static let xmpHeader = Array("http://ns.adobe.com/xap/1.0/\u{0}".utf8)

    /// The Ultra HDR JPEG of `base` and `gainMap` (each a JPEG starting with
    /// SOI, without APP1/APP2 segments of their own), nil when either is no JPEG
    /// or a segment would not fit.
    public static func assemble(base: [UInt8], gainMap: [UInt8], metadata: GainMapMetadata) -> [UInt8]? {
        guard base.count > 4, gainMap.count > 4, base[0] == 0xFF, base[1] == 0xD8, gainMap[0] == 0xFF,
            gainMap[1] == 0xD8
        else { return nil }
        let secondary = [0xFF, 0xD8] + segment(0xE1, xmpHeader + Array(gainMapXMP(metadata).utf8)) + gainMap[2...]
        // The primary's XMP names the gain map's length, which does not depend on the primary.
        let primaryXMP = segment(0xE1, xmpHeader + Array(primaryXMP(gainMapLength: secondary.count).utf8))
        // The MPF segment's size does not depend on its values: lay it out once with zeros, then with the offsets.
        let mpfLength = segment(0xE2, mpf(primarySize: 0, gainMapSize: 0, gainMapOffset: 0)).count
        let primarySize = base.count + primaryXMP.count + mpfLength
        // MPF offsets count from the MPF header's TIFF start: after SOI, the XMP segment, APP2's marker and length, and "MPF\0".
        let tiffStart = 2 + primaryXMP.count + 4 + 4
        let index = segment(
            0xE2, mpf(primarySize: primarySize, gainMapSize: secondary.count, gainMapOffset: primarySize - tiffStart))
        guard primaryXMP.count <= 0xFFFF + 2, index.count == mpfLength else { return nil }
        let primary = [0xFF, 0xD8] + primaryXMP + index + base[2...]
        return primary + secondary
    }

    /// A marker segment: FF, marker, big-endian length (payload + 2), payload.
    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count + 2
        return [0xFF, marker, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + payload
    }

    /// An MPF APP2 payload (big-endian): version, two images, their entries (the primary's type 0x030000).
    static func mpf(primarySize: Int, gainMapSize: Int, gainMapOffset: Int) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] {
            [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
        }
        let entries =
            u32(0x030000) + u32(primarySize) + u32(0) + u16(0) + u16(0) + u32(0) + u32(gainMapSize) + u32(gainMapOffset)
            + u16(0) + u16(0)
        var ifd = u16(3)
        ifd += u16(0xB000) + u16(7) + u32(4) + Array("0100".utf8)
        ifd += u16(0xB001) + u16(4) + u32(1) + u32(2)
        ifd += u16(0xB002) + u16(7) + u32(entries.count) + u32(8 + 2 + 3 * 12 + 4)
        ifd += u32(0)
        return Array("MPF\u{0}".utf8) + [0x4D, 0x4D, 0x00, 0x2A] + u32(8) + ifd + entries
    }

    /// A decimal with at most six places and no exponent (XMP's Real: `0.00001`,
    /// never `1e-05`); whole numbers keep one place (`2.0`).
    static func number(_ value: Double) -> String {
        let micros = Int((value * 1_000_000).rounded())
        let whole = String(abs(micros) / 1_000_000)
        let sign = micros < 0 ? "-" : ""
        var fraction = String(abs(micros) % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.count > 1, fraction.last == "0" { fraction.removeLast() }
        return sign + whole + "." + fraction
    }

    static func primaryXMP(gainMapLength: Int) -> String {
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description rdf:about="" xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" \
        xmlns:Container="http://ns.google.com/photos/1.0/container/" xmlns:Item="http://ns.google.com/photos/1.0/container/item/" \
        hdrgm:Version="1.0"><Container:Directory><rdf:Seq>\
        <rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="Primary" Item:Mime="image/jpeg"/></rdf:li>\
        <rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="GainMap" Item:Mime="image/jpeg" Item:Length="\(gainMapLength)"/></rdf:li>\
        </rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>
        """
    }

    static func gainMapXMP(_ m: GainMapMetadata) -> String {
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description rdf:about="" xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" \
        hdrgm:GainMapMin="\(number(m.gainMapMin))" hdrgm:GainMapMax="\(number(m.gainMapMax))" hdrgm:Gamma="\(number(m.gamma))" \
        hdrgm:OffsetSDR="\(number(m.offsetSDR))" hdrgm:OffsetHDR="\(number(m.offsetHDR))" hdrgm:HDRCapacityMin="\(number(m.hdrCapacityMin))" \
        hdrgm:HDRCapacityMax="\(number(m.hdrCapacityMax))" hdrgm:BaseRenditionIsHDR="False"/></rdf:RDF></x:xmpmeta>
        """
    }
}
