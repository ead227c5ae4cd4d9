import Foundation
import TestSupport
import Testing

/// A JPEG's Photoshop segment (APP13) keeps copies of the EXIF (image
/// resource 0x0422) and of the XMP (0x0424), and exiftool reads their GPS as
/// it reads APP1's. Under location privacy both lose it as APP1's do; on
/// aea25cd both were delivered with the position and `locationRemoved` was
/// null (issue 58, finding 7).
@Suite struct PhotoshopLocationTests {
    /// Testdata's gray JPEG (no APP1 of its own) with an APP13 whose 0x0422 and
    /// 0x0424 resources are the EXIF and the XMP exiftool writes with a GPS position.
    static func photoshopJPEG(in work: TemporaryDirectory) throws -> String {
        let located = work.file("located.jpg")
        try FileManager.default.copyItem(atPath: Fixtures.media("gray.jpg"), toPath: located)
        let written = try MediaTools.run(
            "/usr/bin/exiftool",
            ["-q", "-overwrite_original", "-DateTimeOriginal=2024:05:01 12:00:00"] + LocationPrivacyTests.gpsArguments
                + LocationPrivacyTests.xmpGPSArguments + [located])
        #expect(written.status == 0)
        func block(_ tag: String) throws -> [UInt8] {
            let url = URL(fileURLWithPath: work.file(tag + ".bin"))
            let read = Process()
            read.executableURL = URL(fileURLWithPath: "/usr/bin/exiftool")
            read.arguments = ["-" + tag, "-b", located]
            FileManager.default.createFile(atPath: url.path, contents: nil)
            read.standardOutput = try FileHandle(forWritingTo: url)
            try read.run()
            read.waitUntilExit()
            return [UInt8](try Data(contentsOf: url))
        }
        let (exif, xmp) = (try block("exif"), try block("xmp"))
        #expect(
            exif.starts(with: Array("MM".utf8)) || exif.starts(with: Array("II".utf8)), "exiftool gave no EXIF block")
        func be(_ value: Int, _ count: Int) -> [UInt8] {
            (0..<count).reversed().map { UInt8(value >> (8 * $0) & 0xFF) }
        }
        func resource(_ id: Int, _ data: [UInt8]) -> [UInt8] {
            Array("8BIM".utf8) + be(id, 2) + [0, 0] + be(data.count, 4) + data + (data.count % 2 == 1 ? [0] : [])
        }
        let payload = Array("Photoshop 3.0\0".utf8) + resource(0x0422, exif) + resource(0x0424, xmp)
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("gray.jpg"))))
        let path = work.file("photoshop.jpg")
        try Data(Array(jpeg[..<2]) + [0xFF, 0xED] + be(payload.count + 2, 2) + payload + Array(jpeg[2...])).write(
            to: URL(fileURLWithPath: path))
        return path
    }

    @Test func photoshopEXIFAndXMPLoseTheirGPS() throws {
        let work = TemporaryDirectory("photoshop-location")
        let source = try Self.photoshopJPEG(in: work)
        #expect(
            try PositionCheck.positions(in: source).contains("GPS Latitude"), "exiftool reads no GPS in the APP13 made")
        let copy = try LocationPrivacyTests.strips(
            "photoshop.jpg", from: source,
            removed: [
                "EXIF (Photoshop APP13) GPS", "XMP (Photoshop APP13) exif:GPSLatitude",
                "XMP (Photoshop APP13) exif:GPSLongitude",
            ])
        let delivered = work.file("delivered.jpg")
        try copy.write(to: URL(fileURLWithPath: delivered))
        let left = try PositionCheck.positions(in: delivered)
        #expect(left.isEmpty, "exiftool finds: \(left)")
    }
}
