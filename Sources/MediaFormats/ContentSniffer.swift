/// What the content of a file says it is, reconciled with the name it came with.
public struct SniffedContent: Sendable, Hashable {
    /// The format recognised from the bytes; `.text` or `.binary` when no magic matched.
    public let format: MediaFormat
    /// The extension the copy gets: from the content, then the source name, then a default.
    public let fileExtension: String
    /// The MIME type of the content (for text, from the name's extension).
    public let mimeType: String
    /// True when magic bytes identified the format (false for text and unknown data).
    public let recognised: Bool
    /// The source name's own extension, lower-cased, if it had one.
    public let declaredExtension: String?
    /// Set when the name claims a media format (e.g. `.jpg`) that the content is not,
    /// and the content itself is unrecognisable: such a file is most likely damaged.
    public let contradictedFormat: MediaFormat?

    /// The format's kind.
    public var kind: ContentKind { format.kind }

    /// The result of a sniff (the sniffer makes these; tests and snapshots rebuild them).
    public init(
        format: MediaFormat, fileExtension: String, mimeType: String, recognised: Bool, declaredExtension: String?,
        contradictedFormat: MediaFormat?
    ) {
        self.format = format
        self.fileExtension = fileExtension
        self.mimeType = mimeType
        self.recognised = recognised
        self.declaredExtension = declaredExtension
        self.contradictedFormat = contradictedFormat
    }
}

/// Identifies a file's format from its first bytes (magic numbers, ISO-BMFF
/// brands, RIFF and EBML doc types), never from its name alone.
///
/// Only a prefix is needed (``ContentSniffer/prefixLength`` bytes), so the copy
/// can be named before any of it is written.
public enum ContentSniffer {
    /// How many leading bytes the sniffer looks at.
    public static let prefixLength = 4096

    /// Identifies `prefix` (the first bytes of a file; fewer if the file is shorter),
    /// using `fileName`'s extension only where the content allows it.
    ///
    /// `continuation` is what the file holds at ``continuationOffset(_:)``, when
    /// that offset lies past the prefix (the audio after a long ID3v2 tag); without
    /// it such a file is taken for MP3, as most are.
    public static func sniff(_ prefix: some Collection<UInt8>, fileName: String?, continuation: [UInt8]? = nil)
        -> SniffedContent
    {
        let bytes = Array(prefix.prefix(prefixLength))
        let declared = fileName.flatMap(Self.fileExtension(of:))
        let claimed = declared.flatMap { ext in mediaFormatsByExtension[ext] }
        if bytes.isEmpty {
            // An empty file has no content to contradict its name: it keeps the name's extension.
            return SniffedContent(
                format: .binary, fileExtension: declared ?? "bin", mimeType: "application/octet-stream",
                recognised: false, declaredExtension: declared, contradictedFormat: nil)
        }
        if var format = recognise(bytes, continuation: continuation) {
            // A WebM that its muxer labelled `matroska` (ffmpeg's `-f matroska`, mkvmerge): named
            // .webm, with only codecs WebM allows, it stays WebM.
            if format == .mkv, declared == "webm", let codecs = matroskaCodecIDs(bytes),
                codecs.contains(where: { $0.hasPrefix("V_") }),
                codecs.allSatisfy(webmCodecIDs.contains)
            {
                format = .webm
            }
            // Text formats (HTML, XML, SVG) keep a name that claims no media format
            // (a page saved as `.php` stays `.php`); under an image name they get their own.
            let ext =
                format.kind == .text && claimed == nil && declared != nil
                ? declared! : format.fileExtension(keeping: declared)
            return SniffedContent(
                format: format, fileExtension: ext,
                mimeType: format.mimeType, recognised: true, declaredExtension: declared,
                contradictedFormat: nil)
        }
        if looksLikeText(bytes) {
            if let declared, claimed == nil {
                let mime = TextMIMETypes.byExtension[declared] ?? "text/plain"
                return SniffedContent(
                    format: .text, fileExtension: declared, mimeType: mime, recognised: false,
                    declaredExtension: declared, contradictedFormat: nil)
            }
            // Text under a media name (a note saved as `.png`): it is text, stored as `.txt`.
            return SniffedContent(
                format: .text, fileExtension: "txt", mimeType: "text/plain", recognised: false,
                declaredExtension: declared, contradictedFormat: nil)
        }
        if let declared, claimed == nil {
            return SniffedContent(
                format: .binary, fileExtension: declared, mimeType: "application/octet-stream",
                recognised: false, declaredExtension: declared, contradictedFormat: nil)
        }
        return SniffedContent(
            format: .binary, fileExtension: "bin", mimeType: "application/octet-stream",
            recognised: false, declaredExtension: declared, contradictedFormat: claimed)
    }

    /// The file offset whose bytes decide the format when the prefix cannot: the
    /// end of an ID3v2 tag that runs past the prefix (cover art makes tags of
    /// hundreds of KB), where the MP3, AAC or FLAC data starts. Nil when the
    /// prefix is enough. Read ``prefixLength`` bytes there and pass them to
    /// ``sniff(_:fileName:continuation:)``.
    public static func continuationOffset(_ prefix: some Collection<UInt8>) -> Int? {
        let bytes = Array(prefix.prefix(prefixLength))
        guard let end = id3TagLength(bytes), end + 4 > bytes.count, bytes.count == prefixLength else { return nil }
        return end
    }

    /// The last dot-component of a file name, lower-cased; nil for none, a
    /// leading-dot name (`.profile`) or an implausible one (spaces, > 10 chars).
    public static func fileExtension(of fileName: String) -> String? {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return nil }
        let ext = fileName[fileName.index(after: dot)...]
        guard !ext.isEmpty, ext.count <= 10,
            ext.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) })
        else { return nil }
        return ext.lowercased()
    }

    // MARK: - Magic numbers

    static func recognise(_ b: [UInt8], continuation: [UInt8]? = nil) -> MediaFormat? {
        if let decided = pictureMagic(b) { return decided }
        if let decided = otherMagic(b, continuation: continuation) { return decided }
        // MPEG audio frame sync: 11 set bits, then layer III (MP3) or layer 0 (ADTS AAC).
        if b.count >= 4, b[0] == 0xFF, b[1] & 0xE0 == 0xE0 {
            if b[1] & 0x06 == 0x02, b[2] & 0xF0 != 0xF0 { return .mp3 }
            if b[1] & 0xF6 == 0xF0 { return .aac }
        }
        if looksLikeText(b) {
            if isSVG(b) { return .svg }
            if isHTML(b) { return .html }
            if isXML(b) { return .xml }
        }
        return nil
    }

    /// True when `b` holds `magic` at `offset`.
    private static func at(_ b: [UInt8], _ offset: Int, _ magic: [UInt8]) -> Bool {
        b.count >= offset + magic.count && b[offset..<(offset + magic.count)].elementsEqual(magic)
    }

    private static func at(_ b: [UInt8], _ offset: Int, _ ascii: String) -> Bool { at(b, offset, Array(ascii.utf8)) }

    /// ``recognise(_:continuation:)``'s pictures (and what comes before them:
    /// ISO media, RIFF, Matroska) by their magic numbers: the format, or nil
    /// (`.some(nil)`) when the magic says it is none this reads; nil when it is
    /// not one of these.
    private static func pictureMagic(_ b: [UInt8]) -> MediaFormat?? {
        if at(b, 0, [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if at(b, 0, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if at(b, 0, "GIF87a") || at(b, 0, "GIF89a") { return .gif }
        if at(b, 4, "ftyp") { return isoBaseMediaFormat(b) }
        if at(b, 0, "RIFF"), b.count >= 12 {
            if at(b, 8, "WEBP") { return .webp }
            if at(b, 8, "WAVE") { return .wav }
            if at(b, 8, "AVI ") { return .avi }
        }
        if at(b, 0, [0x1A, 0x45, 0xDF, 0xA3]) {
            // The EBML header's DocType says which: `webm` or `matroska`.
            if let docType = ebmlDocType(b) { return docType == "webm" ? .webm : .mkv }
            return contains(b, Array("webm".utf8)) ? .webm : .mkv
        }
        // Camera RAW files, before TIFF: most are TIFF structures with a maker's mark.
        if at(b, 0, "FUJIFILMCCD-RAW ") { return .raf }
        if at(b, 0, "IIRO") || at(b, 0, "IIRS") || at(b, 0, "MMOR") { return .orf }
        if at(b, 0, [0x49, 0x49, 0x55, 0x00]) { return .rw2 }
        if at(b, 0, "II*\u{0}"), at(b, 8, [0x43, 0x52, 0x02]) { return .cr2 }
        if at(b, 0, "II*\u{0}") || at(b, 0, "MM\u{0}*"), let raw = TIFFMaker.rawFormat(b) { return raw }
        // TIFF, and BigTIFF (version 43, 8-byte offsets; libvips reads both).
        if at(b, 0, "II*\u{0}") || at(b, 0, "MM\u{0}*") || at(b, 0, [0x49, 0x49, 0x2B, 0, 8, 0, 0, 0])
            || at(b, 0, [0x4D, 0x4D, 0, 0x2B, 0, 8, 0, 0])
        {
            return .tiff
        }
        if at(b, 0, [0xFF, 0x0A]) || at(b, 0, [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            return .jxl
        }
        if at(b, 0, [0, 0, 0, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A])
            || at(b, 0, [0xFF, 0x4F, 0xFF, 0x51])
        {
            return .jpeg2000
        }
        if at(b, 0, "BM"), b.count >= 18, [12, 40, 52, 56, 64, 108, 124].contains(Int(b[14]) | Int(b[15]) << 8),
            b[16] == 0, b[17] == 0
        {
            return .bmp
        }
        return nil
    }

    /// ``recognise(_:continuation:)``'s documents, sound, video containers and
    /// archives by their magic numbers, after the pictures (as ``pictureMagic(_:)``).
    private static func otherMagic(_ b: [UInt8], continuation: [UInt8]?) -> MediaFormat?? {
        // PDF readers accept the header anywhere in the first KB (after junk), but a
        // text file that merely mentions "%PDF-" is still text.
        if at(b, 0, "%PDF-") || (contains(b.prefix(1024), Array("%PDF-".utf8)) && !looksLikeText(b)) { return .pdf }
        if at(b, 0, "fLaC") { return .flac }
        if at(b, 0, "OggS") {
            return contains(b, Array("theora".utf8)) || contains(b, [0x80, 0x74, 0x68]) ? .oggVideo : .ogg
        }
        if at(b, 0, "ID3") {
            if let audio = audioAfterID3(b, continuation: continuation) { return audio }
            // Another audio format behind the tag (Musepack, Monkey's Audio, WavPack,
            // TTA) is not MP3: unrecognised, it keeps its own name. Anything else is
            // taken for MP3, as most tagged files are (libav finds the first frame).
            if otherAudioAfterID3(b, continuation: continuation) { return .some(nil) }
            return .mp3
        }
        if at(b, 0, "FORM"), at(b, 8, "AIFF") || at(b, 8, "AIFC") { return .aiff }
        if at(b, 0, "#!AMR") { return .amr }
        if at(b, 0, "FLV"), b.count > 3, b[3] == 1 { return .flv }
        if at(b, 0, [0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11]) { return .asf }
        if at(b, 0, [0, 0, 1, 0xBA]) { return .mpegPS }
        // An MPEG-1/2 video sequence header: horizontal and vertical size (12 bits
        // each, not 0), aspect ratio and frame rate codes (4 bits each, 1–14 and 1–8).
        if at(b, 0, [0, 0, 1, 0xB3]), b.count >= 8, Int(b[4]) << 4 | Int(b[5]) >> 4 > 0,
            (Int(b[5]) & 0x0F) << 8 | Int(b[6]) > 0,
            (1...14).contains(b[7] >> 4), (1...8).contains(b[7] & 0x0F)
        {
            return .mpegVideo
        }
        if isTransportStream(b, packetSize: 188, syncOffset: 0) || isTransportStream(b, packetSize: 192, syncOffset: 4)
        {
            return .mpegTS
        }
        if isQuickTimeWithoutFtyp(b) { return .mov }
        if at(b, 0, "PK\u{03}\u{04}") || at(b, 0, "PK\u{05}\u{06}") { return zipFormat(b) }
        if at(b, 0, [0x1F, 0x8B]) { return .gzip }
        if at(b, 0, "BZh"), b.count > 3, (0x31...0x39).contains(b[3]) { return .bzip2 }
        if at(b, 0, [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .xz }
        if at(b, 0, [0x28, 0xB5, 0x2F, 0xFD]) { return .zstd }
        if at(b, 0, [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return .sevenZip }
        if at(b, 0, "Rar!\u{1A}\u{07}") { return .rar }
        if at(b, 257, "ustar") { return .tar }
        if at(b, 0, "SQLite format 3\u{0}") { return .sqlite }
        if at(b, 0, [0x7F, 0x45, 0x4C, 0x46]) { return .elf }
        if at(b, 0, [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) { return .oleCompound }
        if at(b, 0, "{\\rtf") { return .rtf }
        if at(b, 0, "8BPS") { return .psd }
        if at(b, 0, [0, 0, 1, 0]), b.count > 5, b[4] > 0, b[5] == 0 { return .ico }
        if isNetpbm(b) { return .netpbm }
        return nil
    }

    // MARK: - Audio after an ID3v2 tag

    /// The length of the ID3v2 tag at the start (10-byte header, syncsafe size,
    /// optional 10-byte footer); nil when `b` does not start with a valid one.
    static func id3TagLength(_ b: [UInt8]) -> Int? {
        guard b.count >= 10, b[0] == 0x49, b[1] == 0x44, b[2] == 0x33, b[3] != 0xFF, b[4] != 0xFF,
            b[6] < 0x80, b[7] < 0x80, b[8] < 0x80, b[9] < 0x80
        else { return nil }
        let size = Int(b[6]) << 21 | Int(b[7]) << 14 | Int(b[8]) << 7 | Int(b[9])
        return 10 + size + (b[5] & 0x10 != 0 ? 10 : 0)
    }

    /// What follows an ID3v2 tag: ADTS AAC (sync 0xFFF, layer 0: 0xFFF1/0xFFF9),
    /// MPEG audio frames (layer I–III), or FLAC. Nil when it cannot be seen (the tag
    /// runs past the prefix and no continuation was read) or is none of them.
    static func audioAfterID3(_ b: [UInt8], continuation: [UInt8]?) -> MediaFormat? {
        guard let end = id3TagLength(b) else { return nil }
        var tail: ArraySlice<UInt8>
        if end + 4 <= b.count {
            tail = b[end...]
        } else if let continuation {
            tail = continuation[...]
        } else {
            return nil
        }
        // Some taggers pad past the size they declare.
        tail = tail.drop { $0 == 0 }
        guard tail.count >= 4 else { return nil }
        let t = Array(tail.prefix(4))
        if t == Array("fLaC".utf8) { return .flac }
        guard t[0] == 0xFF, t[1] & 0xE0 == 0xE0 else { return nil }
        if t[1] & 0xF6 == 0xF0 { return .aac }
        if t[1] & 0x06 != 0, t[2] & 0xF0 != 0xF0 { return .mp3 }
        return nil
    }

    /// True when the bytes after an ID3v2 tag start another audio format's magic.
    static func otherAudioAfterID3(_ b: [UInt8], continuation: [UInt8]?) -> Bool {
        guard let end = id3TagLength(b) else { return false }
        let tail = end + 4 <= b.count ? Array(b[end...].prefix(4)) : Array((continuation ?? []).prefix(4))
        return ["MPCK", "MP+", "MAC ", "wvpk", "TTA1", "OggS", "RIFF"].contains { tail.starts(with: Array($0.utf8)) }
    }

    /// Netpbm (PBM, PGM, PPM: `P1`–`P6`, then whitespace and a width): what
    /// libvips' ppmload reads. The ASCII kinds are text, so this comes first.
    static func isNetpbm(_ b: [UInt8]) -> Bool {
        guard b.count >= 4, b[0] == 0x50, (0x31...0x36).contains(b[1]) else { return false }
        var i = 2
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        guard whitespace.contains(b[i]) else { return false }
        // Whitespace and `#` comments, then the width's first digit.
        while i < b.count {
            if whitespace.contains(b[i]) {
                i += 1
            } else if b[i] == 0x23 {
                while i < b.count, b[i] != 0x0A { i += 1 }
            } else {
                return (0x31...0x39).contains(b[i])
            }
        }
        return false
    }

    // MARK: - Containers recognised by their structure

    /// MPEG transport stream: a sync byte 0x47 every `packetSize` bytes (188, or
    /// 192 for AVCHD/Blu-ray `.mts`/`.m2ts`, whose packets start with a 4-byte
    /// timestamp), in at least three and every packet of the prefix, up to 16.
    static func isTransportStream(_ b: [UInt8], packetSize: Int, syncOffset: Int) -> Bool {
        let packets = min(16, (b.count - syncOffset + packetSize - 1) / packetSize)
        guard packets >= 3 else { return false }
        for i in 0..<packets where b[syncOffset + i * packetSize] != 0x47 { return false }
        return true
    }

    /// A QuickTime movie without `ftyp` (files written before ISO base media):
    /// a chain of classic top-level atoms (`free`, `skip`, `wide`, `pnot`, `PICT`,
    /// `junk`, `uuid`) with plausible sizes, reaching `moov` or `mdat`.
    static func isQuickTimeWithoutFtyp(_ b: [UInt8]) -> Bool {
        let fillers: Set<String> = ["free", "skip", "wide", "pnot", "PICT", "junk", "uuid"]
        var offset = 0
        while offset + 8 <= b.count {
            let size = Int(b[offset]) << 24 | Int(b[offset + 1]) << 16 | Int(b[offset + 2]) << 8 | Int(b[offset + 3])
            let type = String(decoding: b[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if type == "moov" || type == "mdat" { return size == 0 || size == 1 || size >= 8 }
            // Filler atoms are small; text read as a size is over 150 MB.
            guard fillers.contains(type), size >= 8, size <= 1 << 24 else { return false }
            offset += size
        }
        // The chain runs past the prefix with every atom plausible.
        return offset > 0 && offset + 8 > b.count
    }

    // MARK: - Text formats

    /// The text after a byte-order mark and leading whitespace, lower-cased (first 1 KB).
    static func textHead(_ b: [UInt8]) -> String {
        String(decoding: b.prefix(1024), as: UTF8.self).drop { $0.isWhitespace || $0 == "\u{FEFF}" }.lowercased()
    }

    /// HTML, as browsers sniff it: the document starts with one of the tags of the
    /// WHATWG MIME-sniffing list (`<!doctype html`, `<html`, `<head`, `<body`,
    /// `<script`, `<div`, `<p`, ...) followed by a space or `>`; or XHTML.
    static func isHTML(_ b: [UInt8]) -> Bool {
        let head = textHead(b)
        let tags = [
            "<!doctype html", "<html", "<head", "<script", "<iframe", "<h1", "<div", "<font", "<table", "<a", "<style",
            "<title", "<b", "<body", "<br", "<p", "<!--",
        ]
        for tag in tags where head.hasPrefix(tag) {
            let after = head.dropFirst(tag.count).first
            if tag == "<!--" { return head.contains("<html") || head.contains("<!doctype html") }
            if after == nil || after == ">" || after == " " || after == "\n" || after == "\t" || after == "\r"
                || after == "/"
            {
                return true
            }
        }
        // XHTML: an XML declaration, then an HTML document.
        return head.hasPrefix("<?xml") && (head.contains("<!doctype html") || head.contains("<html"))
    }

    /// XML (not SVG, not XHTML: those are tested first): an XML declaration, or a
    /// property list.
    static func isXML(_ b: [UInt8]) -> Bool {
        let head = textHead(b)
        return head.hasPrefix("<?xml ") || head.hasPrefix("<?xml\t") || head.hasPrefix("<?xml\n")
            || head.hasPrefix("<!doctype plist")
    }

    /// ISO base media (MP4, QuickTime, HEIF, AVIF, 3GP): decided by the ftyp brands.
    static func isoBaseMediaFormat(_ b: [UInt8]) -> MediaFormat {
        func brand(_ offset: Int) -> String? {
            guard b.count >= offset + 4 else { return nil }
            return String(decoding: b[offset..<(offset + 4)], as: UTF8.self)
        }
        let boxSize = b.count >= 4 ? Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3]) : 0
        let major = brand(8) ?? ""
        var brands = [major]
        var offset = 16
        while offset + 4 <= min(boxSize, b.count, 256) {
            if let compatible = brand(offset) { brands.append(compatible) }
            offset += 4
        }
        // Image brands, then image sequence brands (a `moov` track of pictures:
        // `msf1` structure, `hevc`/`hevx` HEVC, `avis` AV1).
        let heicBrands: Set = ["heic", "heix", "heim", "heis"]
        let heicSequenceBrands: Set = ["hevc", "hevx", "hevm", "hevs"]
        if heicBrands.contains(major) { return .heic }
        if heicSequenceBrands.contains(major) { return .heicSequence }
        if major == "avif" { return .avif }
        if major == "avis" { return .avifSequence }
        if major == "msf1" {
            if brands.contains("avis") { return .avifSequence }
            if brands.contains(where: { heicSequenceBrands.contains($0) || heicBrands.contains($0) }) {
                return .heicSequence
            }
            return .heifSequence
        }
        if major == "mif1" {
            if brands.contains("avif") { return .avif }
            if brands.contains(where: heicBrands.contains) { return .heic }
            if brands.contains("avis") { return .avifSequence }
            if brands.contains(where: heicSequenceBrands.contains) { return .heicSequence }
            return .heif
        }
        if major == "crx " { return .cr3 }
        if major == "qt  " { return .mov }
        if ["M4A ", "M4B ", "M4P "].contains(major) { return .m4a }
        if ["M4V ", "M4VH", "M4VP"].contains(major) { return .m4v }
        if major.hasPrefix("3gp") || major.hasPrefix("3g2") || major.hasPrefix("3ge") { return .threeGP }
        return .mp4
    }

    /// The Matroska codec IDs WebM allows: VP8, VP9, AV1, Vorbis, Opus (and WebVTT text).
    static let webmCodecIDs: Set<String> = [
        "V_VP8", "V_VP9", "V_AV1", "A_VORBIS", "A_OPUS", "D_WEBVTT/SUBTITLES", "D_WEBVTT/CAPTIONS",
        "D_WEBVTT/DESCRIPTIONS", "D_WEBVTT/METADATA",
    ]

    /// Every track's `CodecID` in a Matroska file's `Tracks`, when the whole
    /// element lies within `b` (the first top-level elements of the `Segment`
    /// after the EBML header); nil otherwise.
    package static func matroskaCodecIDs(_ b: [UInt8]) -> [String]? {
        func vint(_ i: Int, keepMarker: Bool) -> (value: Int, length: Int)? {
            guard i < b.count, b[i] != 0 else { return nil }
            let length = b[i].leadingZeroBitCount + 1
            guard length <= 8, i + length <= b.count else { return nil }
            var value = Int(keepMarker ? b[i] : b[i] & (0xFF >> length))
            for k in 1..<length { value = value << 8 | Int(b[i + k]) }
            // All ones: an unknown size.
            if !keepMarker, value == (1 << (7 * length)) - 1 { return (Int.max, length) }
            return (value, length)
        }
        /// The children of the element whose payload is `range`: (id, payload).
        func children(_ range: Range<Int>) -> [(id: Int, payload: Range<Int>)]? {
            var found: [(Int, Range<Int>)] = []
            var i = range.lowerBound
            while i < range.upperBound, found.count < 256 {
                guard let (id, idLength) = vint(i, keepMarker: true),
                    let (size, sizeLength) = vint(i + idLength, keepMarker: false)
                else { return found }
                let start = i + idLength + sizeLength
                guard size != Int.max, size <= range.upperBound - start else { return found }
                found.append((id, start..<(start + size)))
                i = start + size
            }
            return found
        }
        guard let (id, idLength) = vint(0, keepMarker: true), id == 0x1A45_DFA3,
            let (size, sizeLength) = vint(idLength, keepMarker: false), size != Int.max,
            let (segment, segmentIDLength) = vint(idLength + sizeLength + size, keepMarker: true),
            segment == 0x1853_8067,
            let (_, segmentSizeLength) = vint(idLength + sizeLength + size + segmentIDLength, keepMarker: false)
        else { return nil }
        let segmentStart = idLength + sizeLength + size + segmentIDLength + segmentSizeLength
        guard let top = children(segmentStart..<b.count), let tracks = top.first(where: { $0.id == 0x1654_AE6B }),
            let entries = children(tracks.payload)
        else { return nil }
        var codecs: [String] = []
        for entry in entries where entry.id == 0xAE {
            guard let fields = children(entry.payload), let codec = fields.first(where: { $0.id == 0x86 }) else {
                return nil
            }
            codecs.append(String(decoding: b[codec.payload].prefix { $0 != 0 }, as: UTF8.self))
        }
        return codecs.isEmpty ? nil : codecs
    }

    /// The EBML header's DocType (`webm`, `matroska`), if the header is within `b`:
    /// element IDs and sizes are EBML variable-length integers.
    package static func ebmlDocType(_ b: [UInt8]) -> String? {
        /// A variable-length integer at `i`: its value (marker bit removed, unless
        /// `keepMarker`, as element IDs are written) and its length.
        func vint(_ i: Int, keepMarker: Bool) -> (value: Int, length: Int)? {
            guard i < b.count, b[i] != 0 else { return nil }
            let length = b[i].leadingZeroBitCount + 1
            guard length <= 8, i + length <= b.count else { return nil }
            var value = Int(keepMarker ? b[i] : b[i] & (0xFF >> length))
            for k in 1..<length { value = value << 8 | Int(b[i + k]) }
            return (value, length)
        }
        guard let (id, idLength) = vint(0, keepMarker: true), id == 0x1A45_DFA3,
            let (size, sizeLength) = vint(idLength, keepMarker: false)
        else { return nil }
        var i = idLength + sizeLength
        let end = min(b.count, i + size)
        while i < end {
            guard let (child, childLength) = vint(i, keepMarker: true),
                let (length, lengthLength) = vint(i + childLength, keepMarker: false)
            else { return nil }
            let start = i + childLength + lengthLength
            guard length >= 0, start + length <= end else { return nil }
            if child == 0x4282 {
                return String(decoding: b[start..<(start + length)].prefix { $0 != 0 }, as: UTF8.self).lowercased()
            }
            i = start + length
        }
        return nil
    }

    /// ZIP, or a ZIP-based format announced by a stored `mimetype` first entry (EPUB, OpenDocument).
    static func zipFormat(_ b: [UInt8]) -> MediaFormat {
        guard b.count >= 30 else { return .zip }
        let nameLength = Int(b[26]) | Int(b[27]) << 8
        let extraLength = Int(b[28]) | Int(b[29]) << 8
        guard nameLength == 8, b.count >= 38,
            String(decoding: b[30..<38], as: UTF8.self) == "mimetype"
        else { return .zip }
        // The mimetype entry is stored uncompressed: its size is the compressed size field.
        let size = Int(b[18]) | Int(b[19]) << 8 | Int(b[20]) << 16 | Int(b[21]) << 24
        let start = 38 + extraLength
        guard size > 0, size < 128, start + size <= b.count else { return .zip }
        let mime = String(decoding: b[start..<(start + size)], as: UTF8.self)
        if mime.hasPrefix("application/epub+zip") { return .epub }
        if mime.hasPrefix("application/vnd.oasis.opendocument.") {
            let sub = mime.dropFirst("application/vnd.oasis.opendocument.".count)
            let ext =
                sub.hasPrefix("text")
                ? "odt" : sub.hasPrefix("spreadsheet") ? "ods" : sub.hasPrefix("presentation") ? "odp" : "zip"
            return MediaFormat(
                id: "opendocument", name: "OpenDocument", kind: .document, mimeType: mime, extensions: [ext, "zip"])
        }
        return .zip
    }

    /// UTF-8 (or UTF-16 with a byte-order mark) with no NUL bytes and few control characters.
    static func looksLikeText(_ b: [UInt8]) -> Bool {
        if b.count >= 2, (b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF) { return true }
        if b.contains(0) { return false }
        var controls = 0
        for byte in b where byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D && byte != 0x0C && byte != 0x1B
        {
            controls += 1
        }
        if controls * 100 > b.count { return false }
        // Valid UTF-8, allowing a multi-byte sequence cut at the end of the prefix.
        var iterator = b.makeIterator()
        var decoder = UTF8()
        var decoded = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): decoded += scalar.utf8.count
            case .emptyInput: return true
            case .error: return b.count - decoded <= 3 && b.count == ContentSniffer.prefixLength
            }
        }
    }

    static func isSVG(_ b: [UInt8]) -> Bool {
        let head = String(decoding: b.prefix(1024), as: UTF8.self).drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        return (head.hasPrefix("<?xml") || head.hasPrefix("<svg") || head.hasPrefix("<!DOCTYPE svg"))
            && head.contains("<svg")
    }

    static func contains(_ haystack: some Collection<UInt8>, _ needle: [UInt8]) -> Bool {
        let h = Array(haystack)
        guard h.count >= needle.count, let first = needle.first else { return false }
        var i = 0
        while i <= h.count - needle.count {
            if h[i] == first, h[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }

    /// Whether a file's name ends in the extension of an image, video, audio,
    /// PDF or RAW format (any case): a hint from the name alone, for starting
    /// decoders early; what a file is, the content decides.
    public static func nameSaysMedia(_ name: some Collection<UInt8>) -> Bool {
        guard let ext = fileExtension(of: String(decoding: name, as: UTF8.self)) else { return false }
        return mediaFormatsByExtension[ext] != nil
    }

    /// Extensions that name an image, video or audio format: a file carrying one of
    /// these whose content matches no format at all is treated as damaged.
    static let mediaFormatsByExtension: [String: MediaFormat] = {
        let formats: [MediaFormat] = [
            .jpeg, .png, .gif, .webp, .heic, .avif, .heicSequence, .avifSequence, .tiff, .bmp, .jxl, .mp4, .mov, .m4v,
            .threeGP, .webm,
            .mkv, .avi, .mp3, .m4a, .wav, .flac, .ogg, .pdf, .dng, .nef, .cr2, .cr3, .arw, .raf, .orf, .rw2,
        ]
        var table: [String: MediaFormat] = [:]
        for format in formats.reversed() {
            for ext in format.extensions where ext != "mp4" || format == .mp4 { table[ext] = format }
        }
        return table
    }()
}
