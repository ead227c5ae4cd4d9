/// The broad kind of content a format holds, before the media is opened.
public enum ContentKind: String, Sendable, Codable, CaseIterable {
    case image, video, audio, document, archive, text, data
}

/// A file format recognised from its content (magic bytes), with the extension,
/// MIME type and kind it implies.
///
/// `extensions` lists every spelling accepted for a file of this format: when
/// a source's own extension is one of them it is kept (lower-cased), so a
/// `.docx` (a ZIP) stays `.docx` and a `.jpeg` stays `.jpeg`; otherwise the
/// first one, the canonical extension, is used.
public struct MediaFormat: Sendable, Hashable, CustomStringConvertible {
    /// A short stable identifier, e.g. `jpeg`, `mp4`, `webm`.
    public let id: String
    /// The human name used in messages, e.g. "JPEG", "MP4".
    public let name: String
    public let kind: ContentKind
    public let mimeType: String
    /// Accepted extensions, canonical first, lower case, without the dot.
    public let extensions: [String]

    public var canonicalExtension: String { extensions[0] }
    public var description: String { name }

    public init(id: String, name: String, kind: ContentKind, mimeType: String, extensions: [String]) {
        self.id = id
        self.name = name
        self.kind = kind
        self.mimeType = mimeType
        self.extensions = extensions
    }

    /// The extension a copy of a file of this format gets, given the source's own extension.
    public func fileExtension(keeping sourceExtension: String?) -> String {
        if let ext = sourceExtension?.lowercased(), extensions.contains(ext) { return ext }
        return canonicalExtension
    }
}

extension MediaFormat {
    // Images
    public static let jpeg = MediaFormat(id: "jpeg", name: "JPEG", kind: .image, mimeType: "image/jpeg", extensions: ["jpg", "jpeg", "jpe", "jfif"])
    public static let png = MediaFormat(id: "png", name: "PNG", kind: .image, mimeType: "image/png", extensions: ["png"])
    public static let gif = MediaFormat(id: "gif", name: "GIF", kind: .image, mimeType: "image/gif", extensions: ["gif"])
    public static let webp = MediaFormat(id: "webp", name: "WebP", kind: .image, mimeType: "image/webp", extensions: ["webp"])
    public static let heic = MediaFormat(id: "heic", name: "HEIC", kind: .image, mimeType: "image/heic", extensions: ["heic", "heif", "hif"])
    public static let heif = MediaFormat(id: "heif", name: "HEIF", kind: .image, mimeType: "image/heif", extensions: ["heif", "heic", "hif"])
    public static let avif = MediaFormat(id: "avif", name: "AVIF", kind: .image, mimeType: "image/avif", extensions: ["avif"])
    public static let tiff = MediaFormat(id: "tiff", name: "TIFF", kind: .image, mimeType: "image/tiff", extensions: ["tiff", "tif", "dng"])
    public static let bmp = MediaFormat(id: "bmp", name: "BMP", kind: .image, mimeType: "image/bmp", extensions: ["bmp", "dib"])
    public static let jxl = MediaFormat(id: "jxl", name: "JPEG XL", kind: .image, mimeType: "image/jxl", extensions: ["jxl"])
    public static let jpeg2000 = MediaFormat(id: "jp2", name: "JPEG 2000", kind: .image, mimeType: "image/jp2", extensions: ["jp2", "j2k", "jpx"])
    public static let ico = MediaFormat(id: "ico", name: "ICO", kind: .data, mimeType: "image/vnd.microsoft.icon", extensions: ["ico", "cur"])
    public static let psd = MediaFormat(id: "psd", name: "Photoshop", kind: .data, mimeType: "image/vnd.adobe.photoshop", extensions: ["psd"])
    public static let svg = MediaFormat(id: "svg", name: "SVG", kind: .text, mimeType: "image/svg+xml", extensions: ["svg"])

    // Video containers (the probe decides whether a video stream is really there)
    public static let mp4 = MediaFormat(id: "mp4", name: "MP4", kind: .video, mimeType: "video/mp4", extensions: ["mp4", "m4v", "mp4v", "mov", "3gp"])
    public static let mov = MediaFormat(id: "mov", name: "QuickTime", kind: .video, mimeType: "video/quicktime", extensions: ["mov", "qt", "mp4"])
    public static let m4v = MediaFormat(id: "m4v", name: "M4V", kind: .video, mimeType: "video/x-m4v", extensions: ["m4v", "mp4"])
    public static let threeGP = MediaFormat(id: "3gp", name: "3GPP", kind: .video, mimeType: "video/3gpp", extensions: ["3gp", "3gpp", "3g2"])
    public static let webm = MediaFormat(id: "webm", name: "WebM", kind: .video, mimeType: "video/webm", extensions: ["webm"])
    public static let mkv = MediaFormat(id: "mkv", name: "Matroska", kind: .video, mimeType: "video/x-matroska", extensions: ["mkv", "mka", "mk3d"])
    public static let avi = MediaFormat(id: "avi", name: "AVI", kind: .video, mimeType: "video/x-msvideo", extensions: ["avi"])
    public static let mpegTS = MediaFormat(id: "mpegts", name: "MPEG-TS", kind: .video, mimeType: "video/mp2t", extensions: ["ts", "mts", "m2ts"])
    public static let mpegPS = MediaFormat(id: "mpegps", name: "MPEG-PS", kind: .video, mimeType: "video/mpeg", extensions: ["mpg", "mpeg", "vob"])
    public static let flv = MediaFormat(id: "flv", name: "FLV", kind: .video, mimeType: "video/x-flv", extensions: ["flv"])
    public static let asf = MediaFormat(id: "asf", name: "ASF", kind: .video, mimeType: "video/x-ms-asf", extensions: ["wmv", "asf", "wma"])

    // Audio
    public static let mp3 = MediaFormat(id: "mp3", name: "MP3", kind: .audio, mimeType: "audio/mpeg", extensions: ["mp3"])
    public static let m4a = MediaFormat(id: "m4a", name: "M4A", kind: .audio, mimeType: "audio/mp4", extensions: ["m4a", "m4b", "aac", "mp4"])
    public static let aac = MediaFormat(id: "aac", name: "AAC", kind: .audio, mimeType: "audio/aac", extensions: ["aac"])
    public static let wav = MediaFormat(id: "wav", name: "WAV", kind: .audio, mimeType: "audio/wav", extensions: ["wav", "wave"])
    public static let ogg = MediaFormat(id: "ogg", name: "Ogg", kind: .audio, mimeType: "audio/ogg", extensions: ["ogg", "oga", "opus", "spx"])
    public static let oggVideo = MediaFormat(id: "ogv", name: "Ogg video", kind: .video, mimeType: "video/ogg", extensions: ["ogv", "ogg"])
    public static let flac = MediaFormat(id: "flac", name: "FLAC", kind: .audio, mimeType: "audio/flac", extensions: ["flac"])
    public static let aiff = MediaFormat(id: "aiff", name: "AIFF", kind: .audio, mimeType: "audio/aiff", extensions: ["aiff", "aif", "aifc"])
    public static let amr = MediaFormat(id: "amr", name: "AMR", kind: .audio, mimeType: "audio/amr", extensions: ["amr"])

    // Documents and archives
    public static let pdf = MediaFormat(id: "pdf", name: "PDF", kind: .document, mimeType: "application/pdf", extensions: ["pdf", "ai"])
    public static let epub = MediaFormat(id: "epub", name: "EPUB", kind: .document, mimeType: "application/epub+zip", extensions: ["epub"])
    public static let zip = MediaFormat(id: "zip", name: "ZIP", kind: .archive, mimeType: "application/zip", extensions: ["zip", "docx", "xlsx", "pptx", "odt", "ods", "odp", "epub", "apk", "jar", "ipa", "pages", "numbers", "key", "kmz", "xpi", "cbz", "usdz", "aar", "whl", "nupkg", "sketch", "3mf", "vsix"])
    public static let gzip = MediaFormat(id: "gzip", name: "gzip", kind: .archive, mimeType: "application/gzip", extensions: ["gz", "tgz", "svgz"])
    public static let bzip2 = MediaFormat(id: "bzip2", name: "bzip2", kind: .archive, mimeType: "application/x-bzip2", extensions: ["bz2", "tbz2", "tbz"])
    public static let xz = MediaFormat(id: "xz", name: "xz", kind: .archive, mimeType: "application/x-xz", extensions: ["xz", "txz"])
    public static let zstd = MediaFormat(id: "zstd", name: "Zstandard", kind: .archive, mimeType: "application/zstd", extensions: ["zst", "tzst"])
    public static let sevenZip = MediaFormat(id: "7z", name: "7-Zip", kind: .archive, mimeType: "application/x-7z-compressed", extensions: ["7z"])
    public static let rar = MediaFormat(id: "rar", name: "RAR", kind: .archive, mimeType: "application/vnd.rar", extensions: ["rar"])
    public static let tar = MediaFormat(id: "tar", name: "tar", kind: .archive, mimeType: "application/x-tar", extensions: ["tar"])
    public static let sqlite = MediaFormat(id: "sqlite", name: "SQLite", kind: .data, mimeType: "application/vnd.sqlite3", extensions: ["sqlite", "db", "sqlite3"])
    public static let elf = MediaFormat(id: "elf", name: "ELF", kind: .data, mimeType: "application/x-executable", extensions: ["bin", "so", "o"])
    public static let oleCompound = MediaFormat(id: "ole", name: "OLE compound document", kind: .document, mimeType: "application/x-ole-storage", extensions: ["doc", "xls", "ppt", "msg", "msi"])
    public static let rtf = MediaFormat(id: "rtf", name: "RTF", kind: .document, mimeType: "application/rtf", extensions: ["rtf"])

    // Text and unknown binary data
    public static let text = MediaFormat(id: "text", name: "text", kind: .text, mimeType: "text/plain", extensions: ["txt", "text", "md", "markdown", "csv", "tsv", "json", "xml", "html", "htm", "log", "ini", "yaml", "yml", "toml", "swift", "c", "h", "py", "js", "ts", "css", "sh", "vcf", "ics", "srt", "vtt", "eml", "conf", "rst", "tex"])
    public static let binary = MediaFormat(id: "binary", name: "binary data", kind: .data, mimeType: "application/octet-stream", extensions: ["bin"])
}

extension MediaFormat {
    /// Every format the sniffer can name, for looking one up by ``id``.
    public static let all: [MediaFormat] = [
        .jpeg, .png, .gif, .webp, .heic, .heif, .avif, .tiff, .bmp, .jxl, .jpeg2000, .ico, .psd, .svg,
        .mp4, .mov, .m4v, .threeGP, .webm, .mkv, .avi, .mpegTS, .mpegPS, .flv, .asf,
        .mp3, .m4a, .aac, .wav, .ogg, .oggVideo, .flac, .aiff, .amr,
        .pdf, .epub, .zip, .gzip, .bzip2, .xz, .zstd, .sevenZip, .rar, .tar, .sqlite, .elf, .oleCompound, .rtf,
        .text, .binary,
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
