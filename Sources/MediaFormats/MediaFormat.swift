/// The broad kind of content a format holds, before the media is opened.
public enum ContentKind: String, Sendable, Codable, Hashable, CaseIterable {
    /// Still or animated pictures.
    case image
    /// Moving pictures (with or without sound).
    case video
    /// Sound only.
    case audio
    /// Documents (PDF, office files, e-books).
    case document
    /// Compressed archives.
    case archive
    /// Text without magic bytes.
    case text
    /// Anything else: binary data of a known or unknown kind.
    case data
}

/// A file format recognised from its content (magic bytes), with the extension,
/// MIME type and kind it implies.
///
/// `extensions` lists every spelling accepted for a file of this format: when
/// a source's own extension is one of them it is kept (lower-cased), so a
/// `.docx` (a ZIP) stays `.docx` and a `.jpeg` stays `.jpeg`; otherwise the
/// first one, the canonical extension, is used.
public struct MediaFormat: Sendable, Codable, Hashable, CustomStringConvertible {
    /// A short stable identifier, e.g. `jpeg`, `mp4`, `webm`.
    public let id: String
    /// The human name used in messages, e.g. "JPEG", "MP4".
    public let name: String
    /// What the content is, broadly.
    public let kind: ContentKind
    /// The MIME type the content implies, e.g. `image/jpeg`.
    public let mimeType: String
    /// Accepted extensions, canonical first, lower case, without the dot.
    public let extensions: [String]

    /// The first of ``extensions``: what a file whose own extension is not one of them gets.
    public var canonicalExtension: String { extensions[0] }
    /// The ``name``.
    public var description: String { name }

    /// A format and the extensions, MIME type and kind it implies.
    public init(id: String, name: String, kind: ContentKind, mimeType: String, extensions: [String]) {
        self.id = id
        self.name = name
        self.kind = kind
        self.mimeType = mimeType
        self.extensions = extensions
    }

    /// A file that is not a photo but whose first page or picture can be rendered
    /// as a thumbnail: PDF, and SVG drawings and Photoshop documents (those two only
    /// by a sandboxed decoder; see MediaKit's `InProcessDecoder`).
    public var isRenderableDocument: Bool { ["pdf", "svg", "psd"].contains(id) }

    /// True for camera RAW formats (a thumbnail from an embedded preview).
    public var isCameraRAW: Bool { Self.cameraRAW.contains(self) }

    /// The camera RAW formats.
    public static let cameraRAW: [MediaFormat] = [.dng, .nef, .cr2, .cr3, .arw, .raf, .orf, .rw2]

    /// True for what a decoder opens: images, video, audio and renderable documents.
    public var isDecodable: Bool { kind == .image || kind == .video || kind == .audio || isRenderableDocument }

    /// The extension a copy of a file of this format gets, given the source's own extension.
    public func fileExtension(keeping sourceExtension: String?) -> String {
        if let ext = sourceExtension?.lowercased(), extensions.contains(ext) { return ext }
        return canonicalExtension
    }
}

extension MediaFormat {
    // Images
    /// JPEG (image, `image/jpeg`).
    public static let jpeg = MediaFormat(
        id: "jpeg", name: "JPEG", kind: .image, mimeType: "image/jpeg", extensions: ["jpg", "jpeg", "jpe", "jfif"])
    /// PNG (image, `image/png`).
    public static let png = MediaFormat(
        id: "png", name: "PNG", kind: .image, mimeType: "image/png", extensions: ["png"])
    /// GIF (image, `image/gif`).
    public static let gif = MediaFormat(
        id: "gif", name: "GIF", kind: .image, mimeType: "image/gif", extensions: ["gif"])
    /// WebP (image, `image/webp`).
    public static let webp = MediaFormat(
        id: "webp", name: "WebP", kind: .image, mimeType: "image/webp", extensions: ["webp"])
    /// HEIC (image, `image/heic`).
    public static let heic = MediaFormat(
        id: "heic", name: "HEIC", kind: .image, mimeType: "image/heic", extensions: ["heic", "heif", "hif"])
    /// HEIF (image, `image/heif`).
    public static let heif = MediaFormat(
        id: "heif", name: "HEIF", kind: .image, mimeType: "image/heif", extensions: ["heif", "heic", "hif"])
    /// AVIF (image, `image/avif`).
    public static let avif = MediaFormat(
        id: "avif", name: "AVIF", kind: .image, mimeType: "image/avif", extensions: ["avif"])
    /// HEIC image sequence (image, `image/heic-sequence`): `msf1`/`hevc` brands, a track of HEVC pictures.
    public static let heicSequence = MediaFormat(
        id: "heics", name: "HEIC sequence", kind: .image, mimeType: "image/heic-sequence",
        extensions: ["heics", "heifs", "heic", "heif"])
    /// HEIF image sequence (image, `image/heif-sequence`): `msf1` with no codec brand.
    public static let heifSequence = MediaFormat(
        id: "heifs", name: "HEIF sequence", kind: .image, mimeType: "image/heif-sequence",
        extensions: ["heifs", "heics", "heif", "heic"])
    /// AVIF image sequence (image, `image/avif`: the registered type covers
    /// animations; there is no `image/avif-sequence`): the `avis` brand, an
    /// animated AVIF, its `.avifs` name kept.
    public static let avifSequence = MediaFormat(
        id: "avifs", name: "AVIF sequence", kind: .image, mimeType: "image/avif", extensions: ["avifs", "avif"])
    /// TIFF (image, `image/tiff`).
    public static let tiff = MediaFormat(
        id: "tiff", name: "TIFF", kind: .image, mimeType: "image/tiff",
        extensions: ["tiff", "tif", "dng", "btf", "tf8"])
    /// BMP (image, `image/bmp`).
    public static let bmp = MediaFormat(
        id: "bmp", name: "BMP", kind: .image, mimeType: "image/bmp", extensions: ["bmp", "dib"])
    /// JPEG XL (image, `image/jxl`).
    public static let jxl = MediaFormat(
        id: "jxl", name: "JPEG XL", kind: .image, mimeType: "image/jxl", extensions: ["jxl"])
    /// JPEG 2000 (image, `image/jp2`).
    public static let jpeg2000 = MediaFormat(
        id: "jp2", name: "JPEG 2000", kind: .image, mimeType: "image/jp2", extensions: ["jp2", "j2k", "jpx"])
    /// Netpbm (image, `image/x-portable-anymap`): PBM, PGM and PPM.
    public static let netpbm = MediaFormat(
        id: "netpbm", name: "Netpbm", kind: .image, mimeType: "image/x-portable-anymap",
        extensions: ["ppm", "pgm", "pbm", "pnm"])
    /// ICO (image, `image/vnd.microsoft.icon`): the largest of its icons is the picture.
    public static let ico = MediaFormat(
        id: "ico", name: "ICO", kind: .image, mimeType: "image/vnd.microsoft.icon", extensions: ["ico", "cur"])
    /// Photoshop (data, `image/vnd.adobe.photoshop`).
    public static let psd = MediaFormat(
        id: "psd", name: "Photoshop", kind: .data, mimeType: "image/vnd.adobe.photoshop", extensions: ["psd"])
    /// SVG (text, `image/svg+xml`).
    public static let svg = MediaFormat(
        id: "svg", name: "SVG", kind: .text, mimeType: "image/svg+xml", extensions: ["svg"])

    // Camera RAW photos (recognised by their maker structures, never by name; MIME
    // types as freedesktop's shared-mime-info names them). Their thumbnail is the
    // largest preview the camera embedded.
    /// Adobe DNG (image, `image/x-adobe-dng`): TIFF with a DNGVersion tag.
    public static let dng = MediaFormat(
        id: "dng", name: "DNG", kind: .image, mimeType: "image/x-adobe-dng", extensions: ["dng"])
    /// Nikon NEF (image, `image/x-nikon-nef`): TIFF, Make NIKON, with SubIFDs.
    public static let nef = MediaFormat(
        id: "nef", name: "Nikon NEF", kind: .image, mimeType: "image/x-nikon-nef", extensions: ["nef", "nrw"])
    /// Canon CR2 (image, `image/x-canon-cr2`): TIFF with `CR` 2 after the header.
    public static let cr2 = MediaFormat(
        id: "cr2", name: "Canon CR2", kind: .image, mimeType: "image/x-canon-cr2", extensions: ["cr2"])
    /// Canon CR3 (image, `image/x-canon-cr3`): ISO base media with the `crx ` brand.
    public static let cr3 = MediaFormat(
        id: "cr3", name: "Canon CR3", kind: .image, mimeType: "image/x-canon-cr3", extensions: ["cr3"])
    /// Sony ARW (image, `image/x-sony-arw`): TIFF, Make SONY, with Sony's SR2 private data.
    public static let arw = MediaFormat(
        id: "arw", name: "Sony ARW", kind: .image, mimeType: "image/x-sony-arw", extensions: ["arw", "srf", "sr2"])
    /// Fujifilm RAF (image, `image/x-fuji-raf`): the `FUJIFILMCCD-RAW` header.
    public static let raf = MediaFormat(
        id: "raf", name: "Fujifilm RAF", kind: .image, mimeType: "image/x-fuji-raf", extensions: ["raf"])
    /// Olympus ORF (image, `image/x-olympus-orf`): TIFF with the `IIRO`/`IIRS`/`MMOR` magic.
    public static let orf = MediaFormat(
        id: "orf", name: "Olympus ORF", kind: .image, mimeType: "image/x-olympus-orf", extensions: ["orf"])
    /// Panasonic RW2 (image, `image/x-panasonic-rw2`): TIFF with the `IIU` magic (Leica RWL too).
    public static let rw2 = MediaFormat(
        id: "rw2", name: "Panasonic RW2", kind: .image, mimeType: "image/x-panasonic-rw2", extensions: ["rw2", "rwl"])

    // Video containers (the probe decides whether a video stream is really there)
    /// MP4 (video, `video/mp4`).
    public static let mp4 = MediaFormat(
        id: "mp4", name: "MP4", kind: .video, mimeType: "video/mp4", extensions: ["mp4", "m4v", "mp4v", "mov", "3gp"])
    /// QuickTime (video, `video/quicktime`).
    public static let mov = MediaFormat(
        id: "mov", name: "QuickTime", kind: .video, mimeType: "video/quicktime", extensions: ["mov", "qt", "mp4"])
    /// M4V (video, `video/x-m4v`).
    public static let m4v = MediaFormat(
        id: "m4v", name: "M4V", kind: .video, mimeType: "video/x-m4v", extensions: ["m4v", "mp4"])
    /// 3GPP (video, `video/3gpp`).
    public static let threeGP = MediaFormat(
        id: "3gp", name: "3GPP", kind: .video, mimeType: "video/3gpp", extensions: ["3gp", "3gpp", "3g2"])
    /// WebM (video, `video/webm`).
    public static let webm = MediaFormat(
        id: "webm", name: "WebM", kind: .video, mimeType: "video/webm", extensions: ["webm"])
    /// Matroska (video, `video/x-matroska`).
    public static let mkv = MediaFormat(
        id: "mkv", name: "Matroska", kind: .video, mimeType: "video/x-matroska", extensions: ["mkv", "mka", "mk3d"])
    /// AVI (video, `video/x-msvideo`).
    public static let avi = MediaFormat(
        id: "avi", name: "AVI", kind: .video, mimeType: "video/x-msvideo", extensions: ["avi"])
    /// MPEG-TS (video, `video/mp2t`).
    public static let mpegTS = MediaFormat(
        id: "mpegts", name: "MPEG-TS", kind: .video, mimeType: "video/mp2t", extensions: ["ts", "mts", "m2ts"])
    /// MPEG-PS (video, `video/mpeg`).
    public static let mpegPS = MediaFormat(
        id: "mpegps", name: "MPEG-PS", kind: .video, mimeType: "video/mpeg", extensions: ["mpg", "mpeg", "vob"])
    /// MPEG-1/2 video elementary stream (video, `video/mpeg`): raw video, no
    /// container, often saved as `.mpg` by cameras and old tools.
    public static let mpegVideo = MediaFormat(
        id: "mpegvideo", name: "MPEG video", kind: .video, mimeType: "video/mpeg",
        extensions: ["mpg", "mpeg", "m1v", "m2v", "mpv"])
    /// FLV (video, `video/x-flv`).
    public static let flv = MediaFormat(
        id: "flv", name: "FLV", kind: .video, mimeType: "video/x-flv", extensions: ["flv"])
    /// ASF (video, `video/x-ms-asf`).
    public static let asf = MediaFormat(
        id: "asf", name: "ASF", kind: .video, mimeType: "video/x-ms-asf", extensions: ["wmv", "asf", "wma"])

    // Audio
    /// MP3 (audio, `audio/mpeg`).
    public static let mp3 = MediaFormat(
        id: "mp3", name: "MP3", kind: .audio, mimeType: "audio/mpeg", extensions: ["mp3"])
    /// M4A (audio, `audio/mp4`).
    public static let m4a = MediaFormat(
        id: "m4a", name: "M4A", kind: .audio, mimeType: "audio/mp4", extensions: ["m4a", "m4b", "aac", "mp4"])
    /// AAC (audio, `audio/aac`).
    public static let aac = MediaFormat(
        id: "aac", name: "AAC", kind: .audio, mimeType: "audio/aac", extensions: ["aac"])
    /// WAV (audio, `audio/wav`).
    public static let wav = MediaFormat(
        id: "wav", name: "WAV", kind: .audio, mimeType: "audio/wav", extensions: ["wav", "wave"])
    /// Ogg (audio, `audio/ogg`).
    public static let ogg = MediaFormat(
        id: "ogg", name: "Ogg", kind: .audio, mimeType: "audio/ogg", extensions: ["ogg", "oga", "opus", "spx"])
    /// Ogg video (video, `video/ogg`).
    public static let oggVideo = MediaFormat(
        id: "ogv", name: "Ogg video", kind: .video, mimeType: "video/ogg", extensions: ["ogv", "ogg"])
    /// FLAC (audio, `audio/flac`).
    public static let flac = MediaFormat(
        id: "flac", name: "FLAC", kind: .audio, mimeType: "audio/flac", extensions: ["flac"])
    /// AIFF (audio, `audio/aiff`).
    public static let aiff = MediaFormat(
        id: "aiff", name: "AIFF", kind: .audio, mimeType: "audio/aiff", extensions: ["aiff", "aif", "aifc"])
    /// AMR (audio, `audio/amr`).
    public static let amr = MediaFormat(
        id: "amr", name: "AMR", kind: .audio, mimeType: "audio/amr", extensions: ["amr"])

    // Documents and archives
    /// PDF (document, `application/pdf`).
    public static let pdf = MediaFormat(
        id: "pdf", name: "PDF", kind: .document, mimeType: "application/pdf", extensions: ["pdf", "ai"])
    /// EPUB (document, `application/epub+zip`).
    public static let epub = MediaFormat(
        id: "epub", name: "EPUB", kind: .document, mimeType: "application/epub+zip", extensions: ["epub"])
    /// ZIP (archive, `application/zip`).
    public static let zip = MediaFormat(
        id: "zip", name: "ZIP", kind: .archive, mimeType: "application/zip",
        extensions: [
            "zip", "docx", "xlsx", "pptx", "odt", "ods", "odp", "epub", "apk", "jar", "ipa", "pages", "numbers", "key",
            "kmz", "xpi", "cbz", "usdz", "aar", "whl", "nupkg", "sketch", "3mf", "vsix",
        ])
    /// gzip (archive, `application/gzip`).
    public static let gzip = MediaFormat(
        id: "gzip", name: "gzip", kind: .archive, mimeType: "application/gzip", extensions: ["gz", "tgz", "svgz"])
    /// bzip2 (archive, `application/x-bzip2`).
    public static let bzip2 = MediaFormat(
        id: "bzip2", name: "bzip2", kind: .archive, mimeType: "application/x-bzip2", extensions: ["bz2", "tbz2", "tbz"])
    /// xz (archive, `application/x-xz`).
    public static let xz = MediaFormat(
        id: "xz", name: "xz", kind: .archive, mimeType: "application/x-xz", extensions: ["xz", "txz"])
    /// Zstandard (archive, `application/zstd`).
    public static let zstd = MediaFormat(
        id: "zstd", name: "Zstandard", kind: .archive, mimeType: "application/zstd", extensions: ["zst", "tzst"])
    /// 7-Zip (archive, `application/x-7z-compressed`).
    public static let sevenZip = MediaFormat(
        id: "7z", name: "7-Zip", kind: .archive, mimeType: "application/x-7z-compressed", extensions: ["7z"])
    /// RAR (archive, `application/vnd.rar`).
    public static let rar = MediaFormat(
        id: "rar", name: "RAR", kind: .archive, mimeType: "application/vnd.rar", extensions: ["rar"])
    /// tar (archive, `application/x-tar`).
    public static let tar = MediaFormat(
        id: "tar", name: "tar", kind: .archive, mimeType: "application/x-tar", extensions: ["tar"])
    /// SQLite (data, `application/vnd.sqlite3`).
    public static let sqlite = MediaFormat(
        id: "sqlite", name: "SQLite", kind: .data, mimeType: "application/vnd.sqlite3",
        extensions: ["sqlite", "db", "sqlite3"])
    /// ELF (data, `application/x-executable`).
    public static let elf = MediaFormat(
        id: "elf", name: "ELF", kind: .data, mimeType: "application/x-executable", extensions: ["bin", "so", "o"])
    /// OLE compound document (document, `application/x-ole-storage`).
    public static let oleCompound = MediaFormat(
        id: "ole", name: "OLE compound document", kind: .document, mimeType: "application/x-ole-storage",
        extensions: ["doc", "xls", "ppt", "msg", "msi"])
    /// RTF (document, `application/rtf`).
    public static let rtf = MediaFormat(
        id: "rtf", name: "RTF", kind: .document, mimeType: "application/rtf", extensions: ["rtf"])

    // Text: formats with a recognisable start, delivered as files
    /// HTML (text, `text/html`): a web page, often a failed download saved under an image name.
    public static let html = MediaFormat(
        id: "html", name: "HTML", kind: .text, mimeType: "text/html", extensions: ["html", "htm", "xhtml"])
    /// XML (text, `application/xml`) other than SVG and XHTML.
    public static let xml = MediaFormat(
        id: "xml", name: "XML", kind: .text, mimeType: "application/xml",
        extensions: ["xml", "plist", "rss", "atom", "gpx", "kml", "xsd", "xsl", "xslt", "opml"])

    // Text and unknown binary data
    /// text (text, `text/plain`).
    public static let text = MediaFormat(
        id: "text", name: "text", kind: .text, mimeType: "text/plain",
        extensions: [
            "txt", "text", "md", "markdown", "csv", "tsv", "json", "xml", "html", "htm", "log", "ini", "yaml", "yml",
            "toml", "swift", "c", "h", "py", "js", "ts", "css", "sh", "vcf", "ics", "srt", "vtt", "eml", "conf", "rst",
            "tex",
        ])
    /// binary data (data, `application/octet-stream`).
    public static let binary = MediaFormat(
        id: "binary", name: "binary data", kind: .data, mimeType: "application/octet-stream", extensions: ["bin"])
}

extension MediaFormat {
    /// Every format the sniffer can name, for looking one up by ``id``.
    public static let all: [MediaFormat] = [
        .jpeg, .png, .gif, .webp, .heic, .heif, .avif, .heicSequence, .heifSequence, .avifSequence, .tiff, .bmp, .jxl,
        .jpeg2000, .netpbm, .ico, .psd, .svg,
        .dng, .nef, .cr2, .cr3, .arw, .raf, .orf, .rw2,
        .mp4, .mov, .m4v, .threeGP, .webm, .mkv, .avi, .mpegTS, .mpegPS, .mpegVideo, .flv, .asf,
        .mp3, .m4a, .aac, .wav, .ogg, .oggVideo, .flac, .aiff, .amr,
        .pdf, .epub, .zip, .gzip, .bzip2, .xz, .zstd, .sevenZip, .rar, .tar, .sqlite, .elf, .oleCompound, .rtf,
        .html, .xml, .text, .binary,
    ]

    /// The format with this ``id``, if it is one of ``all``.
    public static func known(id: String) -> MediaFormat? { all.first { $0.id == id } }
}

/// MIME types for well-known text extensions (text files carry no magic bytes).
enum TextMIMETypes {
    static let byExtension: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "md": "text/markdown", "markdown": "text/markdown",
        "csv": "text/csv", "tsv": "text/tab-separated-values", "json": "application/json",
        "xml": "application/xml", "html": "text/html", "htm": "text/html", "css": "text/css",
        "js": "text/javascript", "ics": "text/calendar", "vcf": "text/vcard", "yaml": "application/yaml",
        "yml": "application/yaml", "srt": "application/x-subrip", "vtt": "text/vtt", "eml": "message/rfc822",
        "svg": "image/svg+xml",
    ]
}
