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
