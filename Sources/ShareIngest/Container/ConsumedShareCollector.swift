import Foundation
import Glibc
import ShareManifest
import SystemCalls

/// What `share gc` removed (or would remove, in a dry run).
public struct CollectionReport: Sendable {
    /// The keys of the shares collected.
    public var keys: [ShareKey] = []
    /// How many files were removed: copies, thumbnails, the consumed manifests
    /// and the batch reports (each named to the caller as it goes).
    public var fileCount = 0
    /// Bytes freed.
    public var bytes: Int64 = 0
}

/// Removes the files of shares whose manifest was consumed (`share open --consume`)
/// longer ago than a retention period: the copies, thumbnails and compatible
/// copies it names and the videos extracted from its motion photos, with their
/// posters (only inside the container), the consumed manifest and the batch report. The
/// journal keeps the batch, marked `collected`.
public struct ConsumedShareCollector: Sendable {
    /// The container whose consumed shares are collected.
    public let container: ContainerDirectory

    /// A collector for `container`.
    public init(container: ContainerDirectory) { self.container = container }

    /// Collects shares consumed more than `retention` seconds before `now`;
    /// `removing` hears each file as it is removed (or, with `dryRun`, would be).
    /// A share's files are the container's copies and thumbnails named by its
    /// items' UUIDs (read from the journal row by row, the folders once each: a
    /// share of a million items in bounded memory and seconds), each only a
    /// regular file; a duplicate linked to an earlier share's copy points at a
    /// file named by another item, which stays.
    public func collect(
        retention: TimeInterval, now: Date = Date(), dryRun: Bool = false, removing: (String) -> Void = { _ in }
    ) throws(ShareIngestError) -> CollectionReport {
        let journal = try BatchJournal(container: container)
        var report = CollectionReport()
        func remove(_ file: String) {
            guard let status = try? FileStatus.ofLink(file), status.type == .regular else { return }
            report.bytes += status.size
            report.fileCount += 1
            removing(file)
            if !dryRun { FileSystem.remove(file) }
        }
        for var batch in try journal.batches(in: [.done]) {
            let consumed = container.consumedManifestPath(key: batch.key)
            guard let status = try? FileStatus.ofLink(consumed), status.type == .regular else { continue }
            let consumedAt = Date(timeIntervalSince1970: Double(status.modifiedSeconds))
            guard now.timeIntervalSince(consumedAt) >= retention else { continue }
            let ids: Set<UUID>
            do { ids = try journal.itemIDs(of: batch.id) } catch { throw .containerUnusable(path: container.root, reason: "journal: \(error)") }
            // An item's files, and those of the video extracted from its motion photo.
            let owners = ids.union(ids.map(ItemState.motionVideoID(of:)))
            for folder in [container.root, container.thumbnailsDirectory] {
                for name in Self.files(in: folder, namedBy: owners) { remove(folder + "/" + name) }
            }
            remove(consumed)
            let stored = container.reportPath(key: batch.key)
            if FileSystem.exists(stored) { remove(stored) }
            report.keys.append(batch.key)
            if !dryRun {
                batch.state = .collected
                do { try journal.update(batch) } catch { throw .containerUnusable(path: container.root, reason: "journal: \(error)") }
            }
        }
        return report
    }

    /// The names in `folder` of the form `<UUID>.<extension>` (a copy, a
    /// thumbnail, any file an item owns) whose UUID is one of `ids`, sorted.
    static func files(in folder: String, namedBy ids: Set<UUID>) -> [String] {
        var found: [String] = []
        try? DirectoryEntries.forEach(pathBytes: Array(folder.utf8), display: folder) { name in
            guard name.count > 37, name[36] == UInt8(ascii: "."),
                let id = UUID(uuidString: String(decoding: name.prefix(36), as: UTF8.self)), ids.contains(id)
            else { return }
            found.append(String(decoding: name, as: UTF8.self))
        }
        return found.sorted()
    }

    /// Parses a retention like `7d`, `12h`, `30m`, `45s` or `0`.
    public static func parseRetention(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let unit = text.last, let factor = units[unit], let value = Double(text.dropLast()), value >= 0 { return value * factor }
        if let value = Double(text), value >= 0 { return value }
        return nil
    }
}
