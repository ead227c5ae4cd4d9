import Foundation
import ShareManifest
import SystemCalls

/// A batch as one self-contained HTML page: totals and stage timings, the items
/// that were not delivered with their reasons, and a grid of every item with its
/// thumbnail, name (linked to its delivered copy), type, extension, size,
/// dimensions, duration and ThumbHash (drawn as its placeholder image); copies
/// that duplicate an earlier one are marked. A batch of
/// more than ``itemLimit`` items shows its first ones (and its first
/// ``itemLimit`` problems) and says how many more the JSON report lists.
///
/// The page opens from disk, a web server or a CI artifact store alike:
/// thumbnails are embedded as `data:` URIs, the CSS is inline, there is no
/// JavaScript, and a Content-Security-Policy forbids loading anything else. All
/// text from the report is escaped (file names are hostile input).
public struct ReportPage: Sendable {
    /// The HTML document (UTF-8).
    public let html: String
    /// How many thumbnails were embedded.
    public let embeddedThumbnailCount: Int
    /// Items whose manifest entry names a thumbnail that could not be embedded
    /// (deleted, outside the container, not a JPEG), by name.
    public let missingThumbnails: [String]

    /// Thumbnails larger than this are not embedded (the pipeline's are ~20–60 kB).
    static let maximumThumbnailBytes = 4 << 20
    /// Items shown in the grid, and problems listed, at most: a page of a
    /// million items would not open.
    public static let itemLimit = 2000

    /// Renders `report`, reading thumbnails from `container`. `pagePath`, where
    /// the page will be, makes each card's link to its copy relative to it (the
    /// page and the container move together); without it, or when they share
    /// no folder but the root, the links are `file://` URLs.
    public init(_ report: BatchReport, container: ContainerDirectory, pagePath: String? = nil) {
        var writer = PageWriter(report: report, container: container, pagePath: pagePath)
        var cards = ""
        report.items.visit { item in if let card = writer.add(item) { cards += card } }
        html = writer.opening() + cards + writer.closing()
        embeddedThumbnailCount = writer.embedded
        missingThumbnails = writer.missing
    }
}

/// Builds the page from the items given one at a time (each read once, for a
/// large batch from its stored report): the grid's cards come out as they are
/// made, so a caller can stream them to a file; what comes before the grid
/// (totals, the problems) is known only at the end (``opening()``). Counts what
/// it embedded on the way.
struct PageWriter {
    let report: BatchReport
    let container: ContainerDirectory
    /// The folder the page will be in (absolute, standardized), for links relative to it.
    let pageFolder: String?
    /// The first items not delivered.
    private(set) var undelivered: [ReportedItem] = []
    /// Bytes of everything delivered.
    private(set) var deliveredBytes: Int64 = 0
    /// Cards made so far (at most ``ReportPage/itemLimit``).
    private(set) var shown = 0
    var embedded = 0
    var missing: [String] = []
    private var out = ""

    init(report: BatchReport, container: ContainerDirectory, pagePath: String? = nil) {
        self.report = report
        self.container = container
        pageFolder = pagePath.map { path in
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            return URL(fileURLWithPath: absolute).standardizedFileURL.deletingLastPathComponent().path
        }
    }

    /// A link to `path` (a file inside the container) from the page: relative to
    /// the page's folder when they share one below the root, else a `file://`
    /// URL; each name percent-encoded (`:` too, so no name reads as a scheme).
    func link(to path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: ":/")
        let target = URL(fileURLWithPath: path).standardizedFileURL.pathComponents.dropFirst()
        let encoded = { (names: ArraySlice<String>) in
            names.map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0 }.joined(separator: "/")
        }
        guard let pageFolder else { return "file:///" + encoded(target) }
        let folder = URL(fileURLWithPath: pageFolder).pathComponents.dropFirst()
        let shared = zip(folder, target).prefix { $0 == $1 }.count
        guard shared > 0 else { return "file:///" + encoded(target) }
        return String(repeating: "../", count: folder.count - shared) + encoded(target.dropFirst(shared))
    }

    /// Takes the next item (in input order); returns its grid card while the
    /// grid has room, keeping only what the page's top shows.
    mutating func add(_ item: ItemReport) -> String? {
        deliveredBytes += item.entry?.size ?? 0
        // A sidecar attached to its photo was delivered with it: not a problem to list.
        if item.status != .ingested, item.status != .attached, undelivered.count < ReportPage.itemLimit {
            undelivered.append(ReportedItem(item, container: container))
        }
        guard shown < ReportPage.itemLimit else { return nil }
        shown += 1
        out = ""
        card(ReportedItem(item, container: container))
        defer { out = "" }
        return out
    }

    /// True when the page shows more of an item than its status and size:
    /// while the grid has room, or it is one of the first not delivered.
    func wantsWhole(_ skim: ItemSkim) -> Bool {
        shown < ReportPage.itemLimit
            || (skim.status != .ingested && skim.status != .attached && undelivered.count < ReportPage.itemLimit)
    }

    /// Takes the next item when ``wantsWhole(_:)`` did not: it counts in the totals alone.
    mutating func add(_ skim: ItemSkim) { deliveredBytes += skim.size }

    /// `text`, escaped.
    private func e(_ text: String) -> String { HTMLText.escaped(text) }

    /// Everything before the grid's cards: the document's head, the header
    /// with the totals, the problems and the grid's opening tag. Call after the
    /// last ``add(_:)``.
    mutating func opening() -> String {
        let key = e(report.key.rawValue)
        out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
            <meta name="referrer" content="no-referrer">
            <title>Share batch \(key)</title>
            <style>\(Self.styleSheet)</style>
            </head>
            <body>

            """
        header()
        problems()
        out += "<main>\n<h2>Items</h2>\n<ol class=\"grid\">\n"
        defer { out = "" }
        return out
    }

    /// Everything after the grid's cards.
    func closing() -> String {
        var end = "</ol>\n"
        if report.items.count > shown {
            end +=
                "<p class=\"more\">The first \(shown) of \(report.items.count) items are shown: the batch's JSON report lists every item.</p>\n"
        }
        return end + "</main>\n</body>\n</html>\n"
    }

    private mutating func header() {
        out += "<header>\n<h1>Share batch <code>\(e(report.key.rawValue))</code></h1>\n"
        var meta: [String] = [
            "pipeline <b>\(e(report.pipeline))</b>",
            "manifest \(e(report.schema.rawValue)): \(e(manifestState))",
        ]
        if let redirect = report.redirectURL { meta.append("redirect <code>\(e(redirect.description))</code>") }
        meta.append("batch <code>\(e(report.batchID.uuidString))</code>")
        out += "<p class=\"meta\">" + meta.joined(separator: " · ") + "</p>\n"

        out += "<dl class=\"totals\">\n"
        let totals: [(String, String, String)] =
            [
                ("items", "Items", "\(report.items.count)"),
                ("ingested", "Ingested", "\(report.ingestedCount)"),
                ("failed", "Failed", "\(report.failedCount)"),
                ("skipped", "Skipped", "\(report.skippedCount)"),
            ] + (report.attachedCount > 0 ? [("attached", "Sidecars attached", "\(report.attachedCount)")] : []) + [
                ("wall", "Wall time", ReadableUnits.seconds(report.wallSeconds))
            ]
        for (cssClass, label, value) in totals + [("bytes", "Delivered", ReadableUnits.bytes(deliveredBytes))] {
            let flagged = (cssClass == "failed" || cssClass == "skipped") && value != "0" ? " flagged" : ""
            out += "<div class=\"\(cssClass)\(flagged)\"><dt>\(label)</dt><dd>\(e(value))</dd></div>\n"
        }
        out += "</dl>\n"

        // Every stage that took time, in run order: one the built-in catalog
        // lacks (a stage of the caller's own) after those, by name.
        let stages = StageCatalog.builtin.inRunOrder(report.stageSeconds.keys).compactMap { stage in
            report.stageSeconds[stage].map { (stage, $0) }
        }
        if !stages.isEmpty {
            let longest = max(stages.map(\.1).max() ?? 0, 1e-9)
            out +=
                "<table class=\"stages\">\n<caption>Time per stage, summed over items (stages overlap, so the sum can exceed the wall time)</caption>\n"
            for (stage, seconds) in stages {
                let percent = String(format: "%.1f", seconds / longest * 100)
                out +=
                    "<tr><th scope=\"row\">\(e(stage.rawValue))</th><td class=\"seconds\">\(e(ReadableUnits.seconds(seconds)))</td>"
                out += "<td class=\"bar\"><span style=\"width: \(percent)%\"></span></td></tr>\n"
            }
            out += "</table>\n"
        }
        out += "</header>\n"
    }

    private var manifestState: String {
        guard report.manifestPath != nil else { return "none written (nothing was delivered)" }
        if FileSystem.exists(container.manifestPath(key: report.key)) { return "waiting for the host app" }
        if FileSystem.exists(container.consumedManifestPath(key: report.key)) { return "delivered to the host app" }
        return "no longer in the container"
    }

    private mutating func problems() {
        guard !undelivered.isEmpty else { return }
        let total = report.failedCount + report.skippedCount
        out += "<section class=\"problems\">\n<h2>Not delivered (\(total))</h2>\n<ul>\n"
        for reported in undelivered {
            let failure = reported.item.failure
            out +=
                "<li class=\"\(reported.item.status.rawValue)\"><span class=\"status\">\(reported.item.status.rawValue)</span> "
            out += "<b class=\"name\">\(e(reported.name))</b>"
            if let summary = reported.reasonSummary { out += " <span class=\"why\">\(e(summary))</span>" }
            if let failure { out += "<br><span class=\"message\">\(e(failure.message))</span>" }
            out += "</li>\n"
        }
        out += "</ul>\n"
        if total > undelivered.count {
            out +=
                "<p class=\"more\">… and \(total - undelivered.count) more: the batch's JSON report lists every item.</p>\n"
        }
        out += "</section>\n"
    }

    private mutating func card(_ reported: ReportedItem) {
        let item = reported.item
        let duplicateOf = item.entry?.duplicateOf
        out +=
            "<li class=\"item \(item.status.rawValue)\(duplicateOf != nil ? " duplicate" : "")\" id=\"item-\(item.index)\">\n"
        picture(reported)
        out += "<div class=\"body\">\n"
        // The name opens the delivered copy.
        let name =
            reported.copyPath.map { "<a href=\"\(e(link(to: $0)))\">\(e(reported.name))</a>" } ?? e(reported.name)
        out += "<h3 class=\"name\">\(name)</h3>\n"
        if item.status != .ingested { out += "<span class=\"status\">\(item.status.rawValue)</span>\n" }
        if duplicateOf != nil { out += "<span class=\"status duplicate\">duplicate</span>\n" }

        var facts: [(String, String)] = []
        if let entry = item.entry {
            facts.append(("Type", entry.type.rawValue))
            if let mimeType = entry.mimeType { facts.append(("Format", mimeType)) }
            if let ext = reported.fileExtension {
                facts.append(("Extension", "." + ext + (reported.originalExtension.map { " (named .\($0))" } ?? "")))
            }
        }
        if let size = reported.size { facts.append(("Size", size)) }
        if let dimensions = reported.dimensions { facts.append(("Dimensions", dimensions)) }
        if let duration = reported.duration { facts.append(("Duration", duration)) }
        if let view = reported.view { facts.append(("View", view)) }
        if let taken = reported.taken { facts.append(("Taken", taken)) }
        if let camera = reported.camera { facts.append(("Camera", camera)) }
        if let playback = reported.playback { facts.append(("Video", playback)) }
        if let duplicateOf { facts.append(("Duplicate of", duplicateOf)) }
        var listed = facts.map { "<dt>\($0.0)</dt><dd>\(e($0.1))</dd>" }
        if let hash = item.entry?.thumbhash {
            // The placeholder the hash stands for, drawn; the hash itself as its title.
            if let placeholder = PlaceholderImage.dataURI(thumbhash: hash) {
                listed.append(
                    "<dt>ThumbHash</dt><dd><img class=\"thumbhash\" src=\"\(placeholder.uri)\" width=\"\(placeholder.width)\" height=\"\(placeholder.height)\""
                        + " alt=\"ThumbHash placeholder of \(e(reported.name))\" title=\"\(e(hash))\"></dd>")
            } else {
                listed.append("<dt>ThumbHash</dt><dd>\(e(hash)) (not a ThumbHash)</dd>")
            }
        }
        if !reported.previews.isEmpty {
            // Each preview links to its file; one that is not there says so.
            let links = reported.previews.map { preview in
                preview.path.map { "<a href=\"\(e(URL(fileURLWithPath: $0).absoluteString))\">\(e(preview.label))</a>" }
                    ?? e(preview.label + " (missing)")
            }
            listed.append("<dt>Previews</dt><dd>" + links.joined(separator: "; ") + "</dd>")
        }
        if !listed.isEmpty {
            out += "<dl class=\"facts\">" + listed.joined() + "</dl>\n"
        }
        if let excerpt = reported.excerpt(limit: 280) {
            out += "<p class=\"excerpt\">\(e(excerpt))</p>\n"
        }
        if let failure = item.failure {
            out +=
                "<p class=\"reason\"><b>\(e(failure.reason.rawValue))</b> at \(e(failure.stage.rawValue)): \(e(failure.message))</p>\n"
        }
        if !item.warnings.isEmpty {
            out += "<ul class=\"warnings\">" + item.warnings.map { "<li>\(e($0))</li>" }.joined() + "</ul>\n"
        }
        if item.source != reported.name, reported.excerpt(limit: 1) == nil {
            out += "<p class=\"source\">\(e(item.source))</p>\n"
        }
        out += "</div>\n</li>\n"
    }

    private mutating func picture(_ reported: ReportedItem) {
        if let dataURI = thumbnailDataURI(reported) {
            // The ThumbHash rides along for a page script that draws placeholders (`data-thumbhash`).
            let hash = reported.item.entry?.thumbhash.map { " data-thumbhash=\"\(e($0))\"" } ?? ""
            out +=
                "<figure class=\"picture\"\(hash)><img src=\"\(dataURI)\" alt=\"\(e(reported.name))\" decoding=\"async\"></figure>\n"
        } else {
            let label = reported.item.status == .ingested ? reported.placeholderLabel : reported.item.status.rawValue
            out += "<figure class=\"picture none\"><span>\(e(label))</span></figure>\n"
        }
    }

    /// The entry's thumbnail as a `data:image/jpeg;base64,…` URI, or nil (noted in
    /// `missing` when the entry names one).
    private mutating func thumbnailDataURI(_ reported: ReportedItem) -> String? {
        guard reported.item.entry?.thumbnail != nil else { return nil }
        guard let path = reported.thumbnailPath,
            let status = try? FileStatus.of(path), status.size <= ReportPage.maximumThumbnailBytes,
            let data = try? Data(FileSystem.readWholeFile(path)),
            data.starts(with: [0xFF, 0xD8, 0xFF])
        else {
            missing.append(reported.name)
            return nil
        }
        embedded += 1
        return "data:image/jpeg;base64," + data.base64EncodedString()
    }

    /// Light and dark colours; the grid fills the width with cards at least 13rem
    /// wide (five or more on a desktop); a phone gets two columns, and each fact's
    /// label stands above its value there (a bare `640 × 480` or `2.1 MB` says
    /// nothing of what it measures).
    static let styleSheet = """

        :root { color-scheme: light dark; --bg: #f5f5f3; --card: #fff; --ink: #1d1d1f; --muted: #66666b; --line: #deded9;
          --bad: #c62828; --skip: #9a6700; --ok: #1a7f37; --thumb: #ebebe8; --bar: #5b7fbf; }
        @media (prefers-color-scheme: dark) { :root { --bg: #161618; --card: #222226; --ink: #ececec; --muted: #a0a0a8;
          --line: #38383e; --bad: #ff7b72; --skip: #d4a72c; --ok: #56d364; --thumb: #2c2c30; --bar: #7fa2e0; } }
        * { box-sizing: border-box; }
        body { margin: 0; padding: 1rem; background: var(--bg); color: var(--ink);
          font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
        header, section, main { max-width: 90rem; margin: 0 auto 1.25rem; }
        h1 { font-size: 1.35rem; margin: 0 0 .25rem; overflow-wrap: anywhere; }
        h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
        code { font: .85em/1.3 ui-monospace, "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }
        .meta { color: var(--muted); font-size: .88rem; margin: 0 0 .9rem; }
        .totals { display: grid; grid-template-columns: repeat(auto-fit, minmax(7.5rem, 1fr)); gap: .5rem; margin: 0 0 .9rem; }
        .totals div { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .45rem .7rem; }
        .totals dt { color: var(--muted); font-size: .78rem; }
        .totals dd { margin: 0; font-size: 1.3rem; font-weight: 600; }
        .totals .ingested dd { color: var(--ok); }
        .totals .failed.flagged dd { color: var(--bad); }
        .totals .skipped.flagged dd { color: var(--skip); }
        .stages { border-collapse: collapse; width: 100%; max-width: 36rem; font-size: .88rem; }
        .stages caption { text-align: left; color: var(--muted); font-size: .78rem; padding-bottom: .25rem; }
        .stages th { text-align: left; font-weight: 500; padding: .1rem .75rem .1rem 0; width: 6rem; }
        .stages .seconds { text-align: right; padding-right: .75rem; white-space: nowrap; width: 5.5rem; font-variant-numeric: tabular-nums; }
        .stages .bar span { display: block; height: .6rem; min-width: 2px; border-radius: .3rem; background: var(--bar); }
        .problems ul { list-style: none; margin: 0; padding: 0; display: grid; gap: .4rem; }
        .problems li { background: var(--card); border: 1px solid var(--line); border-left: 4px solid var(--bad);
          border-radius: .4rem; padding: .45rem .7rem; overflow-wrap: anywhere; font-size: .9rem; }
        .problems li.skipped { border-left-color: var(--skip); }
        .problems .why { color: var(--muted); }
        .problems .message { font-size: .82rem; }
        .status { display: inline-block; font-size: .68rem; font-weight: 700; text-transform: uppercase; letter-spacing: .05em;
          padding: .05rem .4rem; border-radius: .25rem; color: #fff; background: var(--bad); vertical-align: .1em; }
        .skipped .status { background: var(--skip); }
        .status.duplicate { background: var(--muted); }
        .grid { list-style: none; margin: 0; padding: 0; display: grid; gap: .75rem;
          grid-template-columns: repeat(auto-fill, minmax(min(100%, 13rem), 1fr)); }
        .item { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; overflow: hidden; }
        .item.failed { border-color: var(--bad); }
        .item.skipped { border-color: var(--skip); }
        .picture { margin: 0; aspect-ratio: 1 / 1; background: var(--thumb); display: flex; align-items: center; justify-content: center; }
        .picture img { display: block; width: 100%; height: 100%; object-fit: contain; }
        .picture span { font-size: 1.5rem; font-weight: 700; color: var(--muted); letter-spacing: .04em; }
        .failed .picture, .skipped .picture { background: #9a9a9a; }
        .failed .picture span, .skipped .picture span { color: #fff; }
        .body { padding: .55rem .7rem .7rem; }
        .item .name { font-size: .95rem; font-weight: 600; margin: 0 0 .3rem; overflow-wrap: anywhere; }
        .facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .05rem .6rem; margin: 0; font-size: .82rem; }
        .facts dt { color: var(--muted); }
        .facts dd { margin: 0; overflow-wrap: anywhere; }
        .facts img.thumbhash { display: block; height: 2rem; width: auto; border-radius: .2rem; }
        .item .name a { color: inherit; }
        .reason { color: var(--bad); font-size: .82rem; margin: .4rem 0 0; overflow-wrap: anywhere; }
        .skipped .reason { color: var(--skip); }
        .excerpt { font-size: .82rem; margin: .4rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
        .warnings { font-size: .78rem; color: var(--skip); margin: .4rem 0 0; padding-left: 1.1rem; overflow-wrap: anywhere; }
        .source { font-size: .72rem; color: var(--muted); margin: .4rem 0 0; overflow-wrap: anywhere; }
        @media (max-width: 34rem) {
          body { padding: .6rem; }
          .grid { gap: .5rem; grid-template-columns: repeat(2, minmax(0, 1fr)); }
          .facts { grid-template-columns: minmax(0, 1fr); gap: 0; }
          .facts dt { font-size: .72rem; margin-top: .25rem; }
        }

        """
}
