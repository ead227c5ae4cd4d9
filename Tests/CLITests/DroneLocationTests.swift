import Foundation
import TestSupport
import Testing

/// DJI drones (and DJI's apps) record the position in XMP under their own
/// schema (`drone-dji:GpsLatitude`, `GpsLongitude`, the misspelt
/// `GpsLongtitude` of some firmware, `AbsoluteAltitude`), beside or instead
/// of EXIF GPS. Under location privacy a drone photo's packet and a drone XMP
/// sidecar lose them as EXIF's GPS properties go; on eb269dd both were
/// delivered with the position and no `locationRemoved`.
@Suite struct DroneLocationTests {
    static let packet = """
        <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:drone-dji="http://www.dji.com/drone-dji/1.0/" drone-dji:GpsLatitude="+48.858437"
          drone-dji:GpsLongtitude="+2.294517" drone-dji:AbsoluteAltitude="+330.51" drone-dji:GimbalYawDegree="+12.30">
         <drone-dji:GpsLongitude>+2.294517</drone-dji:GpsLongitude>
        </rdf:Description></rdf:RDF></x:xmpmeta>
        <?xpacket end="w"?>
        """

    @Test func aDronePhotosPositionIsRemovedFromItsXMPAndItsSidecar() throws {
        let work = TemporaryDirectory("drone-location")
        let drop = work.file("drop")
        let container = work.file("container")
        let report = work.file("report.json")
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        let photo = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg"))))
        let payload = Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array(Self.packet.utf8)
        let app1: [UInt8] = [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        try Data([0xFF, 0xD8] + app1 + photo.dropFirst(2)).write(to: URL(fileURLWithPath: drop + "/DJI_0001.JPG"))
        try Data(photo).write(to: URL(fileURLWithPath: drop + "/DJI_0002.JPG"))
        try Data(Self.packet.utf8).write(to: URL(fileURLWithPath: drop + "/DJI_0002.JPG.xmp"))

        let run = try ShareProcess.run([
            "ingest", "--pipeline", try LocationPrivacyTests.pipeline(in: work), "--container", container, "--report",
            report, drop,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        var items: [String: [String: Any]] = [:]
        for item in json["items"] as? [[String: Any]] ?? [] {
            items[((item["source"] as? String ?? "") as NSString).lastPathComponent] = item
        }
        #expect(
            (items["DJI_0001.JPG"]?["locationRemoved"] as? [String])?.contains("XMP drone-dji:GpsLatitude") == true,
            "\(items["DJI_0001.JPG"] ?? [:])")
        #expect(
            (items["DJI_0002.JPG"]?["locationRemoved"] as? [String])?.contains("XMP sidecar drone-dji:GpsLatitude")
                == true, "\(items["DJI_0002.JPG"] ?? [:])")
        #expect(items["DJI_0002.JPG.xmp"]?["status"] as? String == "attached", "\(items["DJI_0002.JPG.xmp"] ?? [:])")
        // No delivered file holds the position; the gimbal's angle (not a place) stays.
        var sawGimbal = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: container) where !name.hasPrefix(".") {
            guard let data = FileManager.default.contents(atPath: container + "/" + name) else { continue }
            for position in ["48.858437", "2.294517", "330.51"] {
                #expect(data.range(of: Data(position.utf8)) == nil, "\(name) holds \(position)")
            }
            if data.range(of: Data("GimbalYawDegree=\"+12.30\"".utf8)) != nil { sawGimbal += 1 }
        }
        #expect(sawGimbal == 2, "the drone's other properties were not kept")
    }
}
