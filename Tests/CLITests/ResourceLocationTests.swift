import Foundation
import TestSupport
import Testing

/// Photoshop's image resources are not only a JPEG's: a TIFF keeps them in
/// its tag 34377 and its IPTC IIM in tag 33723, a PSD in its image resources
/// section, each with a copy of the EXIF (0x0422), the IIM (0x0404) and the
/// XMP (0x0424) that exiftool reads. A QuickTime movie names its place in
/// the `com.apple.quicktime.location.name`, `body`, `note` and `role` keys
/// beside the ISO 6709 position. Under location privacy with place names
/// every one goes, and exiftool's check prints nothing of any delivered file;
/// under the default (coordinates) no coordinate is left and the IIM's names
/// stay. Before this round the TIFF's and the PSD's place names, the PSD's
/// GPS and the TIFF tag 34377's GPS were delivered (issue 58, last round).
@Suite struct ResourceLocationTests {
    /// The fixtures (testdata/make-privacy.sh), by the name they are dropped as.
    static let files = [
        "iptc.tiff": "iptc-gps.tiff", "photoshop-tag.tiff": "photoshop-tag.tiff", "layers.psd": "photoshop-gps.psd",
        "place.mov": "keys-place.mov",
    ]

    /// What each copy's `locationRemoved` must name (each the start of an entry).
    static let removed: [String: [String]] = [
        "iptc.tiff": [
            "EXIF GPS", "IPTC City", "IPTC Sub-location", "IPTC Province-State", "IPTC Country-Primary Location Code",
            "IPTC Country-Primary Location Name",
        ],
        "photoshop-tag.tiff": [
            "EXIF (TIFF tag 34377) GPS", "XMP (TIFF tag 34377) exif:GPSLatitude", "XMP (TIFF tag 34377) photoshop:City",
            "IPTC City",
        ],
        "layers.psd": [
            "EXIF (PSD) GPS", "XMP (PSD) exif:GPSLatitude", "XMP (PSD) photoshop:City", "IPTC City",
            "IPTC Country-Primary Location Name",
        ],
        "place.mov": [
            "QuickTime com.apple.quicktime.location.ISO6709", "QuickTime com.apple.quicktime.location.name",
            "QuickTime com.apple.quicktime.location.body",
            "QuickTime com.apple.quicktime.location.note", "QuickTime com.apple.quicktime.location.role",
        ],
    ]

    static func makeDrop(in work: TemporaryDirectory) throws -> String {
        let drop = work.file("drop")
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        for (name, fixture) in files {
            try FileManager.default.copyItem(atPath: Fixtures.privacy(fixture), toPath: drop + "/" + name)
        }
        return drop
    }

    @Test func tiffPSDAndQuickTimePlacesGoWithPlaceNames() throws {
        let work = TemporaryDirectory("resource-places")
        let drop = try Self.makeDrop(in: work)
        for name in ["iptc.tiff", "photoshop-tag.tiff", "layers.psd"] {
            let printed = try PositionCheck.positions(in: drop + "/" + name)
            #expect(
                printed.contains("GPS Latitude") && printed.contains("Paris"),
                "exiftool finds no position or name in the source \(name): \(printed)")
        }
        #expect(try PositionCheck.positions(in: drop + "/place.mov").contains("Tour Eiffel"))

        let (container, items) = try PlaceNameTests.ingest(drop, remove: "coordinatesAndPlaceNames", in: work)
        let left = try PositionCheck.positionsLeft(in: container)
        #expect(left.isEmpty, "exiftool finds \(left)")
        for (name, expected) in Self.removed {
            let named = items[name]?["locationRemoved"] as? [String] ?? []
            for entry in expected {
                #expect(named.contains { $0.hasPrefix(entry) }, "\(name): \(named) does not name \(entry)")
            }
        }
        // The rest stays: the IIM's keywords beside its names, the movie's make.
        let tiff = try #require((items["iptc.tiff"]?["path"] as? String).flatMap { URL(string: $0)?.path })
        #expect(try MediaTools.tag("IPTC:Keywords", of: tiff) == "tower")
        let psd = try #require((items["layers.psd"]?["path"] as? String).flatMap { URL(string: $0)?.path })
        #expect(try MediaTools.tag("IPTC:Keywords", of: psd) == "tower")
        let movie = try #require((items["place.mov"]?["path"] as? String).flatMap { URL(string: $0)?.path })
        #expect(try MediaTools.tag("Keys:Make", of: movie) == "Apple")
    }

    @Test func theDefaultTakesEveryCoordinateAndKeepsTheIIMNames() throws {
        let work = TemporaryDirectory("resource-coordinates")
        let drop = try Self.makeDrop(in: work)
        let (container, items) = try PlaceNameTests.ingest(drop, remove: nil, in: work)
        for file in PositionCheck.deliveredFiles(in: container) {
            let printed = try PositionCheck.positions(in: file)
            #expect(!printed.contains("GPS"), "\(file) keeps a coordinate: \(printed)")
        }
        for name in ["iptc.tiff", "photoshop-tag.tiff", "layers.psd"] {
            let copy = try #require(
                (items[name]?["path"] as? String).flatMap { URL(string: $0)?.path }, "\(name): \(items[name] ?? [:])")
            #expect(
                try PositionCheck.positions(in: copy).contains("Paris"),
                "\(name): the names did not stay under the default")
        }
    }
}
