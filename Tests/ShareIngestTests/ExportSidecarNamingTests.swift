import Foundation
import Testing
import TestSupport

@testable import MediaFormats
@testable import ShareIngest

/// Which media a sidecar's name points at (Takeout's naming), and what a
/// Takeout JSON is read as (or refused as).
@Suite struct ExportSidecarNamingTests {
    @Test(arguments: [
        ("a/X.jpg.json", "a/x", "jpg"),
        ("a/X.jpg.supplemental-metadata.json", "a/x", "jpg"),
        ("a/Screenshot_20190701-165320_Photos_and_more_long.jpg.supplemental-metad.json", "a/screenshot_20190701-165320_photos_and_more_long", "jpg"),
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
        #expect(ExportSidecars.reference(mediaLabel: "a/20190701_165320_BURST001_COVER.jpg")?.stem == "a/20190701_165320_burst")
        #expect(ExportSidecars.reference(mediaLabel: "a/20190701_165320_BURST012.jpg")?.stem == "a/20190701_165320_burst")
        #expect(ExportSidecars.burstFrame("20190701_165320_burst001_cover")?.cover == true)
        #expect(ExportSidecars.burstFrame("20190701_165320_burst002")?.cover == false)
        #expect(ExportSidecars.burstFrame("pxl_20190701_165320123.raw-02.original")?.burst == "pxl_20190701_165320123.raw")
        #expect(ExportSidecars.burstFrame("pxl_20190701_165320123.raw-01.cover")?.cover == true)
        #expect(ExportSidecars.burstFrame("my_burstday") == nil && ExportSidecars.burstFrame("img_0001") == nil)
        #expect(ExportSidecars.reference(sidecarLabel: "a/20190701_165320_BURST002.jpg.xmp")?.exact == "a/20190701_165320_burst002")
    }

    @Test func recognisedByContentAsWellAsName() {
        let takeout = Array(#"{"title": "X.jpg", "photoTakenTime": {"timestamp": "1"}}"#.utf8)
        #expect(ExportSidecars.kind(name: "X.jpg.json", head: takeout) == .takeout)
        #expect(ExportSidecars.kind(name: "X.jpg.txt", head: takeout) == nil)
        #expect(ExportSidecars.kind(name: "metadata.json", head: Array(#"{"title": "Holiday", "date": {"timestamp": "1"}}"#.utf8)) == nil)
        #expect(ExportSidecars.kind(name: "a.json", head: Array("[1, 2]".utf8)) == nil)
        #expect(ExportSidecars.kind(name: "a.xmp", head: Array("hello".utf8)) == nil)
        #expect(ExportSidecars.kind(name: "a.XMP", head: Array("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">".utf8)) == .xmp)
        #expect(ExportSidecars.kind(name: "a.aae", head: Array("<?xml version=\"1.0\"?><plist><dict><key>other</key></dict></plist>".utf8)) == nil)
    }

    /// The helper's reading (MediaFormats' `TakeoutJSON`) and the parent's
    /// keeping of what is sane (``TakeoutMetadata/facts(from:)``).
    static func facts(_ json: String) -> TakeoutFacts? {
        (try? TakeoutJSON.read(Array(json.utf8))).map(TakeoutMetadata.facts(from:))
    }

    @Test func takeoutJSONIsReadStrictlyAndBounded() throws {
        let json = #"{"title": "X.jpg", "description": "  at dusk\u0007 ", "photoTakenTime": {"timestamp": "1562000000"}, "geoData": {"latitude": 0.0, "longitude": 0.0}, "geoDataExif": {"latitude": 48.5, "longitude": 2.25, "altitude": 0.0}}"#
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
        let deep = "{\"title\": \"x\", \"a\": " + String(repeating: "[", count: 17) + String(repeating: "]", count: 17) + "}"
        #expect(throws: TakeoutJSON.Refusal.self) { try TakeoutJSON.read(Array(deep.utf8)) }
        #expect((try? TakeoutJSON.read(Array(deep.utf8))) == nil)
        let brackets = "{\"title\": \"" + String(repeating: "[", count: 100) + "\"}"
        #expect(Self.facts(brackets) != nil, "brackets inside a string are not nesting")
        let large = "{\"title\": \"x\", \"description\": \"" + String(repeating: "a", count: TakeoutMetadata.maximumSize) + "\"}"
        #expect(Self.facts(large) == nil)
        #expect(Self.facts(#"{"title": "X", "photoTakenTime": {"timestamp": "99999999999"}}"#)?.takenAt == nil)
        #expect(Self.facts(#"{"title": "X", "geoData": {"latitude": 91, "longitude": 2}}"#)?.location == nil)
        // Location privacy: both places blanked with spaces, the rest kept, the JSON still valid.
        for text in [json, #"{"geoData": {"latitude": 1, "longitude": 2}, "geoDataExif": {"latitude": 1, "longitude": 2}, "title": "X.jpg"}"#,
            #"{"geoData": {"latitude": 1, "longitude": 2}, "title": "X.jpg", "geoDataExif": {"latitude": 1, "longitude": 2}}"#]
        {
            var bytes = Array(text.utf8)
            let found = TakeoutJSON.location(bytes)
            #expect(found.found.count == 2, "\(text)")
            for edit in found.found.flatMap(\.edits) {
                #expect(edit.fill == .spaces)
                for offset in edit.range { bytes[offset] = 0x20 }
            }
            let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], "\(String(decoding: bytes, as: UTF8.self))")
            #expect(object["geoData"] == nil && object["geoDataExif"] == nil && object["title"] as? String == "X.jpg")
            #expect(TakeoutJSON.location(bytes).found.isEmpty, "nothing left to remove")
        }
    }

    /// The fan-in reads the export candidates one stem at a time, in pages:
    /// with pages of 2 rows, every stem still comes whole and once, the same
    /// items as in one page, and the items no other shares are not read.
    @Test func exportCandidatesComeOneWholeStemAtATimeAcrossPages() throws {
        let drop = TemporaryDirectory("export-pages")
        for stem in ["a/IMG_0001", "a/IMG_0002", "b/IMG_0001"] {
            try drop.add(stem + ".jpg", copying: Fixtures.media("photo.jpg"))
            try drop.add(stem + ".jpg.xmp", bytes: Array(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"></x:xmpmeta>"#.utf8))
        }
        try drop.add("a/IMG_0002-edited.jpg", copying: Fixtures.media("photo.jpg"))
        try drop.add("a/alone.jpg", copying: Fixtures.media("photo.jpg"))
        try drop.add("c/orphan.xmp", bytes: Array(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"></x:xmpmeta>"#.utf8))
        let container = try TemporaryContainer()
        let report = try ShareIngestor(container: container.directory, identifiers: .sequential()).ingest([.path(drop.path)])
        #expect(report.isComplete)
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
        #expect(Set(whole) == [["a/IMG_0001.jpg", "a/IMG_0001.jpg.xmp"], ["a/IMG_0002-edited.jpg", "a/IMG_0002.jpg", "a/IMG_0002.jpg.xmp"],
            ["b/IMG_0001.jpg", "b/IMG_0001.jpg.xmp"], ["c/orphan.xmp"]], "\(whole)")
    }
}
