import Foundation
import ShareManifest
import SystemCalls

/// Why a batch's stored report could not be found or read.
public enum StoredReportError: Error, Sendable, CustomStringConvertible {
    /// What was given is neither a redirect URL nor a valid key.
    case badURL(RedirectURLError)
    /// What was given (without `://`) is not a valid key.
    case badKey(ShareKeyError)
    /// No report is stored under this key.
    case unknownKey(ShareKey, path: String)
    /// The report file exists but cannot be read.
    case unreadable(path: String, reason: String)
    /// The report file is not a batch report this version understands.
    case malformed(path: String, detail: String)

    /// True when the mistake is in what the caller typed (a usage error), not in the container.
    public var isUsageMistake: Bool {
        switch self {
        case .badURL, .badKey: true
        case .unknownKey, .unreadable, .malformed: false
        }
    }

    /// The error as one line for a person, naming the key or file.
    public var description: String {
        switch self {
        case .badURL(let error): error.description
        case .badKey(let error): error.description
        case .unknownKey(let key, let path): "no batch report for key \(key) (looked for \(path)); is this the container the batch ran in?"
        case .unreadable(let path, let reason): "\(path): cannot read the batch report: \(reason)"
        case .malformed(let path, let detail): "\(path): not a batch report: \(detail)"
        }
    }
}

extension BatchReport {
    /// The largest report file read; a batch of 100,000 items stays well below it.
    static let maximumStoredSize = 256 << 20

    /// The report a batch left in `container` (`.share-ingest/reports/<key>.json`),
    /// found by redirect URL (`ShareMedia://dataUrl=<key>#media`) or by bare key.
    public static func stored(_ redirectOrKey: String, in container: ContainerDirectory) throws(StoredReportError) -> BatchReport {
        let key: ShareKey
        if redirectOrKey.contains("://") {
            do { key = try RedirectURL.parse(redirectOrKey).key } catch { throw .badURL(error) }
        } else {
            do { key = try ShareKey(redirectOrKey) } catch { throw .badKey(error) }
        }
        return try stored(key: key, in: container)
    }

    /// The report stored under `key` in `container`.
    public static func stored(key: ShareKey, in container: ContainerDirectory) throws(StoredReportError) -> BatchReport {
        let path = container.reportPath(key: key)
        let status: FileStatus
        do { status = try FileStatus.of(path) } catch { throw .unknownKey(key, path: path) }
        guard status.type == .regular else { throw .unreadable(path: path, reason: "not a regular file") }
        guard status.size <= maximumStoredSize else {
            throw .unreadable(path: path, reason: "\(status.size) bytes; refusing more than \(maximumStoredSize)")
        }
        let data: [UInt8]
        do { data = try FileDescriptor.open(path, O_RDONLY).read(count: Int(status.size), at: 0, path: path) } catch {
            throw .unreadable(path: path, reason: error.message)
        }
        do {
            return try decode(storedJSON: Data(data))
        } catch {
            throw .malformed(path: path, detail: error.description)
        }
    }

    /// Reads the document ``json()`` writes (``BatchReportDocument``). Fields an
    /// older report lacks read as absent.
    public static func decode(storedJSON data: Data) throws(StoredReportDecodingError) -> BatchReport {
        let document: BatchReportDocument
        do {
            document = try JSONDecoder().decode(BatchReportDocument.self, from: data)
        } catch let error as DecodingError {
            throw StoredReportDecodingError(error)
        } catch {
            throw StoredReportDecodingError(detail: "\(error)")
        }
        return try document.report()
    }
}

/// Why the bytes of a stored report are not a batch report.
public struct StoredReportDecodingError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the field (e.g. `items[3].status`).
    public let description: String

    init(detail: String) { self.description = detail }

    init(_ error: DecodingError) {
        func path(_ codingPath: [any CodingKey]) -> String {
            var text = ""
            for key in codingPath {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "(top level)" : text
        }
        switch error {
        case .keyNotFound(let key, let context): description = "field \(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): description = "field \(path(context.codingPath)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            description = context.codingPath.isEmpty ? "malformed JSON" : "field \(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: description = "\(error)"
        }
    }
}

/// The batch report document: the one layout `BatchReport.json()` writes and
/// `BatchReport.stored` reads (keys sorted; fields without a value are left out).
struct BatchReportDocument: Codable {
    var batch: String
    var key: String
    var redirectURL: String?
    var manifest: String?
    var schema: ManifestSchema
    var pipeline: String
    var interrupted: Bool?
    var counts: Counts?
    var stageSeconds: [String: Double]?
    var wallSeconds: Double
    var items: [Item]

    struct Counts: Codable {
        var items: Int
        var ingested: Int
        var failed: Int
        var skipped: Int
    }

    /// One input: its outcome and, when ingested, its manifest entry's fields.
    struct Item: Codable {
        var source: String
        var status: ItemStatus
        var error: String?
        var stage: StageName?
        var reason: ItemFailure.Reason?
        var path: String?
        var type: SharedMediaType?
        var thumbnail: String?
        var mimeType: String?
        var fileName: String?
        var size: Int64?
        var width: Int?
        var height: Int?
        var duration: Double?
        var warnings: [String]?
        var stageSeconds: [String: Double]?
    }

    init(_ report: BatchReport) {
        func seconds(_ timings: [StageName: Double]) -> [String: Double] {
            Dictionary(uniqueKeysWithValues: timings.map { ($0.key.rawValue, ($0.value * 10_000).rounded() / 10_000) })
        }
        batch = report.batchID.uuidString
        key = report.key.rawValue
        redirectURL = report.redirectURL?.description
        manifest = report.manifestPath
        schema = report.schema
        pipeline = report.pipeline
        interrupted = report.interrupted
        counts = Counts(items: report.items.count, ingested: report.ingestedCount, failed: report.failedCount, skipped: report.skippedCount)
        stageSeconds = seconds(report.stageSeconds)
        wallSeconds = (report.wallSeconds * 10_000).rounded() / 10_000
        items = report.items.map { item in
            let entry = item.entry
            return Item(
                source: item.source, status: item.status, error: item.failure?.message, stage: item.failure?.stage, reason: item.failure?.reason,
                path: entry?.path, type: entry?.type, thumbnail: entry?.thumbnail, mimeType: entry?.mimeType, fileName: entry?.fileName,
                size: entry?.size, width: entry?.width, height: entry?.height, duration: entry?.duration, warnings: item.warnings,
                stageSeconds: seconds(item.stageSeconds))
        }
    }

    func report() throws(StoredReportDecodingError) -> BatchReport {
        guard let batchID = UUID(uuidString: batch) else {
            throw StoredReportDecodingError(detail: "field batch must be a UUID, not \(JSONText.string(batch))")
        }
        let key: ShareKey
        do { key = try ShareKey(self.key) } catch { throw StoredReportDecodingError(detail: "field key: \(error)") }
        func timings(_ seconds: [String: Double]?) -> [StageName: Double] {
            // A stage this version does not know is left out rather than refusing the report.
            Dictionary(uniqueKeysWithValues: (seconds ?? [:]).compactMap { name, value in StageName(rawValue: name).map { ($0, value) } })
        }
        let reports = items.enumerated().map { index, item in
            // Reports always name the stage and reason of a failure; an edited one
            // without them still shows its message.
            let failure = item.status == .ingested ? nil : ItemFailure(item.stage ?? .sniff, item.reason ?? .io, item.error ?? "(no message recorded)")
            let entry = item.path.map {
                SharedMediaFile(
                    path: $0, thumbnail: item.thumbnail, duration: item.duration, type: item.type ?? .file, mimeType: item.mimeType,
                    fileName: item.fileName, size: item.size, width: item.width, height: item.height)
            }
            // Copies are named <UUID>.<ext> in the container.
            let id = entry?.fileURL.flatMap { UUID(uuidString: $0.deletingPathExtension().lastPathComponent) }
            return ItemReport(
                index: index, source: item.source, status: item.status, failure: failure, warnings: item.warnings ?? [], entry: entry, id: id,
                stageSeconds: timings(item.stageSeconds))
        }
        var report = BatchReport(
            batchID: batchID, key: key, redirectURL: redirectURL.flatMap { try? RedirectURL.parse($0).url }, manifestPath: manifest,
            schema: schema, pipeline: pipeline, items: reports, stageSeconds: timings(stageSeconds), wallSeconds: wallSeconds)
        report.interrupted = interrupted ?? false
        return report
    }
}
