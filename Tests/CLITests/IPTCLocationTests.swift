import Foundation
import TestSupport
import Testing

/// IPTC Extension's location structures (`Iptc4xmpExt:LocationCreated`,
/// `LocationShown`) hold the position as `Iptc4xmpExt:GPSLatitude`,
/// `GPSLongitude` and `GPSAltitude` where a writer puts them in IPTC's own
/// namespace. Under location privacy they go as EXIF's GPS properties go, in
/// every XMP a delivered file holds: a photo's packet, its extended XMP, an
/// XMP sidecar attached to its photo and one delivered on its own. On aea25cd
/// all four were delivered with the position and no `locationRemoved`
/// (issue 58, finding 6).
@Suite struct IPTCLocationTests {
    /// The IPTC Extension properties, as elements in `LocationCreated` and as attributes in `LocationShown`.
    static let description = """
        <rdf:Description rdf:about="" xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="4">
         <Iptc4xmpExt:LocationCreated><rdf:Bag><rdf:li rdf:parseType="Resource">
          <Iptc4xmpExt:GPSLatitude>48,51.50622N</Iptc4xmpExt:GPSLatitude>
          <Iptc4xmpExt:GPSLongitude>2,17.67102E</Iptc4xmpExt:GPSLongitude>
          <Iptc4xmpExt:GPSAltitude>35/1</Iptc4xmpExt:GPSAltitude>
         </rdf:li></rdf:Bag></Iptc4xmpExt:LocationCreated>
         <Iptc4xmpExt:LocationShown><rdf:Bag><rdf:li Iptc4xmpExt:GPSLatitude="48,51.50622N" Iptc4xmpExt:GPSLongitude="2,17.67102E"/></rdf:Bag></Iptc4xmpExt:LocationShown>
        </rdf:Description>
        """
    static let packet =
        "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n\(description)\n</rdf:RDF></x:xmpmeta>\n"

    @Test func iptcExtensionPositionsLeaveEveryXMP() throws {
        let work = TemporaryDirectory("iptc-location")
        let drop = work.file("drop")
        let container = work.file("container")
        let report = work.file("report.json")
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        let packetPath = work.file("packet.xmp")
        try Data(Self.packet.utf8).write(to: URL(fileURLWithPath: packetPath))
        // The photo's own packet, written by exiftool.
        try FileManager.default.copyItem(atPath: Fixtures.media("gray.jpg"), toPath: drop + "/embedded.jpg")
        #expect(
            try MediaTools.run(
                "/usr/bin/exiftool", ["-q", "-overwrite_original", "-xmp<=" + packetPath, drop + "/embedded.jpg"]
            ).status == 0)
        // Extended XMP (exiftool writes no extension of its own: assembled as the XMP specification says).
        try Data(try Self.extendedXMP(Array(Self.packet.utf8), in: work)).write(
            to: URL(fileURLWithPath: drop + "/extended.jpg"))
        // Sidecars: one attached to its photo, one alone.
        try FileManager.default.copyItem(atPath: Fixtures.media("gray.jpg"), toPath: drop + "/IMG_2.jpg")
        try Data(Self.packet.utf8).write(to: URL(fileURLWithPath: drop + "/IMG_2.jpg.xmp"))
        try Data(Self.packet.utf8).write(to: URL(fileURLWithPath: drop + "/lone.xmp"))
        for name in ["embedded.jpg", "extended.jpg", "IMG_2.jpg.xmp", "lone.xmp"] {
            #expect(
                !(try PositionCheck.positions(in: drop + "/" + name)).isEmpty,
                "exiftool finds no position in the source \(name)")
        }

        let run = try ShareProcess.run([
            "ingest", "--pipeline", try LocationPrivacyTests.pipeline(in: work), "--container", container, "--report",
            report, drop,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let items = try LocationPrivacyTests.reportItems(report)
        for (name, removed) in [
            ("embedded.jpg", "XMP Iptc4xmpExt:GPSLatitude"), ("extended.jpg", "XMP (extended) Iptc4xmpExt:GPSLatitude"),
            ("IMG_2.jpg", "XMP sidecar Iptc4xmpExt:GPSLatitude"), ("lone.xmp", "XMP sidecar Iptc4xmpExt:GPSLatitude"),
        ] {
            #expect(
                (items[name]?["locationRemoved"] as? [String])?.contains(removed) == true,
                "\(name): \(items[name] ?? [:])")
        }
        #expect(items["IMG_2.jpg.xmp"]?["status"] as? String == "attached", "\(items["IMG_2.jpg.xmp"] ?? [:])")
        let delivered = PositionCheck.deliveredFiles(in: container)
        #expect(delivered.count >= 5, "\(delivered)")
        // No coordinate is left (the structures stay, emptied of their GPS: exiftool shows them empty).
        for file in delivered {
            let left = try PositionCheck.positions(in: file)
            #expect(!left.contains("GPS"), "exiftool finds in \(file): \(left)")
        }
        for file in delivered {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            for position in ["48,51.50622N", "2,17.67102E", "35/1"] {
                #expect(data.range(of: Data(position.utf8)) == nil, "\(file) holds \(position)")
            }
        }
        // The rest of each packet stays.
        #expect(
            delivered.filter {
                (try? Data(contentsOf: URL(fileURLWithPath: $0)))?.range(of: Data("xmp:Rating=\"4\"".utf8)) != nil
            }.count == 4)
    }

    /// Testdata's gray JPEG with a main packet that names its extension
    /// (`xmpNote:HasExtendedXMP`, the MD5 of `extended`) and one extension chunk holding `extended`.
    static func extendedXMP(_ extended: [UInt8], in work: TemporaryDirectory) throws -> [UInt8] {
        let packetPath = work.file("extended.xml")
        try Data(extended).write(to: URL(fileURLWithPath: packetPath))
        let digest = try MediaTools.run("/usr/bin/md5sum", [packetPath]).output.prefix(32).uppercased()
        let main = Array(
            #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:xmpNote="http://ns.adobe.com/xmp/note/" xmpNote:HasExtendedXMP="\#(digest)"/></rdf:RDF></x:xmpmeta>"#
                .utf8)
        func app1(_ payload: [UInt8]) -> [UInt8] {
            [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        func be32(_ value: Int) -> [UInt8] {
            [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("gray.jpg"))))
        let segments =
            app1(Array("http://ns.adobe.com/xap/1.0/\0".utf8) + main)
            + app1(
                Array("http://ns.adobe.com/xmp/extension/\0".utf8) + Array(digest.utf8) + be32(extended.count) + be32(0)
                    + extended)
        return Array(jpeg[..<2]) + segments + Array(jpeg[2...])
    }
}
