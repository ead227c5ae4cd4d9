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
/// longer ago than a retention period: the copies, thumbnails and compatible copies it names (only
/// inside the container), the consumed manifest and the batch report. The
/// journal keeps the batch, marked `collected`.
public struct ConsumedShareCollector: Sendable {
    /// The container whose consumed shares are collected.
    public let container: ContainerDirectory

    /// A collector for `container`.
    public init(container: ContainerDirectory) { self.container = container }

    /// Collects shares consumed more than `retention` seconds before `now`;
    /// `removing` hears each file as it is removed (or, with `dryRun`, would be).
    /// The files of a share are the ones its batch recorded (read from the
    /// journal a page at a time: a share of a million items in bounded memory),
    /// each only if it is a regular file inside the container.
    public func collect(
        retention: TimeInterval, now: Date = Date(), dryRun: Bool = false, removing: (String) -> Void = { _ in }
    ) throws(ShareIngestError) -> CollectionReport {
        let journal = try BatchJournal(container: container)
        var report = CollectionReport()
        func remove(_ file: String) {
            report.bytes += (try? FileStatus.ofLink(file))?.size ?? 0
            report.fileCount += 1
            removing(file)
            if !dryRun { FileSystem.remove(file) }
        }
        for var batch in try journal.batches(in: [.done]) {
            let consumed = container.consumedManifestPath(key: batch.key)
            guard let status = try? FileStatus.ofLink(consumed), status.type == .regular else { continue }
            let consumedAt = Date(timeIntervalSince1970: Double(status.modifiedSeconds))
            guard now.timeIntervalSince(consumedAt) >= retention else { continue }
            do {
                try journal.forEachItem(of: batch.id) { item in
                    guard item.failure == nil else { return }
                    for path in item.deliveredFiles {
                        guard case .success(let real) = container.checkedFile(path) else { continue }
                        remove(real)
                    }
                }
            } catch {
                throw .containerUnusable(path: container.root, reason: "journal: \(error)")
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

    /// Parses a retention like `7d`, `12h`, `30m`, `45s` or `0`.
    public static func parseRetention(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let unit = text.last, let factor = units[unit], let value = Double(text.dropLast()), value >= 0 { return value * factor }
        if let value = Double(text), value >= 0 { return value }
        return nil
    }
}
