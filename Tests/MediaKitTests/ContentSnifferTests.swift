import Foundation
import MediaKit
import TestSupport
import Testing
import MediaFormats

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
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array("ftyp".utf8) + payload
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
