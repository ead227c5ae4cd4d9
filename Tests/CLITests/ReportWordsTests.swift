import Foundation
import TestSupport
import Testing

/// `share report` as a person meets it (issue 61, finding 12): with no output
/// option, a text summary on stdout; the page and the contact sheet with the
/// umask's mode, for people to open; each card's name links to its delivered
/// copy (relative to the page), its ThumbHash drawn as the placeholder image
/// it is, and a copy that duplicates an earlier one marked. The layout at 390
/// and 1280 px is ReportBrowserTests'.
@Suite struct ReportWordsTests {
    /// A batch of two copies of one photo (the second a duplicate) and a FIFO
    /// (skipped), keyed `Words`, in `work/c`.
    static func batch(in work: TemporaryDirectory) throws -> String {
        let drop = work.path + "/drop"
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: drop + "/a.jpg")
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: drop + "/b.jpg")
        #expect(mkfifo(drop + "/pipe", 0o600) == 0)
        let ingest = try ShareProcess.run([
            "ingest", "--quiet", "--container", work.path + "/c", "--key", "Words", drop,
        ])
        #expect(ingest.status == 1, "\(ingest.stderr)")
        return drop
    }

    @Test func withoutAnOutputOptionItPrintsASummary() throws {
        let work = TemporaryDirectory("report-words")
        let drop = try Self.batch(in: work)
        let run = try ShareProcess.run(["report", "Words", "--container", work.path + "/c"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first?.hasPrefix("batch ") == true
                && lines.first?.contains("key Words, pipeline default: 3 items in") == true, "\(run.stdout)")
        #expect(
            lines.contains("2 ingested, 0 failed, 1 skipped; 1 a duplicate of an earlier copy (duplicateOf)"),
            "\(run.stdout)")
        #expect(
            lines.contains { $0.hasPrefix("skipped: \(drop)/pipe: notRegularFile (") },
            "the item not delivered, with its reason: \(run.stdout)")
        #expect(lines.last == "ShareMedia://dataUrl=Words#media", "the redirect URL last: \(run.stdout)")
        #expect(!run.stderr.contains("nothing to write"), "\(run.stderr)")
    }

    @Test func thePageAndTheSheetHaveTheUmasksMode() throws {
        let work = TemporaryDirectory("report-words")
        _ = try Self.batch(in: work)
        let run = try ShareProcess.run(
            [
                "report", "Words", "--container", work.path + "/c", "--html", work.path + "/page.html",
                "--contact-sheet", work.path + "/sheet.jpg",
            ],
            under: ["/bin/sh", "-c", "umask 022 && exec \"$0\" \"$@\""])
        #expect(run.status == 0, "\(run.stderr)")
        for file in ["page.html", "sheet.jpg"] {
            var st = stat()
            #expect(stat(work.path + "/" + file, &st) == 0)
            #expect(
                st.st_mode & 0o7777 == 0o644,
                "\(file): \(String(st.st_mode & 0o7777, radix: 8)), where umask 022 gives 0644")
        }
    }

    @Test func eachCardLinksItsCopyDrawsItsThumbHashAndMarksADuplicate() throws {
        let work = TemporaryDirectory("report-words")
        _ = try Self.batch(in: work)
        let run = try ShareProcess.run([
            "report", "Words", "--container", work.path + "/c", "--html", work.path + "/page.html",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let html = try String(contentsOfFile: work.path + "/page.html", encoding: .utf8)
        let copies = try FileManager.default.contentsOfDirectory(atPath: work.path + "/c").filter {
            $0.hasSuffix(".jpg")
        }
        #expect(copies.count == 2)
        for copy in copies {
            #expect(html.contains("<a href=\"c/\(copy)\">"), "a link to \(copy) relative to the page")
        }
        let placeholders =
            html.components(separatedBy: "<img class=\"thumbhash\" src=\"data:image/png;base64,").count - 1
        #expect(placeholders == 2, "each ThumbHash drawn as a PNG")
        #expect(
            !html.contains("<dt>ThumbHash</dt><dd>") || html.contains("<dt>ThumbHash</dt><dd><img"),
            "no hash as a raw string")
        #expect(
            html.components(separatedBy: "<span class=\"status duplicate\">duplicate</span>").count - 1 == 1,
            "the second copy marked")
        #expect(html.contains("<dt>Duplicate of</dt>"))
    }
}
