import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

/// Issue 23, item 2: camera RAW files are recognised by their content and shown
/// through the largest preview they embed, turned by their own orientation
/// (what a user sees of each is checked end to end by `ModernMediaTests`).
@Suite struct RAWPreviewTests {
    static func raw(_ name: String) -> String {
        Fixtures.packageRoot.appendingPathComponent("testdata/modern/raw/\(name)").path
    }
    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw(name))))
    }

    static let files: [(name: String, format: MediaFormat)] = [
        ("nikon-d70-exif6.nef", .nef), ("canon-350d-preview1024.dng", .dng), ("canon-350d-exif3.cr2", .cr2),
        ("canon-r6-pruned.cr3", .cr3), ("sony-a7m3.arw", .arw), ("fujifilm-s5pro-exif8.raf", .raf),
        ("olympus-em1-exif6.orf", .orf), ("panasonic-lx3.rw2", .rw2), ("exiftool-Nikon.nef", .nef),
        ("exiftool-DNG.dng", .dng),
        ("exiftool-CanonRaw.cr2", .cr2), ("exiftool-CanonRaw.cr3", .cr3), ("exiftool-FujiFilm.raf", .raf),
        ("exiftool-Panasonic.rw2", .rw2),
    ]

    /// By content, whatever the name: a RAW named `.tif`, `.jpg` or nothing is
    /// still a RAW, with its own extension and MIME type.
    @Test(arguments: files.map(\.name))
    func sniffedByTheirMakerStructures(_ name: String) throws {
        let format = try #require(Self.files.first { $0.name == name }?.format)
        let prefix = try Self.bytes(name).prefix(ContentSniffer.prefixLength)
        for fileName in [name, "photo.tif", "photo.jpg", "photo"] {
            let sniffed = ContentSniffer.sniff(prefix, fileName: fileName)
            #expect(sniffed.format == format, "\(fileName): \(sniffed.format)")
            #expect(
                sniffed.fileExtension
                    == (fileName == name ? (name as NSString).pathExtension.lowercased() : format.canonicalExtension))
            #expect(sniffed.mimeType == format.mimeType)
        }
    }

    /// A TIFF is not a RAW, nor is a TIFF that names a maker without its structures.
    @Test func aTIFFStaysATIFF() throws {
        let tiff = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("image.tiff"))))
        #expect(ContentSniffer.sniff(tiff.prefix(4096), fileName: "image.nef").format == .tiff)
    }

    /// Where each maker keeps its previews.
    @Test(arguments: [
        ("nikon-d70-exif6.nef", ["IFD0", "IFD0.SubIFD0-0"]),
        ("canon-350d-preview1024.dng", ["IFD0", "IFD0.SubIFD1-0", "IFD0.SubIFD2-0"]),
        ("canon-350d-exif3.cr2", ["IFD0", "IFD1", "IFD2", "IFD3"]),
        ("canon-r6-pruned.cr3", ["THMB", "PRVW"]),
        ("sony-a7m3.arw", ["IFD0", "IFD1"]),
        ("fujifilm-s5pro-exif8.raf", ["RAF JPEG"]),
        ("exiftool-FujiFilm.raf", ["RAF JPEG", "RAF JPEG EXIF thumbnail"]),
        ("olympus-em1-exif6.orf", ["IFD1", "Olympus CameraSettings"]),
        ("panasonic-lx3.rw2", ["JpgFromRaw"]),
    ])
    func previewsAreFoundWhereTheirMakerPutsThem(name: String, origins: [String]) throws {
        let format = try #require(Self.files.first { $0.name == name }?.format)
        let description = try RAWFile.describe(try Self.bytes(name), format: format)
        #expect(description.previews.map(\.origin) == origins)
    }

    /// The largest preview that decodes is the one shown: the DNG's 1024 px
    /// preview, not its 8×8 IFD0 thumbnail (the issue's "256 px IFD0 thumbnail"
    /// class); the CR3's 1620 px PRVW, not its 160 px THMB. Several large enough:
    /// the smallest of those (a full-size JPEG is not decoded for 360 px).
    @Test func theLargestPreviewIsShown() throws {
        for name in ["canon-350d-preview1024.dng", "canon-r6-pruned.cr3"] {
            let format = try #require(Self.files.first { $0.name == name }?.format)
            let decoding = RAWPreviewDecoding(
                request: DecodeRequest(path: name, label: name, format: format, thumbnail: ThumbnailSpec()),
                source: try Self.bytes(name))
            let description = try RAWFile.describe(try Self.bytes(name), format: format)
            let usable = decoding.candidates(description.previews).usable
            let first = try #require(decoding.order(usable, spec: ThumbnailSpec()).first)
            #expect(
                first.pixels == usable.map(\.pixels).max(),
                "\(name): \(first.preview.origin) \(first.width)×\(first.height)")
        }
    }

    /// Over the pixel limit: the previews that are over it are not decoded; when
    /// none is left, the file is refused before any decoding.
    @Test func pixelLimitAppliesToThePreviews() throws {
        let request = DecodeRequest(
            path: "p.nef", label: "p.nef", format: .nef, pixelLimit: 1000, thumbnail: ThumbnailSpec())
        let source = try Self.bytes("nikon-d70-exif6.nef")
        do throws(MediaError) {
            _ = try RAWPreviewDecoding(request: request, source: source).decode()
            Issue.record("decoded over the pixel limit")
        } catch {
            #expect(error.kind == .tooManyPixels)
        }
    }

    /// Cut anywhere, a RAW never takes the decoder down: it is an image, a file
    /// (no preview that decodes), or damaged.
    @Test(arguments: files.map(\.name))
    func truncatedRAWFilesFailCleanly(_ name: String) throws {
        let format = try #require(Self.files.first { $0.name == name }?.format)
        let whole = try Self.bytes(name)
        for step in 1...24 {
            let cut = Array(whole.prefix(whole.count * step / 25))
            let request = DecodeRequest(path: name, label: name, format: format, thumbnail: ThumbnailSpec())
            do throws(MediaError) {
                let decoded = try RAWPreviewDecoding(request: request, source: cut).decode()
                #expect(decoded.facts.kind == .image)
            } catch {
                #expect([.unsupported, .damaged].contains(error.kind), "\(name) cut at \(cut.count): \(error)")
            }
        }
    }
}
