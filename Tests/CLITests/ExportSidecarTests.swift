import Foundation
import TestSupport
import Testing

/// Export sidecars (issue 34) in every mode: `share ingest` (SQLite journal),
/// `share ingest --db` with a real `share worker` (PostgreSQL) and `share
/// watch` attach each Takeout JSON, XMP and `.AAE` to the photo it describes,
/// copied under the photo's UUID and listed in its entry's `sidecars`; the
/// sidecar's report says `attached` and names the photo; a sidecar without its
/// photo, an album's `metadata.json` and a JSON that is not Takeout's are files.
@Suite(.serialized) struct ExportSidecarTests {
    static func takeoutJSON(title: String, taken: Int = 1_562_000_000, description: String = "") -> [UInt8] {
        Array(
            """
            {
              "title": "\(title)",
              "description": "\(description)",
              "imageViews": "3",
              "creationTime": { "timestamp": "1562500000", "formatted": "7 Jul 2019, 11:46:40 UTC" },
              "photoTakenTime": { "timestamp": "\(taken)", "formatted": "1 Jul 2019, 16:53:20 UTC" },
              "geoData": { "latitude": 48.8584, "longitude": 2.2945, "altitude": 35.0, "latitudeSpan": 0.0, "longitudeSpan": 0.0 },
              "url": "https://photos.google.com/photo/AF1QipExample",
              "googlePhotosOrigin": { "mobileUpload": { "deviceType": "ANDROID_PHONE" } }
            }

            """.utf8)
    }

    static let xmp = Array(
        """
        <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
        <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Adobe XMP Core 7.0">
         <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
          <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="4"/>
         </rdf:RDF>
        </x:xmpmeta>
        <?xpacket end="w"?>

        """.utf8)

    static let aae = Array(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>adjustmentBaseVersion</key>
        \t<integer>0</integer>
        \t<key>adjustmentData</key>
        \t<data>ZGF0YQ==</data>
        \t<key>adjustmentEditorBundleID</key>
        \t<string>com.apple.mobileslideshow</string>
        \t<key>adjustmentFormatIdentifier</key>
        \t<string>com.apple.photo</string>
        \t<key>adjustmentFormatVersion</key>
        \t<string>1.5</string>
        </dict>
        </plist>

        """.utf8)

    /// A drop like a Takeout (and an Apple export) drop: every naming case of
    /// item 1, a sidecar without its photo, an album's `metadata.json`, a JSON
    /// that is not Takeout's. Returns each sidecar's bytes by its name.
    static func makeDrop(_ drop: TemporaryDirectory) throws -> [String: [UInt8]] {
        let year = "Takeout/Google Photos/Photos from 2019/"
        let longName = "Screenshot_20190701-165320_Photos_and_more_long.jpg"
        var sidecars: [String: [UInt8]] = [:]
        func sidecar(_ name: String, _ bytes: [UInt8]) throws {
            _ = try drop.add(name, bytes: bytes)
            sidecars[name] = bytes
        }
        try drop.add(year + "IMG_0001.jpg", copying: Fixtures.media("photo.jpg"))
        try sidecar(year + "IMG_0001.jpg.json", takeoutJSON(title: "IMG_0001.jpg"))
        try drop.add(year + "IMG_0002.jpg", copying: Fixtures.media("exif3.jpg"))
        try sidecar(
            year + "IMG_0002.jpg.supplemental-metadata.json",
            takeoutJSON(title: "IMG_0002.jpg", taken: 1_562_000_100, description: "Eiffel tower at dusk"))
        try drop.add(year + "IMG_0003(1).jpg", copying: Fixtures.media("exif8.jpg"))
        try sidecar(year + "IMG_0003.jpg(1).json", takeoutJSON(title: "IMG_0003.jpg", taken: 1_562_000_200))
        try drop.add(year + "IMG_0004.jpg", copying: Fixtures.media("gray.jpg"))
        try drop.add(year + "IMG_0004-edited.jpg", copying: Fixtures.media("progressive.jpg"))
        try sidecar(year + "IMG_0004.jpg.json", takeoutJSON(title: "IMG_0004.jpg", taken: 1_562_000_300))
        try drop.add(year + longName, copying: Fixtures.media("cmyk.jpg"))
        try sidecar(year + longName + ".supplemental-metad.json", takeoutJSON(title: longName, taken: 1_562_000_400))
        try drop.add(year + "IMG_0006.jpg", copying: Fixtures.media("portrait-exif6.jpg"))
        try sidecar(year + "IMG_0006.jpg.suppl.json", takeoutJSON(title: "IMG_0006.jpg", taken: 1_562_000_500))
        try sidecar(year + "IMG_0099.jpg.json", takeoutJSON(title: "IMG_0099.jpg", taken: 1_562_000_600))
        _ = try drop.add(
            "Takeout/Google Photos/Holiday/metadata.json",
            bytes: Array(
                #"{"title": "Holiday", "description": "", "access": "protected", "date": {"timestamp": "1562000000"}}"#
                    .utf8))
        _ = try drop.add("Takeout/Google Photos/Holiday/notes.json", copying: Fixtures.media("data.json"))
        try drop.add("Apple/IMG_1234.heic", copying: Fixtures.media("image.heic"))
        try sidecar("Apple/IMG_1234.AAE", aae)
        try drop.add("Apple/IMG_1235.jpg", copying: Fixtures.media("exif3.jpg"))
        try sidecar("Apple/IMG_1235.xmp", xmp)
        return sidecars
    }

    /// What each source (relative to the drop) became: its status, and for a
    /// sidecar attached, the photo (relative) it names.
    static func outcomes(report path: String, drop: String) throws -> [String: String] {
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        var found: [String: String] = [:]
        for item in try #require(report["items"] as? [[String: Any]]) {
            let source = try #require(item["source"] as? String)
            let relative = source.hasPrefix(drop + "/") ? String(source.dropFirst(drop.count + 1)) : source
            var outcome = try #require(item["status"] as? String)
            if let media = item["attachedTo"] as? String {
                outcome += " to " + (media.hasPrefix(drop + "/") ? String(media.dropFirst(drop.count + 1)) : media)
            }
            for warning in item["warnings"] as? [String] ?? [] where warning.contains("is not in this drop") {
                outcome += " (\(warning))"
            }
            found[relative] = outcome
        }
        return found
    }

    static let expectedOutcomes: [String: String] = {
        let year = "Takeout/Google Photos/Photos from 2019/"
        let long = "Screenshot_20190701-165320_Photos_and_more_long.jpg"
        var expected: [String: String] = [:]
        for photo in [
            "IMG_0001.jpg", "IMG_0002.jpg", "IMG_0003(1).jpg", "IMG_0004.jpg", "IMG_0004-edited.jpg", long,
            "IMG_0006.jpg",
        ] {
            expected[year + photo] = "ingested"
        }
        expected[year + "IMG_0001.jpg.json"] = "attached to \(year)IMG_0001.jpg"
        expected[year + "IMG_0002.jpg.supplemental-metadata.json"] = "attached to \(year)IMG_0002.jpg"
        expected[year + "IMG_0003.jpg(1).json"] = "attached to \(year)IMG_0003(1).jpg"
        expected[year + "IMG_0004.jpg.json"] = "attached to \(year)IMG_0004.jpg"
        expected[year + long + ".supplemental-metad.json"] = "attached to \(year)\(long)"
        expected[year + "IMG_0006.jpg.suppl.json"] = "attached to \(year)IMG_0006.jpg"
        expected[year + "IMG_0099.jpg.json"] =
            "ingested (a Google Takeout JSON sidecar whose photo or video (IMG_0099.jpg) is not in this drop: delivered as a file)"
        expected["Takeout/Google Photos/Holiday/metadata.json"] = "ingested"
        expected["Takeout/Google Photos/Holiday/notes.json"] = "ingested"
        expected["Apple/IMG_1234.heic"] = "ingested"
        expected["Apple/IMG_1234.AAE"] = "attached to Apple/IMG_1234.heic"
        expected["Apple/IMG_1235.jpg"] = "ingested"
        expected["Apple/IMG_1235.xmp"] = "attached to Apple/IMG_1235.jpg"
        return expected
    }()

    /// The manifest's entries by file name: the kinds of their sidecars, each
    /// checked to be a copy named `<entry's UUID>.<n>.<ext>` holding the bytes
    /// of the sidecar named in `expected`.
    static func checkManifest(_ container: String, sidecars: [String: [UInt8]], mode: String) throws -> [String:
        [String]]
    {
        let manifests = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter {
            $0.hasSuffix(".json")
        }
        try #require(manifests.count == 1, "\(mode): \(manifests)")
        let data = try Data(contentsOf: URL(fileURLWithPath: container + "/manifests/" + manifests[0]))
        let entries = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        var kinds: [String: [String]] = [:]
        for entry in entries {
            let name = try #require(entry["fileName"] as? String)
            guard let attached = entry["sidecars"] as? [[String: Any]] else { continue }
            let path = try #require(entry["path"] as? String)
            let entryURL = try #require(URL(string: path))
            let uuid = entryURL.deletingPathExtension().lastPathComponent
            for (n, sidecar) in attached.enumerated() {
                let link = try #require(sidecar["path"] as? String)
                let url = try #require(URL(string: link))
                let kind = try #require(sidecar["kind"] as? String)
                let ext = ["takeout": "json", "xmp": "xmp", "aae": "aae"][kind] ?? "?"
                #expect(
                    url.lastPathComponent == "\(uuid).\(n + 1).\(ext)",
                    "\(mode): \(name)'s sidecar is \(url.lastPathComponent)")
                let bytes = try [UInt8](Data(contentsOf: url))
                #expect(sidecar["size"] as? Int == bytes.count, "\(mode): \(name)")
                #expect(
                    sidecar["mimeType"] as? String
                        == ["takeout": "application/json", "xmp": "application/rdf+xml", "aae": "application/xml"][kind]
                )
                // The copy holds the bytes of the sidecar that names this photo (or its original).
                let stem = (name as NSString).deletingPathExtension.replacingOccurrences(of: "-edited", with: "")
                let sources = sidecars.filter { key, _ in
                    let file = (key as NSString).lastPathComponent
                    return file.hasPrefix(stem + ".")
                        || file.hasPrefix(stem.replacingOccurrences(of: "(1)", with: "") + ".jpg(1)")
                }
                #expect(
                    sources.contains { $0.value == bytes },
                    "\(mode): \(name)'s sidecar \(url.lastPathComponent) holds none of \(sources.keys.sorted())")
                kinds[name, default: []].append(kind)
            }
        }
        // The sidecars' own copies are gone: every `<UUID>.json` left is an entry's.
        let delivered = Set(
            entries.compactMap { ($0["path"] as? String).flatMap(URL.init(string:))?.lastPathComponent })
        let loose = try FileManager.default.contentsOfDirectory(atPath: container).filter {
            ($0.hasSuffix(".json") || $0.hasSuffix(".xmp") || $0.hasSuffix(".aae")) && !delivered.contains($0)
                && $0.split(separator: ".").count == 2
        }
        #expect(loose.isEmpty, "\(mode): sidecar copies left behind: \(loose)")
        return kinds
    }

    /// The manifest's entries by file name.
    static func entries(_ container: String) throws -> [String: [String: Any]] {
        let manifests = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter {
            $0.hasSuffix(".json")
        }
        try #require(manifests.count == 1)
        let data = try Data(contentsOf: URL(fileURLWithPath: container + "/manifests/" + manifests[0]))
        let entries = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        return Dictionary(
            entries.map { ($0["fileName"] as? String ?? "?", $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// What the Takeout JSONs gave their photos: `capturedAt` from `photoTakenTime`
    /// (source `takeout`), the `description` as `message`, `geoData` as `exportLocation`.
    static func checkTakeoutFacts(_ container: String, mode: String) throws {
        let byName = try entries(container)
        // `photoTakenTime` is UTC; it is written at the offset of the photo's own metadata (photo.jpg's
        // OffsetTimeOriginal), else at its place's: the zone at the JSON's `geoData` (Paris, in July) (issue 54).
        let times = [
            "IMG_0001.jpg": "2019-07-01T18:53:20+02:00", "IMG_0002.jpg": "2019-07-01T18:55:00+02:00",
            "IMG_0003(1).jpg": "2019-07-01T18:56:40+02:00",
            "IMG_0004.jpg": "2019-07-01T18:58:20+02:00", "IMG_0004-edited.jpg": "2019-07-01T18:58:20+02:00",
        ]
        for (name, time) in times {
            #expect(
                byName[name]?["capturedAt"] as? String == time,
                "\(mode): \(name) \(byName[name]?["capturedAt"] ?? "none")")
            #expect(byName[name]?["capturedAtSource"] as? String == "takeout", "\(mode): \(name)")
            #expect(
                byName[name]?["capturedAtOffsetSource"] as? String == (name == "IMG_0001.jpg" ? "exif" : "takeout"),
                "\(mode): \(name)")
        }
        #expect(byName["IMG_0002.jpg"]?["message"] as? String == "Eiffel tower at dusk", "\(mode)")
        #expect(byName["IMG_0001.jpg"]?["message"] is NSNull, "\(mode): an empty description is no message")
        let place = byName["IMG_0001.jpg"]?["exportLocation"] as? [String: Any]
        #expect(
            place?["latitude"] as? Double == 48.8584 && place?["longitude"] as? Double == 2.2945
                && place?["altitude"] as? Double == 35.0, "\(mode): \(place ?? [:])")
        #expect(place?["source"] as? String == "takeout")
        // Photos without a Takeout JSON have none of it (their capture time is their own).
        #expect(
            byName["IMG_1235.jpg"]?["capturedAtSource"] as? String != "takeout"
                && byName["IMG_1235.jpg"]?["exportLocation"] == nil)
        #expect(byName["metadata.json"]?["type"] as? String == "file")
    }

    static let expectedKinds: [String: [String]] = [
        "IMG_0001.jpg": ["takeout"], "IMG_0002.jpg": ["takeout"], "IMG_0003(1).jpg": ["takeout"],
        "IMG_0004.jpg": ["takeout"],
        "IMG_0004-edited.jpg": ["takeout"], "Screenshot_20190701-165320_Photos_and_more_long.jpg": ["takeout"],
        "IMG_0006.jpg": ["takeout"],
        "IMG_1234.heic": ["aae"], "IMG_1235.jpg": ["xmp"],
    ]

    @Test func sidecarsAreAttachedToTheirPhotosInEveryMode() throws {
        let work = TemporaryDirectory("sidecars")
        let root = (work.path as NSString).standardizingPath
        let drop = TemporaryDirectory("sidecar-drop")
        let sidecars = try Self.makeDrop(drop)
        let dropPath = (drop.path as NSString).standardizingPath

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("sidecars")
        defer { workers.stopAll() }

        var reports: [String: [String: String]] = [:]
        var urls: [String: String?] = [:]
        for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
            let container = root + "/c-" + mode
            let report = root + "/\(mode).json"
            let run = try ShareProcess.run(
                ["ingest"] + database + ["--container", container, "--report", report, dropPath])
            #expect(run.status == 0, "\(mode): \(run.stderr) \(workers.log("sidecars"))")
            urls[mode] = run.lastLine
            if mode == "local" { #expect(run.stderr.contains("8 sidecars attached to their media"), "\(run.stderr)") }
            let found = try Self.outcomes(report: report, drop: dropPath)
            #expect(
                found == Self.expectedOutcomes, "\(mode): \(found.filter { Self.expectedOutcomes[$0.key] != $0.value })"
            )
            reports[mode] = found
            let kinds = try Self.checkManifest(container, sidecars: sidecars, mode: mode)
            #expect(kinds == Self.expectedKinds, "\(mode): \(kinds)")
            try Self.checkTakeoutFacts(container, mode: mode)
        }
        #expect(reports["local"] == reports["remote"])

        // `share open` checks the sidecars' paths like every other path;
        // consumed and collected, the sidecars go with their photos.
        let container = root + "/c-local"
        let url = try #require(urls["local"] ?? nil)
        let open = try ShareProcess.run(["open", url, "--container", container, "--consume"])
        #expect(open.status == 0, "\(open.stderr)")
        #expect(open.stdout.contains("\"sidecars\""))
        #expect(try FileManager.default.contentsOfDirectory(atPath: container).contains { $0.hasSuffix(".1.json") })
        let gc = try ShareProcess.run(["gc", "--container", container, "--older-than", "0"])
        #expect(gc.status == 0, "\(gc.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: container).filter {
            $0.hasSuffix(".json") || $0.hasSuffix(".xmp") || $0.hasSuffix(".aae")
        }
        #expect(left.isEmpty, "left after gc: \(left)")
    }

    /// The fan-in copies the sidecars as it reads their media: a run that dies
    /// with its manifest not yet named (before its first entry, or with its
    /// whole temporary written, the sidecars copied but not synced), resumed,
    /// writes every copy again and delivers every sidecar once, attached as in
    /// a run that never died; a run that dies after the manifest is named
    /// leaves copies that were synced, which the resumed run keeps.
    @Test(arguments: ["before-manifest", "manifest-temporary-written", "after-manifest"])
    func aFanInThatDiesAttachesEachSidecarOnceOnResume(crashPoint: String) throws {
        let work = TemporaryDirectory("sidecars-crash")
        let root = (work.path as NSString).standardizingPath
        let drop = TemporaryDirectory("sidecar-crash-drop")
        let sidecars = try Self.makeDrop(drop)
        let dropPath = (drop.path as NSString).standardizingPath
        let container = root + "/c"
        let crashed = try ShareProcess.run(
            ["ingest", "--quiet", "--container", container, "--key", "Crash", dropPath],
            environment: ["SHARE_CRASH_POINT": crashPoint])
        #expect(crashed.status != 0, "the crash point was not reached")
        #expect(
            FileManager.default.fileExists(atPath: container + "/manifests/Crash.json")
                == (crashPoint == "after-manifest"))
        let resumed = try ShareProcess.run(["ingest", "--quiet", "--container", container, "--resume", "Crash"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let found = try Self.outcomes(report: container + "/.share-ingest/reports/Crash.json", drop: dropPath)
        #expect(found == Self.expectedOutcomes, "\(found.filter { Self.expectedOutcomes[$0.key] != $0.value })")
        #expect(try Self.checkManifest(container, sidecars: sidecars, mode: "resumed") == Self.expectedKinds)
        try Self.checkTakeoutFacts(container, mode: "resumed")
    }

    @Test func aWatchedExportDropAttachesItsSidecars() throws {
        let work = TemporaryDirectory("sidecar-watch")
        let inbox = work.path + "/inbox"
        let drop = TemporaryDirectory("sidecar-watch-drop")
        let sidecars = try Self.makeDrop(drop)
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: drop.path, toPath: inbox + "/export")
        FileManager.default.createFile(atPath: inbox + "/export/.ready", contents: nil)
        let container = work.path + "/container"
        let run = try ShareProcess.run([
            "watch", inbox, "--container", container, "--once", "--on-success", "keep", "--report-dir",
            work.path + "/pages",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("ingested=12 failed=0 skipped=0 attached=8"), "\(run.stdout)")
        // The report page counts the sidecars attached, and lists none of them as a problem.
        let page = try #require(
            try FileManager.default.contentsOfDirectory(atPath: work.path + "/pages").first { $0.hasSuffix(".html") })
        let html = try String(contentsOfFile: work.path + "/pages/" + page, encoding: .utf8)
        #expect(html.contains("Sidecars attached"), "no attached count in the page")
        #expect(!html.contains("<li class=\"attached\">"), "an attached sidecar is listed as a problem")
        #expect(html.contains("<li class=\"item attached\""), "the sidecars are shown among the items")
        // The report stored beside the manifest.
        let reports = try FileManager.default.contentsOfDirectory(atPath: container + "/.share-ingest/reports").filter {
            $0.hasSuffix(".json")
        }
        try #require(reports.count == 1, "\(reports)")
        let found = try Self.outcomes(
            report: container + "/.share-ingest/reports/" + reports[0],
            drop: ((inbox + "/export") as NSString).standardizingPath)
        #expect(found == Self.expectedOutcomes, "\(found.filter { Self.expectedOutcomes[$0.key] != $0.value })")
        #expect(try Self.checkManifest(container, sidecars: sidecars, mode: "watch") == Self.expectedKinds)
        try Self.checkTakeoutFacts(container, mode: "watch")
    }

    /// A hostile Takeout-looking JSON (nested thousands deep, larger than the
    /// limit, or not JSON at all after a Takeout head) is parsed only in a
    /// decoder helper, which refuses it: each is delivered as a file with a
    /// warning saying why, and the rest of the batch is as without them.
    @Test func aHostileTakeoutJSONIsRefusedByTheHelperAndTheBatchGoesOn() throws {
        let work = TemporaryDirectory("sidecar-hostile")
        let drop = TemporaryDirectory("sidecar-hostile-drop")
        let head = #"{"title": "IMG_0001.jpg", "photoTakenTime": {"timestamp": "1562000000"}, "imageViews": "1", "x": "#
        _ = try drop.add("IMG_0001.jpg", copying: Fixtures.media("photo.jpg"))
        _ = try drop.add(
            "IMG_0001.jpg.json",
            bytes: Array(
                (head + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}").utf8))
        _ = try drop.add("IMG_0002.jpg", copying: Fixtures.media("photo.jpg"))
        _ = try drop.add(
            "IMG_0002.jpg.json", bytes: Array((head + "\"" + String(repeating: "a", count: 2 << 20) + "\"}").utf8))
        _ = try drop.add("IMG_0003.jpg", copying: Fixtures.media("exif3.jpg"))
        _ = try drop.add("IMG_0003.jpg.json", bytes: Array((head + "[1, 2,, 3]}").utf8))
        _ = try drop.add("IMG_0004.jpg", copying: Fixtures.media("photo.jpg"))
        _ = try drop.add("IMG_0004.jpg.json", bytes: Self.takeoutJSON(title: "IMG_0004.jpg", taken: 1_562_000_300))
        let container = work.file("c")
        let report = work.file("report.json")
        let run = try ShareProcess.run(["ingest", "--container", container, "--report", report, drop.path])
        #expect(run.status == 0, "\(run.stderr)")
        let parsed = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        var warnings: [String: [String]] = [:]
        var statuses: [String: String] = [:]
        for item in try #require(parsed["items"] as? [[String: Any]]) {
            let name = try #require((item["source"] as? String)?.split(separator: "/").last.map(String.init))
            statuses[name] = item["status"] as? String
            warnings[name] = item["warnings"] as? [String] ?? []
        }
        let refused = "looks like a Google Takeout JSON sidecar but was not read as one ("
        #expect(
            warnings["IMG_0001.jpg.json"]?.contains {
                $0.hasPrefix(refused) && $0.contains("nested deeper than 16 levels")
            } == true, "\(warnings)")
        #expect(
            warnings["IMG_0002.jpg.json"]?.contains { $0.hasPrefix(refused) && $0.contains("larger than 1 MiB") }
                == true, "\(warnings)")
        #expect(
            warnings["IMG_0003.jpg.json"]?.contains { $0.hasPrefix(refused) && $0.contains("not valid JSON") } == true,
            "\(warnings)")
        for name in ["IMG_0001.jpg.json", "IMG_0002.jpg.json", "IMG_0003.jpg.json"] {
            #expect(statuses[name] == "ingested", "\(name): \(statuses)")
        }
        #expect(statuses["IMG_0004.jpg.json"] == "attached", "\(statuses)")
        let byName = try Self.entries(container)
        for name in ["IMG_0001.jpg", "IMG_0002.jpg", "IMG_0003.jpg"] {
            #expect(byName[name]?["capturedAtSource"] as? String != "takeout", "\(name)")
            #expect(byName[name]?["sidecars"] == nil, "\(name)")
            #expect(byName[name + ".json"]?["type"] as? String == "file", "\(name).json")
        }
        #expect(byName["IMG_0004.jpg"]?["capturedAtSource"] as? String == "takeout")
        #expect(byName["IMG_0004.jpg"]?["capturedAt"] as? String == "2019-07-01T18:58:20+02:00")
    }

    /// With location privacy on, a Takeout JSON's `geoData` is removed from its
    /// attached copy too, and never reported: the photo's `locationRemoved` says so.
    @Test func locationPrivacyRemovesGeoDataFromTheAttachedJSON() throws {
        let work = TemporaryDirectory("sidecar-location")
        let drop = TemporaryDirectory("sidecar-location-drop")
        _ = try drop.add("Photos from 2019/IMG_0001.jpg", copying: Fixtures.media("photo.jpg"))
        _ = try drop.add("Photos from 2019/IMG_0001.jpg.json", bytes: Self.takeoutJSON(title: "IMG_0001.jpg"))
        let container = work.file("c")
        let run = try ShareProcess.run([
            "ingest", "--container", container, "--pipeline", try LocationPrivacyTests.pipeline(in: work), drop.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let entry = try #require(try Self.entries(container)["IMG_0001.jpg"])
        #expect(entry["exportLocation"] == nil, "\(entry)")
        #expect(
            entry["capturedAt"] as? String == "2019-07-01T18:53:20+02:00"
                && entry["capturedAtOffsetSource"] as? String == "exif", "\(entry)")
        #expect(
            (entry["locationRemoved"] as? [String] ?? []).contains("Takeout JSON geoData, geoDataExif"),
            "\(entry["locationRemoved"] ?? "none")")
        let sidecar = try #require((entry["sidecars"] as? [[String: Any]])?.first)
        let link = try #require(sidecar["path"] as? String)
        let url = try #require(URL(string: link))
        let copy = try Data(contentsOf: url)
        let object = try #require(try JSONSerialization.jsonObject(with: copy) as? [String: Any])
        #expect(object["geoData"] == nil && object["title"] as? String == "IMG_0001.jpg", "\(object)")
        #expect(!String(decoding: copy, as: UTF8.self).contains("48.8584"))
        #expect(sidecar["size"] as? Int == copy.count)
    }

    /// A camera card: a RAW and its JPEG of each shot are one `rawJpeg` group
    /// (the RAW's UUID its id), in both modes, with the same report; an XMP
    /// without the media's extension goes to the RAW; a PNG of the same stem,
    /// and an edited copy, are no one's group.
    @Test func aRAWAndItsJPEGAreOneGroupInBothModes() throws {
        let work = TemporaryDirectory("raw-jpeg")
        let root = (work.path as NSString).standardizingPath
        let drop = TemporaryDirectory("raw-jpeg-drop")
        _ = try drop.add("DCIM/100CANON/IMG_0100.CR2", copying: Fixtures.testdata("modern/raw/canon-350d-exif3.cr2"))
        _ = try drop.add("DCIM/100CANON/IMG_0100.JPG", copying: Fixtures.media("exif3.jpg"))
        _ = try drop.add("DCIM/100CANON/IMG_0100.xmp", bytes: Self.xmp)
        _ = try drop.add("DCIM/100CANON/IMG_0101.JPG", copying: Fixtures.media("photo.jpg"))
        _ = try drop.add("DCIM/100CANON/IMG_0101.png", copying: Fixtures.media("screenshot.png"))
        _ = try drop.add("DCIM/100CANON/IMG_0101-edited.jpg", copying: Fixtures.media("gray.jpg"))
        // An Apple export: the original, its edited render, its adjustments.
        _ = try drop.add("Apple/IMG_1234.HEIC", copying: Fixtures.media("image.heic"))
        _ = try drop.add("Apple/IMG_E1234.JPG", copying: Fixtures.media("photo.jpg"))
        _ = try drop.add("Apple/IMG_1234.AAE", bytes: Self.aae)
        // A Samsung burst and a Google RAW capture (burst naming).
        for (n, suffix) in ["001_COVER", "002", "003"].enumerated() {
            _ = try drop.add(
                "DCIM/Camera/20190701_165320_BURST\(suffix).jpg",
                copying: Fixtures.media(n == 1 ? "gray.jpg" : "photo.jpg"))
        }
        _ = try drop.add("DCIM/Camera/PXL_20190701_165320123.RAW-01.COVER.jpg", copying: Fixtures.media("photo.jpg"))
        _ = try drop.add(
            "DCIM/Camera/PXL_20190701_165320123.RAW-02.ORIGINAL.dng",
            copying: Fixtures.testdata("modern/raw/canon-350d-preview1024.dng"))

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("groups")
        defer { workers.stopAll() }
        var seen: [String: [String: String]] = [:]
        for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
            let container = root + "/c-" + mode
            let report = root + "/\(mode).json"
            let run = try ShareProcess.run(
                ["ingest"] + database + ["--container", container, "--report", report, drop.path])
            #expect(run.status == 0, "\(mode): \(run.stderr) \(workers.log("groups"))")
            let byName = try Self.entries(container)
            let raw = try #require(byName["IMG_0100.CR2"])
            let jpeg = try #require(byName["IMG_0100.JPG"])
            let rawPath = try #require(raw["path"] as? String)
            let rawURL = try #require(URL(string: rawPath))
            let rawGroup = raw["group"] as? [String: String]
            let jpegGroup = jpeg["group"] as? [String: String]
            #expect(
                rawGroup == ["id": rawURL.deletingPathExtension().lastPathComponent, "kind": "rawJpeg", "role": "raw"],
                "\(mode): \(raw)")
            #expect(jpegGroup == ["id": rawGroup?["id"] ?? "?", "kind": "rawJpeg", "role": "jpeg"], "\(mode): \(jpeg)")
            #expect(
                (raw["sidecars"] as? [[String: Any]])?.first?["kind"] as? String == "xmp",
                "\(mode): the XMP goes to the RAW")
            #expect(jpeg["sidecars"] == nil)
            #expect(byName["IMG_0101.png"]?["group"] == nil, "\(mode): a PNG of the stem is no one's group")
            // `edit` groups: the original's UUID their id; the .AAE goes to the original.
            for (original, edited) in [("IMG_0101.JPG", "IMG_0101-edited.jpg"), ("IMG_1234.HEIC", "IMG_E1234.JPG")] {
                let first = try #require(byName[original])
                let second = try #require(byName[edited])
                let path = try #require(first["path"] as? String)
                let id = try #require(URL(string: path)).deletingPathExtension().lastPathComponent
                #expect(
                    first["group"] as? [String: String] == ["id": id, "kind": "edit", "role": "original"],
                    "\(mode): \(first)")
                #expect(
                    second["group"] as? [String: String] == ["id": id, "kind": "edit", "role": "edited"],
                    "\(mode): \(second)")
            }
            #expect(
                (byName["IMG_1234.HEIC"]?["sidecars"] as? [[String: Any]])?.first?["kind"] as? String == "aae",
                "\(mode): the .AAE goes to the original")
            #expect(byName["IMG_E1234.JPG"]?["sidecars"] == nil)
            // `burst` groups: the cover's UUID their id.
            for (cover, frames) in [
                (
                    "20190701_165320_BURST001_COVER.jpg",
                    ["20190701_165320_BURST002.jpg", "20190701_165320_BURST003.jpg"]
                ),
                ("PXL_20190701_165320123.RAW-01.COVER.jpg", ["PXL_20190701_165320123.RAW-02.ORIGINAL.dng"]),
            ] {
                let first = try #require(byName[cover])
                let path = try #require(first["path"] as? String)
                let id = try #require(URL(string: path)).deletingPathExtension().lastPathComponent
                #expect(
                    first["group"] as? [String: String] == ["id": id, "kind": "burst", "role": "cover"],
                    "\(mode): \(first)")
                for frame in frames {
                    #expect(
                        byName[frame]?["group"] as? [String: String] == ["id": id, "kind": "burst", "role": "frame"],
                        "\(mode): \(frame)")
                }
            }
            // The report says the same.
            let document = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
            )
            var roles: [String: String] = [:]
            for item in document["items"] as? [[String: Any]] ?? [] {
                let name = ((item["source"] as? String ?? "") as NSString).lastPathComponent
                roles[name] = ((item["group"] as? [String: String])?["role"]) ?? (item["status"] as? String ?? "?")
            }
            #expect(
                roles == [
                    "IMG_0100.CR2": "raw", "IMG_0100.JPG": "jpeg", "IMG_0100.xmp": "attached",
                    "IMG_0101.JPG": "original",
                    "IMG_0101.png": "ingested", "IMG_0101-edited.jpg": "edited", "IMG_1234.HEIC": "original",
                    "IMG_E1234.JPG": "edited",
                    "IMG_1234.AAE": "attached", "20190701_165320_BURST001_COVER.jpg": "cover",
                    "20190701_165320_BURST002.jpg": "frame",
                    "20190701_165320_BURST003.jpg": "frame", "PXL_20190701_165320123.RAW-01.COVER.jpg": "cover",
                    "PXL_20190701_165320123.RAW-02.ORIGINAL.dng": "frame",
                ], "\(mode): \(roles)")
            seen[mode] = roles
        }
        #expect(seen["local"] == seen["remote"])
    }

    /// The committed Takeout drop (testdata/exports/takeout, made by
    /// testdata/make-exports.py): every naming case, an album with its
    /// `metadata.json` and a copy of a photo, a photo without a JSON and a JSON
    /// without its photo, in both modes, with the same report.
    @Test func theTakeoutTestDropComesOutAsItsPhotos() throws {
        let work = TemporaryDirectory("takeout-drop")
        let root = (work.path as NSString).standardizingPath
        let drop = Fixtures.testdata("exports/takeout")
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("takeout")
        defer { workers.stopAll() }
        let year = "Takeout/Google Photos/Photos from 2019/"
        let album = "Takeout/Google Photos/Holiday in Paris/"
        var expected: [String: String] = [:]
        for photo in [
            "IMG_20190701_165320.jpg", "IMG_20190702_101500.jpg", "IMG_20190703_120000(1).jpg",
            "IMG_20190704_090000.jpg",
            "IMG_20190705_183000.jpg", "IMG_20190705_183000-edited.jpg", "IMG_20190706_070000.jpg",
            "Screenshot_20190701-165320_Photos_and_more_long.jpg",
        ] {
            expected[year + photo] = "ingested"
        }
        for (json, photo) in [
            ("IMG_20190701_165320.jpg.json", "IMG_20190701_165320.jpg"),
            ("IMG_20190702_101500.jpg.supplemental-metadata.json", "IMG_20190702_101500.jpg"),
            ("IMG_20190703_120000.jpg(1).json", "IMG_20190703_120000(1).jpg"),
            ("IMG_20190704_090000.jpg.suppl.json", "IMG_20190704_090000.jpg"),
            ("IMG_20190705_183000.jpg.json", "IMG_20190705_183000.jpg"),
            (
                "Screenshot_20190701-165320_Photos_and_more_long.jpg.supplemental-metad.json",
                "Screenshot_20190701-165320_Photos_and_more_long.jpg"
            ),
        ] {
            expected[year + json] = "attached to \(year)\(photo)"
        }
        expected[year + "IMG_20190707_080000.jpg.json"] =
            "ingested (a Google Takeout JSON sidecar whose photo or video (IMG_20190707_080000.jpg) is not in this drop: delivered as a file)"
        expected[album + "IMG_20190701_165320.jpg"] = "ingested"
        expected[album + "IMG_20190701_165320.jpg.json"] = "attached to \(album)IMG_20190701_165320.jpg"
        expected[album + "metadata.json"] = "ingested"
        expected["Takeout/archive_browser.html"] = "ingested"

        var seen: [String: [String: String]] = [:]
        for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
            let container = root + "/c-" + mode
            let report = root + "/\(mode).json"
            let run = try ShareProcess.run(
                ["ingest"] + database + ["--container", container, "--report", report, drop])
            #expect(run.status == 0, "\(mode): \(run.stderr) \(workers.log("takeout"))")
            let found = try Self.outcomes(report: report, drop: drop)
            #expect(found == expected, "\(mode): \(found.filter { expected[$0.key] != $0.value })")
            seen[mode] = found
            let manifest = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter {
                $0.hasSuffix(".json")
            }
            let data = try Data(contentsOf: URL(fileURLWithPath: container + "/manifests/" + (manifest.first ?? "")))
            let entries = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
            var byPath: [String: [String: Any]] = [:]
            let sources = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
            )
            for item in sources["items"] as? [[String: Any]] ?? [] {
                guard let path = item["path"] as? String, let source = item["source"] as? String,
                    let entry = entries.first(where: {
                        $0["path"] as? String == path
                            && $0["fileName"] as? String == (source as NSString).lastPathComponent
                    })
                else { continue }
                byPath[String(source.dropFirst(drop.count + 1))] = entry
            }
            func entry(_ name: String) -> [String: Any] { byPath[name] ?? [:] }
            #expect(
                entry(year + "IMG_20190701_165320.jpg")["capturedAt"] as? String == "2019-07-01T18:53:20+02:00",
                "\(mode)")  // geoData: Paris
            #expect(
                entry(year + "IMG_20190703_120000(1).jpg")["capturedAt"] as? String == "2019-07-03T12:00:00Z", "\(mode)"
            )
            #expect(
                entry(year + "IMG_20190705_183000-edited.jpg")["capturedAt"] as? String == "2019-07-05T18:30:00Z",
                "\(mode)")
            #expect(
                entry(year + "IMG_20190702_101500.jpg")["message"] as? String == "Breakfast on the terrace", "\(mode)")
            let lyon = entry(year + "IMG_20190704_090000.jpg")["exportLocation"] as? [String: Any]
            #expect(
                lyon?["latitude"] as? Double == 45.764 && lyon?["longitude"] as? Double == 4.8357,
                "\(mode): \(lyon ?? [:])")
            #expect(
                entry(year + "IMG_20190702_101500.jpg")["exportLocation"] == nil,
                "\(mode): Takeout's zeros are no place")
            // Without its JSON, its capture time is its own (its EXIF, else its name), not Takeout's.
            #expect(
                entry(year + "IMG_20190706_070000.jpg")["sidecars"] == nil
                    && entry(year + "IMG_20190706_070000.jpg")["capturedAtSource"] as? String != "takeout")
            // The album's copy of a photo is a duplicate of the year's, and has its own JSON.
            let inAlbum = entry(album + "IMG_20190701_165320.jpg")
            let inYear = entry(year + "IMG_20190701_165320.jpg")
            #expect(
                inAlbum["duplicateOf"] as? String == inYear["path"] as? String
                    || inYear["duplicateOf"] as? String == inAlbum["path"] as? String,
                "\(mode): the album's copy and the year's are the same photo")
            #expect(entries.filter { $0["duplicateOf"] != nil }.count == 1, "\(mode): every other photo is its own")
            #expect((entry(album + "IMG_20190701_165320.jpg")["sidecars"] as? [[String: Any]])?.count == 1, "\(mode)")
            #expect(
                entry(album + "metadata.json")["type"] as? String == "file"
                    && entry(album + "metadata.json")["sidecars"] == nil)
        }
        // watch: the drop copied into an inbox, marked ready; its stored report says the same.
        let inbox = root + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: drop, toPath: inbox + "/takeout")
        FileManager.default.createFile(atPath: inbox + "/takeout/.ready", contents: nil)
        let watched = try ShareProcess.run([
            "watch", inbox, "--container", root + "/c-watch", "--once", "--on-success", "keep",
        ])
        #expect(watched.status == 0, "watch: \(watched.stderr)")
        let reports = try FileManager.default.contentsOfDirectory(atPath: root + "/c-watch/.share-ingest/reports")
            .filter { $0.hasSuffix(".json") }
        try #require(reports.count == 1, "\(reports)")
        seen["watch"] = try Self.outcomes(
            report: root + "/c-watch/.share-ingest/reports/" + reports[0],
            drop: ((inbox + "/takeout") as NSString).standardizingPath)
        #expect(seen["watch"] == expected, "watch: \(seen["watch"]?.filter { expected[$0.key] != $0.value } ?? [:])")
        #expect(seen["local"] == seen["remote"] && seen["local"] == seen["watch"])
    }

    /// Each item of a report, by its path relative to `drop`: its group's kind
    /// and role, else its status (and, attached, the media it went to).
    static func groupOutcomes(report path: String, drop: String) throws -> [String: String] {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        var found: [String: String] = [:]
        func relative(_ source: String) -> String {
            source.hasPrefix(drop + "/") ? String(source.dropFirst(drop.count + 1)) : source
        }
        for item in document["items"] as? [[String: Any]] ?? [] {
            let source = relative(item["source"] as? String ?? "?")
            if let group = item["group"] as? [String: String] {
                found[source] = (group["kind"] ?? "?") + " " + (group["role"] ?? "?")
            } else {
                found[source] =
                    (item["status"] as? String ?? "?")
                    + ((item["attachedTo"] as? String).map { " to " + relative($0) } ?? "")
            }
        }
        return found
    }

    /// The committed Apple export and camera card (testdata/exports/apple and
    /// camera-card, made by testdata/make-exports.py) come out as the same
    /// items, groups and sidecars in `share ingest`, `ingest --db` with a
    /// worker, and `watch`: the three reports agree.
    @Test func theAppleExportAndCameraCardAgreeInEveryMode() throws {
        let work = TemporaryDirectory("export-drops")
        let root = (work.path as NSString).standardizingPath
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("drops")
        defer { workers.stopAll() }
        let expected: [String: [String: String]] = [
            "apple": [
                "IMG_0001.JPG": "edit original", "IMG_E0001.JPG": "edit edited",
                "IMG_0001.AAE": "attached to IMG_0001.JPG",
                "IMG_0002.JPG": "edit original", "IMG_E0002.JPG": "edit edited",
                "IMG_0002.AAE": "attached to IMG_0002.JPG",
                "IMG_0003.JPG": "ingested",
            ],
            "camera-card": [
                "DCIM/100CANON/IMG_0001.CR2": "rawJpeg raw", "DCIM/100CANON/IMG_0001.JPG": "rawJpeg jpeg",
                "DCIM/100CANON/IMG_0002.CR2": "rawJpeg raw", "DCIM/100CANON/IMG_0002.JPG": "rawJpeg jpeg",
                "DCIM/100CANON/IMG_0003.JPG": "ingested",
                "DCIM/Camera/20190701_165320_BURST001_COVER.jpg": "burst cover",
                "DCIM/Camera/20190701_165320_BURST002.jpg": "burst frame",
                "DCIM/Camera/20190701_165320_BURST003.jpg": "burst frame",
                "DCIM/Camera/20190701_165320_BURST004.jpg": "burst frame",
            ],
        ]
        for (name, want) in expected {
            let drop = (Fixtures.testdata("exports/" + name) as NSString).standardizingPath
            var seen: [String: [String: String]] = [:]
            for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
                let container = root + "/c-\(name)-" + mode
                let report = root + "/\(name)-\(mode).json"
                let run = try ShareProcess.run(
                    ["ingest"] + database + ["--container", container, "--report", report, drop])
                #expect(run.status == 0, "\(name) \(mode): \(run.stderr) \(workers.log("drops"))")
                seen[mode] = try Self.groupOutcomes(report: report, drop: drop)
            }
            // watch: the drop copied into an inbox, marked ready.
            let inbox = root + "/inbox-" + name
            try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: drop, toPath: inbox + "/" + name)
            FileManager.default.createFile(atPath: inbox + "/" + name + "/.ready", contents: nil)
            let container = root + "/c-\(name)-watch"
            let run = try ShareProcess.run(["watch", inbox, "--container", container, "--once", "--on-success", "keep"])
            #expect(run.status == 0, "\(name) watch: \(run.stderr)")
            let reports = try FileManager.default.contentsOfDirectory(atPath: container + "/.share-ingest/reports")
                .filter { $0.hasSuffix(".json") }
            try #require(reports.count == 1, "\(reports)")
            seen["watch"] = try Self.groupOutcomes(
                report: container + "/.share-ingest/reports/" + reports[0],
                drop: (inbox + "/" + name as NSString).standardizingPath)
            for (mode, found) in seen {
                #expect(found == want, "\(name) \(mode): \(found.filter { want[$0.key] != $0.value })")
            }
            #expect(
                seen["local"] == seen["remote"] && seen["local"] == seen["watch"], "\(name): the three reports differ")
        }
    }

    /// An Apple burst (testdata/exports/apple-burst, made by
    /// testdata/make-apple-burst.py: Apple's `BurstUUID` in each frame's maker
    /// note) is one `burst` group, its cover the earliest frame, in `share
    /// ingest`, `ingest --db` with a worker, and `watch`; two files named like a
    /// Samsung burst whose maker notes name different bursts are in none. The
    /// same drop, with the Apple export and the camera card beside it, read by
    /// the fan-in in pages of 2 export candidates (`SHARE_TEST_EXPORT_PAGE_SIZE`,
    /// many pages of stems and bursts) in PostgreSQL, gives the groups of
    /// local mode's single page.
    @Test func anAppleBurstIsOneGroupByItsBurstUUIDInEveryModeAndAcrossPages() throws {
        let work = TemporaryDirectory("apple-burst")
        let root = (work.path as NSString).standardizingPath
        let drop = root + "/drop"
        for name in ["apple-burst", "apple", "camera-card"] {
            try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.testdata("exports/" + name), toPath: drop + "/" + name)
        }
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let paged = ["SHARE_TEST_EXPORT_PAGE_SIZE": "2"]
        let workers = DistributedTests.Workers(url: server.url, environment: paged)
        try workers.start("bursts")
        defer { workers.stopAll() }
        var seen: [String: [String: String]] = [:]
        var manifests: [String: [String: [String: Any]]] = [:]
        for (mode, database, environment) in [
            ("local", [String](), [String: String]()), ("local-paged", [], paged),
            ("remote-paged", ["--db", server.url], paged),
        ] {
            let container = root + "/c-" + mode
            let report = root + "/\(mode).json"
            let run = try ShareProcess.run(
                ["ingest"] + database + ["--container", container, "--report", report, drop], environment: environment)
            #expect(run.status == 0, "\(mode): \(run.stderr) \(workers.log("bursts"))")
            seen[mode] = try Self.groupOutcomes(report: report, drop: drop)
            manifests[mode] = try Self.entries(container)
        }
        let inbox = root + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: drop, toPath: inbox + "/drop")
        FileManager.default.createFile(atPath: inbox + "/drop/.ready", contents: nil)
        let run = try ShareProcess.run([
            "watch", inbox, "--container", root + "/c-watch", "--once", "--on-success", "keep",
        ])
        #expect(run.status == 0, "watch: \(run.stderr)")
        let reports = try FileManager.default.contentsOfDirectory(atPath: root + "/c-watch/.share-ingest/reports")
            .filter { $0.hasSuffix(".json") }
        try #require(reports.count == 1, "\(reports)")
        seen["watch"] = try Self.groupOutcomes(
            report: root + "/c-watch/.share-ingest/reports/" + reports[0],
            drop: (inbox + "/drop" as NSString).standardizingPath)

        let burst: [String: String] = [
            "apple-burst/IMG_0101.JPG": "burst cover", "apple-burst/IMG_0102.JPG": "burst frame",
            "apple-burst/IMG_0103.JPG": "burst frame",
            "apple-burst/IMG_0104.JPG": "burst frame", "apple-burst/IMG_0105.JPG": "ingested",
            "apple-burst/20240602_091542_BURST001_COVER.jpg": "ingested",
            "apple-burst/20240602_091542_BURST002.jpg": "ingested",
        ]
        for (mode, found) in seen {
            #expect(
                found.filter { $0.key.hasPrefix("apple-burst/") } == burst,
                "\(mode): \(found.filter { $0.key.hasPrefix("apple-burst/") })")
            // The other exports keep their groups beside it.
            #expect(
                found["camera-card/DCIM/100CANON/IMG_0002.JPG"] == "rawJpeg jpeg"
                    && found["apple/IMG_E0002.JPG"] == "edit edited", "\(mode)")
            #expect(found["camera-card/DCIM/Camera/20190701_165320_BURST004.jpg"] == "burst frame", "\(mode)")
            #expect(
                found == seen["local"],
                "\(mode) differs from local: \(found.filter { seen["local"]?[$0.key] != $0.value })")
        }
        // The group's id is the cover's UUID, in the manifest.
        for (mode, byName) in manifests {
            let cover = try #require(byName["IMG_0101.JPG"])
            let coverPath = try #require(cover["path"] as? String)
            let id = try #require(URL(string: coverPath)).deletingPathExtension().lastPathComponent
            for frame in ["IMG_0102.JPG", "IMG_0103.JPG", "IMG_0104.JPG"] {
                #expect(
                    byName[frame]?["group"] as? [String: String] == ["id": id, "kind": "burst", "role": "frame"],
                    "\(mode): \(frame)")
            }
            #expect(cover["group"] as? [String: String] == ["id": id, "kind": "burst", "role": "cover"], "\(mode)")
        }
    }

    /// Takeout's edited copies in other languages (`-bearbeitet`, `-editado`)
    /// share their original's JSON like `-edited`: each gets a copy of it under
    /// its own UUID and the JSON's capture time, and forms an `edit` group with
    /// the original; in both modes, with the same report.
    @Test func translatedEditedCopiesShareTheOriginalsTakeoutJSON() throws {
        let work = TemporaryDirectory("takeout-translated")
        let root = (work.path as NSString).standardizingPath
        let drop = TemporaryDirectory("takeout-translated-drop")
        let year = "Takeout/Google Fotos/Fotos von 2019/"
        try drop.add(year + "IMG_0010.jpg", copying: Fixtures.media("photo.jpg"))
        try drop.add(year + "IMG_0010-bearbeitet.jpg", copying: Fixtures.media("exif3.jpg"))
        _ = try drop.add(
            year + "IMG_0010.jpg.supplemental-metadata.json",
            bytes: Self.takeoutJSON(title: "IMG_0010.jpg", taken: 1_562_000_300))
        try drop.add(year + "IMG_0011.jpg", copying: Fixtures.media("gray.jpg"))
        try drop.add(year + "IMG_0011-editado.jpg", copying: Fixtures.media("progressive.jpg"))
        _ = try drop.add(
            year + "IMG_0011.jpg.json", bytes: Self.takeoutJSON(title: "IMG_0011.jpg", taken: 1_562_000_400))
        let dropPath = (drop.path as NSString).standardizingPath
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("translated")
        defer { workers.stopAll() }
        let want: [String: String] = [
            year + "IMG_0010.jpg": "edit original", year + "IMG_0010-bearbeitet.jpg": "edit edited",
            year + "IMG_0010.jpg.supplemental-metadata.json": "attached to \(year)IMG_0010.jpg",
            year + "IMG_0011.jpg": "edit original", year + "IMG_0011-editado.jpg": "edit edited",
            year + "IMG_0011.jpg.json": "attached to \(year)IMG_0011.jpg",
        ]
        var seen: [String: [String: String]] = [:]
        for (mode, database) in [("local", [String]()), ("remote", ["--db", server.url])] {
            let container = root + "/c-" + mode
            let report = root + "/\(mode).json"
            let run = try ShareProcess.run(
                ["ingest"] + database + ["--container", container, "--report", report, dropPath])
            #expect(run.status == 0, "\(mode): \(run.stderr) \(workers.log("translated"))")
            seen[mode] = try Self.groupOutcomes(report: report, drop: dropPath)
            #expect(seen[mode] == want, "\(mode): \(seen[mode]?.filter { want[$0.key] != $0.value } ?? [:])")
            let byName = try Self.entries(container)
            for (name, time) in [
                ("IMG_0010.jpg", "2019-07-01T18:58:20+02:00"), ("IMG_0010-bearbeitet.jpg", "2019-07-01T18:58:20+02:00"),
                ("IMG_0011.jpg", "2019-07-01T19:00:00+02:00"), ("IMG_0011-editado.jpg", "2019-07-01T19:00:00+02:00"),
            ] {
                #expect(
                    byName[name]?["capturedAt"] as? String == time
                        && byName[name]?["capturedAtSource"] as? String == "takeout", "\(mode): \(name)")
                let sidecars = byName[name]?["sidecars"] as? [[String: Any]]
                #expect(sidecars?.count == 1 && sidecars?.first?["kind"] as? String == "takeout", "\(mode): \(name)")
                let path = try #require(byName[name]?["path"] as? String)
                let uuid = try #require(URL(string: path)).deletingPathExtension().lastPathComponent
                let copy = try #require(sidecars?.first?["path"] as? String)
                #expect(
                    URL(string: copy)?.lastPathComponent == uuid + ".1.json",
                    "\(mode): \(name)'s copy is under its own UUID")
            }
        }
        #expect(seen["local"] == seen["remote"])
    }

    /// A sidecar is carried by its photo through the pipeline, and attached to
    /// it only when the photo is delivered as a photo or video. When the photo
    /// fails (at its sniff, before its copy, or at its probe) or turns out to
    /// be no photo, its sidecar is delivered as a file of its own, with a
    /// warning naming the photo; a file under a sidecar's name that is no
    /// sidecar is a plain file. In `share ingest` and `ingest --db` with a
    /// worker alike, every input is reported once (and heard once as a `--json`
    /// item), and each delivered sidecar holds its source's bytes; and the same
    /// with the fan-in reading pages of 2 items (`SHARE_TEST_EXPORT_PAGE_SIZE`),
    /// two photos and their sidecars to a page.
    @Test func aSidecarWhosePhotoIsNotDeliveredIsAFileOfItsOwnInBothModes() throws {
        let work = TemporaryDirectory("sidecar-released")
        let root = (work.path as NSString).standardizingPath
        let drop = TemporaryDirectory("sidecar-released-drop")
        let dropPath = (drop.path as NSString).standardizingPath
        var sources: [String: [UInt8]] = [:]
        func add(_ name: String, _ bytes: [UInt8]) throws {
            _ = try drop.add(name, bytes: bytes)
            sources[name] = bytes
        }
        func media(_ name: String) throws -> [UInt8] {
            try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.media(name))))
        }
        try add("IMG_0001.jpg", try media("random.jpg"))  // not a JPEG: fails at its sniff
        try add("IMG_0001.jpg.json", Self.takeoutJSON(title: "IMG_0001.jpg"))
        // a JPEG's head, nothing to decode: fails at its probe
        try add("IMG_0002.jpg", [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0, count: 2000))
        try add("IMG_0002.jpg.xmp", Self.xmp)
        // a failed download: a file
        try add("IMG_0003.jpg", Array("<!DOCTYPE html><html><body>not found</body></html>\n".utf8))
        try add("IMG_0003.AAE", Self.aae)
        try add("IMG_0004.jpg", try media("photo.jpg"))
        try add("IMG_0004.jpg.json", Array("[1, 2, 3]\n".utf8))  // no Takeout JSON: a plain file
        try add("IMG_0005.jpg", try media("exif3.jpg"))
        // an edited copy that fails: its share of the JSON goes
        try add("IMG_0005-edited.jpg", try media("random.jpg"))
        try add("IMG_0005.jpg.json", Self.takeoutJSON(title: "IMG_0005.jpg", taken: 1_562_000_500))
        try add("IMG_0005.jpg.xmp", Self.xmp)
        let expected: [String: String] = [
            "IMG_0001.jpg": "failed", "IMG_0002.jpg": "failed", "IMG_0003.jpg": "ingested", "IMG_0004.jpg": "ingested",
            "IMG_0005.jpg": "ingested",
            "IMG_0005-edited.jpg": "failed",
            "IMG_0001.jpg.json":
                "ingested (a Google Takeout JSON sidecar whose photo or video (IMG_0001.jpg) was not delivered: delivered as a file)",
            "IMG_0002.jpg.xmp":
                "ingested (an XMP sidecar whose photo or video (IMG_0002.jpg) was not delivered: delivered as a file)",
            "IMG_0003.AAE":
                "ingested (an Apple .AAE adjustment file whose photo or video (IMG_0003.jpg) is not a photo or video: delivered as a file)",
            "IMG_0004.jpg.json": "ingested", "IMG_0005.jpg.json": "attached to IMG_0005.jpg",
            "IMG_0005.jpg.xmp": "attached to IMG_0005.jpg",
        ]
        func outcomes(_ report: String) throws -> [String: String] {
            let document = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
            )
            var found: [String: String] = [:]
            for item in document["items"] as? [[String: Any]] ?? [] {
                let name = ((item["source"] as? String ?? "") as NSString).lastPathComponent
                #expect(found[name] == nil, "\(name) is reported twice")
                var outcome = item["status"] as? String ?? "?"
                if let media = item["attachedTo"] as? String {
                    outcome += " to " + (media as NSString).lastPathComponent
                }
                let warnings = (item["warnings"] as? [String] ?? []).filter { $0.contains("delivered as a file") }
                if !warnings.isEmpty { outcome += " (" + warnings.joined(separator: "; ") + ")" }
                found[name] = outcome
            }
            return found
        }

        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("released")
        defer { workers.stopAll() }
        var seen: [String: [String: String]] = [:]
        let modes: [(String, [String], [String: String])] = [
            ("local", [], [:]), ("remote", ["--db", server.url], [:]),
            // The fan-in in pages of 2 items: sidecars delivered page after page.
            ("local-paged", [], ["SHARE_TEST_EXPORT_PAGE_SIZE": "2"]),
        ]
        for (mode, database, environment) in modes {
            let container = root + "/c-" + mode
            let report = root + "/\(mode).json"
            let run = try ShareProcess.run(
                ["ingest", "--json"] + database + ["--container", container, "--report", report, dropPath],
                environment: environment)
            #expect(run.status == 1, "\(mode): three photos fail: \(run.stderr) \(workers.log("released"))")
            seen[mode] = try outcomes(report)
            #expect(seen[mode] == expected, "\(mode): \(seen[mode]?.filter { expected[$0.key] != $0.value } ?? [:])")
            // Every input is heard once as an `item` event.
            let items = run.stdout.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).flatMap {
                    $0["event"] as? String == "item" ? $0 : nil
                }
            }
            #expect(items.count == expected.count, "\(mode): \(items.count) item events")
            #expect(
                Set(items.compactMap { ($0["source"] as? String).map { ($0 as NSString).lastPathComponent } })
                    == Set(expected.keys), "\(mode)")
            // The sidecars delivered as files hold their sources' bytes, named by their photo's UUID.
            let byName = try Self.entries(container)
            for name in ["IMG_0001.jpg.json", "IMG_0002.jpg.xmp", "IMG_0003.AAE", "IMG_0004.jpg.json"] {
                let entry = try #require(byName[name], "\(mode): \(name) is not in the manifest")
                #expect(entry["type"] as? String == "file", "\(mode): \(name)")
                let path = try #require(entry["path"] as? String)
                let url = try #require(URL(string: path))
                #expect(try [UInt8](Data(contentsOf: url)) == sources[name], "\(mode): \(name)'s copy")
                #expect(entry["sha256"] as? String != nil, "\(mode): \(name)")
            }
            #expect(byName["IMG_0003.jpg"]?["sidecars"] == nil && byName["IMG_0004.jpg"]?["sidecars"] == nil, "\(mode)")
            // Two sidecars of one photo, numbered in input order under its UUID.
            let photo = try #require(byName["IMG_0005.jpg"])
            let photoPath = try #require(photo["path"] as? String)
            let uuid = try #require(URL(string: photoPath)).deletingPathExtension().lastPathComponent
            let attached = try #require(photo["sidecars"] as? [[String: Any]])
            #expect(
                attached.compactMap { ($0["path"] as? String).flatMap(URL.init(string:))?.lastPathComponent } == [
                    uuid + ".1.json", uuid + ".2.xmp",
                ])
            #expect(
                photo["capturedAt"] as? String == "2019-07-01T19:01:40+02:00"
                    && photo["capturedAtSource"] as? String == "takeout", "\(mode)")
            // Nothing of the failed photos is left behind; every other file in the container is an entry's or a sidecar's.
            let named = Set(
                byName.values.flatMap { entry in
                    [entry["path"] as? String]
                        + (entry["sidecars"] as? [[String: Any]] ?? []).map { $0["path"] as? String }
                }.compactMap { $0.flatMap(URL.init(string:))?.lastPathComponent })
            let files = try FileManager.default.contentsOfDirectory(atPath: container).filter {
                !$0.hasPrefix(".") && $0 != "manifests" && $0 != "thumbnails"
            }
            #expect(
                Set(files) == named,
                "\(mode): left behind \(Set(files).subtracting(named)), missing \(named.subtracting(files))")
        }
        #expect(seen["local"] == seen["remote"] && seen["local"] == seen["local-paged"])
    }

    /// Files named one by one on the command line are matched as a folder's
    /// are: an `.AAE` and a Takeout JSON given beside their photos are
    /// attached to them.
    @Test func sidecarsNamedOneByOneAreAttachedToThePhotosNamedBesideThem() throws {
        let work = TemporaryDirectory("sidecar-named")
        let drop = TemporaryDirectory("sidecar-named-drop")
        let heic = try drop.add("IMG_1234.HEIC", copying: Fixtures.media("image.heic"))
        let aae = try drop.add("IMG_1234.AAE", bytes: Self.aae)
        let jpeg = try drop.add("IMG_0001.jpg", copying: Fixtures.media("photo.jpg"))
        let json = try drop.add("IMG_0001.jpg.json", bytes: Self.takeoutJSON(title: "IMG_0001.jpg"))
        let report = work.file("report.json")
        let run = try ShareProcess.run([
            "ingest", "--container", work.file("c"), "--report", report, aae, heic, json, jpeg,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let found = try Self.outcomes(report: report, drop: drop.path)
        #expect(
            found == [
                "IMG_1234.HEIC": "ingested", "IMG_1234.AAE": "attached to IMG_1234.HEIC", "IMG_0001.jpg": "ingested",
                "IMG_0001.jpg.json": "attached to IMG_0001.jpg",
            ], "\(found)")
        #expect(try Self.entries(work.file("c"))["IMG_0001.jpg"]?["capturedAtSource"] as? String == "takeout")
    }
}
