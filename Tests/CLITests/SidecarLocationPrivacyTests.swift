import Foundation
import TestSupport
import Testing

/// Location privacy covers every file it delivers (issue 51, findings 2 and
/// 3): with the `location` stage on, an XMP sidecar, attached to its photo or
/// delivered as a file, loses its `exif:GPS…` properties (attributes and
/// elements, prefixed or in the default namespace); every JSON, a Takeout
/// sidecar read as Takeout's or not (its photo keys after the first 4 KB,
/// nested deeper than 16 levels, larger than 1 MiB) and any other, loses every
/// member whose key names a position, at any depth; the copy stays valid, with
/// every other byte. One that cannot be read to its end is not delivered
/// (`locationNotRemovable`). In `share ingest`, `share ingest --db` with a
/// real `share worker`, and `share watch`, with the same report.
@Suite(.serialized) struct SidecarLocationPrivacyTests {
    /// The position every file of the drop holds, in the spellings they use.
    static let positions = ["48.858437", "2.294517", "48,51.50622N", "2,17.67102E"]

    static func xmp(_ description: String) -> [UInt8] {
        Array(
            """
            <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
            <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Adobe XMP Core 7.0">
             <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
              \(description)
             </rdf:RDF>
            </x:xmpmeta>
            <?xpacket end="w"?>

            """.utf8)
    }

    /// GPS as attributes and as an element (exiftool writes both forms), beside a rating that stays.
    static let gpsXMP = xmp(
        """
        <rdf:Description rdf:about="" xmlns:exif="http://ns.adobe.com/exif/1.0/" xmlns:xmp="http://ns.adobe.com/xap/1.0/"
           xmp:Rating="4" exif:GPSLatitude="48,51.50622N" exif:GPSLongitude="2,17.67102E">
           <exif:GPSAltitude>35/1</exif:GPSAltitude>
          </rdf:Description>
        """)
    /// GPS elements in the default namespace (no prefix).
    static let defaultNamespaceXMP = xmp(
        """
        <rdf:Description rdf:about="">
           <GPSLatitude xmlns="http://ns.adobe.com/exif/1.0/">48,51.50622N</GPSLatitude>
           <GPSLongitude xmlns="http://ns.adobe.com/exif/1.0/">2,17.67102E</GPSLongitude>
          </rdf:Description>
        """)
    /// An XMP sidecar cut short: its GPS cannot be told apart from the rest.
    static let brokenXMP = Array(String(decoding: gpsXMP, as: UTF8.self).prefix(330).utf8)

    static var geo: [String: Any] { ["latitude": 48.858437, "longitude": 2.294517, "altitude": 35.0] }

    static func json(_ object: Any) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// The drop: each case a file (and a photo for each sidecar).
    static func makeDrop(at drop: String) throws {
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        func add(_ name: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: drop + "/" + name))
        }
        for photo in ["IMG_1.jpg", "IMG_2.jpg", "IMG_3.jpg", "IMG_4.jpg", "IMG_5.jpg"] {
            try FileManager.default.copyItem(atPath: Fixtures.media("gray.jpg"), toPath: drop + "/" + photo)
        }
        try add("IMG_1.jpg.xmp", gpsXMP)
        try add("lone.xmp", gpsXMP)
        try add("default-namespace.xmp", defaultNamespaceXMP)
        try add("broken.xmp", brokenXMP)
        // UTF-16 (with its byte-order mark): no UTF-8 reader sees its GPS.
        try add(
            "utf16.xmp",
            [0xFF, 0xFE] + String(decoding: gpsXMP, as: UTF8.self).utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        // Takeout's: read as Takeout's; its photo keys after 4 KB (a long description first);
        // nested deeper than 16 levels; larger than 1 MiB.
        try add(
            "IMG_5.jpg.json",
            ExportSidecarTests.takeoutJSON(title: "IMG_5.jpg").map { $0 }.replacing(
                Array("48.8584".utf8), with: Array("48.858437".utf8)
            ).replacing(Array("2.2945".utf8), with: Array("2.294517".utf8)))
        try add(
            "IMG_2.jpg.json",
            json([
                "title": "IMG_2.jpg", "description": String(repeating: "a long description ", count: 300),
                "photoTakenTime": ["timestamp": "1562000000"], "geoData": geo,
            ]))
        var nested: Any = ["geoData": geo, "kept": "deep"]
        for _ in 0..<20 { nested = ["n": nested] }
        try add(
            "IMG_3.jpg.json",
            json([
                "title": "IMG_3.jpg", "photoTakenTime": ["timestamp": "1562000000"], "deep": nested, "geoDataExif": geo,
            ]))
        try add(
            "IMG_4.jpg.json",
            json([
                "title": "IMG_4.jpg", "photoTakenTime": ["timestamp": "1562000000"],
                "description": String(repeating: "y", count: 1_200_000), "geoData": geo,
            ]))
        // Any JSON, positions anywhere.
        try add(
            "trip.json",
            json([
                "trip": [["place": "Paris", "lat": 48.858437, "lng": 2.294517], ["note": "kept"]],
                "location": ["coordinates": [48.858437, 2.294517]], "owner": "me",
            ]))
        // Not JSON after all: where its position is cannot be told.
        try add("broken.json", Array(#"{"title": "x", "geoData": {"latitude": 48.858437, "longitude": 2.294517"#.utf8))
    }

    /// `object` without the members whose keys name a position, at any depth (what the copy must parse to).
    static func withoutPositions(_ object: Any) -> Any {
        let keys: Set<String> = [
            "geodata", "geodataexif", "lat", "lng", "location", "latitude", "longitude", "altitude",
        ]
        if let dictionary = object as? [String: Any] {
            return dictionary.filter { !keys.contains($0.key.lowercased()) }.mapValues(withoutPositions)
        }
        if let array = object as? [Any] { return array.map(withoutPositions) }
        return object
    }

    /// What every mode must show, from its report and container.
    static func check(report path: String, drop: String, container: String, mode: String) throws {
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        var items: [String: [String: Any]] = [:]
        for item in try #require(report["items"] as? [[String: Any]]) {
            items[((item["source"] as? String ?? "") as NSString).lastPathComponent] = item
        }
        func copy(of name: String) throws -> String {
            let item = try #require(items[name], "\(mode): \(name) not reported")
            if let path = item["path"] as? String, let url = URL(string: path) { return url.path }
            // An attached sidecar: its copy is listed in its photo's entry.
            let manifests = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter {
                $0.hasSuffix(".json")
            }
            let entries = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: container + "/manifests/" + manifests[0])))
                    as? [[String: Any]])
            for entry in entries {
                for sidecar in entry["sidecars"] as? [[String: Any]] ?? []
                where (entry["fileName"] as? String).map({ name.hasPrefix($0) }) == true {
                    if let path = sidecar["path"] as? String, let url = URL(string: path) { return url.path }
                }
            }
            Issue.record("\(mode): no copy of \(name)")
            return ""
        }
        // No file of the container holds the position, in any spelling.
        let all = (FileManager.default.enumerator(atPath: container)?.allObjects as? [String]) ?? []
        for relative in all where !relative.hasPrefix(".share-ingest") {
            guard let data = FileManager.default.contents(atPath: container + "/" + relative) else { continue }
            for position in positions {
                let utf16 = Data(position.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
                #expect(
                    data.range(of: Data(position.utf8)) == nil && data.range(of: utf16) == nil,
                    "\(mode): \(relative) holds \(position)")
            }
        }
        // XMP sidecars: delivered, no GPS tag left (exiftool), the rating kept; the report says what went.
        #expect(items["IMG_1.jpg.xmp"]?["status"] as? String == "attached", "\(mode): \(items["IMG_1.jpg.xmp"] ?? [:])")
        #expect(
            (items["IMG_1.jpg"]?["locationRemoved"] as? [String])?.contains("XMP sidecar exif:GPSLatitude") == true,
            "\(mode): \(items["IMG_1.jpg"] ?? [:])")
        for name in ["IMG_1.jpg.xmp", "lone.xmp", "default-namespace.xmp"] {
            let path = try copy(of: name)
            let left = try MediaTools.locationTags(path)
            #expect(left.isEmpty, "\(mode): \(name) keeps \(left)")
            let source = try Data(contentsOf: URL(fileURLWithPath: drop + "/" + name))
            #expect(
                (try? Data(contentsOf: URL(fileURLWithPath: path)))?.count == source.count,
                "\(mode): \(name) changed size")
        }
        #expect(
            try MediaTools.tags(try copy(of: "lone.xmp")).contains { $0.name == "Rating" && $0.value == "4" },
            "\(mode): the rating went too")
        for name in ["lone.xmp", "default-namespace.xmp"] {
            #expect(
                (items[name]?["locationRemoved"] as? [String])?.contains("XMP sidecar exif:GPSLatitude") == true,
                "\(mode): \(items[name] ?? [:])")
        }
        // JSONs: delivered, valid, the same as the source less its position members.
        for name in ["IMG_5.jpg.json", "IMG_2.jpg.json", "IMG_3.jpg.json", "IMG_4.jpg.json", "trip.json"] {
            let path = try copy(of: name)
            let copied = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
            let source = try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: drop + "/" + name)))
            #expect(
                NSDictionary(dictionary: copied as? [String: Any] ?? [:]).isEqual(
                    to: withoutPositions(source) as? [String: Any] ?? ["?": 0]),
                "\(mode): \(name) is not its source less its positions")
            // An attached sidecar's removal is said on its photo's report; a file's on its own.
            let holder = items[name]?["status"] as? String == "attached" ? String(name.dropLast(5)) : name
            let removed = items[holder]?["locationRemoved"] as? [String] ?? []
            #expect(
                removed.contains { $0.contains("geoData") || $0.hasPrefix("JSON ") },
                "\(mode): \(name): \(items[holder] ?? [:])")
        }
        // Unreadable: not delivered, saying why.
        for name in ["broken.xmp", "utf16.xmp", "broken.json"] {
            #expect(
                items[name]?["status"] as? String == "failed"
                    && items[name]?["reason"] as? String == "locationNotRemovable",
                "\(mode): \(name): \(items[name] ?? [:])")
        }
    }

    @Test func everySidecarAndJSONLosesItsPositionInEveryMode() throws {
        let work = TemporaryDirectory("sidecar-privacy")
        let root = (work.path as NSString).standardizingPath
        let pipeline = try LocationPrivacyTests.pipeline(in: work)
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("privacy")
        defer { workers.stopAll() }
        for (mode, database) in [("ingest", [String]()), ("ingest --db", ["--db", server.url])] {
            let drop = root + "/drop-" + mode.replacingOccurrences(of: " ", with: "")
            try Self.makeDrop(at: drop)
            let container = drop + "-container"
            let report = drop + "-report.json"
            let run = try ShareProcess.run(
                ["ingest"] + database + ["--pipeline", pipeline, "--container", container, "--report", report, drop])
            #expect(run.status == 1, "\(mode): \(run.stderr) \(workers.log("privacy"))")
            try Self.check(report: report, drop: drop, container: container, mode: mode)
        }
        let inbox = root + "/inbox"
        try Self.makeDrop(at: inbox + "/drop")
        FileManager.default.createFile(atPath: inbox + "/drop/.ready", contents: nil)
        let container = root + "/watch-container"
        let run = try ShareProcess.run([
            "watch", inbox, "--pipeline", pipeline, "--container", container, "--once", "--on-success", "keep",
        ])
        #expect(run.status == 0, "watch: \(run.stderr)")
        let reports = try FileManager.default.contentsOfDirectory(atPath: container + "/.share-ingest/reports").filter {
            $0.hasSuffix(".json")
        }
        try #require(reports.count == 1)
        try Self.check(
            report: container + "/.share-ingest/reports/" + reports[0], drop: inbox + "/drop", container: container,
            mode: "watch")
    }
}
