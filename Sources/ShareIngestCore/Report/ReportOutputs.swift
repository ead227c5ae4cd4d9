import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

/// What `share report` wrote: the HTML page, the contact sheet, or both.
public struct ReportOutputs: Sendable {
    /// The page written, or why not (nil when none was asked for).
    public let page: Result<PageSummary, SystemError>?
    /// The sheet drawn, or why not (nil when none was asked for); the caller writes its JPEG.
    public let sheet: Result<ContactSheet, MediaError>?

    /// What the page embedded.
    public struct PageSummary: Sendable {
        /// How many thumbnails were embedded.
        public let embeddedThumbnailCount: Int
        /// Items whose entry names a thumbnail that could not be embedded, by name.
        public let missingThumbnails: [String]
    }
}

extension BatchReport {
    /// The HTML page (written to `htmlPath`, replacing it atomically) and/or the
    /// contact sheet (drawn with `layout` when `sheet`), from **one** pass over the items
    /// (the page is created with the umask's mode, 0666 less it: it is for people to open):
    /// a stored report's items are read once for both outputs, one at a time,
    /// and neither output holds more than what it shows. An item either output
    /// shows is decoded once; the others (past the page's first items and
    /// problems and the sheet's tiles) are skimmed for their status and size,
    /// which the totals need, and never decoded. The page is
    /// streamed: its grid's cards (thumbnails embedded) go to a temporary file
    /// beside it as they are made, and the page is the header (whose totals are
    /// known only at the end), then that file; the sheet keeps the descriptions
    /// of its first `maximumTiles` tiles, each thumbnail decoded once to the
    /// pixels of its tile by `decoder` (see ``contactSheet(in:layout:decoder:)``:
    /// `share` passes sandboxed helpers, and then this process decodes nothing).
    public func writeOutputs(
        in container: ContainerDirectory, html htmlPath: String?, sheet: Bool,
        layout: ContactSheetLayout = ContactSheetLayout(),
        decoder: any MediaDecoder
    ) -> ReportOutputs {
        var page = htmlPath.map { PageWriter(report: self, container: container, pagePath: $0) }
        var tiles =
            sheet ? ContactSheetTiles(report: self, container: container, layout: layout, decoder: decoder) : nil
        var cards: AtomicFileWriter?
        var cardsPath = ""
        var pageFailure: SystemError?
        if let htmlPath {
            cardsPath = FileSystem.temporaryName(for: htmlPath + ".cards")
            do throws(SystemError) { cards = try AtomicFileWriter(cardsPath) } catch { pageFailure = error }
        }
        // Items neither output shows are skimmed (status and size), not decoded.
        items.visit(
            whole: { skim in (page?.wantsWhole(skim) ?? false) || (tiles?.wantsMore ?? false) },
            { item in
                if pageFailure == nil, let card = page?.add(item) {
                    do throws(SystemError) { try cards?.append(card) } catch { pageFailure = error }
                }
                tiles?.add(item)
            },
            skimmed: { skim in page?.add(skim) })
        var pageResult: Result<ReportOutputs.PageSummary, SystemError>?
        if let htmlPath, var writer = page {
            pageResult = Result { () throws(SystemError) in
                if let pageFailure { throw pageFailure }
                guard let cards else { throw SystemError("write", path: htmlPath, code: EBADF) }
                try cards.commit(syncDirectory: false)
                defer { FileSystem.remove(cardsPath) }
                // For people to open: the umask's mode (0666 less it), not owner-only.
                let file = try AtomicFileWriter(htmlPath, mode: 0o666)
                try file.append(writer.opening())
                try file.append(contentsOf: cardsPath)
                try file.append(writer.closing())
                try file.commit(syncDirectory: false, replacing: true)
                return ReportOutputs.PageSummary(
                    embeddedThumbnailCount: writer.embedded, missingThumbnails: writer.missing)
            }
        }
        let sheetResult = tiles.map { tiles in Result { () throws(MediaError) in try tiles.render() } }
        return ReportOutputs(page: pageResult, sheet: sheetResult)
    }
}

extension BatchReport {
    /// The batch in a few lines, each given to `line` (`share report KEY` prints
    /// them on stdout): its counts, each item not delivered with its reason, and
    /// the redirect URL last, as `share ingest` prints it. Lines hold names and
    /// messages as they are: a caller escapes them for where they go.
    ///
    ///     batch 0B1C…, key Ops1, pipeline default: 3 items in 1.20 s
    ///     2 ingested, 1 failed, 0 skipped; 1 a duplicate of an earlier copy (duplicateOf)
    ///     failed: /drop/x.jpg: corrupt (decode): not a JPEG
    ///     ShareMedia://dataUrl=Ops1#media
    package func summarize(_ line: (String) -> Void) {
        let count = items.count
        line(
            "batch \(batchID.uuidString), key \(key.rawValue), pipeline \(pipeline): \(count) item\(count == 1 ? "" : "s") in \(String(format: "%.2f", wallSeconds)) s"
                + (interrupted ? " (interrupted: unfinished)" : ""))
        var undelivered: [String] = []
        var duplicates = 0
        items.visit { item in
            if item.entry?.duplicateOf != nil { duplicates += 1 }
            guard item.status == .failed || item.status == .skipped else { return }
            let why =
                item.failure.map { "\($0.reason.rawValue) (\($0.stage.rawValue)): \($0.message)" }
                ?? "no reason recorded"
            undelivered.append("\(item.status.rawValue): \(item.source): \(why)")
        }
        var counts = "\(ingestedCount) ingested, \(failedCount) failed, \(skippedCount) skipped"
        if attachedCount > 0 { counts += ", \(attachedCount) sidecars attached to their media" }
        if duplicates > 0 {
            counts +=
                duplicates == 1
                ? "; 1 a duplicate of an earlier copy (duplicateOf)"
                : "; \(duplicates) duplicates of earlier copies (duplicateOf)"
        }
        line(counts)
        for text in undelivered { line(text) }
        line(redirectURL?.description ?? "no redirect URL: no manifest was written (nothing was delivered)")
    }
}
