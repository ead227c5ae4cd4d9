import SystemCalls

/// A finished drop's files split by outcome, before the drop is deleted or
/// filed as done: only what was delivered may go. The files of items not
/// delivered (failed, or refused by the walk: a FIFO, a link out of the drop),
/// with every sidecar they carried (so dropping that folder again retries them
/// whole), and sidecars whose own copy failed, are moved to `.failed/<batch>/` under their
/// place in the drop, beside the batch's `report.json`. Skipped duplicates
/// count as delivered: their content is in the container, under the copy they duplicate.
struct DropSplit {
    /// Where each undelivered file is, beneath the drop's holder (`.processing/<batch>/`).
    let undelivered: [[UInt8]]

    /// The undelivered files of `items` (a batch's final records) beneath `holder`.
    init(items: [ItemState], holder: String) {
        let prefix = Array(holder.utf8) + [UInt8(ascii: "/")]
        func relative(_ path: SourcePath) -> [UInt8]? {
            path.bytes.starts(with: prefix) && path.bytes.count > prefix.count
                ? Array(path.bytes.dropFirst(prefix.count)) : nil
        }
        let notDelivered = Set(items.filter { !Self.isDelivered($0) }.map(\.label))
        var undelivered: [[UInt8]] = []
        for item in items {
            // A sidecar attached to a media item goes where its media goes.
            let delivered = Self.isDelivered(item) && !(item.attachedTo.map(notDelivered.contains) ?? false)
            if !delivered, case .file(let file) = item.source, let place = relative(file.path) {
                undelivered.append(place)
            }
            for sidecar in item.carriedSidecars where !sidecar.borrowed {
                // With its media when that failed (even if delivered as a file
                // of its own: the media is dropped again with it); alone when its own copy failed.
                if !delivered || sidecar.failure != nil, let place = relative(sidecar.path(carriedBy: item)) {
                    undelivered.append(place)
                }
            }
        }
        var seen = Set<[UInt8]>()
        self.undelivered = undelivered.filter { seen.insert($0).inserted }
    }

    /// True when the item is in the manifest (or attached to an entry, or a
    /// duplicate skipped for the copy it duplicates).
    static func isDelivered(_ item: ItemState) -> Bool {
        switch ManifestStage.status(of: item, finished: true) {
        case .ingested, .attached: true
        case .skipped: item.failure?.reason == .duplicate
        case .failed: false
        }
    }

    /// Moves each undelivered file from `holder` to the same place beneath
    /// `target` (made owner-only), never following a link (a dropper may still
    /// write in the drop). Returns what could not be moved, with why: the
    /// drop is then neither deleted nor filed as done.
    func move(from holder: String, to target: String) -> [String] {
        guard !undelivered.isEmpty else { return [] }
        do {
            try? FileSystem.makeDirectory(target)
            let from = try FileDescriptor.openDirectoryHandle(
                pathBytes: Array(holder.utf8), followingFinalLink: false, display: holder)
            let to = try FileDescriptor.openDirectoryHandle(
                pathBytes: Array(target.utf8), followingFinalLink: false, display: target)
            var left: [String] = []
            for place in undelivered {
                let display = holder + "/" + String(decoding: place, as: UTF8.self)
                do {
                    try from.move(beneath: place, to: to, display: display)
                } catch  where error.kind == .notFound {
                    // Moved already (a run stopped half-way through, then resumed) or gone.
                    continue
                } catch {
                    left.append("\(error)")
                }
            }
            return left
        } catch {
            return ["\(error)"]
        }
    }
}
