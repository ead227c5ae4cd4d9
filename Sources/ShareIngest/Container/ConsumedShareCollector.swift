import Foundation
import Glibc
import ShareManifest
import SystemCalls

/// What `share gc` removed (or would remove, in a dry run).
public struct CollectionReport: Sendable {
    /// The keys of the shares collected.
    public var keys: [ShareKey] = []
    /// Files removed: copies, thumbnails, the consumed manifest and the batch report.
    public var files: [String] = []
    /// Bytes freed.
    public var bytes: Int64 = 0
}

/// Removes the files of shares whose manifest was consumed (`share open --consume`)
/// longer ago than a retention period: the copies and thumbnails it names (only
/// inside the container), the consumed manifest and the batch report. The
/// journal keeps the batch, marked `collected`.
public struct ConsumedShareCollector: Sendable {
    /// The container whose consumed shares are collected.
    public let container: ContainerDirectory

    /// A collector for `container`.
    public init(container: ContainerDirectory) { self.container = container }

    /// Collects shares consumed more than `retention` seconds before `now`.
    public func collect(retention: TimeInterval, now: Date = Date(), dryRun: Bool = false) throws(ShareIngestError) -> CollectionReport {
        let journal = try BatchJournal(container: container)
        var report = CollectionReport()
        for var batch in try journal.batches(in: [.done]) {
            let consumed = container.consumedManifestPath(key: batch.key)
            guard let status = try? FileStatus.ofLink(consumed), status.type == .regular else { continue }
            let consumedAt = Date(timeIntervalSince1970: Double(status.modifiedSeconds))
            guard now.timeIntervalSince(consumedAt) >= retention else { continue }
            var files: [String] = []
            if let data = try? Data(FileSystem.readWholeFile(consumed)), let manifest = try? ManifestCoder.decode(data) {
                for entry in manifest.entries where entry.type != .text && entry.type != .url {
                    for url in [entry.path, entry.thumbnail].compactMap({ $0 }) {
                        guard let path = ManifestCoder.filePath(fromURLString: url), case .success(let real) = container.checkedFile(path) else { continue }
                        files.append(real)
                    }
                }
            }
            files.append(consumed)
            let stored = container.reportPath(key: batch.key)
            if FileSystem.exists(stored) { files.append(stored) }
            for file in files {
                report.bytes += (try? FileStatus.ofLink(file))?.size ?? 0
                if !dryRun { FileSystem.remove(file) }
            }
            report.files += files
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
