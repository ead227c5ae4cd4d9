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
        // Only the tiles drawn are made (a million-item batch's items are read
        // one at a time and the rest left).
        let limit = max(1, layout.maximumTiles)
        var tiles: [ContactSheetTile] = []
        items.visit { item in if tiles.count < limit { tiles.append(Self.tile(for: ReportedItem(item, container: container))) } }
        let shown = tiles.count
        var title = "\(key.rawValue) · \(ingestedCount) of \(items.count) ingested"
        if failedCount > 0 { title += " · \(failedCount) failed" }
        if skippedCount > 0 { title += " · \(skippedCount) skipped" }
        if shown < items.count { title += " · first \(shown) shown" }
        return try ContactSheet.render(tiles, title: title, layout: layout, total: items.count)
    }

    private static func tile(for reported: ReportedItem) -> ContactSheetTile {
        let item = reported.item
        guard item.status == .ingested else {
            let why = item.failure.map { "\(item.status.rawValue): \($0.reason.rawValue)" } ?? item.status.rawValue
            return ContactSheetTile(picture: .failed(item.status.rawValue), caption: reported.name + "\n" + why)
        }
        // Videos and audio files show their duration (audio: duration and size).
        let measurement = [reported.duration, reported.dimensions, reported.size]
            .compactMap { $0 }.prefix(2).joined(separator: " · ")
        let caption = reported.name + "\n" + (reported.excerpt(limit: 60) ?? (measurement.isEmpty ? reported.kind : measurement))
        if let thumbnail = reported.thumbnailPath {
            return ContactSheetTile(picture: .thumbnail(path: thumbnail), caption: caption)
        }
        return ContactSheetTile(picture: .placeholder(reported.placeholderLabel), caption: caption)
    }
}
