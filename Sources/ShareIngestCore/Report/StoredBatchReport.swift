import Foundation
import ShareManifest
import Synchronization
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
        case .unknownKey(let key, let path):
            "no batch report for key \(key) (looked for \(path)); is this the container the batch ran in?"
        case .unreadable(let path, let reason): "\(path): cannot read the batch report: \(reason)"
        case .malformed(let path, let detail): "\(path): not a batch report: \(detail)"
        }
    }
}

extension BatchReport {
    /// The largest report file whose items are read (a million items' report
    /// is about 400 MB); its header is always read.
    static let maximumStoredSize = 1 << 30

    /// The report a batch left in `container` (`.share-ingest/reports/<key>.json`),
    /// found by redirect URL (`ShareMedia://dataUrl=<key>#media`) or by bare key.
    public static func stored(_ redirectOrKey: String, in container: ContainerDirectory) throws(StoredReportError)
        -> BatchReport
    {
        let key: ShareKey
        if redirectOrKey.contains("://") {
            do { key = try RedirectURL.parse(redirectOrKey).key } catch { throw .badURL(error) }
        } else {
            do { key = try ShareKey(redirectOrKey) } catch { throw .badKey(error) }
        }
        return try stored(key: key, in: container)
    }

    /// The report stored under `key` in `container`. Only its header (the
    /// batch's fields and counts) is read now; its items when first needed.
    public static func stored(key: ShareKey, in container: ContainerDirectory) throws(StoredReportError) -> BatchReport
    {
        let path = container.reportPath(key: key)
        let status: FileStatus
        do { status = try FileStatus.of(path) } catch { throw .unknownKey(key, path: path) }
        guard status.type == .regular else { throw .unreadable(path: path, reason: "not a regular file") }
        let header: [UInt8]?
        do { header = try BatchReportDocument.headerBytes(of: path) } catch {
            throw .unreadable(path: path, reason: error.message)
        }
        if let header, let document = try? JSONDecoder().decode(BatchReportDocument.self, from: Data(header)),
            let counts = document.counts,
            counts.items > BatchReport.itemsHeldInMemory
        {
            do {
                let items = ItemReports(
                    count: counts.items, load: { (try? readItems(path, size: status.size)) ?? [] },
                    visit: { whole, body, skimmed in
                        try? StoredReportReader.forEachItem(in: path, whole: whole, body, skimmed: skimmed)
                    })
                return try document.report(items: items)
            } catch {
                throw .malformed(path: path, detail: error.description)
            }
        }
        // A small batch's report (its items are held), or one whose items are not
        // last (written before they were streamed): read whole.
        return try BatchReport(documentAt: path, size: status.size)
    }

    /// The items of the report at `path`.
    private static func readItems(_ path: String, size: Int64) throws(StoredReportError) -> [ItemReport] {
        Array(try BatchReport(documentAt: path, size: size).items)
    }

    /// The whole report at `path`, read and decoded at once.
    private init(documentAt path: String, size: Int64) throws(StoredReportError) {
        guard size <= Self.maximumStoredSize else {
            throw .unreadable(path: path, reason: "\(size) bytes; refusing more than \(Self.maximumStoredSize)")
        }
        let data: [UInt8]
        do { data = try FileSystem.readWholeFile(path) } catch { throw .unreadable(path: path, reason: error.message) }
        do {
            self = try Self.decode(storedJSON: Data(data))
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

    /// Writes the report document to `path` (replacing it), in bounded memory
    /// when the batch's stored report in `container` holds its items: that file
    /// is copied; otherwise the items are encoded one by one.
    public func write(to path: String, container: ContainerDirectory) throws(SystemError) {
        let stored = container.reportPath(key: key)
        let temporary = path + ".partial-\(UUID().uuidString)"
        let writer = try AtomicFileWriter(temporary)
        if let header = try? BatchReportDocument.headerBytes(of: stored),
            let document = try? JSONDecoder().decode(BatchReportDocument.self, from: Data(header)),
            document.batch == batchID.uuidString
        {
            try writer.append(contentsOf: stored)
        } else {
            try writer.append(String(decoding: json(), as: UTF8.self))
        }
        try writer.commit(syncDirectory: false)
        try FileSystem.rename(temporary, path)
    }
}

/// Reads the items of a stored report one at a time, without holding them: the
/// report's own layout (``StoredReportWriter``: each item an object indented
/// by four spaces, its closing brace on a line of its own) is read a line at a
/// time and each item decoded alone.
enum StoredReportReader {
    #if DEBUG
        /// How many items were decoded from each stored report, by path: what a
        /// test reads to see that `share report` decodes each item once for both
        /// of its outputs. Debug and test builds only.
        static let decodedItems = Mutex<[String: Int]>([:])
        /// How many items were read without being decoded (their ``ItemSkim`` alone), by path.
        static let skimmedItems = Mutex<[String: Int]>([:])
    #endif

    /// Calls `body` with each item's report, in order.
    static func forEachItem(in path: String, _ body: (ItemReport) -> Void) throws {
        try forEachItem(in: path, whole: { _ in true }, body, skimmed: { _ in })
    }

    /// Goes through the items once, in order: each item's status and top-level
    /// `size` are read from its own lines (its keys at six spaces; a nested
    /// object's are deeper) and offered to `whole`; only when it says so (or
    /// when they cannot be read) is the item decoded for `body`, else the skim
    /// goes to `skimmed`. A million items' pass that shows a few thousand
    /// decodes those alone.
    static func forEachItem(
        in path: String, whole: (ItemSkim) -> Bool, _ body: (ItemReport) -> Void, skimmed: (ItemSkim) -> Void
    ) throws {
        let fd = try FileDescriptor.open(path, O_RDONLY)
        var offset: Int64 = 0
        var pending: [UInt8] = []
        var inItems = false
        var item: [UInt8] = []
        var index = 0
        let marker = Array(BatchReportDocument.itemsMarker.dropFirst().utf8)  // without its leading newline
        let decoder = JSONDecoder()
        let closing = Array("    }".utf8)
        let statusKey = Array("      \"status\" : \"".utf8)
        let sizeKey = Array("      \"size\" : ".utf8)
        var status: ItemStatus?
        var size: Int64?
        func line(_ text: ArraySlice<UInt8>) throws {
            guard inItems else {
                if text.elementsEqual(marker) { inItems = true }
                return
            }
            item += text
            item.append(UInt8(ascii: "\n"))
            if text.starts(with: statusKey) {
                let value = text.dropFirst(statusKey.count).prefix { $0 != UInt8(ascii: "\"") }
                status = ItemStatus(rawValue: String(decoding: value, as: UTF8.self))
            } else if text.starts(with: sizeKey) {
                let digits = text.dropFirst(sizeKey.count).prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                size =
                    digits.isEmpty || digits.count > 18
                    ? nil : digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
            }
            // "    }" or "    }," closes an item.
            if text.starts(with: closing), text.count <= closing.count + 1 {
                if item.last == UInt8(ascii: "\n") { item.removeLast() }
                if item.last == UInt8(ascii: ",") { item.removeLast() }
                let skim = status.map { ItemSkim(index: index, status: $0, size: size ?? 0) }
                if let skim, !whole(skim) {
                    skimmed(skim)
                    #if DEBUG
                        skimmedItems.withLock { $0[path, default: 0] += 1 }
                    #endif
                } else {
                    body(try decoder.decode(BatchReportDocument.Item.self, from: Data(item)).report(index: index))
                    #if DEBUG
                        decodedItems.withLock { $0[path, default: 0] += 1 }
                    #endif
                }
                index += 1
                item.removeAll(keepingCapacity: true)
                status = nil
                size = nil
            }
        }
        while true {
            let chunk = try fd.read(count: 1 << 16, at: offset, path: path)
            offset += Int64(chunk.count)
            pending += chunk
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                try line(pending[start..<newline])
                start = newline + 1
            }
            pending.removeSubrange(..<start)
            if chunk.isEmpty { break }
        }
    }
}

/// Writes a batch's stored report while its items are read, one at a time: the
/// items go to a temporary file as they come, and at the end the report is the
/// header (known only then: counts, times, the URL) followed by them, made
/// durable under its name. A report of any size, in bounded memory.
final class StoredReportWriter {
    private let path: String
    private let items: AtomicFileWriter
    private let itemsPath: String
    private var count = 0

    init(path: String) throws(SystemError) {
        self.path = path
        itemsPath = FileSystem.temporaryName(for: path + ".items")
        items = try AtomicFileWriter(itemsPath)
    }

    /// Appends one item's report.
    func append(_ item: ItemReport) throws(SystemError) {
        try items.append((count == 0 ? "" : ",\n") + BatchReportDocument.encode(BatchReportDocument.Item(item)))
        count += 1
    }

    /// Writes the report: `report`'s header, then the items appended (it replaces
    /// an older report of the key).
    func commit(_ report: BatchReport) throws(SystemError) {
        try items.commit(syncDirectory: false)
        defer { FileSystem.remove(itemsPath) }
        let header = BatchReportDocument.header(of: report)
        let file = try AtomicFileWriter(path + ".new")
        try file.append(header.opening)
        try file.append(contentsOf: itemsPath)
        try file.append(header.closing(empty: count == 0))
        FileSystem.remove(path + ".new")
        try file.commit(syncDirectory: false)
        try FileSystem.rename(path + ".new", path)
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
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text.isEmpty ? "(top level)" : text
        }
        switch error {
        case .keyNotFound(let key, let context): description = "field \(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            description = "field \(path(context.codingPath)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            description =
                context.codingPath.isEmpty
                ? "malformed JSON" : "field \(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: description = "\(error)"
        }
    }
}

/// The batch report document: the one layout `BatchReport.json()` and the
/// stored report write and `BatchReport.stored` reads: the batch's fields
/// first (keys sorted), then `items` (each one's keys sorted); fields without
/// a value are left out.
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
        /// Sidecars attached to their media (absent when none).
        var attached: Int?
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
        var sha256: String?
        var duplicateOf: String?
        var similarTo: SharedMediaFile.SimilarTo?
        var motionVideo: SharedMediaFile.MotionVideo?
        var livePhoto: SharedMediaFile.LivePhoto?
        var compatible: Compatible?
        var locationRemoved: [String]?
        var sidecars: [SharedMediaFile.Sidecar]?
        var group: SharedMediaFile.Group?
        var capturedAt: String?
        var capturedAtSource: String?
        var capturedAtOffsetKnown: Bool?
        var capturedAtOffsetSource: String?
        var thumbnailHdr: String?
        var video: SharedMediaFile.Video?
        var camera: SharedMediaFile.Camera?
        var exportLocation: SharedMediaFile.ExportLocation?
        /// A sidecar's (status `attached`): the media item it is attached to.
        var attachedTo: String?
        var warnings: [String]?
        var stageSeconds: [String: Double]?
        /// The thumbnail's ThumbHash (base64).
        var thumbhash: String?
        var previews: [SharedMediaFile.Preview]?
        var projection: SharedMediaFile.Projection?
        var stereo: Bool?
        var hdr: String?
    }

    /// An item's compatible copy, as its entry has it.
    struct Compatible: Codable {
        var path: String
        var mimeType: String
        var size: Int64?
        var width: Int?
        var height: Int?
    }

    /// What comes before and after the items of a report's document.
    struct Header {
        /// `{`, the batch's fields, `"items" : [`.
        let opening: String

        /// `]` and `}` after `count` items.
        func closing(empty: Bool) -> String { empty ? "\n  ]\n}" : "\n  ]\n}" }

        /// The whole document, with these items (each encoded by ``BatchReportDocument/encode(_:)``).
        func joined(items: [String]) -> Data {
            Data((opening + items.joined(separator: ",\n") + closing(empty: items.isEmpty)).utf8)
        }
    }

    /// Where the items start: what a reader of the header alone looks for.
    static let itemsMarker = "\n  \"items\" : ["

    /// The header of `report`'s document.
    static func header(of report: BatchReport) -> Header {
        func seconds(_ timings: [StageName: Double]) -> [String: Double] {
            Dictionary(uniqueKeysWithValues: timings.map { ($0.key.rawValue, ($0.value * 10_000).rounded() / 10_000) })
        }
        let document = BatchReportDocument(
            batch: report.batchID.uuidString, key: report.key.rawValue, redirectURL: report.redirectURL?.description,
            manifest: report.manifestPath,
            schema: report.schema, pipeline: report.pipeline, interrupted: report.interrupted,
            counts: Counts(
                items: report.counts.items, ingested: report.counts.ingested, failed: report.counts.failed,
                skipped: report.counts.skipped,
                attached: report.counts.attached > 0 ? report.counts.attached : nil),
            stageSeconds: seconds(report.stageSeconds), wallSeconds: (report.wallSeconds * 10_000).rounded() / 10_000,
            items: [])
        var encoded = String(decoding: (try? encoder.encode(HeaderFields(document))) ?? Data("{}".utf8), as: UTF8.self)
        // `{ … "wallSeconds" : 1.5\n}` → `{ … "wallSeconds" : 1.5,\n  "items" : [\n`
        if encoded.hasSuffix("\n}") { encoded.removeLast(2) }
        return Header(opening: encoded + "," + itemsMarker + "\n")
    }

    /// One item as it stands in the document (indented for its place in `items`).
    static func encode(_ item: Item) -> String {
        let json = (try? encoder.encode(item)) ?? Data("{}".utf8)
        // Each line indented by four spaces (the pretty-printed JSON has no empty line).
        var indented: [UInt8] = [0x20, 0x20, 0x20, 0x20]
        indented.reserveCapacity(json.count + json.count / 4)
        for byte in json {
            indented.append(byte)
            if byte == UInt8(ascii: "\n") { indented += [0x20, 0x20, 0x20, 0x20] }
        }
        return String(decoding: indented, as: UTF8.self)
    }

    /// One encoder for every document (made once: an encoder per item cost more than its item).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The document without its items.
    private struct HeaderFields: Encodable {
        let document: BatchReportDocument
        init(_ document: BatchReportDocument) { self.document = document }

        private enum Key: String, CodingKey {
            case batch, key, redirectURL, manifest, schema, pipeline, interrupted, counts, stageSeconds, wallSeconds
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(document.batch, forKey: .batch)
            try c.encode(document.key, forKey: .key)
            try c.encodeIfPresent(document.redirectURL, forKey: .redirectURL)
            try c.encodeIfPresent(document.manifest, forKey: .manifest)
            try c.encode(document.schema, forKey: .schema)
            try c.encode(document.pipeline, forKey: .pipeline)
            try c.encodeIfPresent(document.interrupted, forKey: .interrupted)
            try c.encodeIfPresent(document.counts, forKey: .counts)
            try c.encodeIfPresent(document.stageSeconds, forKey: .stageSeconds)
            try c.encode(document.wallSeconds, forKey: .wallSeconds)
        }
    }

    /// The bytes of the header of the document at `path`, read up to its items
    /// and closed as a document of its own with no items; nil when the items
    /// are not last (an older report, to read whole).
    static func headerBytes(of path: String) throws(SystemError) -> [UInt8]? {
        let fd = try FileDescriptor.open(path, O_RDONLY)
        let marker = Array(itemsMarker.utf8)
        var read: [UInt8] = []
        while read.count < 1 << 20 {
            let chunk = try fd.read(count: 1 << 14, at: Int64(read.count), path: path)
            read += chunk
            if let range = read.firstRange(of: marker) {
                // `…,` before the items: an empty `items` closes it (the field is
                // not optional: without it no header would decode).
                return Array(read[..<range.lowerBound]) + Array("\n  \"items\" : []\n}".utf8)
            }
            if chunk.isEmpty { return nil }
        }
        return nil
    }

    /// The report this document describes; `items`, when given, stand for its
    /// own (read later, when needed).
    func report(items lazy: ItemReports? = nil) throws(StoredReportDecodingError) -> BatchReport {
        guard let batchID = UUID(uuidString: batch) else {
            throw StoredReportDecodingError(detail: "field batch must be a UUID, not \(JSONText.string(batch))")
        }
        let key: ShareKey
        do { key = try ShareKey(self.key) } catch { throw StoredReportDecodingError(detail: "field key: \(error)") }
        func timings(_ seconds: [String: Double]?) -> [StageName: Double] {
            // A stage this version does not know is left out rather than refusing the report.
            Dictionary(uniqueKeysWithValues: (seconds ?? [:]).map { name, value in (StageName(name), value) })
        }
        let reports = lazy == nil ? items.enumerated().map { index, item in item.report(index: index) } : []
        let all = lazy ?? ItemReports(reports)
        let counted =
            counts.map { stored in
                var counts = BatchReport.Counts(
                    items: stored.items, ingested: stored.ingested, failed: stored.failed, skipped: stored.skipped)
                counts.attached = stored.attached ?? 0
                return counts
            } ?? BatchReport.Counts(reports)
        var report = BatchReport(
            batchID: batchID, key: key, redirectURL: redirectURL.flatMap { try? RedirectURL.parse($0).url },
            manifestPath: manifest,
            schema: schema, pipeline: pipeline, items: all, counts: counted, stageSeconds: timings(stageSeconds),
            wallSeconds: wallSeconds)
        report.interrupted = interrupted ?? false
        return report
    }
}

extension BatchReportDocument.Item {
    /// The item's report, `index`-th of its batch.
    func report(index: Int) -> ItemReport {
        func timings(_ seconds: [String: Double]?) -> [StageName: Double] {
            // A stage this version does not know is left out rather than refusing the report.
            Dictionary(uniqueKeysWithValues: (seconds ?? [:]).map { name, value in (StageName(name), value) })
        }
        // Reports always name the stage and reason of a failure; an edited one
        // without them still shows its message.
        let failure =
            status == .ingested || status == .attached
            ? nil : ItemFailure(stage ?? .sniff, reason ?? .io, error ?? "(no message recorded)")
        let entry = path.map {
            SharedMediaFile(
                path: $0, thumbnail: thumbnail, duration: duration, type: type ?? .file, mimeType: mimeType,
                fileName: fileName, size: size, width: width, height: height
            ).with(sha256: sha256, duplicateOf: duplicateOf, motionVideo: motionVideo, livePhoto: livePhoto).with(
                compatible: compatible.map {
                    SharedMediaFile.Compatible(
                        path: $0.path, mimeType: $0.mimeType, size: $0.size, width: $0.width, height: $0.height)
                },
                locationRemoved: locationRemoved
            ).with(sidecars: sidecars).with(group: group).with(
                capturedAt: capturedAt, capturedAtSource: capturedAtSource, exportLocation: exportLocation
            )
            .with(thumbhash: thumbhash).with(previews: previews)
            .with(capturedAtOffsetKnown: capturedAtOffsetKnown, capturedAtOffsetSource: capturedAtOffsetSource).with(
                thumbnailHdr: thumbnailHdr
            ).with(video: video).with(projection: projection, stereo: stereo, hdr: hdr)
            .with(camera: camera).with(similarTo: similarTo)
        }
        // Copies are named <UUID>.<ext> in the container.
        let id = entry?.fileURL.flatMap { UUID(uuidString: $0.deletingPathExtension().lastPathComponent) }
        return ItemReport(
            index: index, source: source, status: status, failure: failure, warnings: warnings ?? [], entry: entry,
            id: id,
            stageSeconds: timings(stageSeconds), attachedTo: attachedTo)
    }

    /// The item's fields in the document.
    init(_ item: ItemReport) {
        func seconds(_ timings: [StageName: Double]) -> [String: Double] {
            Dictionary(uniqueKeysWithValues: timings.map { ($0.key.rawValue, ($0.value * 10_000).rounded() / 10_000) })
        }
        let entry = item.entry
        self.init(
            source: item.source, status: item.status, error: item.failure?.message, stage: item.failure?.stage,
            reason: item.failure?.reason,
            path: entry?.path, type: entry?.type, thumbnail: entry?.thumbnail, mimeType: entry?.mimeType,
            fileName: entry?.fileName,
            size: entry?.size, width: entry?.width, height: entry?.height, duration: entry?.duration,
            sha256: entry?.sha256,
            duplicateOf: entry?.duplicateOf, motionVideo: entry?.motionVideo, livePhoto: entry?.livePhoto,
            compatible: entry?.compatible.map {
                BatchReportDocument.Compatible(
                    path: $0.path, mimeType: $0.mimeType, size: $0.size, width: $0.width, height: $0.height)
            },
            locationRemoved: entry?.locationRemoved, sidecars: entry?.sidecars, group: entry?.group,
            capturedAt: entry?.capturedAt,
            capturedAtSource: entry?.capturedAtSource, capturedAtOffsetKnown: entry?.capturedAtOffsetKnown,
            video: entry?.video, exportLocation: entry?.exportLocation, attachedTo: item.attachedTo,
            warnings: item.warnings,
            stageSeconds: seconds(item.stageSeconds))
        thumbhash = entry?.thumbhash
        previews = entry?.previews
        capturedAtOffsetSource = entry?.capturedAtOffsetSource
        thumbnailHdr = entry?.thumbnailHdr
        (projection, stereo, hdr) = (entry?.projection, entry?.stereo, entry?.hdr)
        camera = entry?.camera
        similarTo = entry?.similarTo
    }
}
