import Foundation
import MediaFormats
import MediaKit
import TestSupport
import Testing

@Suite struct ContentSnifferTests {
    static func sniffFixture(_ name: String) throws -> SniffedContent {
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.media(name)))
        return ContentSniffer.sniff(data.prefix(ContentSniffer.prefixLength), fileName: name)
    }

    @Test(arguments: [
        ("photo.jpg", "jpeg", "jpg", "image/jpeg"),
        ("progressive.jpg", "jpeg", "jpg", "image/jpeg"),
        ("screenshot.png", "png", "png", "image/png"),
        ("animated.gif", "gif", "gif", "image/gif"),
        ("image.webp", "webp", "webp", "image/webp"),
        ("image.heic", "heic", "heic", "image/heic"),
        ("image.avif", "avif", "avif", "image/avif"),
        ("image.tiff", "tiff", "tiff", "image/tiff"),
        ("image.bmp", "bmp", "bmp", "image/bmp"),
        ("image.jxl", "jxl", "jxl", "image/jxl"),
        ("clip-h264.mp4", "mp4", "mp4", "video/mp4"),
        ("clip.mov", "mov", "mov", "video/quicktime"),
        ("clip.3gp", "3gp", "3gp", "video/3gpp"),
        ("clip-vp9.webm", "webm", "webm", "video/webm"),
        ("clip.mkv", "mkv", "mkv", "video/x-matroska"),
        ("clip.avi", "avi", "avi", "video/x-msvideo"),
        ("audio.mp3", "mp3", "mp3", "audio/mpeg"),
        ("audio.m4a", "m4a", "m4a", "audio/mp4"),
        ("audio.wav", "wav", "wav", "audio/wav"),
        ("audio.ogg", "ogg", "ogg", "audio/ogg"),
        ("audio.flac", "flac", "flac", "audio/flac"),
        ("document.pdf", "pdf", "pdf", "application/pdf"),
        ("archive.zip", "zip", "zip", "application/zip"),
        ("archive.tar.gz", "gzip", "gz", "application/gzip"),
        ("notes.txt", "text", "txt", "text/plain"),
        ("data.json", "text", "json", "application/json"),
        // Content wins over the name.
        ("jpeg-named.png", "jpeg", "jpg", "image/jpeg"),
        ("video-named.jpg", "mp4", "mp4", "video/mp4"),
        ("no-extension-jpeg", "jpeg", "jpg", "image/jpeg"),
    ])
    func identifiesFixture(name: String, format: String, ext: String, mime: String) throws {
        let sniffed = try Self.sniffFixture(name)
        #expect(sniffed.format.id == format)
        #expect(sniffed.fileExtension == ext)
        #expect(sniffed.mimeType == mime)
        #expect(sniffed.contradictedFormat == nil)
    }

    @Test func randomBytesNamedJPEGContradictTheName() throws {
        let sniffed = try Self.sniffFixture("random.jpg")
        #expect(sniffed.recognised == false)
        #expect(sniffed.contradictedFormat == .jpeg)
    }

    @Test func zipBasedDocumentsKeepTheirExtension() {
        let zipHeader: [UInt8] = Array("PK\u{03}\u{04}".utf8) + Array(repeating: 0, count: 40)
        #expect(ContentSniffer.sniff(zipHeader, fileName: "Report.DOCX").fileExtension == "docx")
        #expect(ContentSniffer.sniff(zipHeader, fileName: "archive.bin").fileExtension == "zip")
    }

    @Test func extensionsFromNames() {
        #expect(ContentSniffer.fileExtension(of: "IMG_0001.JPG") == "jpg")
        #expect(ContentSniffer.fileExtension(of: ".profile") == nil)
        #expect(ContentSniffer.fileExtension(of: "README") == nil)
        #expect(ContentSniffer.fileExtension(of: "a.tar.gz") == "gz")
        #expect(ContentSniffer.fileExtension(of: "weird.ext with space") == nil)
    }

    /// The hint that starts the helper template early (names only, any case).
    @Test func namesThatSayMedia() {
        for name in ["IMG_0001.JPG", "clip.mov", "a.b.HEIC", "scan.pdf", "raw.dng", "x.webm"] {
            #expect(ContentSniffer.nameSaysMedia(Array(name.utf8)), "\(name)")
        }
        for name in ["note.txt", "README", ".jpg", "jpg", "photo.jpg.txt", "table.csv", "archive.zip"] {
            #expect(!ContentSniffer.nameSaysMedia(Array(name.utf8)), "\(name)")
        }
        #expect(ContentSniffer.nameSaysMedia([0xFF, 0xFE, 0x2E, 0x6A, 0x70, 0x67]), "a name not in UTF-8")
    }

    @Test func unknownBinaryWithoutAMediaNameIsKeptAsData() {
        let bytes: [UInt8] = [0x00, 0x01, 0x02, 0x03, 0xFE, 0x00, 0x10]
        let named = ContentSniffer.sniff(bytes, fileName: "save.dat")
        #expect(named.fileExtension == "dat")
        #expect(named.contradictedFormat == nil)
        let unnamed = ContentSniffer.sniff(bytes, fileName: "blob")
        #expect(unnamed.fileExtension == "bin")
        #expect(unnamed.mimeType == "application/octet-stream")
    }

    @Test func textThatMentionsPDFIsText() {
        let text = Array("notes about %PDF-1.7 files\n".utf8)
        #expect(ContentSniffer.sniff(text, fileName: "notes.md").format == .text)
    }
}

extension ContentSnifferTests {
    static func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        let payload = Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) }
        let size = UInt32(8 + payload.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            + Array("ftyp".utf8) + payload
            + Array(repeating: 0, count: 64)
    }

    /// Image sequences are images of their own format: their extension is kept,
    /// and stills are not taken for sequences (nor the other way round).
    @Test(arguments: [
        ("avis", ["avis", "avif", "msf1", "iso8", "mif1", "miaf"], "anim.avifs", "avifs", "avifs", "image/avif"),
        ("msf1", ["msf1", "iso8", "hevc"], "burst.heics", "heics", "heics", "image/heic-sequence"),
        ("msf1", ["msf1", "iso8"], "burst.heifs", "heifs", "heifs", "image/heif-sequence"),
        ("hevc", ["msf1", "hevc"], "live", "heics", "heics", "image/heic-sequence"),
        ("heic", ["mif1", "heic"], "IMG_0001.HEIC", "heic", "heic", "image/heic"),
        ("mif1", ["mif1", "heic"], "photo.heif", "heic", "heif", "image/heic"),
        ("avif", ["avif", "mif1", "miaf"], "x.avif", "avif", "avif", "image/avif"),
        ("mif1", ["mif1", "avif"], "named.avifs", "avif", "avif", "image/avif"),
    ])
    func heifBrands(major: String, compatible: [String], name: String, format: String, ext: String, mime: String) {
        let sniffed = ContentSniffer.sniff(Self.ftyp(major, compatible), fileName: name)
        #expect(sniffed.format.id == format)
        #expect(sniffed.fileExtension == ext)
        #expect(sniffed.mimeType == mime)
    }
}

/// Issue 13: text under image names, QuickTime without `ftyp`, AVCHD transport
/// streams, AAC after an ID3v2 tag, empty files.
extension ContentSnifferTests {
    /// Sniffs a fidelity fixture the way the sniff stage does: the prefix, then the
    /// bytes at the continuation offset when there is one.
    static func sniffFidelity(_ name: String) throws -> SniffedContent {
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.fidelity(name)))
        let prefix = Array(data.prefix(ContentSniffer.prefixLength))
        let continuation = ContentSniffer.continuationOffset(prefix).map {
            Array(data.dropFirst($0).prefix(ContentSniffer.prefixLength))
        }
        return ContentSniffer.sniff(prefix, fileName: name, continuation: continuation)
    }

    @Test(arguments: [
        ("html-named.jpg", "html", "html", "text/html"),
        ("xml-named.jpg", "xml", "xml", "application/xml"),
        ("svg-named.png", "svg", "svg", "image/svg+xml"),
        ("text-named.png", "text", "txt", "text/plain"),
        ("qt-first-free.mov", "mov", "mov", "video/quicktime"),
        ("qt-first-wide.mov", "mov", "mov", "video/quicktime"),
        ("qt-first-skip.mov", "mov", "mov", "video/quicktime"),
        ("qt-first-mdat.mov", "mov", "mov", "video/quicktime"),
        ("qt-first-moov.mov", "mov", "mov", "video/quicktime"),
        ("qt-first-pnot.mov", "mov", "mov", "video/quicktime"),
        ("avchd.m2ts", "mpegts", "m2ts", "video/mp2t"),
        ("avchd.mts", "mpegts", "mts", "video/mp2t"),
        ("mpeg2-ts-h264.ts", "mpegts", "ts", "video/mp2t"),
        ("black-first-key.ts", "mpegts", "ts", "video/mp2t"),
        ("mpeg1-ps.mpg", "mpegps", "mpg", "video/mpeg"),
        ("adts-id3-apic.aac", "aac", "aac", "audio/aac"),
        ("cover-id3-apic.mp3", "mp3", "mp3", "audio/mpeg"),
        ("ico-largest-third.ico", "ico", "ico", "image/vnd.microsoft.icon"),
        ("empty.jpg", "binary", "jpg", "application/octet-stream"),
    ])
    func identifiesFidelityFixture(name: String, format: String, ext: String, mime: String) throws {
        let sniffed = try Self.sniffFidelity(name)
        #expect(sniffed.format.id == format)
        #expect(sniffed.fileExtension == ext)
        #expect(sniffed.mimeType == mime)
        #expect(
            sniffed.contradictedFormat == nil,
            "a file that is not what its name says, but is something, is never refused")
    }

    @Test func textFormatsKeepANameThatClaimsNoMediaFormat() {
        let page = Array("<!DOCTYPE html>\n<html><body>hi</body></html>\n".utf8)
        #expect(ContentSniffer.sniff(page, fileName: "index.php").fileExtension == "php")
        #expect(ContentSniffer.sniff(page, fileName: "index.php").mimeType == "text/html")
        #expect(ContentSniffer.sniff(page, fileName: "photo.JPG").fileExtension == "html")
        #expect(ContentSniffer.sniff(page, fileName: nil).fileExtension == "html")
        let plist = Array("<?xml version=\"1.0\"?>\n<!DOCTYPE plist>\n<plist></plist>\n".utf8)
        #expect(ContentSniffer.sniff(plist, fileName: "Info.plist").fileExtension == "plist")
        #expect(ContentSniffer.sniff(plist, fileName: "x.png").format == .xml)
        let xhtml = Array("<?xml version=\"1.0\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"></html>".utf8)
        #expect(ContentSniffer.sniff(xhtml, fileName: "a.gif").format == .html)
        // Markup-looking text that is no document stays text.
        #expect(ContentSniffer.sniff(Array("<abbr> is a tag\n".utf8), fileName: "notes.md").format == .text)
    }

    @Test func textThatLooksLikeAnAtomIsNotAMovie() {
        // "I'm free" puts "free" at offset 4; read as an atom size, "I'm " is 1.2 GB.
        let text = Array("I'm free to talk tomorrow\n".utf8)
        #expect(ContentSniffer.sniff(text, fileName: "note.mov").format == .text)
        #expect(ContentSniffer.sniff(text, fileName: "note.mov").fileExtension == "txt")
    }

    @Test func audioAfterAnID3TagIsToldApart() {
        func id3(_ size: Int) -> [UInt8] {
            Array("ID3".utf8) + [3, 0, 0] + [
                UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F),
            ]
                + Array(repeating: 0x41, count: size)
        }
        let adts: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC]
        let mpeg: [UInt8] = [0xFF, 0xFB, 0x90, 0x64, 0x00]
        #expect(ContentSniffer.sniff(id3(100) + adts, fileName: "a.mp3").format == .aac)
        #expect(ContentSniffer.sniff(id3(100) + [0, 0, 0] + adts, fileName: nil).format == .aac)
        #expect(ContentSniffer.sniff(id3(100) + mpeg, fileName: "a.aac").format == .mp3)
        #expect(ContentSniffer.sniff(id3(100) + Array("fLaC".utf8) + [0, 0, 0, 34], fileName: nil).format == .flac)
        // A tag longer than the prefix: the sniff stage reads at the continuation offset.
        let long = id3(10_000) + adts
        let prefix = Array(long.prefix(ContentSniffer.prefixLength))
        #expect(ContentSniffer.continuationOffset(prefix) == 10_010)
        #expect(ContentSniffer.sniff(prefix, fileName: "song.mp3").format == .mp3)
        #expect(ContentSniffer.sniff(prefix, fileName: "song.mp3", continuation: Array(long[10_010...])).format == .aac)
        #expect(ContentSniffer.continuationOffset(id3(100) + adts) == nil)
    }

    @Test func emptyFilesKeepTheirNameAndAreNotContradicted() {
        let empty = ContentSniffer.sniff([UInt8](), fileName: "IMG_0001.JPG")
        #expect(empty.fileExtension == "jpg" && empty.format == .binary && empty.contradictedFormat == nil)
        #expect(ContentSniffer.sniff([UInt8](), fileName: "blob").fileExtension == "bin")
    }
}

extension ContentSnifferTests {
    @Test func mpegVideoSequenceHeaderNeedsPlausibleFields() {
        // 640×360, aspect code 3, frame rate code 4 (29.97).
        let header: [UInt8] = [0, 0, 1, 0xB3, 0x28, 0x01, 0x68, 0x34, 0xFF, 0xFF, 0xE0, 0x18]
        #expect(ContentSniffer.sniff(header, fileName: "clip.mpg").format == .mpegVideo)
        #expect(ContentSniffer.sniff([0, 0, 1, 0xB3, 0, 0, 0, 0x34], fileName: "x.bin").format == .binary)
    }
}

/// Classes the trial of testdata/fidelity/TRIAL.md found beside issue 13's list.
extension ContentSnifferTests {
    @Test func bigTIFFIsTIFF() throws {
        let sniffed = try Self.sniffFidelity("tiff-bigtiff.tif")
        #expect(sniffed.format == .tiff && sniffed.fileExtension == "tif")
        #expect(
            ContentSniffer.sniff([0x4D, 0x4D, 0, 0x2B, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16], fileName: "scan.btf")
                .fileExtension == "btf")
    }

    @Test func netpbmIsAnImageEvenInItsTextForms() {
        #expect(ContentSniffer.sniff(Array("P6\n64 48\n255\n".utf8) + [0, 0, 0], fileName: "a.ppm").format == .netpbm)
        #expect(
            ContentSniffer.sniff(Array("P3\n# made by hand\n2 1\n255\n255 0 0  0 0 255\n".utf8), fileName: "a.ppm")
                .format == .netpbm)
        #expect(ContentSniffer.sniff(Array("P5 is the fifth point\n".utf8), fileName: "notes.txt").format == .text)
    }

    @Test func anotherAudioFormatAfterAnID3TagIsNotMP3() {
        let tag = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 16] + Array(repeating: 0x41, count: 16)
        let musepack = ContentSniffer.sniff(tag + Array("MPCK".utf8) + [0, 0, 0, 0], fileName: "song.mpc")
        #expect(musepack.format != .mp3 && musepack.fileExtension == "mpc")
        // Unknown bytes after the tag: most such files are MP3s with junk before the first frame.
        #expect(ContentSniffer.sniff(tag + [0x12, 0x34, 0x56, 0x78], fileName: "song.mp3").format == .mp3)
    }
}
