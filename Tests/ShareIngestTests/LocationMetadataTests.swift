import Foundation
import FoundationXML
import MediaFormats
import ShareIngest
import TestSupport
import Testing

@testable import ShareIngestCore

/// The pieces of location privacy and compatible copies below the pipeline:
/// the decoder's scanner (``LocationScanner``) on every fixture, the parent's
/// overwrites (``MetadataBlanker``) and their checks, resuming an interrupted
/// strip, XMP left well formed, and the EXIF block a compatible copy carries.
@Suite struct LocationMetadataTests {
    /// Each privacy fixture, its sniffed format, and a record name it must yield.
    static let fixtures: [(String, MediaFormat, String)] = [
        ("iphone6-gps.jpg", .jpeg, "EXIF GPS"), ("exiftool-pixel8pro.jpg", .jpeg, "EXIF GPS"),
        ("exif-xmp-gps.jpg", .jpeg, "XMP exif:GPSLatitude"),
        ("exif6-gps.jpg", .jpeg, "EXIF GPS"), ("iphone7-gps.heic", .heic, "EXIF GPS"),
        ("gps.avif", .avif, "XMP exif:GPSLongitude"),
        ("gps.png", .png, "EXIF (PNG eXIf) GPS"), ("gps.webp", .webp, "EXIF (WebP) GPS"),
        ("gps.jxl", .jxl, "EXIF (JPEG XL) GPS"),
        ("keys-iso6709.mov", .mov, "QuickTime com.apple.quicktime.location.ISO6709"),
        ("android-xyz.mp4", .mp4, "QuickTime ©xyz"),
        ("quicktime-xyz.mov", .mov, "QuickTime ©xyz"), ("loci.mp4", .mp4, "MP4 loci"),
    ]

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// A scratch copy of a fixture.
    static func copy(_ name: String, in directory: TemporaryDirectory) throws -> String {
        let path = directory.file(name)
        try FileManager.default.copyItem(atPath: Fixtures.privacy(name), toPath: path)
        return path
    }

    /// Every fixture's location is found; once blanked, a second scan finds
    /// nothing and a second blanking changes nothing; a strip interrupted after
    /// its first step is found again whole and finished by a second run.
    @Test(arguments: fixtures) func scanBlankRescan(name: String, format: MediaFormat, expected: String) throws {
        let directory = TemporaryDirectory("location-scan")
        let path = try Self.copy(name, in: directory)
        let found = LocationScanner.scan(try Self.bytes(path), format: format)
        #expect(found.unremovable.isEmpty, "\(found.unremovable)")
        #expect(found.found.contains { $0.name.hasPrefix(expected) }, "\(name): \(found.found.map(\.name))")
        let size = try Self.bytes(path).count
        let edits = found.found.flatMap(\.edits)
        #expect(edits.allSatisfy { $0.offset >= 0 && $0.offset + $0.length <= size })

        // Interrupted after step 0 (values blanked, structures still there).
        try MetadataBlanker.apply(edits.filter { $0.step == 0 }, to: path, sync: false)
        let again = LocationScanner.scan(try Self.bytes(path), format: format)
        #expect(
            again.found.map(\.name).sorted() == found.found.map(\.name).sorted()
                || name.hasSuffix(".jpg") && again.found.count == found.found.count,
            "\(name): an interrupted strip is not found again: \(again.found.map(\.name))")
        try MetadataBlanker.apply(again.found.flatMap(\.edits), to: path, sync: false)
        let stripped = try Self.bytes(path)
        #expect(LocationScanner.scan(stripped, format: format).isEmpty, "\(name): location left after stripping")
        try MetadataBlanker.apply(edits, to: path, sync: false)
        #expect(try Self.bytes(path) == stripped, "\(name): blanking again changed the file")
        #expect(stripped.count == size)

        // Byte for byte, only the overwritten ranges changed.
        let original = try Self.bytes(Fixtures.privacy(name))
        var overwritten = [Bool](repeating: false, count: size)
        for edit in edits + again.found.flatMap(\.edits) {
            for i in edit.offset..<(edit.offset + edit.length) { overwritten[i] = true }
        }
        let changed = (0..<size).filter { original[$0] != stripped[$0] }
        #expect(!changed.isEmpty, "\(name): nothing changed")
        let outside = changed.filter { !overwritten[$0] }
        #expect(
            outside.isEmpty,
            "\(name): \(outside.count) bytes changed outside the overwrites, the first at \(outside.first ?? -1)")
        // And no more than the location's share of the file (values, their tags, a box or chunk made free).
        #expect(changed.count < 4096, "\(name): \(changed.count) bytes changed")
    }

    /// A HEIF is read through its items wherever their extents are; a PNG whose
    /// XMP is compressed cannot be edited in place.
    @Test func compressedXMPCannotBeRemovedInPlace() throws {
        let found = LocationScanner.scan(try Self.bytes(Fixtures.privacy("ztxt-xmp-gps.png")), format: .png)
        #expect(
            found.found.isEmpty && found.unremovable.count == 1 && found.unremovable[0].contains("compressed"),
            "\(found)")
        // A structure the HEIF parser refuses: nothing can be checked, so nothing is promised.
        let junk = Array("....ftypheic".utf8) + [UInt8](repeating: 0xAB, count: 64)
        #expect(!LocationScanner.scan(junk, format: .heic).unremovable.isEmpty)
        // A format without location metadata, or one not read, yields nothing.
        #expect(LocationScanner.scan(try Self.bytes(Fixtures.media("animated.gif")), format: .gif).isEmpty)
    }

    /// The parent makes only overwrites that fit the file: a range past its end,
    /// a `free` box that is not there, a PNG chunk that is not there are refused,
    /// and then nothing is written.
    @Test func overwritesThatDoNotFitTheCopyAreRefused() throws {
        let directory = TemporaryDirectory("location-refused")
        let path = try Self.copy("loci.mp4", in: directory)
        let original = try Self.bytes(path)
        let bad: [[MetadataEdit]] = [
            [
                MetadataEdit(offset: 0, length: 4, fill: .zeros, step: 0),
                MetadataEdit(offset: original.count - 2, length: 4, fill: .zeros, step: 0),
            ],
            [MetadataEdit(offset: 0, length: 40, fill: .freeBox, step: 1)],  // the ftyp box is not 40 bytes long
            [MetadataEdit(offset: 8, length: 16, fill: .pngCRC, step: 3)],
            [MetadataEdit(offset: 0, length: 1, fill: .zeros, step: 7)],
        ]
        for edits in bad {
            #expect(throws: MetadataBlanker.Failure.self) { try MetadataBlanker.apply(edits, to: path, sync: true) }
            #expect(try Self.bytes(path) == original, "a refused overwrite changed the copy: \(edits)")
        }
    }

    /// GPS properties are found by their namespace, whatever its prefix, as
    /// attributes and as elements (nested structures whole); comments, CDATA and
    /// other schemas' look-alikes are left; the packet stays well-formed XML.
    @Test func xmpGPSPropertiesBlankedLeaveWellFormedXML() throws {
        let xmp = """
            <?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description rdf:about="" xmlns:e="http://ns.adobe.com/exif/1.0/" xmlns:drone="http://example.com/drone/"
              e:GPSLatitude="48,51.504N" drone:GPSLatitude="keep" e:DateTimeOriginal="2024-05-17T10:30:00">
             <!-- <e:GPSLongitude>comment</e:GPSLongitude> -->
             <e:GPSLongitude>2,17.67E</e:GPSLongitude>
             <e:GPSDestLatitude><rdf:Seq><rdf:li>1</rdf:li><rdf:li><![CDATA[ <e:GPSAltitude>2</e:GPSAltitude> ]]></rdf:li></rdf:Seq></e:GPSDestLatitude>
             <e:GPSTimeStamp/>
             <dc:title xmlns:dc="http://purl.org/dc/elements/1.1/">GPS</dc:title>
            </rdf:Description></rdf:RDF></x:xmpmeta>
            <?xpacket end="w"?>
            """
        var bytes = Array(xmp.utf8)
        let properties = XMPLocation.gpsProperties(bytes)
        #expect(
            properties.map(\.name) == ["GPSLatitude", "GPSLongitude", "GPSDestLatitude", "GPSTimeStamp"],
            "\(properties)")
        for property in properties { for i in property.whole { bytes[i] = 0x20 } }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(
            !text.contains("48,51") && !text.contains("2,17.67E") && !text.contains("GPSDestLatitude")
                && !text.contains("GPSTimeStamp"))
        #expect(
            text.contains("drone:GPSLatitude=\"keep\"") && text.contains("e:DateTimeOriginal")
                && text.contains("<!-- <e:GPSLongitude>comment"))
        let body = text.components(separatedBy: "?>").dropFirst().joined(separator: "?>").components(
            separatedBy: "<?xpacket end")[0]
        let parser = XMLParser(data: Data(body.utf8))
        #expect(parser.parse(), "not well formed: \(parser.parserError.map { "\($0)" } ?? "")")
    }

    /// The EXIF block of a compatible copy: the source's camera and capture
    /// date, Orientation 1, the copy's size, GPS only when kept.
    @Test func aCompatibleCopysEXIFCarriesTheCaptureMetadata() throws {
        let source = try #require(
            CaptureMetadata.read(try Self.bytes(Fixtures.privacy("iphone7-gps.heic")), format: .heic))
        for keepsLocation in [false, true] {
            let segment = try #require(
                source.exifSegment(width: 4032, height: 3024, keepsLocation: keepsLocation, colourSpace: 0xFFFF))
            #expect(segment.payload.starts(with: Array("Exif\0\0".utf8)))
            #expect(
                segment.tags.contains("DateTimeOriginal") && segment.tags.contains("Model")
                    && segment.tags.contains("GPS") == keepsLocation, "\(segment.tags)")
            // What exiftool reads in a JPEG that carries it.
            let directory = TemporaryDirectory("capture-exif")
            let jpeg = directory.file("copy.jpg")
            // Without metadata of its own (libvips writes an EXIF block unless told not to), as the decoder's encoder makes it.
            try ImageInspector.vips(["black", jpeg + "[strip]", "64", "48"])
            let with = JPEGMetadataSegments.inserting(exif: segment.payload, icc: nil, into: try Self.bytes(jpeg))
            try Data(with).write(to: URL(fileURLWithPath: jpeg))
            let read = try MediaTools.metadata(jpeg)
            #expect(
                read.value("DateTimeOriginal") == "2019:03:21 11:04:22" && read.value("Model") == "iPhone 7"
                    && read.value("Orientation", numeric: true) == "1")
            #expect(
                read.value("ExifImageWidth") == "4032" && read.value("ExifImageHeight") == "3024",
                "\(read.value("ExifImageWidth") ?? "absent")×\(read.value("ExifImageHeight") ?? "absent")")
            #expect((read.value("GPSLatitude") != nil) == keepsLocation, "\(read.locationTags)")
            #expect(try ImageInspector.size(jpeg) == (64, 48))
        }
    }
}
