import Foundation
import PlaceTimeZones
import TestSupport
import Testing

/// The offline zone lookup and the zones' offsets (issue 54 part 2): the grid
/// linked into the binary (`TimeZoneMap`), the system's tzdata read as TZif
/// (`ZoneRules`), checked against timezonefinder and Python's zoneinfo.
@Suite struct PlaceTimeZoneTests {
    static var map: TimeZoneMap {
        get throws { try #require(TimeZoneMap.shared, "the linked grid does not hold together") }
    }

    /// The build tracks time_zone_grid.c, not the data it includes: the .c
    /// names the data's size and digest (scripts/build-time-zone-grid.py writes
    /// them), so new data changes the .c in every checkout and the next build
    /// links it. Observed: a merge that brought new data and new lookup code
    /// linked the old data into an incremental build, and no photo got its
    /// place's offset.
    @Test func theSourceNamesTheDataItLinks() throws {
        let folder = Fixtures.packageRoot.appendingPathComponent("Sources/CTimeZoneGrid").path
        let source = try String(contentsOfFile: folder + "/time_zone_grid.c", encoding: .utf8)
        let stamp = try #require(
            source.split(separator: "\n").first { $0.hasPrefix("// data: ") }, "time_zone_grid.c names no data")
        let digest =
            try MediaTools.run("/usr/bin/sha256sum", [folder + "/time_zone_grid.c.bin"]).output.split(separator: " ")
            .first.map(String.init) ?? ""
        let size =
            try FileManager.default.attributesOfItem(atPath: folder + "/time_zone_grid.c.bin")[.size] as? Int ?? -1
        #expect(
            stamp == "// data: \(size) bytes, sha256 \(digest)",
            "time_zone_grid.c says \(stamp); rerun scripts/build-time-zone-grid.py")
        _ = try Self.map  // and the linked grid is one this code reads
    }

    @Test func placesGetTheirZones() throws {
        let map = try Self.map
        let places: [(Double, Double, String)] = [
            (48.8584, 2.2945, "Europe/Paris"), (40.7484, -73.9857, "America/New_York"),
            (35.6586, 139.7454, "Asia/Tokyo"),
            (-33.8568, 151.2153, "Australia/Sydney"), (51.5007, -0.1246, "Europe/London"),
            (-22.9519, -43.2105, "America/Sao_Paulo"),
            (64.1466, -21.9426, "Atlantic/Reykjavik"), (27.1751, 78.0421, "Asia/Kolkata"), (0, 0, "Etc/GMT"),
        ]
        for (latitude, longitude, zone) in places {
            #expect(map.zone(latitude: latitude, longitude: longitude) == zone, "\(latitude), \(longitude)")
        }
    }

    /// A hostile file's position never reaches the grid: not finite or out of range is no zone.
    @Test func positionsOutOfRangeHaveNoZone() throws {
        let map = try Self.map
        for (latitude, longitude) in [
            (Double.nan, 0.0), (0, .nan), (.infinity, 0), (0, -.infinity), (90.000001, 0), (-91, 0), (0, 180.5),
            (0, -1e300),
        ] {
            #expect(map.zone(latitude: latitude, longitude: longitude) == nil, "\(latitude), \(longitude)")
        }
        // The edges themselves are positions.
        for (latitude, longitude) in [(90.0, 0.0), (-90, 0), (0, 180), (0, -180)] {
            #expect(map.zone(latitude: latitude, longitude: longitude) != nil, "\(latitude), \(longitude)")
        }
    }

    /// Summer and winter at one place: the two offsets, from the system's tzdata.
    @Test func summerAndWinterHaveTheirOffsets() throws {
        let paris = try #require(ZoneRules.named("Europe/Paris"))
        #expect(paris.offset(at: 1_721_044_800) == 7200)  // 2024-07-15 12:00 UTC
        #expect(paris.offset(at: 1_705_320_000) == 3600)  // 2024-01-15 12:00 UTC
        let sydney = try #require(ZoneRules.named("Australia/Sydney"))
        #expect(sydney.offset(at: 1_721_044_800) == 36_000)
        #expect(sydney.offset(at: 1_705_320_000) == 39_600)
        // The changes themselves: Paris, 2024-03-31 01:00 UTC and 2024-10-27 01:00 UTC.
        #expect(paris.offset(at: 1_711_846_799) == 3600 && paris.offset(at: 1_711_846_800) == 7200)
        #expect(paris.offset(at: 1_729_990_799) == 7200 && paris.offset(at: 1_729_990_800) == 3600)
        // After the file's last transition (2037), its footer's rule: 2100-07-01 and 2100-01-01 12:00 UTC.
        #expect(paris.offset(at: 4_118_126_400) == 7200 && paris.offset(at: 4_102_488_000) == 3600)
        #expect(sydney.offset(at: 4_118_126_400) == 36_000 && sydney.offset(at: 4_102_488_000) == 39_600)
        let newYork = try #require(ZoneRules.named("America/New_York"))
        #expect(newYork.offset(at: 4_118_126_400) == -14_400 && newYork.offset(at: 4_102_488_000) == -18_000)
        // Before any rule: local mean time as tzdata has it (Paris, 1890: +0:09:21).
        #expect(paris.offset(at: -2_524_521_600) == 561)
        // Names that are no zone's, or that would leave the zoneinfo folder.
        for name in [
            "Mars/Olympus_Mons", "../../etc/passwd", "/etc/passwd", "Europe/../../../etc/passwd", "",
            "Europe/Paris\u{0}",
        ] {
            #expect(ZoneRules.named(name) == nil, "\(name)")
        }
    }

    /// A wall-clock time's offset: the one that makes it an instant of the zone;
    /// twice-occurring times take the first, skipped ones the offset before (zoneinfo's fold=0).
    @Test func wallClockTimesFindTheirOffsets() throws {
        let paris = try #require(ZoneRules.named("Europe/Paris"))
        #expect(paris.offset(forLocal: 1_721_044_800) == 7200)  // 2024-07-15 12:00 local
        #expect(paris.offset(forLocal: 1_705_320_000) == 3600)
        #expect(paris.offset(forLocal: 1_729_993_800) == 7200)  // 2024-10-27 02:30, twice: the first (summer time)
        #expect(paris.offset(forLocal: 1_711_852_200) == 3600)  // 2024-03-31 02:30, never: the offset before
    }

    /// Positions near a border where the offset changes (issue 62): 1,000 random land points with a
    /// neighbour 0.03° away (about 3 km) in a zone of another offset, per timezonefinder
    /// (testdata/timezones/border-points.tsv, `scripts/time-zone-border-points.py 1000 62`). The grid
    /// alone gave a border cell one zone (846 of these 1,000 agreed); a border cell's edges and the
    /// point-in-polygon decision must make it agree on 99.5 %. Every disagreement is printed.
    @Test func agreesWithTimezonefinderNearBorders() throws {
        let map = try Self.map
        let text = try String(contentsOfFile: Fixtures.testdata("timezones/border-points.tsv"), encoding: .utf8)
        let (total, agreed, disagreements) = Self.agreement(map, text)
        print("time zones near borders: \(agreed) of \(total) agree; disagreements: \(disagreements)")
        #expect(total == 1000)
        #expect(Double(agreed) >= 0.995 * Double(total), "\(agreed) of \(total): \(disagreements)")
    }

    /// Points of a `scripts/time-zone-points.py` file whose zone's offsets in January and July 2024
    /// are the file's, and the lines of the others with the zone found.
    static func agreement(_ map: TimeZoneMap, _ text: String) -> (total: Int, agreed: Int, disagreements: [String]) {
        var total = 0
        var agreed = 0
        var disagreements: [String] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count >= 5, let latitude = Double(fields[0]), let longitude = Double(fields[1]),
                let winter = Int(fields[3]),
                let summer = Int(fields[4])
            else { continue }
            total += 1
            let zone = map.zone(latitude: latitude, longitude: longitude)
            let rules = zone.flatMap(ZoneRules.named)
            if rules?.offset(at: 1_705_320_000) == winter, rules?.offset(at: 1_721_044_800) == summer {
                agreed += 1
            } else {
                disagreements.append("\(line): \(zone ?? "none")")
            }
        }
        return (total, agreed, disagreements)
    }

    /// Agreement with timezonefinder + zoneinfo on 3,000 random land points away
    /// from borders (testdata/timezones/land-points.tsv, scripts/time-zone-points.py
    /// 3000 54): the zone's offsets in January and July 2024 must agree on 99.9 %.
    /// BENCHMARKS.md has the 100,000-point run.
    /// `SHARE_TZ_POINTS=FILE` checks FILE's points instead (the 100,000-point run and the phone files of
    /// BENCHMARKS.md: `scripts/time-zone-points.py 100000 5400`, `scripts/time-zone-phone-files.py testdata`),
    /// and prints the agreement, the disagreements and the time per lookup.
    @Test func agreesWithTimezonefinderOnLand() throws {
        let map = try Self.map
        let given = ProcessInfo.processInfo.environment["SHARE_TZ_POINTS"]
        let text = try String(contentsOfFile: given ?? Fixtures.testdata("timezones/land-points.tsv"), encoding: .utf8)
        let (total, agreed, disagreements) = Self.agreement(map, text)
        if given != nil {
            // The lookup alone, timed over every point (a clock read around the whole loop).
            var points: [(Double, Double)] = []
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: "\t")
                if fields.count >= 2, let latitude = Double(fields[0]), let longitude = Double(fields[1]) {
                    points.append((latitude, longitude))
                }
            }
            var found = 0
            let clock = ContinuousClock()
            let elapsed = clock.measure {
                for _ in 0..<10 {
                    for (latitude, longitude) in points where map.zone(latitude: latitude, longitude: longitude) != nil
                    { found += 1 }
                }
            }
            let perLookup =
                Double(elapsed.components.attoseconds) / 1e9 / Double(max(1, points.count * 10)) + Double(
                    elapsed.components.seconds) * 1e9 / Double(max(1, points.count * 10))
            print(
                "time zones: \(agreed) of \(total) agree (\(Double(agreed) / Double(max(1, total)) * 100) %); \(perLookup) ns per lookup; disagreements: \(disagreements)"
            )
        } else {
            #expect(total == 3000)
        }
        #expect(Double(agreed) >= 0.999 * Double(total), "\(agreed) of \(total): \(disagreements.prefix(20))")
    }
}
