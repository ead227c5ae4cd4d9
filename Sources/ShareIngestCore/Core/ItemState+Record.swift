import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

// MARK: - Recorded form

extension ItemState {
    /// True when this state is `earlier`'s but for what finishing `stage`
    /// changes in every item: the stage completed, and its time. Such a step
    /// need not be recorded before the item goes on (``ItemLifecycle/recordsBeforeGoingOn(_:holderKeeps:roundTrips:cheapToRedo:)``).
    func isUnchanged(since earlier: ItemState, by stage: StageName) -> Bool {
        var same = self
        same.completed = earlier.completed
        same.stageSeconds[stage] = earlier.stageSeconds[stage]
        return same == earlier
    }
}

/// One column of both stores' item rows beside the record: declared once,
/// here, with how its value comes from the item, the index the stores keep on
/// it and the migration of each store that added it. Each store's item table
/// has these columns (``ItemState/columns``), writes them from this list,
/// adds them in its migrations from it (``additions(by:of:table:)``) and names
/// them in its queries through it (`\(ItemColumn.sha256)`). SQL reads an
/// item's fields through these columns, but for two reads of the record: `share
/// status --db` sums a running batch's seconds per stage from each row's
/// `snapshot->'stageSeconds'` (QueueStatus.swift), and the queue's migration 8
/// filled these columns from the records of the rows it found.
struct ItemColumn: Sendable, CustomStringConvertible {
    /// The column's name in both stores.
    let name: String
    /// Its value for an item (nil: NULL).
    let value: @Sendable (ItemState) -> String?
    /// The columns of the partial index kept on it (`… WHERE <name> IS NOT
    /// NULL`, named `<table>_<name>`), if any.
    let index: [String]?
    /// The migrations that added it: the journal's, the queue's (nil: the
    /// journal's item table was made with it).
    let journalMigration: String?
    let queueMigration: String

    var description: String { name }

    static let completed = ItemColumn(
        name: "completed", value: { $0.completed?.rawValue }, index: nil, journalMigration: nil,
        queueMigration: "8-item-columns")
    static let reason = ItemColumn(
        name: "reason", value: { $0.failure?.reason.rawValue }, index: nil, journalMigration: nil,
        queueMigration: "8-item-columns")
    static let sha256 = ItemColumn(
        name: "sha256", value: { $0.sha256 }, index: ["sha256"], journalMigration: "3-item-content-hash",
        queueMigration: "5-content-hash")
    static let contentIdentifier = ItemColumn(
        name: "content_identifier", value: { $0.livePhotoKeys.identifier }, index: ["batch_id", "content_identifier"],
        journalMigration: "4-item-live-photo-keys", queueMigration: "7-live-photo-keys")
    static let livePhotoName = ItemColumn(
        name: "live_photo_name", value: { $0.livePhotoKeys.name }, index: ["batch_id", "live_photo_name"],
        journalMigration: "4-item-live-photo-keys",
        queueMigration: "7-live-photo-keys")
    static let suspect = ItemColumn(
        name: "suspect", value: { $0.suspect ? "alone" : nil }, index: nil, journalMigration: "5-suspects-and-attempts",
        queueMigration: "8-item-columns")
    /// Kept empty since sidecars are matched when a batch is planned (its
    /// index, on the stems, is what older versions used).
    static let sidecarKind = ItemColumn(
        name: "sidecar_kind", value: { _ in nil }, index: ["batch_id", "export_stem"],
        journalMigration: "6-export-sidecar-keys",
        queueMigration: "9-export-sidecar-keys")
    static let exportStem = ItemColumn(
        name: "export_stem", value: { $0.exportStem }, index: ["batch_id", "export_stem"],
        journalMigration: "6-export-sidecar-keys",
        queueMigration: "9-export-sidecar-keys")
    static let burstID = ItemColumn(
        name: "burst_id", value: { $0.burstKey }, index: ["batch_id", "burst_id"],
        journalMigration: "7-burst-identifier", queueMigration: "10-burst-identifier")
    /// The perceptual hash of a delivered thumbnail: the fan-in reads the
    /// column of every earlier finished batch into its near-duplicate index
    /// (``SimilarPictures``), without decoding a record.
    static let perceptualHash = ItemColumn(
        name: "phash", value: { $0.thumbnailPath == nil ? nil : $0.perceptualHash }, index: nil,
        journalMigration: "9-perceptual-hash",
        queueMigration: "11-perceptual-hash")

    /// Every item column, in the order the stores write them.
    static let all: [ItemColumn] = [
        completed, reason, sha256, contentIdentifier, livePhotoName, suspect, sidecarKind, exportStem, burstID,
        perceptualHash,
    ]

    /// Which store a migration belongs to.
    enum Store { case journal, queue }

    /// The statements of `migration` (of `store`, on its item table `table`)
    /// that add the columns it added, then their indexes.
    static func additions(by migration: String, of store: Store, table: String) -> String {
        let added = all.filter { (store == .journal ? $0.journalMigration : $0.queueMigration) == migration }
        let columns = added.map {
            "ALTER TABLE \(table) ADD COLUMN \($0.name) \(store == .journal ? "TEXT" : "text");\n"
        }
        let indexes = added.compactMap { column in
            column.index.map {
                "CREATE INDEX IF NOT EXISTS \(table)_\(column.name) ON \(table) (\($0.joined(separator: ", "))) WHERE \(column.name) IS NOT NULL;\n"
            }
        }
        return (columns + indexes).joined()
    }
}

extension ItemState {
    /// The item's columns beside its record (``ItemColumn/all``).
    static var columns: [ItemColumn] { ItemColumn.all }

    /// The values of ``columns`` for this item, in their order.
    var columnValues: [String?] { ItemColumn.all.map { $0.value(self) } }

    /// The recorded JSON.
    func encoded() -> String {
        // Encoding plain values cannot fail.
        String(decoding: try! Self.encoder.encode(self), as: UTF8.self)
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The state recorded as `json`; an unreadable record becomes an item that
    /// fails with why (``unreadable(index:id:error:)``), never a dropped one. A
    /// record of a version from before labels and lost attempts is read as it was
    /// meant (``upgradedFromBeforeLabels(_:)``).
    static func decode(_ json: String, index: Int, id: UUID?) -> ItemState {
        let data = Data(json.utf8)
        do {
            return try JSONDecoder().decode(ItemState.self, from: data)
        } catch DecodingError.keyNotFound(CodingKeys.label, _) {
            if let upgraded = upgradedFromBeforeLabels(data),
                let state = try? JSONDecoder().decode(ItemState.self, from: upgraded)
            {
                return state
            }
            return .unreadable(index: index, id: id, error: "its record has no label and cannot be upgraded")
        } catch {
            return .unreadable(index: index, id: id, error: "\(error)")
        }
    }

    /// A record from before labels and lost attempts, in today's form: its label
    /// from the source (a file's `shownAs`, else its path; text and links as
    /// they are labelled now), its `strikes` as lost attempts.
    static func upgradedFromBeforeLabels(_ data: Data) -> Data? {
        guard var record = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let source = record["source"] as? [String: Any]
        else {
            return nil
        }
        let text = source["text"] as? String ?? ""
        switch source["kind"] as? String {
        case "file":
            let shown =
                (source["shownAs"] as? String ?? source["path"] as? String).flatMap { Data(base64Encoded: $0) }
                ?? Data()
            record["label"] = SourcePath(bytes: Array(shown)).display
        case "text": record["label"] = label(ofText: text)
        case "url": record["label"] = label(ofURL: text)
        default: return nil
        }
        if let strikes = record.removeValue(forKey: "strikes") { record[CodingKeys.lostAttempts.rawValue] = strikes }
        return try? JSONSerialization.data(withJSONObject: record)
    }

    static func label(ofText text: String) -> String { "text:" + String(text.prefix(60)) }
    static func label(ofURL url: String) -> String { "url:" + String(url.prefix(200)) }
}

extension ItemSource: Codable {
    private enum CodingKeys: String, CodingKey { case kind, path, name, text, root, refused }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(String.self, forKey: .kind) {
        case "file":
            let path = SourcePath(bytes: Array(try c.decodeIfPresent(Data.self, forKey: .path) ?? Data()))
            self = .file(
                SourceFile(
                    path: path, name: try c.decodeIfPresent(String.self, forKey: .name) ?? "",
                    rootLength: try c.decodeIfPresent(Int.self, forKey: .root),
                    refused: try c.decodeIfPresent(ItemFailure.self, forKey: .refused)))
        case "text": self = .text(try c.decodeIfPresent(String.self, forKey: .text) ?? "")
        case "url": self = .url(try c.decodeIfPresent(String.self, forKey: .text) ?? "")
        case let kind:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: c, debugDescription: "unknown source kind \(kind)")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .file(let file):
            try c.encode("file", forKey: .kind)
            try c.encode(Data(file.path.bytes), forKey: .path)
            try c.encode(file.name, forKey: .name)
            try c.encodeIfPresent(file.rootLength, forKey: .root)
            try c.encodeIfPresent(file.refused, forKey: .refused)
        case .text(let value):
            try c.encode("text", forKey: .kind)
            try c.encode(value, forKey: .text)
        case .url(let value):
            try c.encode("url", forKey: .kind)
            try c.encode(value, forKey: .text)
        }
    }
}

/// A recorded field that the record leaves out while it holds its default (no
/// warnings, no time, no lost attempt), and that reads as the default when
/// absent: records stay small, and older ones without it still read.
@propertyWrapper
struct OmittedWhenDefault<Value: Codable & Hashable & Sendable & RecordDefault>: Hashable, Sendable {
    var wrappedValue: Value
}

extension OmittedWhenDefault: Codable {
    init(from decoder: any Decoder) throws { wrappedValue = try Value(from: decoder) }
    func encode(to encoder: any Encoder) throws { try wrappedValue.encode(to: encoder) }
}

/// The value a field holds when nothing was recorded for it.
protocol RecordDefault { static var recordDefault: Self { get } }
extension Int: RecordDefault { static var recordDefault: Int { 0 } }
extension Bool: RecordDefault { static var recordDefault: Bool { false } }
extension Array: RecordDefault { static var recordDefault: Array { [] } }
extension Dictionary: RecordDefault { static var recordDefault: Dictionary { [:] } }

extension KeyedDecodingContainer {
    func decode<Value>(_ type: OmittedWhenDefault<Value>.Type, forKey key: Key) throws -> OmittedWhenDefault<Value> {
        OmittedWhenDefault(wrappedValue: try decodeIfPresent(Value.self, forKey: key) ?? Value.recordDefault)
    }
}

extension KeyedEncodingContainer {
    mutating func encode<Value>(_ value: OmittedWhenDefault<Value>, forKey key: Key) throws {
        if value.wrappedValue != Value.recordDefault { try encode(value.wrappedValue, forKey: key) }
    }
}
