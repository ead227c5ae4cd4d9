import Foundation
import TestSupport
import Testing

/// v2 `capturedAt`, `capturedAtSource` and `capturedAtOffsetKnown` (issue 33
/// item 3), as a host app reads them from the manifest: exiftool is the oracle
/// on every real phone file in testdata; made files cover placeholder dates, the
/// names phones give files, and the modification time as the last resort.
@Suite struct CaptureTimeTests {
    /// The real phone files in testdata (testdata/README.md says where each is from).
    static let realPhoneFiles = [
        "motion/real/pixel-3a-xl.MP.jpg", "motion/real/samsung-s9plus-microvideo.jpg",
        "motion/real/samsung-s9plus-video-removed.jpg",
        "motion/real/samsung-s22-motion.heic", "motion/real/google-libmphoto-motion.jpg", "privacy/iphone6-gps.jpg",
        "privacy/exiftool-pixel8pro.jpg",
        "privacy/iphone7-gps.heic", "fidelity/heic-exif6-noirot.heic", "fidelity/grid-irot-exif6.heic",
        "heif/grid-2048-exif6.heic",
        // iPhone-style Live Photo halves and a movie with Apple's keys (made by exiftool from iPhone layouts).
        "motion/live/IMG_0001.JPG", "motion/live/IMG_0001.MOV", "motion/live/IMG_0002_HEVC.MOV",
        "privacy/keys-iso6709.mov",
    ]

    /// What exiftool says the capture time is, by the manifest's rules: nil when
    /// it finds none (the test then expects the file's modification time).
    static func oracle(_ path: String) throws -> (text: String, source: String, offsetKnown: Bool?)? {
        let output = try MediaTools.run(
            "/usr/bin/exiftool",
            [
                "-j", "-DateTimeOriginal", "-SubSecTimeOriginal", "-OffsetTimeOriginal", "-CreationDate", "-CreateDate",
                "-GPSDateStamp", "-GPSTimeStamp", path,
            ]
        ).output
        let tags = try #require((try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]])?.first)
        func text(_ key: String) -> String? { tags[key].map { "\($0)" } }
        /// `YYYY:MM:DD HH:MM:SS` as RFC 3339's date and time, nil for a placeholder.
        func civil(_ value: String) -> String? {
            guard value.count >= 19, !value.hasPrefix("0000"), !value.hasPrefix("1970:01:01"),
                !value.hasPrefix("1904:01:01")
            else { return nil }
            let chars = Array(value)
            return String(chars[0..<4]) + "-" + String(chars[5..<7]) + "-" + String(chars[8..<10]) + "T"
                + String(chars[11..<19])
        }
        func seconds(_ rfc: String) -> Double? {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.date(from: rfc + "Z")?.timeIntervalSince1970
        }
        func offsetText(_ seconds: Int) -> String {
            seconds == 0
                ? "Z"
                : String(format: "%@%02d:%02d", seconds < 0 ? "-" : "+", abs(seconds) / 3600, abs(seconds) / 60 % 60)
        }
        if let original = text("DateTimeOriginal").flatMap(civil) {
            var fraction = ""
            if let sub = text("SubSecTimeOriginal") {
                let digits = String(sub.prefix(3)).padding(toLength: 3, withPad: "0", startingAt: 0)
                if Int(digits) ?? 0 > 0 { fraction = "." + digits }
            }
            if let offset = text("OffsetTimeOriginal") {
                return (original + fraction + (offset == "+00:00" ? "Z" : offset), "exif", nil)
            }
            if let date = text("GPSDateStamp"), let time = text("GPSTimeStamp"),
                let gps = seconds(civil(date + " " + String(time.prefix(8))) ?? ""),
                let local = seconds(original)
            {
                let offset = Int(((local - gps) / 900).rounded()) * 900
                return (original + fraction + offsetText(offset), "gps", nil)
            }
            return (original + fraction, "exif", false)
        }
        if let creation = text("CreationDate"), let date = civil(creation) {
            let zone = String(creation.dropFirst(19))
            return (date + (zone.isEmpty ? "" : zone == "+00:00" ? "Z" : zone), "quicktime", zone.isEmpty ? false : nil)
        }
        if let created = text("CreateDate").flatMap(civil) { return (created + "Z", "mp4", nil) }
        return nil
    }

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

    /// The UTC RFC 3339 spelling of a file's modification time (whole seconds).
    static func modified(_ path: String) throws -> String {
        let date = try #require(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
    }

    static func ingest(_ drop: TemporaryDirectory) throws -> [String: [String: Any]] {
        let container = TemporaryDirectory()
        let result = try ShareProcess.run(["ingest", "--container", container.path, drop.path])
        if result.status != 0 { Issue.record("share ingest exited \(result.status): \(result.stderr)") }
        return try entries(container.path)
    }

    @Test func everyRealPhoneFileHasTheCaptureTimeExiftoolReads() throws {
        let drop = TemporaryDirectory()
        var expected: [String: (text: String, source: String, offsetKnown: Bool?)] = [:]
        for relative in Self.realPhoneFiles {
            // Flat names that no file-name rule matches: the metadata decides.
            let name = relative.replacingOccurrences(of: "/", with: "-")
            let copy = try drop.add(name, copying: Fixtures.testdata(relative))
            expected[name] = try Self.oracle(copy) ?? (try Self.modified(copy), "fileTime", nil)
        }
        let byName = try Self.ingest(drop)
        var sources: Set<String> = []
        for (name, want) in expected {
            let entry = byName[name]
            #expect(
                entry?["capturedAt"] as? String == want.text,
                "\(name): \(entry?["capturedAt"] ?? "none"), exiftool says \(want.text)")
            #expect(
                entry?["capturedAtSource"] as? String == want.source, "\(name): \(entry?["capturedAtSource"] ?? "none")"
            )
            #expect(
                entry?["capturedAtOffsetKnown"] as? Bool == want.offsetKnown,
                "\(name): \(entry?["capturedAtOffsetKnown"] ?? "absent")")
            sources.insert(want.source)
        }
        // The files cover EXIF with an offset, EXIF whose offset the GPS time gives, and QuickTime's creation date.
        #expect(sources.isSuperset(of: ["exif", "gps", "quicktime"]), "\(sources)")
    }

    /// Runs exiftool on `path` with `arguments` (it edits in place).
    static func exiftool(_ path: String, _ arguments: [String]) throws {
        let result = try MediaTools.run("/usr/bin/exiftool", ["-q", "-overwrite_original"] + arguments + [path])
        #expect(result.status == 0)
    }

    static func setModified(_ path: String, _ seconds: Double) throws {
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: path)
    }

    @Test func placeholderDatesNamesAndTheModificationTime() throws {
        let drop = TemporaryDirectory()
        let photo = Fixtures.media("photo.jpg")
        // Placeholder dates count as missing: the modification time is left.
        let epoch = try drop.add("epoch.jpg", copying: photo)
        try Self.exiftool(epoch, ["-all=", "-DateTimeOriginal=1970:01:01 00:00:00", "-OffsetTimeOriginal=+00:00"])
        let zeros = try drop.add("zeros.jpg", copying: photo)
        try Self.exiftool(zeros, ["-all=", "-DateTimeOriginal=0000:00:00 00:00:00"])
        let old = try drop.add("quicktime-epoch.mov", copying: Fixtures.media("clip.mov"))
        // An offset off the 15-minute grid is no offset: a local time.
        let odd = try drop.add("odd-offset.jpg", copying: photo)
        try Self.exiftool(
            odd, ["-all=", "-DateTimeOriginal=2024:05:01 12:00:00", "-OffsetTimeOriginal=+01:07", "-OffsetTime=+02:00"])
        // OffsetTime (the last edit's zone) is never the capture's.
        let edited = try drop.add("edited-offset.jpg", copying: photo)
        try Self.exiftool(edited, ["-all=", "-DateTimeOriginal=2024:05:01 12:00:00", "-OffsetTime=+02:00"])
        // Names phones give files, on files without any date inside.
        var names: [String: (String, Bool?)] = [
            "IMG_20240501_120000.jpg": ("2024-05-01T12:00:00", false),
            "PXL_20240501_120000123.jpg": ("2024-05-01T12:00:00.123Z", nil),
            "IMG-20240501-WA0001.jpg": ("2024-05-01T00:00:00", false),
            "Screenshot_20240501-120000.png": ("2024-05-01T12:00:00", false),
            "VID_20240502_083000.mp4": ("2024-05-02T08:30:00", false),
        ]
        for name in names.keys {
            let source =
                name.hasSuffix(".png")
                ? Fixtures.media("alpha.png") : name.hasSuffix(".mp4") ? Fixtures.media("clip-h264.mp4") : photo
            let copy = try drop.add(name, copying: source)
            if name.hasSuffix(".jpg") { try Self.exiftool(copy, ["-all="]) }
            // clip-h264.mp4's mvhd time is 0 (1904): no date.
            if name.hasSuffix(".mp4") { #expect(try Self.oracle(copy) == nil) }
        }
        // A name that looks like one but is no date.
        names["IMG_20241341_250000.jpg"] = nil
        let bad = try drop.add("IMG_20241341_250000.jpg", copying: photo)
        try Self.exiftool(bad, ["-all="])
        // An MP4's mvhd time (UTC), as Android writes it.
        let android = try drop.add("android.mp4", copying: Fixtures.media("clip-h264.mp4"))
        try Self.exiftool(android, ["-QuickTime:CreateDate=2023:08:09 10:11:12"])
        for (path, seconds) in [
            (epoch, 1_600_000_000.0), (zeros, 1_600_000_100), (old, 1_600_000_200), (bad, 1_600_000_300),
        ] {
            try Self.setModified(path, seconds)
        }
        let byName = try Self.ingest(drop)
        func check(
            _ name: String, _ text: String, _ source: String, offsetKnown: Bool? = nil,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            let entry = byName[name]
            #expect(
                entry?["capturedAt"] as? String == text, "\(name): \(entry?["capturedAt"] ?? "none")",
                sourceLocation: sourceLocation)
            #expect(
                entry?["capturedAtSource"] as? String == source, "\(name): \(entry?["capturedAtSource"] ?? "none")",
                sourceLocation: sourceLocation)
            #expect(
                entry?["capturedAtOffsetKnown"] as? Bool == offsetKnown,
                "\(name): \(entry?["capturedAtOffsetKnown"] ?? "absent")", sourceLocation: sourceLocation)
        }
        check("epoch.jpg", "2020-09-13T12:26:40Z", "fileTime")
        check("zeros.jpg", "2020-09-13T12:28:20Z", "fileTime")
        // clip.mov's mvhd says 0 (1904) and it has no creation date.
        #expect(try Self.oracle(old) == nil)
        check("quicktime-epoch.mov", "2020-09-13T12:30:00Z", "fileTime")
        check("odd-offset.jpg", "2024-05-01T12:00:00", "exif", offsetKnown: false)
        check("edited-offset.jpg", "2024-05-01T12:00:00", "exif", offsetKnown: false)
        for (name, (text, known)) in names { check(name, text, "fileName", offsetKnown: known) }
        check("IMG_20241341_250000.jpg", "2020-09-13T12:31:40Z", "fileTime")
        let oracle = try #require(try Self.oracle(android))
        #expect(oracle.text == "2023-08-09T10:11:12Z" && oracle.source == "mp4")
        check("android.mp4", "2023-08-09T10:11:12Z", "mp4")
        // Files that are no image or video have none.
        #expect(
            byName.values.allSatisfy {
                ($0["type"] as? String == "image" || $0["type"] as? String == "video") == ($0["capturedAt"] != nil)
            })
    }
}
