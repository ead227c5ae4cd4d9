import Foundation
import ShareManifest

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
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw .unknownKey(key, path: path)
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw .unreadable(path: path, reason: "not a regular file")
        }
        if let size = attributes[.size] as? Int, size > maximumStoredSize {
            throw .unreadable(path: path, reason: "\(size) bytes; refusing more than \(maximumStoredSize)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        do {
            return try decode(storedJSON: data)
        } catch {
            throw .malformed(path: path, detail: error.description)
        }
    }

    /// Reads the document ``json()`` writes. Fields missing from older reports
    /// (`thumbnail`, `fileName`, …) read as null; per-item stage timings are not
    /// stored, so they come back empty.
    public static func decode(storedJSON data: Data) throws(StoredReportDecodingError) -> BatchReport {
        let stored: StoredReportDocument
        do {
            stored = try JSONDecoder().decode(StoredReportDocument.self, from: data)
        } catch let error as DecodingError {
            throw StoredReportDecodingError(error)
        } catch {
            throw StoredReportDecodingError(detail: "\(error)")
        }
        guard let batchID = UUID(uuidString: stored.batch) else {
            throw StoredReportDecodingError(detail: "field batch must be a UUID, not \(JSONText.string(stored.batch))")
        }
        let key: ShareKey
        do { key = try ShareKey(stored.key) } catch { throw StoredReportDecodingError(detail: "field key: \(error)") }
        let redirect = stored.redirectURL.flatMap { try? RedirectURL.parse($0).url }
        var stageSeconds: [StageName: Double] = [:]
        for (name, seconds) in stored.stageSeconds ?? [:] {
            // A stage this version does not know is left out rather than refusing the report.
            if let stage = StageName(rawValue: name) { stageSeconds[stage] = seconds }
        }
        let items = stored.items.enumerated().map { index, item in item.itemReport(index: index) }
        return BatchReport(
            batchID: batchID, key: key, redirectURL: redirect, manifestPath: stored.manifest, schema: stored.schema,
            pipeline: stored.pipeline, items: items, stageSeconds: stageSeconds, wallSeconds: stored.wallSeconds)
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

/// The report file's layout, as `BatchReport.json()` writes it.
private struct StoredReportDocument: Decodable {
    let batch: String
    let key: String
    let redirectURL: String?
    let manifest: String?
    let schema: ManifestSchema
    let pipeline: String
    let stageSeconds: [String: Double]?
    let wallSeconds: Double
    let items: [Item]

    struct Item: Decodable {
        let source: String
        let status: ItemStatus
        let error: String?
        let stage: StageName?
        let reason: ItemFailure.Reason?
        let path: String?
        let type: SharedMediaType?
        let thumbnail: String?
        let mimeType: String?
        let fileName: String?
        let size: Int64?
        let width: Int?
        let height: Int?
        let duration: Double?
        let warnings: [String]?
        let stageSeconds: [String: Double]?

        func itemReport(index: Int) -> ItemReport {
            var failure: ItemFailure?
            if status != .ingested {
                // Reports always name the stage and reason of a failure; an edited one
                // without them still shows its message.
                failure = ItemFailure(stage ?? .sniff, reason ?? .io, error ?? "(no message recorded)")
            }
            let entry = path.map {
                SharedMediaFile(
                    path: $0, thumbnail: thumbnail, duration: duration, type: type ?? .file, mimeType: mimeType,
                    fileName: fileName, size: size, width: width, height: height)
            }
            // Copies are named <UUID>.<ext> in the container.
            let id = entry?.fileURL.flatMap { UUID(uuidString: $0.deletingPathExtension().lastPathComponent) }
            return ItemReport(
                index: index, source: source, status: status, failure: failure, warnings: warnings ?? [],
                entry: entry, id: id,
                stageSeconds: Dictionary(uniqueKeysWithValues: (stageSeconds ?? [:]).compactMap { name, seconds in
                    StageName(rawValue: name).map { ($0, seconds) }
                }))
        }
    }
}
