import Foundation
import TestSupport
import Testing

/// A JSON names its coordinates as it likes: Google's `latE7`/`lngE7`
/// (degrees times 10^7), `lat_deg`, `lon…`, a `position` or a `loc` of a
/// place. Under location privacy every number under a key that names a
/// latitude or a longitude goes, at any depth, and so does a `position` or
/// `loc` member whole; a text under such a key (`longDescription`) and every
/// other member stay, and the copy is still the same JSON less those members.
/// On aea25cd all of them were delivered (issue 58, finding 8).
@Suite struct JSONCoordinateTests {
    static var source: [String: Any] {
        [
            "visits": [["latE7": 488_584_370, "lngE7": 22_945_170, "name": "Tour Eiffel"]],
            "place": ["name": "Champ de Mars", "position": [48.858437, 2.294517]],
            "loc": ["la": 48.858437, "lo": 2.294517],
            "track": ["points": [["lat_deg": 48.858437, "lon_deg": 2.294517, "t": 1_562_000_000]]],
            "longDescription": "a walk", "owner": "me",
        ]
    }
    /// What the copy must read as: the source less every coordinate.
    static var stripped: [String: Any] {
        [
            "visits": [["name": "Tour Eiffel"]], "place": ["name": "Champ de Mars"],
            "track": ["points": [["t": 1_562_000_000]]], "longDescription": "a walk", "owner": "me",
        ]
    }

    @Test func everyCoordinateOfAJSONGoes() throws {
        let work = TemporaryDirectory("json-coordinates")
        let drop = work.file("drop")
        let container = work.file("container")
        let report = work.file("report.json")
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: Self.source, options: [.sortedKeys, .prettyPrinted]).write(
            to: URL(fileURLWithPath: drop + "/visits.json"))

        let run = try ShareProcess.run([
            "ingest", "--pipeline", try LocationPrivacyTests.pipeline(in: work), "--container", container, "--report",
            report, drop,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let item = try #require(try LocationPrivacyTests.reportItems(report)["visits.json"])
        let removed = item["locationRemoved"] as? [String] ?? []
        for key in ["latE7", "lngE7", "position", "loc", "lat_deg", "lon_deg"] {
            #expect(removed.contains("JSON \(key)"), "\(removed) does not name \(key)")
        }
        let copy = try #require((item["path"] as? String).flatMap { URL(string: $0)?.path })
        let bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
        let read = try #require(try JSONSerialization.jsonObject(with: bytes) as? NSDictionary)
        #expect(read == Self.stripped as NSDictionary, "\(String(decoding: bytes, as: UTF8.self))")
        for position in ["48.858437", "2.294517", "488584370", "22945170"] {
            #expect(bytes.range(of: Data(position.utf8)) == nil, "the copy holds \(position)")
        }
        let left = try PositionCheck.positionsLeft(in: container)
        #expect(left.isEmpty, "exiftool finds \(left)")
    }

    /// Coordinates written as texts (`"latE7": "488584370"`, `"lat_deg": "48.858437"`)
    /// under the same keys go as the numbers do; a text that is no number
    /// (`"lonely": "yes"`, `"lat_note": "by the river"`) stays. Before this
    /// round only numbers went (issue 58, finding 8, its last gap).
    static var textSource: [String: Any] {
        [
            "visits": [["latE7": "488584370", "lngE7": "22945170", "name": "Tour Eiffel"]],
            "track": ["points": [["lat_deg": "48.858437", "lon_deg": " 2.294517 ", "alt": "35", "t": "1562000000"]]],
            "lonely": "yes", "lat_note": "by the river", "owner": "me",
        ]
    }
    static var textStripped: [String: Any] {
        [
            "visits": [["name": "Tour Eiffel"]], "track": ["points": [["alt": "35", "t": "1562000000"]]],
            "lonely": "yes", "lat_note": "by the river", "owner": "me",
        ]
    }

    @Test func coordinatesWrittenAsTextsGo() throws {
        let work = TemporaryDirectory("json-text-coordinates")
        let drop = work.file("drop")
        let container = work.file("container")
        let report = work.file("report.json")
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: Self.textSource, options: [.sortedKeys, .prettyPrinted]).write(
            to: URL(fileURLWithPath: drop + "/visits.json"))

        let run = try ShareProcess.run([
            "ingest", "--pipeline", try LocationPrivacyTests.pipeline(in: work), "--container", container, "--report",
            report, drop,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let item = try #require(try LocationPrivacyTests.reportItems(report)["visits.json"])
        let removed = item["locationRemoved"] as? [String] ?? []
        for key in ["latE7", "lngE7", "lat_deg", "lon_deg"] {
            #expect(removed.contains("JSON \(key)"), "\(removed) does not name \(key)")
        }
        let copy = try #require((item["path"] as? String).flatMap { URL(string: $0)?.path })
        let bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
        let read = try #require(try JSONSerialization.jsonObject(with: bytes) as? NSDictionary)
        #expect(read == Self.textStripped as NSDictionary, "\(String(decoding: bytes, as: UTF8.self))")
        for position in ["48.858437", "2.294517", "488584370", "22945170"] {
            #expect(bytes.range(of: Data(position.utf8)) == nil, "the copy holds \(position)")
        }
    }
}
