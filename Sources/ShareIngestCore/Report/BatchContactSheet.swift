import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

extension BatchReport {
    /// One JPEG of every item's thumbnail in a grid, captioned with its name and
    /// a measurement (or why it was not delivered); see ``ContactSheet``. Items
    /// without a thumbnail get a placeholder with their extension, failed and
    /// skipped ones a grey tile. At most `layout.maximumTiles` items are drawn;
    /// the title says when some were left out.
    ///
    /// The thumbnails' bytes were chosen by the decoders that made them: each
    /// is decoded to pixels by `decoder` (``DecodeTask/pixels``; in a sandboxed
    /// helper of this batch with DecoderIsolation's `ProcessIsolatedDecoder`,
    /// as `share` does), and the sheet is drawn by `decoder` too
    /// (``DecodeTask/contactSheet``): this process only plans it. One that
    /// cannot be decoded is drawn as a placeholder saying so.
    public func contactSheet(
        in container: ContainerDirectory, layout: ContactSheetLayout = ContactSheetLayout(), decoder: any MediaDecoder
    ) throws(MediaError) -> ContactSheet {
        var tiles = ContactSheetTiles(report: self, container: container, layout: layout, decoder: decoder)
        items.visit { tiles.add($0) }
        return try tiles.render()
    }

    fileprivate func tile(for reported: ReportedItem, layout: ContactSheetLayout, decoder: any MediaDecoder)
        -> ContactSheetTile
    {
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
        let caption =
            name + "\n"
            + (reported.excerpt(limit: 60).map { DisplayText.escaped($0) }
                ?? (measurement.isEmpty ? reported.kind : measurement))
        if let thumbnail = reported.thumbnailPath {
            let request = DecodeRequest(
                path: thumbnail, label: "\(reported.name)'s thumbnail", format: .jpeg, timeLimit: 10,
                thumbnail: ThumbnailSpec(size: layout.pictureBox, damageTolerance: .error, timeLimit: 10),
                batch: batchID.uuidString, task: .pixels)
            guard let pixels = try? decoder.decode(request).pixels else {
                return ContactSheetTile(picture: .placeholder("no thumbnail"), caption: caption)
            }
            return ContactSheetTile(picture: .pixels(pixels), caption: caption)
        }
        return ContactSheetTile(picture: .placeholder(reported.placeholderLabel), caption: caption)
    }
}

/// A contact sheet's tiles, taken from the items one at a time (each read
/// once, with the page's when both are made): only the tiles drawn are made
/// (at most `layout.maximumTiles`; a million-item batch's other items are
/// counted and left). Each tile's thumbnail is decoded once, by the decoder
/// (a helper of the batch), shrunk on load to the cell's picture box; what
/// comes back is pixels, held until the sheet is composed.
struct ContactSheetTiles {
    let report: BatchReport
    let container: ContainerDirectory
    let layout: ContactSheetLayout
    let decoder: any MediaDecoder
    private var tiles: [ContactSheetTile] = []

    init(report: BatchReport, container: ContainerDirectory, layout: ContactSheetLayout, decoder: any MediaDecoder) {
        self.report = report
        self.container = container
        self.layout = layout
        self.decoder = decoder
        decoder.prepare()
    }

    /// True while the sheet has room for another tile.
    var wantsMore: Bool { tiles.count < max(1, layout.maximumTiles) }

    /// Takes the next item (in input order).
    mutating func add(_ item: ItemReport) {
        guard tiles.count < max(1, layout.maximumTiles) else { return }
        tiles.append(report.tile(for: ReportedItem(item, container: container), layout: layout, decoder: decoder))
    }

    /// The sheet of the tiles taken, titled with the batch's totals, drawn by
    /// the decoder from a plan written to a private temporary file (the
    /// tiles' pixels, captions and layout: ``ContactSheetPlan``), removed after.
    func render() throws(MediaError) -> ContactSheet {
        let shown = tiles.count
        let total = report.items.count
        var title = "\(report.key.rawValue) · \(report.ingestedCount) of \(total) ingested"
        if report.failedCount > 0 { title += " · \(report.failedCount) failed" }
        if report.skippedCount > 0 { title += " · \(report.skippedCount) skipped" }
        if shown < total { title += " · first \(shown) shown" }
        let plan = ContactSheetPlan(tiles: tiles, title: title, layout: layout, total: total)
        let folder =
            NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
        let path = FileSystem.temporaryName(for: folder + "/share-contact-sheet.plan")
        do throws(SystemError) {
            let file = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600)
            try file.write(plan.encoded(), at: 0, path: path)
        } catch {
            FileSystem.remove(path)
            throw MediaError(.unreadable, "cannot write the contact sheet's plan: \(error)")
        }
        defer { FileSystem.remove(path) }
        let size = plan.size
        let request = DecodeRequest(
            path: path, label: "the contact sheet of \(report.key.rawValue)", format: .jpeg, timeLimit: 120,
            thumbnail: ThumbnailSpec(size: max(size.width, size.height), damageTolerance: .error, timeLimit: 120),
            batch: report.batchID.uuidString,
            task: .contactSheet)
        return try ContactSheet(plan: plan, composed: decoder.decode(request))
    }
}
