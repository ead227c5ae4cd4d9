import Foundation
import MediaFormats
import MediaKit
import ShareIngest
import ShareManifest
import Testing

@testable import ShareIngestCore

/// `share report`'s library side: the stored batch report read back, the HTML
/// page and the contact sheet, for a real batch of photos (one rotated by EXIF),
/// a video, a PDF, random bytes named .jpg that fail and a copy of a photo with a hostile name.
@Suite struct ReportTests {
    /// A file name that breaks any page that does not escape it (a name cannot hold "/").
    static let hostileName = #"<script>alert(1)&'"x".jpg"#

    /// One ingested batch in its own temporary container; removed by `with`.
    struct Batch {
        let container: ContainerDirectory
        let ingested: BatchReport
        let scratch: URL

        /// Ingests the batch, runs `body`, removes everything.
        static func with(_ body: (Batch) throws -> Void) throws {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
                "report-tests-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let drop = scratch.appendingPathComponent("drop")
            try FileManager.default.createDirectory(at: drop, withIntermediateDirectories: true)
            let hostile = drop.appendingPathComponent(hostileName)
            try FileManager.default.copyItem(at: media("photo.jpg"), to: hostile)

            let container = try ContainerDirectory(scratch.appendingPathComponent("container").path)
            let inputs =
                ["photo.jpg", "portrait-exif6.jpg", "clip-h264.mp4", "document.pdf", "random.jpg"].map {
                    ShareInput.path(media($0).path)
                }
                + [.path(hostile.path)]
            let report = try ShareIngestor(container: container).ingest(inputs)
            try body(Batch(container: container, ingested: report, scratch: scratch))
        }

        /// The report as `share report` reads it: from the container, by redirect URL.
        func stored() throws -> BatchReport {
            let redirect = try #require(ingested.redirectURL)
            return try BatchReport.stored(redirect.description, in: container)
        }
    }

    /// A fixture in testdata/media, found from this file's path.
    static func media(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("testdata/media/\(name)")
    }

    /// The grid card of the item whose (escaped) name is `name`.
    static func card(named name: String, in html: String) -> String? {
        html.components(separatedBy: "<li class=\"item ").dropFirst()
            .first {
                $0.contains("<h3 class=\"name\">\(HTMLText.escaped(name))</h3>")
                    || $0.contains("\">\(HTMLText.escaped(name))</a></h3>")
            }
    }

    /// Decodes JPEG bytes completely (`vips_thumbnail` at a size larger than any
    /// thumbnail) and returns the decoded size.
    static func decodeJPEG(_ bytes: [UInt8], scratch: URL) throws -> (width: Int, height: Int) {
        #expect(bytes.starts(with: [0xFF, 0xD8, 0xFF]), "not a JPEG")
        let file = scratch.appendingPathComponent("decoded-\(UUID().uuidString).jpg")
        try Data(bytes).write(to: file)
        let decoded = try Thumbnailer.thumbnail(
            path: file.path, spec: ThumbnailSpec(size: 10_000, damageTolerance: .error))
        return (decoded.width, decoded.height)
    }

    @Test func storedReportReadsBackWhatTheBatchWrote() throws {
        try Batch.with { batch in
            let stored = try batch.stored()
            let ingested = batch.ingested
            #expect(stored.batchID == ingested.batchID)
            #expect(stored.key == ingested.key)
            #expect(stored.redirectURL == ingested.redirectURL)
            #expect(stored.pipeline == ingested.pipeline)
            #expect(stored.items.count == 6)
            #expect((stored.ingestedCount, stored.failedCount, stored.skippedCount) == (5, 1, 0))
            for (read, written) in zip(stored.items, ingested.items) {
                #expect(read.source == written.source)
                #expect(read.status == written.status)
                #expect(read.failure == written.failure)
                #expect(read.entry == written.entry)
                #expect(read.warnings == written.warnings)
            }
            #expect(Set(stored.stageSeconds.keys) == Set(ingested.stageSeconds.keys))
            // A bare key finds the same report.
            #expect(try BatchReport.stored(ingested.key.rawValue, in: batch.container).batchID == ingested.batchID)
        }
    }

    @Test func unknownKeysAndBadURLsAreClearErrors() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("report-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let container = try ContainerDirectory(scratch.path)

        let unknown = #expect(throws: StoredReportError.self) {
            try BatchReport.stored("ShareKey-missing", in: container)
        }
        guard case .unknownKey(let key, _)? = unknown else {
            Issue.record("expected unknownKey, got \(String(describing: unknown))")
            return
        }
        #expect(key.rawValue == "ShareKey-missing")
        #expect(unknown?.isUsageMistake == false)
        #expect(unknown?.description.contains("ShareKey-missing") == true)

        for typo in ["../etc/passwd", "ShareMedia://dataUrl=", "ShareMedia://somewhere"] {
            let error = #expect(throws: StoredReportError.self) { try BatchReport.stored(typo, in: container) }
            #expect(error?.isUsageMistake == true, "\(typo)")
        }

        try Data("{\"batch\": 1}".utf8).write(
            to: URL(fileURLWithPath: container.reportPath(key: ShareKey("ShareKey-bad"))))
        let malformed = #expect(throws: StoredReportError.self) {
            try BatchReport.stored("ShareKey-bad", in: container)
        }
        #expect(malformed?.description.contains("batch") == true)
    }

    @Test func pageEmbedsEveryThumbnailAsAJPEGTheRightWayUp() throws {
        try Batch.with { batch in
            let report = try batch.stored()
            let page = ReportPage(report, container: batch.container)
            let withThumbnails = report.entries.filter { $0.thumbnail != nil }
            #expect(withThumbnails.count == 5)  // photo, portrait, clip, PDF page, hostile copy
            #expect(page.embeddedThumbnailCount == withThumbnails.count)
            #expect(page.missingThumbnails.isEmpty)
            // Each picture carries its entry's ThumbHash for placeholders.
            for entry in withThumbnails {
                let hash = try #require(entry.thumbhash)
                #expect(page.html.contains("<figure class=\"picture\" data-thumbhash=\"\(hash)\"><img src="))
            }

            // Self-contained: every src is a data: URI (the thumbnails' JPEGs, the
            // ThumbHashes drawn as PNGs), nothing is loaded or scripted.
            #expect(
                page.html.components(separatedBy: "src=\"").dropFirst().allSatisfy {
                    $0.hasPrefix("data:image/jpeg;base64,") || $0.hasPrefix("data:image/png;base64,")
                })
            #expect(
                page.html.components(separatedBy: "<img class=\"thumbhash\" src=\"data:image/png;base64,").count - 1
                    == withThumbnails.count)
            let sources = page.html.components(separatedBy: "<img src=\"").dropFirst()
            #expect(sources.count == withThumbnails.count)
            for source in sources {
                let uri = String(source.prefix { $0 != "\"" })
                let prefix = "data:image/jpeg;base64,"
                #expect(uri.hasPrefix(prefix))
                let bytes = try #require(Data(base64Encoded: String(uri.dropFirst(prefix.count))))
                let size = try Self.decodeJPEG(Array(bytes), scratch: batch.scratch)
                #expect(size.width > 0 && size.height > 0)
            }
            let lowercased = page.html.lowercased()
            let forbidden = ["<script", "<link", "<iframe", "url(", "@import", "http://", "https://"].filter {
                lowercased.contains($0)
            }
            #expect(forbidden.isEmpty, "the page contains \(forbidden)")
            // The only links: each delivered copy's (a file:// URL without the page's place), a file in the container.
            let links = page.html.components(separatedBy: "href=\"").dropFirst().map {
                String($0.prefix { $0 != "\"" })
            }
            #expect(links.count == report.entries.count)
            for link in links {
                let path = try #require(URL(string: link)?.path, "\(link)")
                #expect(
                    link.hasPrefix("file:///") && path.hasPrefix(batch.container.root + "/")
                        && FileManager.default.fileExists(atPath: path), "\(link)")
            }
            let hasPolicy = page.html.contains("Content-Security-Policy")
            #expect(hasPolicy)

            // EXIF orientation 6: the copy is displayed portrait, and so is its thumbnail.
            let portrait = try #require(Self.card(named: "portrait-exif6.jpg", in: page.html))
            #expect(portrait.contains("480 × 640"))
            let uri = try #require(portrait.components(separatedBy: "base64,").dropFirst().first?.prefix { $0 != "\"" })
            let size = try Self.decodeJPEG(
                Array(try #require(Data(base64Encoded: String(uri)))), scratch: batch.scratch)
            #expect(size.height > size.width)

            let video = try #require(Self.card(named: "clip-h264.mp4", in: page.html))
            for fact in ["video", "video/mp4", ".mp4", "320 × 240", "2.0 s", "30.9 kB"] {
                #expect(video.contains("<dd>\(fact)</dd>"), "video card lacks \(fact)")
            }
        }
    }

    @Test func hostileNamesAreShownAsText() throws {
        try Batch.with { batch in
            // Booleans first, so a failure does not print the whole page with its thumbnails.
            let html = ReportPage(try batch.stored(), container: batch.container).html
            let rawName = html.contains(Self.hostileName)
            let scriptTag = html.contains("<script")
            let halfEscaped = html.contains("alert(1)&'")
            #expect(!rawName && !scriptTag && !halfEscaped)
            let escaped = "&lt;script&gt;alert(1)&amp;&#39;&quot;x&quot;.jpg"
            // The name links to its copy: `<h3 class="name"><a href="file:///…">NAME</a></h3>`.
            let escapedHeading = html.contains("\">\(escaped)</a></h3>")
            let escapedAlt = html.contains("alt=\"\(escaped)\"")
            #expect(escapedHeading && escapedAlt)
            let card = try #require(Self.card(named: Self.hostileName, in: html))
            #expect(card.contains("src=\"data:image/jpeg;base64,"))
        }
    }

    @Test(arguments: [
        ("plain name.jpg", "plain name.jpg"),
        ("<script>x</script>", "&lt;script&gt;x&lt;/script&gt;"),
        (#"a & b "c" 'd'"#, "a &amp; b &quot;c&quot; &#39;d&#39;"),
        ("&amp;", "&amp;amp;"),
        ("bell\u{07}tab\t", #"bell\x07tab"# + "\t"),
        ("d\u{202E}gpj.exe n\u{85}l \u{2028}", #"d\u{202E}gpj.exe n\u{0085}l \u{2028}"#),
        ("café ünïcode 📷", "café ünïcode 📷"),
    ])
    func htmlEscaping(_ text: String, _ expected: String) {
        #expect(HTMLText.escaped(text) == expected)
    }

    @Test func failedItemShowsItsReason() throws {
        try Batch.with { batch in
            let report = try batch.stored()
            let failed = try #require(report.items.first { $0.source.hasSuffix("/random.jpg") })
            let failure = try #require(failed.failure)
            #expect(failed.status == .failed)
            #expect(failure.reason == .contentMismatch)

            let page = ReportPage(report, container: batch.container)
            let card = try #require(Self.card(named: "random.jpg", in: page.html))
            #expect(card.hasPrefix("failed\""))
            #expect(card.contains("<b>contentMismatch</b> at \(failure.stage.rawValue)"))
            #expect(card.contains(HTMLText.escaped(failure.message)))
            // And in the list of items that were not delivered, above the grid.
            let afterProblems = try #require(
                page.html.components(separatedBy: "<section class=\"problems\">").dropFirst().first)
            let problems = afterProblems.components(separatedBy: "</section>")[0]
            #expect(problems.contains("<b class=\"name\">random.jpg</b>"))
            #expect(problems.contains(HTMLText.escaped(failure.message)))
            #expect(page.html.contains("<dt>Failed</dt><dd>1</dd>"))
        }
    }

    @Test func contactSheetHasATileForEveryItem() throws {
        try Batch.with { batch in
            let report = try batch.stored()
            // (layout, expected columns, rows, tiles)
            let cases: [(ContactSheetLayout, Int, Int, Int)] = [
                (ContactSheetLayout(columns: 4), 4, 2, 6),
                (ContactSheetLayout(), 3, 2, 6),  // automatic: the smallest square-ish grid
                (ContactSheetLayout(cellSize: 120, maximumTiles: 4), 2, 2, 4),
            ]
            for (layout, columns, rows, tiles) in cases {
                let sheet = try report.contactSheet(in: batch.container, layout: layout)
                #expect(sheet.tileCount == tiles)
                #expect(sheet.omittedCount == 6 - tiles)
                #expect((sheet.columns, sheet.rows) == (columns, rows))
                // The grid math: cells plus gaps, a margin of one gap, the title on top.
                let width = columns * layout.cellSize + (columns + 1) * layout.spacing
                let height =
                    layout.titleHeight + rows * (layout.cellSize + layout.captionHeight) + (rows + 1) * layout.spacing
                #expect((sheet.width, sheet.height) == (width, height))
                let decoded = try Self.decodeJPEG(sheet.jpeg, scratch: batch.scratch)
                #expect((decoded.width, decoded.height) == (width, height))
            }
        }
    }

    @Test(arguments: [
        (Int64(0), "0 B"), (693, "693 B"), (999, "999 B"), (1500, "1.50 kB"), (35_611, "35.6 kB"),
        (999_949, "999.9 kB"), (1_500_000, "1.50 MB"), (4_200_000_000, "4.20 GB"),
    ])
    func byteCounts(_ count: Int64, _ expected: String) {
        #expect(ReadableUnits.bytes(count) == expected)
    }

    @Test(arguments: [(400.0, "0.4 s"), (2000, "2.0 s"), (59_940, "59.9 s"), (65_000, "1:05"), (3_723_000, "1:02:03")])
    func durations(_ milliseconds: Double, _ expected: String) {
        #expect(ReadableUnits.duration(milliseconds: milliseconds) == expected)
    }

    /// A batch too large for one page (a phone backup) shows its first items
    /// and problems, its real totals, and says where the rest are listed; the
    /// contact sheet draws its first tiles and counts the rest.
    @Test func aHugeBatchsPageAndSheetShowItsFirstItemsAndSaySo() throws {
        let total = 2 * ReportPage.itemLimit + 500
        let items = (0..<total).map { index in
            ItemReport(
                index: index, source: "/drop/note-\(index).txt", status: index % 2 == 0 ? .ingested : .failed,
                failure: index % 2 == 0 ? nil : ItemFailure(.sniff, .empty, "/drop/note-\(index).txt is empty"),
                warnings: [],
                entry: index % 2 == 0 ? SharedMediaFile(path: "file:///c/\(index).txt", type: .file, size: 10) : nil,
                id: nil, stageSeconds: [:])
        }
        let report = BatchReport(
            batchID: UUID(), key: try ShareKey("huge"), redirectURL: nil, manifestPath: nil, schema: .v2,
            pipeline: "default", items: items,
            stageSeconds: [:], wallSeconds: 1)
        let container = try ContainerDirectory(
            FileManager.default.temporaryDirectory.appendingPathComponent("huge-\(UUID().uuidString)").path)
        let html = ReportPage(report, container: container).html
        #expect(html.components(separatedBy: "<li class=\"item ").count - 1 == ReportPage.itemLimit)
        #expect(
            html.contains(
                "The first \(ReportPage.itemLimit) of \(total) items are shown: the batch's JSON report lists every item."
            ))
        #expect(html.contains("Not delivered (\(total / 2))"))
        #expect(
            html.contains("… and \(total / 2 - ReportPage.itemLimit) more"), "the problems list is cut at the limit too"
        )
        #expect(
            html.contains("<dd>\(ReadableUnits.bytes(Int64(10 * (total / 2))))</dd>"),
            "delivered bytes count every item")
        let sheet = try report.contactSheet(in: container, layout: ContactSheetLayout(maximumTiles: 12))
        #expect(sheet.tileCount == 12 && sheet.omittedCount == total - 12)
    }

    /// A stored report larger than ``BatchReport/itemsHeldInMemory`` is read by
    /// its header (batch fields and counts) and its items one at a time: never
    /// decoded whole (a million-item batch's is half a gigabyte).
    @Test func aLargeStoredReportIsReadItemByItem() throws {
        let total = BatchReport.itemsHeldInMemory + 1
        let items = (0..<total).map { index in
            ItemReport(
                index: index, source: "/drop/note-\(index).txt", status: .ingested, failure: nil, warnings: [],
                entry: SharedMediaFile(path: "file:///c/\(index).txt", type: .file, size: 10), id: nil,
                stageSeconds: [:])
        }
        let key = try ShareKey("large-stored")
        let report = BatchReport(
            batchID: UUID(), key: key, redirectURL: nil, manifestPath: nil, schema: .v2, pipeline: "default",
            items: items, stageSeconds: [:], wallSeconds: 1)
        let container = try ContainerDirectory(
            FileManager.default.temporaryDirectory.appendingPathComponent("stored-\(UUID().uuidString)").path)
        defer { try? FileManager.default.removeItem(atPath: container.root) }
        try FileManager.default.createDirectory(
            atPath: (container.reportPath(key: key) as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        try report.json().write(to: URL(fileURLWithPath: container.reportPath(key: key)))

        let stored = try BatchReport.stored(key: key, in: container)
        #expect(stored.items.count == total && stored.ingestedCount == total)
        #expect(!stored.items.areHeld, "the header alone was not readable: the whole report was decoded")
        var sources: [String] = []
        stored.items.visit { sources.append($0.source) }
        #expect(
            sources.count == total && sources.first == "/drop/note-0.txt"
                && sources.last == "/drop/note-\(total - 1).txt")
        #expect(!stored.items.areHeld)
    }

    /// `share report --html --contact-sheet` on a large stored report: one pass
    /// over its items for both outputs, so each item is read once, and decoded
    /// only if one of them shows it (debug builds count both per report file); the page is streamed
    /// to its file and shows what ``ReportPage`` shows, the sheet its first tiles.
    @Test func bothOutputsDecodeEachStoredItemOnce() throws {
        let total = BatchReport.itemsHeldInMemory + 1
        let items = (0..<total).map { index in
            ItemReport(
                index: index, source: "/drop/note-\(index).txt", status: index % 3 == 0 ? .failed : .ingested,
                failure: index % 3 == 0 ? ItemFailure(.sniff, .empty, "/drop/note-\(index).txt is empty") : nil,
                warnings: [],
                entry: index % 3 == 0 ? nil : SharedMediaFile(path: "file:///c/\(index).txt", type: .file, size: 10),
                id: nil, stageSeconds: [:])
        }
        let key = try ShareKey("decoded-once")
        let report = BatchReport(
            batchID: UUID(), key: key, redirectURL: nil, manifestPath: nil, schema: .v2, pipeline: "default",
            items: items, stageSeconds: [:], wallSeconds: 1)
        let container = try ContainerDirectory(
            FileManager.default.temporaryDirectory.appendingPathComponent("once-\(UUID().uuidString)").path)
        defer { try? FileManager.default.removeItem(atPath: container.root) }
        let path = container.reportPath(key: key)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try report.json().write(to: URL(fileURLWithPath: path))
        let out = container.root + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)

        let stored = try BatchReport.stored(key: key, in: container)
        let outputs = stored.writeOutputs(
            in: container, html: out + "/page.html", sheet: true, layout: ContactSheetLayout(maximumTiles: 12))
        #if DEBUG
            // Read once each: decoded when shown (the grid's first items, the first problems), else skimmed.
            let decoded = StoredReportReader.decodedItems.withLock { $0[path] ?? 0 }
            let skimmed = StoredReportReader.skimmedItems.withLock { $0[path] ?? 0 }
            #expect(
                decoded + skimmed == total,
                "each item read once for both outputs: \(decoded) decoded, \(skimmed) skimmed")
            let shownProblems = (0..<total).lazy.filter { $0 % 3 == 0 }.prefix(ReportPage.itemLimit).last!
            #expect(
                decoded == ReportPage.itemLimit + (ReportPage.itemLimit - (ReportPage.itemLimit + 2) / 3),
                "only the items shown are decoded (last problem shown: \(shownProblems))")
        #endif
        #expect(!stored.items.areHeld)
        let page = try #require(try outputs.page?.get())
        #expect(page.embeddedThumbnailCount == 0 && page.missingThumbnails.isEmpty)
        let html = try String(contentsOfFile: out + "/page.html", encoding: .utf8)
        #expect(html == ReportPage(report, container: container).html, "the streamed page is the page")
        #expect(html.components(separatedBy: "<li class=\"item ").count - 1 == ReportPage.itemLimit)
        #expect(html.contains("Not delivered (\((total + 2) / 3))"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["page.html"], "a temporary file was left")
        let sheet = try #require(try outputs.sheet?.get())
        #expect(sheet.tileCount == 12 && sheet.omittedCount == total - 12)
    }

    /// The page `writeOutputs` streams to a file is the one ``ReportPage``
    /// renders, thumbnails embedded, for a real batch.
    @Test func theStreamedPageIsThePage() throws {
        try Batch.with { batch in
            let report = try batch.stored()
            let path = batch.scratch.appendingPathComponent("page.html").path
            let outputs = report.writeOutputs(in: batch.container, html: path, sheet: false)
            let page = try #require(try outputs.page?.get())
            let expected = ReportPage(report, container: batch.container, pagePath: path)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == expected.html)
            #expect(page.embeddedThumbnailCount == expected.embeddedThumbnailCount && page.embeddedThumbnailCount > 0)
            #expect(outputs.sheet == nil)
        }
    }

    /// Issue 33: what the v2 manifest tells an app is on the page too: the previews
    /// (linked to their files), when it was taken and how that is known, the
    /// ThumbHash and how a video plays, for a real iPhone 6 photo and an H.264 clip,
    /// ingested with `sizes` [360, 1440] as WebP.
    @Test func pageShowsPreviewsCaptureTimeAndVideoFacts() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("report-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let container = try ContainerDirectory(scratch.appendingPathComponent("container").path)
        var pipeline = PipelineDefinition.standard
        pipeline.thumbnail?.sizes = [360, 1440]
        pipeline.thumbnail?.format = .webp
        let photo = Self.media("photo.jpg").deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("privacy/iphone6-gps.jpg")
        let report = try ShareIngestor(container: container, pipeline: pipeline).ingest([
            .path(photo.path), .path(Self.media("clip-h264.mp4").path),
        ])
        #expect(report.counts.ingested == 2)
        let html = ReportPage(
            try BatchReport.stored(try #require(report.redirectURL).description, in: container), container: container
        ).html

        let card = try #require(Self.card(named: "iphone6-gps.jpg", in: html))
        let entry = try #require(report.items.first { $0.source == photo.path }?.entry)
        let preview = try #require(entry.previews?.first)
        #expect(preview.width == 1440 && preview.height == 1080 && preview.mimeType == "image/webp")
        // The link is the preview's file, and it is there.
        let link = try #require(
            card.components(separatedBy: "<dt>Previews</dt><dd><a href=\"").dropFirst().first?.prefix { $0 != "\"" })
        #expect(URL(string: String(link))?.path == ManifestCoder.filePath(fromURLString: preview.path))
        #expect(FileManager.default.fileExists(atPath: try #require(URL(string: String(link))?.path)))
        #expect(
            card.contains("\">1440 × 1080 WebP, \(ReadableUnits.bytes(try #require(preview.size)))</a></dd>"), "\(card)"
        )
        // DateTimeOriginal 2015:04:10 20:12:23 with no OffsetTimeOriginal; the GPS time gives the offset.
        let taken = try #require(entry.capturedAt)
        #expect(taken.hasPrefix("2015-04-10T20:12:23"))
        #expect(
            card.contains(
                "<dt>Taken</dt><dd>\(taken) (\(try #require(entry.capturedAtSource)), offset from exif)</dd>"),
            "\(card)")
        // The ThumbHash drawn as the placeholder it stands for (a PNG), the hash as its title.
        #expect(card.contains("<dt>ThumbHash</dt><dd><img class=\"thumbhash\" src=\"data:image/png;base64,"), "\(card)")
        #expect(card.contains("title=\"\(try #require(entry.thumbhash))\"></dd>"))

        let clip = try #require(Self.card(named: "clip-h264.mp4", in: html))
        let video = try #require(report.items.first { $0.source.hasSuffix("clip-h264.mp4") }?.entry?.video)
        #expect(video.codec == "h264")
        #expect(
            clip.contains("<dt>Video</dt><dd>h264, \(ReadableUnits.frameRate(try #require(video.frameRate)))"),
            "\(clip)")
        #expect(clip.contains(video.audio.map { "audio \($0)</dd>" } ?? "no audio</dd>"), "\(clip)")
        #expect(!clip.contains("<dt>Previews</dt>") || clip.contains("WebP"), "a video's poster previews are WebP too")
    }

    @Test(arguments: [(30.0, "30 fps"), (29.97002997, "29.97 fps"), (239.76, "239.76 fps"), (24.0001, "24 fps")])
    func frameRatesReadAsPeopleWriteThem(rate: Double, shown: String) {
        #expect(ReadableUnits.frameRate(rate) == shown)
    }
}
