import Foundation
import ShareIngest
import TestSupport
import Testing

@testable import MediaFormats
@testable import ShareIngestCore

/// Which media a sidecar's name points at (Takeout's naming), and what a
/// Takeout JSON is read as (or refused as).
@Suite struct ExportSidecarNamingTests {
    @Test(
        arguments: [
            ("a/X.jpg.json", "a/x", "jpg"),
            ("a/X.jpg.supplemental-metadata.json", "a/x", "jpg"),
            (
                "a/Screenshot_20190701-165320_Photos_and_more_long.jpg.supplemental-metad.json",
                "a/screenshot_20190701-165320_photos_and_more_long", "jpg"
            ),
            ("a/IMG_0006.jpg.suppl.json", "a/img_0006", "jpg"),
            ("a/IMG_0006.jpg.s.json", "a/img_0006", "jpg"),
            ("a/X.jpg(1).json", "a/x(1)", "jpg"),
            ("a/X.jpg.supplemental-metadata(2).json", "a/x(2)", "jpg"),
            ("a/X(1).jpg.json", "a/x(1)", "jpg"),
            ("IMG_1234.CR2.xmp", "img_1234", "cr2"),
            ("IMG_1234.xmp", "img_1234", nil),
            ("b/IMG_1234.AAE", "b/img_1234", nil),
        ] as [(String, String, String?)])
    func sidecarNamesPointAtTheirMedia(label: String, stem: String, ext: String?) {
        let reference = ExportSidecars.reference(sidecarLabel: label)
        #expect(reference?.stem == stem, "\(label): \(String(describing: reference))")
        #expect(reference?.mediaExtension == ext, "\(label)")
    }

    @Test func editedCopiesShareTheirOriginalsStem() {
        #expect(ExportSidecars.reference(mediaLabel: "a/X-edited.jpg")?.stem == "a/x")
        #expect(ExportSidecars.reference(mediaLabel: "a/X-bearbeitet.JPG")?.stem == "a/x")
        #expect(ExportSidecars.reference(mediaLabel: "a/X(1).jpg")?.stem == "a/x(1)")
        #expect(ExportSidecars.reference(mediaLabel: "a/-edited.jpg")?.stem == "a/-edited")
        // Apple's edited render of IMG_1234.HEIC.
        #expect(ExportSidecars.reference(mediaLabel: "a/IMG_E1234.JPG")?.stem == "a/img_1234")
        #expect(ExportSidecars.isEditedRender("a/IMG_E1234.JPG") && ExportSidecars.isEditedRender("a/X-edited.jpg"))
        #expect(!ExportSidecars.isEditedRender("a/IMG_1234.HEIC") && !ExportSidecars.isEditedRender("a/IMG_Eve.jpg"))
        #expect(ExportSidecars.reference(mediaLabel: "a/IMG_Eve.jpg")?.stem == "a/img_eve")
        // Burst frames share their burst's stem; a sidecar still names its frame.
        #expect(
            ExportSidecars.reference(mediaLabel: "a/20190701_165320_BURST001_COVER.jpg")?.stem
                == "a/20190701_165320_burst")
        #expect(
            ExportSidecars.reference(mediaLabel: "a/20190701_165320_BURST012.jpg")?.stem == "a/20190701_165320_burst")
        #expect(ExportSidecars.burstFrame("20190701_165320_burst001_cover")?.cover == true)
        #expect(ExportSidecars.burstFrame("20190701_165320_burst002")?.cover == false)
        #expect(
            ExportSidecars.burstFrame("pxl_20190701_165320123.raw-02.original")?.burst == "pxl_20190701_165320123.raw")
        #expect(ExportSidecars.burstFrame("pxl_20190701_165320123.raw-01.cover")?.cover == true)
        #expect(ExportSidecars.burstFrame("my_burstday") == nil && ExportSidecars.burstFrame("img_0001") == nil)
        #expect(
            ExportSidecars.reference(sidecarLabel: "a/20190701_165320_BURST002.jpg.xmp")?.exact
                == "a/20190701_165320_burst002")
    }

    @Test func recognisedByContentAsWellAsName() {
        let takeout = Array(#"{"title": "X.jpg", "photoTakenTime": {"timestamp": "1"}}"#.utf8)
        #expect(ExportSidecars.kind(name: "X.jpg.json", head: takeout) == .takeout)
        #expect(ExportSidecars.kind(name: "X.jpg.txt", head: takeout) == nil)
        #expect(
            ExportSidecars.kind(
                name: "metadata.json", head: Array(#"{"title": "Holiday", "date": {"timestamp": "1"}}"#.utf8)) == nil)
        #expect(ExportSidecars.kind(name: "a.json", head: Array("[1, 2]".utf8)) == nil)
        #expect(ExportSidecars.kind(name: "a.xmp", head: Array("hello".utf8)) == nil)
        #expect(ExportSidecars.kind(name: "a.XMP", head: Array("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">".utf8)) == .xmp)
        #expect(
            ExportSidecars.kind(
                name: "a.aae", head: Array("<?xml version=\"1.0\"?><plist><dict><key>other</key></dict></plist>".utf8))
                == nil)
        // After a byte-order mark and whitespace; a key anywhere in the head, none beyond it.
        #expect(
            ExportSidecars.kind(
                name: "X.jpg.json",
                head: [0xEF, 0xBB, 0xBF] + Array(" \n\t{\"imageViews\": \"1\", \"title\": \"X\"}".utf8)) == .takeout)
        #expect(
            ExportSidecars.kind(
                name: "X.jpg.json",
                head: Array("{\"title\": \"X\", \"a\": \"".utf8) + Array(repeating: 0x61, count: 5000)
                    + Array("\", \"imageViews\": 1}".utf8)) == nil)
        #expect(
            ExportSidecars.kind(
                name: "a.xmp", head: Array("<?xml version=\"1.0\"?>\n<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">".utf8))
                == .xmp)
        #expect(
            ExportSidecars.kind(
                name: "a.AAE", head: Array("<!DOCTYPE plist><plist><dict><key>adjustmentData</key></dict></plist>".utf8)
            ) == .aae)
        #expect(
            ExportSidecars.kind(name: "a.json", head: Array("{\"tit".utf8)) == nil
                && ExportSidecars.kind(name: "a.json", head: []) == nil)
    }

    /// The helper's reading (MediaFormats' `TakeoutJSON`) and the parent's
    /// keeping of what is sane (``TakeoutMetadata/facts(from:)``).
    static func facts(_ json: String) -> TakeoutFacts? {
        (try? TakeoutJSON.read(Array(json.utf8))).map(TakeoutMetadata.facts(from:))
    }

    @Test func takeoutJSONIsReadStrictlyAndBounded() throws {
        let json =
            #"{"title": "X.jpg", "description": "  at dusk\u0007 ", "photoTakenTime": {"timestamp": "1562000000"}, "geoData": {"latitude": 0.0, "longitude": 0.0}, "geoDataExif": {"latitude": 48.5, "longitude": 2.25, "altitude": 0.0}}"#
        let facts = try #require(Self.facts(json))
        #expect(facts.takenAt == 1_562_000_000)
        #expect(facts.description == "at dusk")
        #expect(facts.location == TakeoutLocation(latitude: 48.5, longitude: 2.25, altitude: nil))
        #expect(TakeoutMetadata.rfc3339(1_562_000_000) == "2019-07-01T16:53:20Z")
        // The ends of the range ``TakeoutMetadata/facts(from:)`` keeps are written too.
        #expect(TakeoutMetadata.rfc3339(-4_575_744_000) == "1825-01-01T00:00:00Z")
        #expect(TakeoutMetadata.rfc3339(7_258_118_400) == "2200-01-01T00:00:00Z")
        #expect(TakeoutMetadata.rfc3339(-4_575_744_001) == nil)
        // Not Takeout's, not JSON, too deep, too large, out of range: nothing read.
        #expect(Self.facts(#"{"photoTakenTime": {"timestamp": "1"}}"#) == nil)
        #expect(Self.facts(#"{"title": "X.jpg", "#) == nil)
        #expect(Self.facts(#"{"title": "X.jpg",}"#) == nil, "no trailing comma")
        #expect(Self.facts(#"{"title": "X.jpg"} x"#) == nil, "nothing after the object")
        #expect(Self.facts(#"{"title": "X\ud800.jpg"}"#) == nil, "no lone surrogate")
        #expect(Self.facts(#"{"title": "\u00e9t\u00e9 \ud83d\ude00"}"#) != nil)
        let deep =
            "{\"title\": \"x\", \"a\": " + String(repeating: "[", count: 17) + String(repeating: "]", count: 17) + "}"
        #expect(throws: TakeoutJSON.Refusal.self) { try TakeoutJSON.read(Array(deep.utf8)) }
        #expect((try? TakeoutJSON.read(Array(deep.utf8))) == nil)
        let brackets = "{\"title\": \"" + String(repeating: "[", count: 100) + "\"}"
        #expect(Self.facts(brackets) != nil, "brackets inside a string are not nesting")
        let large =
            "{\"title\": \"x\", \"description\": \"" + String(repeating: "a", count: TakeoutMetadata.maximumSize)
            + "\"}"
        #expect(Self.facts(large) == nil)
        #expect(Self.facts(#"{"title": "X", "photoTakenTime": {"timestamp": "99999999999"}}"#)?.takenAt == nil)
        #expect(Self.facts(#"{"title": "X", "geoData": {"latitude": 91, "longitude": 2}}"#)?.location == nil)
        // Location privacy: both places blanked with spaces, the rest kept, the JSON still valid.
        for text in [
            json,
            #"{"geoData": {"latitude": 1, "longitude": 2}, "geoDataExif": {"latitude": 1, "longitude": 2}, "title": "X.jpg"}"#,
            #"{"geoData": {"latitude": 1, "longitude": 2}, "title": "X.jpg", "geoDataExif": {"latitude": 1, "longitude": 2}}"#,
        ] {
            var bytes = Array(text.utf8)
            let found = TakeoutJSON.location(bytes)
            #expect(found.found.count == 2, "\(text)")
            for edit in found.found.flatMap(\.edits) {
                #expect(edit.fill == .spaces)
                for offset in edit.range { bytes[offset] = 0x20 }
            }
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                "\(String(decoding: bytes, as: UTF8.self))")
            #expect(object["geoData"] == nil && object["geoDataExif"] == nil && object["title"] as? String == "X.jpg")
            #expect(TakeoutJSON.location(bytes).found.isEmpty, "nothing left to remove")
        }
    }

    /// Strings read as Foundation's JSON reader reads them (escapes, surrogate
    /// pairs, raw UTF-8), and what it refuses refused; damaged bytes never trap.
    @Test func takeoutJSONStringsReadAsFoundationReadsThem() throws {
        let texts = [
            #"plain"#, #"caf\u00e9 \u2603 \ud83d\ude00"#, #"a\"b\\c\/d\b\f\n\r\t"#, "raw ünïcødé ☃ 😀",
            #"mixed é \u00e9 \n é"#, "", #"\u0000x"#,
        ]
        for text in texts {
            let json = "{\"title\": \"\(text)\", \"description\": \"\(text)\"}"
            let foundation =
                try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])["title"]
                as? String
            let ours = try TakeoutJSON.read(Array(json.utf8)).title
            #expect(ours == foundation, "\(text): \(ours) against \(foundation ?? "nil")")
        }
        for bad in [
            [0x22, 0xC3, 0x22], [0x22, 0xC3, 0x5C, 0x6E, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0x5C, 0x75, 0x31, 0x22],
        ] as [[UInt8]] {
            let json = Array(#"{"title": "#.utf8) + bad + Array("}".utf8)
            #expect(throws: TakeoutJSON.Refusal.self) { try TakeoutJSON.read(json) }
        }
        // Every byte of a Takeout JSON damaged in turn: read or refused, never a trap.
        let sample = Array(
            #"{"title": "IMG_\u00e9.jpg", "description": "a\"b", "photoTakenTime": {"timestamp": "1562000000"}}"#.utf8)
        for offset in sample.indices {
            for value: UInt8 in [0x00, 0x22, 0x5C, 0x75, 0xC3, 0xFF] {
                var damaged = sample
                damaged[offset] = value
                _ = try? TakeoutJSON.read(damaged)
            }
        }
    }

    /// The fan-in reads the export candidates (photos and videos sharing a
    /// stem, for the groups of shots) one stem at a time, in pages: with pages
    /// of 2 rows, every stem still comes whole and once, the same items as in
    /// one page, and the items no other shares are not read. Sidecars are no
    /// rows of their own: their media carry them.
    @Test func exportCandidatesComeOneWholeStemAtATimeAcrossPages() throws {
        let drop = TemporaryDirectory("export-pages")
        for stem in ["a/IMG_0001", "a/IMG_0002", "b/IMG_0001"] {
            try drop.add(stem + ".jpg", copying: Fixtures.media("photo.jpg"))
            try drop.add(stem + "-edited.jpg", copying: Fixtures.media("gray.jpg"))
            try drop.add(stem + ".jpg.xmp", bytes: Array(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"></x:xmpmeta>"#.utf8))
        }
        try drop.add("a/alone.jpg", copying: Fixtures.media("photo.jpg"))
        try drop.add("c/orphan.xmp", bytes: Array(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"></x:xmpmeta>"#.utf8))
        let container = try TemporaryContainer()
        let report = try ShareIngestor(container: container.directory, identifiers: .sequential()).ingest([
            .path(drop.path)
        ])
        #expect(report.isComplete)
        #expect(
            report.attachedCount == 3 && report.items.count == 11, "\(report.items.map { "\($0.source) \($0.status)" })"
        )
        let journal = try BatchJournal(container: container.directory)
        func stems(pageSize: Int) throws -> [[String]] {
            var found: [[String]] = []
            try journal.forEachExportStem(of: report.batchID, pageSize: pageSize) { items in
                found.append(items.map { $0.label.split(separator: "/").suffix(2).joined(separator: "/") }.sorted())
            }
            return found
        }
        let whole = try stems(pageSize: 1000)
        #expect(try stems(pageSize: 2) == whole)
        #expect(try stems(pageSize: 1) == whole)
        #expect(
            Set(whole) == [
                ["a/IMG_0001-edited.jpg", "a/IMG_0001.jpg"], ["a/IMG_0002-edited.jpg", "a/IMG_0002.jpg"],
                ["b/IMG_0001-edited.jpg", "b/IMG_0001.jpg"],
            ], "\(whole)")
    }

    /// Which files of a folder each sidecar goes to, by name alone (the first
    /// reports it, the rest borrow it), and which are left to be items of their own.
    @Test func aFoldersSidecarsAreMatchedToTheirMediaByName() {
        let folder = FolderSidecars(names: [
            "IMG_0001.jpg", "IMG_0001.jpg.json",  // Takeout: the photo of that name
            // and its edited copy, which borrows it
            "IMG_0002-edited.jpg", "IMG_0002.jpg", "IMG_0002.jpg.supplemental-metadata.json",
            "IMG_0003(1).jpg", "IMG_0003.jpg(1).json",  // the duplicate number behind the extension
            "IMG_1234.AAE", "IMG_1234.HEIC", "IMG_E1234.JPG",  // Apple: the original, not its render
            "IMG_2000.CR2", "IMG_2000.JPG", "IMG_2000.xmp",  // a RAW developer's XMP: the RAW
            "IMG_3000.JPG", "IMG_3000.JPG.xmp",  // the media's extension named
            "metadata.json", "IMG_0099.jpg.json", "notes.txt", "IMG_4000.xmp",  // no media of theirs here
        ])
        #expect(folder.media["IMG_0001.jpg.json"] == ["IMG_0001.jpg"])
        #expect(folder.media["IMG_0002.jpg.supplemental-metadata.json"] == ["IMG_0002.jpg", "IMG_0002-edited.jpg"])
        #expect(folder.media["IMG_0003.jpg(1).json"] == ["IMG_0003(1).jpg"])
        #expect(folder.media["IMG_1234.AAE"] == ["IMG_1234.HEIC"])
        #expect(folder.media["IMG_2000.xmp"] == ["IMG_2000.CR2"])
        #expect(folder.media["IMG_3000.JPG.xmp"] == ["IMG_3000.JPG"])
        for alone in ["metadata.json", "IMG_0099.jpg.json", "notes.txt", "IMG_4000.xmp"] {
            #expect(folder.media[alone] == nil, "\(alone)")
        }
        #expect(folder.sidecars["IMG_0002-edited.jpg"] == ["IMG_0002.jpg.supplemental-metadata.json"])
        #expect(folder.sidecars["IMG_E1234.JPG"] == nil)
        #expect(FolderSidecars(names: ["IMG_0001.jpg", "IMG_0002.jpg"]).isEmpty)
    }

    /// The plan hands on a media item once each of its sidecars has been met,
    /// whichever comes first in name order, in input order otherwise; a
    /// sidecar takes its place in the order but is no item of its own, and one
    /// whose first media never comes as a file is an item after all.
    @Test func theAssemblyHoldsAMediaItemUntilItsSidecarsAreMet() throws {
        let names = [
            "IMG_0002-edited.jpg", "IMG_0002.jpg", "IMG_0002.jpg.json", "IMG_1234.AAE", "IMG_1234.HEIC", "X.jpg",
            "X.jpg.json", "Z.jpg",
        ]
        var assembly = SidecarAssembly(FolderSidecars(names: names))
        let identifiers = IdentifierSource.sequential()
        var handed: [ItemState] = []
        for (index, name) in names.enumerated() where name != "X.jpg" {  // X.jpg is no file (a folder, a FIFO)
            let file = SourceFile(path: SourcePath("/drop/" + name), name: name)
            if assembly.isSidecar(name) {
                handed += assembly.meetSidecar(name, index: index, file: file, label: "drop/" + name, size: 100)
            } else {
                handed += assembly.meetMedia(
                    name, ItemState(index: index, id: identifiers.next(), source: .file(file), label: "drop/" + name))
            }
        }
        handed += assembly.finish(identifiers: identifiers)
        // The AAE (3) and the JSON (2) are carried; X.jpg.json (6) comes at the folder's end.
        #expect(handed.map(\.index) == [0, 1, 4, 7, 6], "\(handed.map(\.label))")
        let byName = Dictionary(handed.map { ($0.label, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byName["drop/IMG_0002.jpg"]?.carriedSidecars.map { [$0.index, $0.borrowed ? 1 : 0] } == [[2, 0]])
        #expect(
            byName["drop/IMG_0002-edited.jpg"]?.carriedSidecars.map { [$0.index, $0.borrowed ? 1 : 0] } == [[2, 1]])
        let heic = byName["drop/IMG_1234.HEIC"]
        let aae = heic?.reportedSidecars.first
        #expect(aae?.label == "drop/IMG_1234.AAE" && aae?.index == 3 && aae?.sidecarKind == .aae)
        #expect(aae?.source == .file(SourceFile(path: SourcePath("/drop/IMG_1234.AAE"), name: "IMG_1234.AAE")))
        #expect(aae?.attachedTo == "drop/IMG_1234.HEIC")
        #expect(aae?.id == heic?.id, "its copy is named by its media")
        // Its file and label are its media's folder's: none is recorded.
        #expect(heic?.carriedSidecars.first?.ownPath == nil && heic?.carriedSidecars.first?.ownLabel == nil)
        // Its copy beside its media's: `<media UUID>.1.aae`.
        var delivered = try #require(heic)
        delivered.copyPath = "/container/\(delivered.id.uuidString).heic"
        #expect(delivered.attachedSidecars.map(\.path) == ["/container/\(delivered.id.uuidString).1.aae"])
        #expect(
            heic?.reportedSidecars.map(\.label) == ["drop/IMG_1234.AAE"]
                && byName["drop/IMG_0002-edited.jpg"]?.reportedSidecars == [])
        #expect(byName["drop/X.jpg.json"]?.carriedSidecars == [], "its photo never came: an item of its own")
        #expect(byName["drop/Z.jpg"]?.carriedSidecars == [])
    }
}
