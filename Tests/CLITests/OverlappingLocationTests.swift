import Foundation
import TestSupport
import Testing

/// A crafted EXIF block whose GPS values share bytes (the fuzzer's find,
/// Fuzz/corpus/exif/exif-overlapping-gps-values.tiff: tag 0x105's 166 bytes at
/// 374 run over GPSLongitude's at 398) is blanked under location privacy like
/// any other: the decoder answers overwrites that do not overlap, so the
/// parent's check of its reply accepts them, and every GPS byte is zero in the
/// copy. Before, the scanner answered both ranges, the reply was refused and
/// the photo failed as `decoderMisbehaved`, blaming an honest helper.
@Suite struct OverlappingLocationTests {
    static let tiff = Fixtures.packageRoot.appendingPathComponent("Fuzz/corpus/exif/exif-overlapping-gps-values.tiff")
        .path

    /// A real JPEG with the crafted TIFF as its EXIF (APP1) segment, and the
    /// TIFF's offset in the file.
    static func photo() throws -> (bytes: [UInt8], tiffAt: Int, tiffCount: Int) {
        let tiff = Array(try Data(contentsOf: URL(fileURLWithPath: tiff)))
        let jpeg = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg"))))
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        let app1: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return ([0xFF, 0xD8] + app1 + jpeg.dropFirst(2), 4 + 6 + 2, tiff.count)
    }

    @Test func gpsValuesThatShareBytesAreBlankedNotRefused() throws {
        let work = TemporaryDirectory("overlapping-gps")
        let drop = work.file("drop")
        let container = work.file("container")
        let report = work.file("report.json")
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        let (bytes, tiffAt, tiffCount) = try Self.photo()
        try Data(bytes).write(to: URL(fileURLWithPath: drop + "/crafted.jpg"))
        let before = try MediaTools.locationTags(drop + "/crafted.jpg")
        #expect(!before.isEmpty, "the crafted photo has no GPS tag to remove")

        let pipeline = try LocationPrivacyTests.pipeline(in: work)
        let run = try ShareProcess.run([
            "ingest", "--pipeline", pipeline, "--container", container, "--report", report, drop,
        ])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        let item = try #require((json["items"] as? [[String: Any]])?.first)
        #expect(item["status"] as? String == "ingested", "\(item)")
        #expect(item["reason"] == nil, "\(item)")
        #expect((item["locationRemoved"] as? [String])?.contains { $0.hasPrefix("EXIF GPS") } == true, "\(item)")
        let path = try #require((item["path"] as? String).flatMap(URL.init(string:))?.path)
        let copy = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(copy.count == bytes.count)
        let left = try MediaTools.locationTags(path)
        #expect(left.isEmpty, "GPS left: \(left)")
        // Both overlapping values (374 to the end of the TIFF) are zeros.
        #expect(copy[(tiffAt + 374)..<(tiffAt + tiffCount)].allSatisfy { $0 == 0 }, "a GPS value byte is left")
    }
}
