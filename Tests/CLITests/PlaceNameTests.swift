import Foundation
import TestSupport
import Testing

/// The location stage's `remove` setting: `coordinates` (the default) keeps
/// the names of the place, `coordinatesAndPlaceNames` removes them too: IPTC
/// IIM's city, sub-location, province or state and country (a JPEG's
/// Photoshop APP13), XMP's `photoshop:City`, `State`, `Country`,
/// `Iptc4xmpCore:Location`, and IPTC Extension's `LocationCreated` and
/// `LocationShown` whole, in a photo and in an XMP sidecar. Then exiftool's
/// check prints nothing of any delivered file. On aea25cd there was no such
/// setting, and every name was delivered (issue 58).
@Suite struct PlaceNameTests {
    static let names = [
        "-IPTC:City=Paris", "-IPTC:Sub-location=Champ de Mars", "-IPTC:Province-State=Ile-de-France",
        "-IPTC:Country-PrimaryLocationName=France",
        "-IPTC:Country-PrimaryLocationCode=FRA", "-XMP-photoshop:City=Paris", "-XMP-photoshop:State=Ile-de-France",
        "-XMP-photoshop:Country=France",
        "-XMP-iptcCore:Location=Champ de Mars", "-XMP-iptcExt:LocationCreatedCity=Paris",
        "-XMP-iptcExt:LocationCreatedGPSLatitude=48.8584",
        "-XMP-iptcExt:LocationCreatedGPSLongitude=2.2945", "-XMP-iptcExt:LocationShownSublocation=Champ de Mars",
    ]

    /// A drop of a photo with every name (and GPS, and keywords that stay),
    /// and a photo with an XMP sidecar holding the XMP ones, all written by exiftool.
    static func makeDrop(in work: TemporaryDirectory) throws -> String {
        let drop = work.file("drop")
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        for photo in ["named.jpg", "IMG_2.jpg"] {
            try FileManager.default.copyItem(atPath: Fixtures.media("gray.jpg"), toPath: drop + "/" + photo)
        }
        let tags = Self.names + LocationPrivacyTests.gpsArguments + ["-IPTC:Keywords=tower", "-XMP-xmp:Rating=4"]
        #expect(
            try MediaTools.run("/usr/bin/exiftool", ["-q", "-overwrite_original"] + tags + [drop + "/named.jpg"]).status
                == 0)
        #expect(
            try MediaTools.run(
                "/usr/bin/exiftool",
                ["-q", "-o", drop + "/IMG_2.jpg.xmp"] + tags.filter { $0.hasPrefix("-XMP") } + [
                    Fixtures.media("gray.jpg")
                ]
            ).status == 0)
        return drop
    }

    /// `share ingest` of `drop` with the location stage and `remove` (none: the default); the report's items.
    static func ingest(_ drop: String, remove: String?, in work: TemporaryDirectory) throws -> (
        container: String, items: [String: [String: Any]]
    ) {
        let tag = remove ?? "default"
        let pipeline = work.file("pipeline-\(tag).json")
        let location = remove.map { #"{"stage": "location", "remove": "\#($0)"}"# } ?? #"{"stage": "location"}"#
        let stages = [
            #"{"stage": "sniff"}"#, #"{"stage": "copy"}"#, location, #"{"stage": "probe"}"#, #"{"stage": "thumbnail"}"#,
            #"{"stage": "manifest"}"#,
        ]
        try Data(#"{"name": "place-names", "stages": [\#(stages.joined(separator: ", "))]}"#.utf8).write(
            to: URL(fileURLWithPath: pipeline))
        let container = work.file("container-\(tag)")
        let report = work.file("report-\(tag).json")
        let run = try ShareProcess.run([
            "ingest", "--pipeline", pipeline, "--container", container, "--report", report, drop,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        return (container, try LocationPrivacyTests.reportItems(report))
    }

    @Test func placeNamesGoWhenAskedAndStayOtherwise() throws {
        let work = TemporaryDirectory("place-names")
        let drop = try Self.makeDrop(in: work)
        for name in ["named.jpg", "IMG_2.jpg.xmp"] {
            #expect(
                try PositionCheck.positions(in: drop + "/" + name).contains("Paris"),
                "exiftool finds no place name in the source \(name)")
        }

        // Coordinates and place names: exiftool's check prints nothing of any delivered file.
        let (container, items) = try Self.ingest(drop, remove: "coordinatesAndPlaceNames", in: work)
        let left = try PositionCheck.positionsLeft(in: container)
        #expect(left.isEmpty, "exiftool finds \(left)")
        let named = items["named.jpg"]?["locationRemoved"] as? [String] ?? []
        for expected in [
            "IPTC City", "IPTC Sub-location", "IPTC Province-State", "IPTC Country-Primary Location Name",
            "XMP photoshop:City", "XMP Iptc4xmpCore:Location", "XMP Iptc4xmpExt:LocationCreated",
        ] {
            #expect(named.contains(expected), "named.jpg: \(named) does not name \(expected)")
        }
        #expect(
            (items["IMG_2.jpg"]?["locationRemoved"] as? [String])?.contains("XMP sidecar photoshop:City") == true,
            "\(items["IMG_2.jpg"] ?? [:])")
        let copy = try #require((items["named.jpg"]?["path"] as? String).flatMap { URL(string: $0)?.path })
        // The rest stays: the keywords beside the names, the rating, the capture date's absence unchanged.
        #expect(try MediaTools.tag("IPTC:Keywords", of: copy) == "tower")
        #expect(try MediaTools.tag("XMP:Rating", of: copy) == "4")

        // The default, coordinates alone: the names stay, no GPS does.
        let (kept, _) = try Self.ingest(drop, remove: nil, in: work)
        let delivered = PositionCheck.deliveredFiles(in: kept)
        for file in delivered {
            #expect(!(try PositionCheck.positions(in: file)).contains("GPS"), "\(file) keeps a coordinate")
        }
        #expect(
            try delivered.filter { try PositionCheck.positions(in: $0).contains("Paris") }.count == 2,
            "the names did not stay under the default")
    }
}
