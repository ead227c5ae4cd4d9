import Foundation
import MediaKit
import ShareManifest

extension BatchReport {
    /// One JPEG of every item's thumbnail in a grid, captioned with its name and
    /// a measurement (or why it was not delivered); see ``ContactSheet``. Items
    /// without a thumbnail get a placeholder with their extension, failed and
    /// skipped ones a grey tile. At most `layout.maximumTiles` items are drawn;
    /// the title says when some were left out.
    public func contactSheet(in container: ContainerDirectory, layout: ContactSheetLayout = ContactSheetLayout()) throws(VipsError) -> ContactSheet {
        var tiles = ContactSheetTiles(report: self, container: container, layout: layout)
        items.visit { tiles.add($0) }
        return try tiles.render()
    }

    fileprivate static func tile(for reported: ReportedItem) -> ContactSheetTile {
        let item = reported.item
        // A caption is one line of a name: nothing in it may reorder or break it.
        let name = DisplayText.escaped(reported.name)
        guard item.status == .ingested else {
            let why = item.failure.map { "\(item.status.rawValue): \($0.reason.rawValue)" } ?? item.status.rawValue
            return ContactSheetTile(picture: .failed(item.status.rawValue), caption: name + "\n" + why)
        }
        // Videos and audio files show their duration (audio: duration and size).
        let measurement = [reported.duration, reported.dimensions, reported.size]
            .compactMap { $0 }.prefix(2).joined(separator: " · ")
        let caption = name + "\n" + (reported.excerpt(limit: 60).map { DisplayText.escaped($0) } ?? (measurement.isEmpty ? reported.kind : measurement))
        if let thumbnail = reported.thumbnailPath {
            return ContactSheetTile(picture: .thumbnail(path: thumbnail), caption: caption)
        }
        return ContactSheetTile(picture: .placeholder(reported.placeholderLabel), caption: caption)
    }
}

/// A contact sheet's tiles, taken from the items one at a time (each read
/// once, with the page's when both are made): only the tiles drawn are made
/// (at most `layout.maximumTiles`; a million-item batch's other items are
/// counted and left). Each tile names its thumbnail file, decoded once when the
/// sheet is drawn, shrunk on load (`vips_thumbnail`) to the cell.
struct ContactSheetTiles {
    let report: BatchReport
    let container: ContainerDirectory
    let layout: ContactSheetLayout
    private var tiles: [ContactSheetTile] = []

    init(report: BatchReport, container: ContainerDirectory, layout: ContactSheetLayout) {
        self.report = report
        self.container = container
        self.layout = layout
    }

    /// True while the sheet has room for another tile.
    var wantsMore: Bool { tiles.count < max(1, layout.maximumTiles) }

    /// Takes the next item (in input order).
    mutating func add(_ item: ItemReport) {
        guard tiles.count < max(1, layout.maximumTiles) else { return }
        tiles.append(BatchReport.tile(for: ReportedItem(item, container: container)))
    }

    /// The sheet of the tiles taken, titled with the batch's totals.
    func render() throws(VipsError) -> ContactSheet {
        let shown = tiles.count
        let total = report.items.count
        var title = "\(report.key.rawValue) · \(report.ingestedCount) of \(total) ingested"
        if report.failedCount > 0 { title += " · \(report.failedCount) failed" }
        if report.skippedCount > 0 { title += " · \(report.skippedCount) skipped" }
        if shown < total { title += " · first \(shown) shown" }
        return try ContactSheet.render(tiles, title: title, layout: layout, total: total)
    }
}
