import Foundation
import TestSupport
import Testing

/// The offset from the place (issue 54 part 2): a capture time without an
/// offset, of a file that records a position (EXIF GPS, QuickTime's ©xyz), or
/// with a Takeout JSON's `geoData`, is written with the offset of the place's
/// time zone at that instant (`capturedAtOffsetSource` `position` or
/// `takeout`), also when location privacy removes the position from the copy.
/// The files are testdata's with their dates and places rewritten by exiftool.
@Suite struct CaptureOffsetTests {
    /// `exif6-gps.jpg` (a DateTimeOriginal without OffsetTimeOriginal, GPS without time stamps)
    /// taken at `date` at `latitude`, `longitude` (or at no place).
    static func photo(_ drop: TemporaryDirectory, _ name: String, date: String, latitude: Double?, longitude: Double?)
        throws
    {
        let path = try drop.add(name, copying: Fixtures.privacy("exif6-gps.jpg"))
        var tags = ["-overwrite_original", "-DateTimeOriginal=\(date)"]
        if let latitude, let longitude {
            tags += [
                "-GPSLatitude=\(abs(latitude))", "-GPSLatitudeRef=\(latitude < 0 ? "S" : "N")",
                "-GPSLongitude=\(abs(longitude))",
                "-GPSLongitudeRef=\(longitude < 0 ? "W" : "E")",
            ]
        } else {
            tags.append("-GPS:all=")
        }
        let result = try MediaTools.run("/usr/bin/exiftool", tags + [path])
        try #require(result.status == 0, "\(result.output)")
    }

    /// The drop: summer and winter at one place (Paris; Sydney, whose summer is
    /// January), New York, a photo without a position, one whose GPS is out of
    /// range, one at 0, 0, and a movie whose `mvhd` time (UTC) has a ©xyz position.
    static func makeDrop() throws -> TemporaryDirectory {
        let drop = TemporaryDirectory("offsets")
        try photo(drop, "paris-summer.jpg", date: "2024:07:15 12:00:00", latitude: 48.8584, longitude: 2.2945)
        try photo(drop, "paris-winter.jpg", date: "2024:01:15 12:00:00", latitude: 48.8584, longitude: 2.2945)
        try photo(drop, "sydney-january.jpg", date: "2024:01:15 12:00:00", latitude: -33.8568, longitude: 151.2153)
        try photo(drop, "sydney-july.jpg", date: "2024:07:15 12:00:00", latitude: -33.8568, longitude: 151.2153)
        // just after the clocks went forward
        try photo(drop, "new-york.jpg", date: "2024:03:10 03:30:00", latitude: 40.7484, longitude: -73.9857)
        try photo(drop, "nowhere.jpg", date: "2024:07:15 12:00:00", latitude: nil, longitude: nil)
        try photo(drop, "null-island.jpg", date: "2024:07:15 12:00:00", latitude: 0, longitude: 0)
        // A latitude of 95° (exiftool writes what it is told): no place.
        try photo(drop, "out-of-range.jpg", date: "2024:07:15 12:00:00", latitude: 95, longitude: 2.2945)
        let movie = try drop.add("tokyo.mp4", copying: Fixtures.media("clip-h264.mp4"))
        let tagged = try MediaTools.run(
            "/usr/bin/exiftool",
            [
                "-overwrite_original", "-QuickTime:CreateDate=2024:07:15 03:00:00",
                "-UserData:GPSCoordinates=35.6586, 139.7454", movie,
            ])
        try #require(tagged.status == 0, "\(tagged.output)")
        return drop
    }

    static let expected: [String: (capturedAt: String, offsetSource: String?)] = [
        "paris-summer.jpg": ("2024-07-15T12:00:00+02:00", "position"),
        "paris-winter.jpg": ("2024-01-15T12:00:00+01:00", "position"),
        "sydney-january.jpg": ("2024-01-15T12:00:00+11:00", "position"),
        "sydney-july.jpg": ("2024-07-15T12:00:00+10:00", "position"),
        "new-york.jpg": ("2024-03-10T03:30:00-04:00", "position"), "nowhere.jpg": ("2024-07-15T12:00:00", nil),
        "null-island.jpg": ("2024-07-15T12:00:00", nil),
        "out-of-range.jpg": ("2024-07-15T12:00:00", nil),
        // mvhd's 03:00 UTC, shown at Tokyo's +09:00.
        "tokyo.mp4": ("2024-07-15T12:00:00+09:00", "position"),
    ]

    static func check(_ container: String, _ what: String) throws {
        let byName = try CaptureTimeTests.entries(container)
        for (name, expected) in expected.sorted(by: { $0.key < $1.key }) {
            let entry = byName[name]
            #expect(
                entry?["capturedAt"] as? String == expected.capturedAt,
                "\(what): \(name): \(entry?["capturedAt"] ?? "none")")
            #expect(
                entry?["capturedAtOffsetSource"] as? String == expected.offsetSource,
                "\(what): \(name): \(entry?["capturedAtOffsetSource"] ?? "none")")
            #expect(
                (entry?["capturedAtOffsetKnown"] as? Bool) == (expected.offsetSource == nil ? false : nil),
                "\(what): \(name)")
            #expect(
                entry?["capturedAtSource"] as? String == (name.hasSuffix(".mp4") ? "mp4" : "exif"), "\(what): \(name)")
        }
    }

    @Test func aTimeWithoutAnOffsetTakesItsPlacesOffset() throws {
        let drop = try Self.makeDrop()
        let container = TemporaryDirectory()
        let result = try ShareProcess.run(["ingest", "--container", container.path, drop.path])
        #expect(result.status == 0, "\(result.stderr)")
        try Self.check(container.path, "ingest")
        // The report shows where the offset came from.
        let url = try #require(result.lastLine)
        let page = container.file("page.html")
        #expect(try ShareProcess.run(["report", url, "--container", container.path, "--html", page]).status == 0)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("<dt>Taken</dt><dd>2024-07-15T12:00:00+02:00 (exif, offset from position)</dd>"))
    }

    /// The README's two rules for a wall clock placed by its position, each in
    /// a northern zone (Berlin: the clocks skip 02:00–03:00 on 31 March 2024 and
    /// pass 02:00–03:00 twice on 27 October) and a southern one (Sydney, whose
    /// seasons are the other way round: twice on 7 April 2024, skipped on 6
    /// October): a time that occurs twice takes the first instant (the summer
    /// offset, before the clocks go back); one that never occurs, the offset
    /// before the change (winter's, as Python's `zoneinfo` with `fold=0`).
    @Test func aTimeTheClocksPassTwiceTakesTheFirstInstantAndOneTheySkipTheOffsetBefore() throws {
        let drop = TemporaryDirectory("offset-rules")
        let berlin = (latitude: 52.5163, longitude: 13.3777)
        let sydney = (latitude: -33.8568, longitude: 151.2153)
        let cases: [(name: String, date: String, place: (latitude: Double, longitude: Double), capturedAt: String)] = [
            ("berlin-twice.jpg", "2024:10:27 02:30:00", berlin, "2024-10-27T02:30:00+02:00"),
            ("berlin-skipped.jpg", "2024:03:31 02:30:00", berlin, "2024-03-31T02:30:00+01:00"),
            ("sydney-twice.jpg", "2024:04:07 02:30:00", sydney, "2024-04-07T02:30:00+11:00"),
            ("sydney-skipped.jpg", "2024:10:06 02:30:00", sydney, "2024-10-06T02:30:00+10:00"),
            // An hour either side of each change: one offset only.
            ("berlin-before-twice.jpg", "2024:10:27 01:30:00", berlin, "2024-10-27T01:30:00+02:00"),
            ("berlin-after-twice.jpg", "2024:10:27 03:30:00", berlin, "2024-10-27T03:30:00+01:00"),
            ("sydney-after-skipped.jpg", "2024:10:06 03:30:00", sydney, "2024-10-06T03:30:00+11:00"),
        ]
        for item in cases {
            try Self.photo(
                drop, item.name, date: item.date, latitude: item.place.latitude, longitude: item.place.longitude)
        }
        let container = TemporaryDirectory()
        let result = try ShareProcess.run(["ingest", "--container", container.path, drop.path])
        #expect(result.status == 0, "\(result.stderr)")
        let byName = try CaptureTimeTests.entries(container.path)
        for item in cases {
            let entry = byName[item.name]
            #expect(
                entry?["capturedAt"] as? String == item.capturedAt,
                "\(item.name): \(entry?["capturedAt"] ?? "none"), expected \(item.capturedAt)")
            #expect(entry?["capturedAtOffsetSource"] as? String == "position", "\(item.name)")
        }
    }

    /// With location privacy on, the place is found before the location stage
    /// removes it: the same offsets, and no position left in the copies.
    @Test func locationPrivacyKeepsTheOffsetOfThePlaceItRemoves() throws {
        let drop = try Self.makeDrop()
        let work = TemporaryDirectory("offsets-privacy")
        // Takeout's geoData is a place too: a photo with no metadata of its own, and its JSON.
        _ = try drop.add("IMG_0009.jpg", copying: Fixtures.media("gray.jpg"))
        _ = try drop.add(
            "IMG_0009.jpg.json", bytes: ExportSidecarTests.takeoutJSON(title: "IMG_0009.jpg", taken: 1_705_320_000))
        let container = work.file("c")
        let result = try ShareProcess.run([
            "ingest", "--container", container, "--pipeline", try LocationPrivacyTests.pipeline(in: work), drop.path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        try Self.check(container, "location privacy")
        let byName = try CaptureTimeTests.entries(container)
        // 2024-01-15 12:00 UTC in Paris (the JSON's geoData), in winter.
        let takeout = byName["IMG_0009.jpg"]
        #expect(
            takeout?["capturedAt"] as? String == "2024-01-15T13:00:00+01:00"
                && takeout?["capturedAtOffsetSource"] as? String == "takeout", "\(takeout ?? [:])")
        #expect(takeout?["exportLocation"] == nil)
        for name in ["paris-summer.jpg", "tokyo.mp4"] {
            #expect((byName[name]?["locationRemoved"] as? [String])?.isEmpty == false, "\(name)")
            let copy = try #require((byName[name]?["path"] as? String).flatMap(URL.init(string:))?.path)
            let gps = try MediaTools.run("/usr/bin/exiftool", ["-gps:all", "-GPSCoordinates", "-s", copy])
            #expect(
                !gps.output.contains("48 deg") && !gps.output.contains("35.6586")
                    && !gps.output.contains("GPSLatitude "), "\(name): \(gps.output)")
        }
    }

    /// Under location privacy no zone name is stored anywhere (issue 58,
    /// finding 8): the journal, its write-ahead log, the manifest and the
    /// report keep the offset of the capture time (what a camera writes), never
    /// `Europe/Paris`; on aea25cd the journal held each place's zone.
    @Test func locationPrivacyStoresNoZoneName() throws {
        let drop = try Self.makeDrop()
        // A Takeout JSON's geoData is a place too (Paris).
        _ = try drop.add("IMG_0009.jpg", copying: Fixtures.media("gray.jpg"))
        _ = try drop.add(
            "IMG_0009.jpg.json", bytes: ExportSidecarTests.takeoutJSON(title: "IMG_0009.jpg", taken: 1_705_320_000))
        let work = TemporaryDirectory("offsets-no-zone")
        let container = work.file("c")
        let report = work.file("report.json")
        let result = try ShareProcess.run([
            "ingest", "--container", container, "--report", report, "--pipeline",
            try LocationPrivacyTests.pipeline(in: work), drop.path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        try Self.check(container, "location privacy")
        let enumerator = try #require(FileManager.default.enumerator(atPath: container))
        var files = [report]
        while let relative = enumerator.nextObject() as? String { files.append(container + "/" + relative) }
        #expect(files.contains { $0.hasSuffix(".sqlite") }, "no journal in \(files)")
        let takeout = try CaptureTimeTests.entries(container)["IMG_0009.jpg"]
        #expect(takeout?["capturedAt"] as? String == "2024-01-15T13:00:00+01:00", "\(takeout ?? [:])")
        for file in files {
            guard let bytes = FileManager.default.contents(atPath: file) else { continue }
            for zone in ["Europe/Paris", "Australia/Sydney", "America/New_York", "Asia/Tokyo"] {
                #expect(bytes.range(of: Data(zone.utf8)) == nil, "\(file) holds \(zone)")
            }
        }
    }
}
