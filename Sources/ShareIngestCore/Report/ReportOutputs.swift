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
    /// contact sheet (drawn with `layout` when `sheet`), from **one** pass over the items:
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
        in container: ContainerDirectory, html htmlPath: String?, sheet: Bool, layout: ContactSheetLayout = ContactSheetLayout(),
        decoder: any MediaDecoder
    ) -> ReportOutputs {
        var page = htmlPath.map { _ in PageWriter(report: self, container: container) }
        var tiles = sheet ? ContactSheetTiles(report: self, container: container, layout: layout, decoder: decoder) : nil
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
                let file = try AtomicFileWriter(htmlPath)
                try file.append(writer.opening())
                try file.append(contentsOf: cardsPath)
                try file.append(writer.closing())
                try file.commit(syncDirectory: false, replacing: true)
                return ReportOutputs.PageSummary(embeddedThumbnailCount: writer.embedded, missingThumbnails: writer.missing)
            }
        }
        let sheetResult = tiles.map { tiles in Result { () throws(MediaError) in try tiles.render() } }
        return ReportOutputs(page: pageResult, sheet: sheetResult)
    }
}
