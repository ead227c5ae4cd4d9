import Foundation
import Glibc
import ShareManifest
import SystemCalls

/// What `share gc` removed (or would remove, in a dry run).
public struct CollectionReport: Sendable {
    /// The keys of the shares collected.
    public var keys: [ShareKey] = []
    /// The batches of `share ingest` left unfinished longer than the retention
    /// whose copies were collected (marked `abandoned`: no longer resumable).
    public var abandoned: [UUID] = []
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
    /// items' UUIDs (read from the journal row by row into one sorted array of
    /// 16 bytes an item), each only a regular file. Each folder is read once and
    /// its files removed as they are listed, relative to the open folder
    /// (``DirectoryEntries/removeRegularFiles(in:display:dryRun:chunk:where:removed:)``):
    /// no list of paths is held and no path resolved per file, so a share of a
    /// million items goes in bounded memory and seconds. A duplicate linked to
    /// an earlier share's copy points at a file named by another item, which stays.
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
        func removeFiles(ofItemsOf batch: BatchRecord) throws(ShareIngestError) {
            // An item's files, and those of the video extracted from its motion photo.
            var owners: [OwnerID] = []
            do {
                try journal.forEachItemID(of: batch.id) { id in
                    owners.append(OwnerID(id))
                    owners.append(OwnerID(ItemState.motionVideoID(of: id)))
                }
            } catch { throw .journal(error, container: container) }
            owners.sort()
            for folder in [container.root, container.thumbnailsDirectory] {
                try? DirectoryEntries.removeRegularFiles(
                    in: Array(folder.utf8), display: folder, dryRun: dryRun,
                    where: { name in Self.owner(named: name).map { Self.contains(owners, $0) } ?? false },
                    removed: { name, size in
                        report.bytes += size
                        report.fileCount += 1
                        removing(folder + "/" + String(decoding: name, as: UTF8.self))
                    })
            }
        }
        // Batches of `share ingest` that nobody finished: stopped (a signal, a
        // full disk, a crash) and left longer than the retention since their
        // last run let go of them. A watched drop's batch is the watcher's to finish.
        for var batch in try journal.batches(in: BatchLifecycle.unfinished)
        where batch.dropName == nil && journal.isInterrupted(batch) {
            let left = BatchLock.lastReleased(batch: batch.id, container: container) ?? batch.createdAt
            guard now.timeIntervalSince(left) >= retention else { continue }
            try removeFiles(ofItemsOf: batch)
            report.abandoned.append(batch.id)
            if !dryRun {
                batch.handle(.abandon)
                do { try journal.update(batch) } catch { throw .journal(error, container: container) }
            }
        }
        for var batch in try journal.batches(in: [.done]) {
            let consumed = container.consumedManifestPath(key: batch.key)
            guard let status = try? FileStatus.ofLink(consumed), status.type == .regular else { continue }
            let consumedAt = Date(timeIntervalSince1970: Double(status.modifiedSeconds))
            guard now.timeIntervalSince(consumedAt) >= retention else { continue }
            try removeFiles(ofItemsOf: batch)
            remove(consumed)
            let stored = container.reportPath(key: batch.key)
            if FileSystem.exists(stored) { remove(stored) }
            report.keys.append(batch.key)
            if !dryRun {
                batch.handle(.collect)
                do { try journal.update(batch) } catch { throw .journal(error, container: container) }
            }
        }
        return report
    }

    /// A UUID as two integers: sorted and searched without hashing, 16 bytes each.
    struct OwnerID: Comparable {
        let high: UInt64
        let low: UInt64

        init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }

        init(_ id: UUID) {
            let u = id.uuid
            high = [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7].reduce(0) { $0 << 8 | UInt64($1) }
            low = [u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15].reduce(0) { $0 << 8 | UInt64($1) }
        }

        static func < (a: OwnerID, b: OwnerID) -> Bool { a.high != b.high ? a.high < b.high : a.low < b.low }
    }

    /// The UUID a name of the form `<UUID>.<extension>` (a copy, a thumbnail, any
    /// file an item owns) starts with, either case; nil for any other name.
    static func owner(named name: UnsafeRawBufferPointer) -> OwnerID? {
        guard name.count > 37, name[36] == UInt8(ascii: ".") else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for position in 0..<36 {
            let byte = name[position]
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            if digits < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
            digits += 1
        }
        return OwnerID(high: high, low: low)
    }

    /// Binary search in `sorted`.
    static func contains(_ sorted: [OwnerID], _ id: OwnerID) -> Bool {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count && sorted[low] == id
    }

    /// Parses a retention like `7d`, `12h`, `30m`, `45s` or `0`.
    public static func parseRetention(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let unit = text.last, let factor = units[unit], let value = Double(text.dropLast()), value >= 0 {
            return value * factor
        }
        if let value = Double(text), value >= 0 { return value }
        return nil
    }
}
