import Foundation
import ShareManifest
import Synchronization
import SystemCalls

/// The outcome of one input item.
public enum ItemStatus: String, Sendable, Codable {
    /// Delivered: it is in the manifest.
    case ingested
    /// It could not be delivered; `error` says why.
    case failed
    /// Deliberately left out (a FIFO, a symbolic link out of the drop, …); `error` says why.
    case skipped
    /// An export's sidecar (a Takeout JSON, an XMP, an `.AAE`) attached to the
    /// media item it describes (``ItemReport/attachedTo``): listed in that
    /// item's `sidecars`, not an entry of its own.
    case attached
}

/// What happened to one item, as the report and the events tell it.
public struct ItemReport: Sendable, Hashable {
    /// Position in the batch (input order).
    public let index: Int
    /// The source path (or `text:`/`url:` and the first characters).
    public let source: String
    /// Ingested, failed or skipped.
    public let status: ItemStatus
    /// Why it failed or was skipped.
    public let failure: ItemFailure?
    /// Things that went wrong without costing the item (e.g. a video without a poster).
    public let warnings: [String]
    /// The manifest entry, when ingested.
    public let entry: SharedMediaFile?
    /// The item's UUID in the container, when one was assigned.
    public let id: UUID?
    /// Seconds spent in each stage.
    public let stageSeconds: [StageName: Double]
    /// A sidecar's (status `attached`): the media item it is attached to, by its source.
    public var attachedTo: String? = nil
}

/// Why a batch stopped before all its items finished. Each leaves it
/// resumable: nothing is lost, and `--resume` (or the watcher's next try)
/// finishes it.
public enum BatchStop: Sendable, Equatable, CustomStringConvertible {
    /// A stop was asked: a signal (SIGINT, SIGTERM), a cancelled task.
    case asked
    /// Something could not be written for want of space: items' copies or
    /// thumbnails (they wait, and start again once there is room), or the
    /// journal's records. `path`: where (the container, or the journal's
    /// folder); `freeBytes`: what its file system had free then.
    case diskFull(path: String, freeBytes: Int64?)
    /// The journal could not record the items' steps (not for want of space): what it said.
    case storeFailed(String)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .asked: "interrupted"
        case .diskFull(let path, let free):
            "container disk full: \(path) could not be written"
                + (free.map { " (\(ReadableUnits.bytes($0)) free)" } ?? "")
        case .storeFailed(let reason): "the journal could not record the batch's progress: \(reason)"
        }
    }
}

/// Everything about one finished batch.
public struct BatchReport: Sendable {
    /// The batch's UUID (from the ingestor's ``IdentifierSource``).
    public let batchID: UUID
    /// The manifest key.
    public let key: ShareKey
    /// The redirect URL, when a manifest was written (at least one item delivered).
    public let redirectURL: RedirectURL?
    /// The manifest file, when written.
    public let manifestPath: String?
    /// The schema the manifest was written in.
    public let schema: ManifestSchema
    /// The pipeline's name.
    public let pipeline: String
    /// One report per input item, in input order (folders expanded). Held in
    /// memory for batches of up to ``itemsHeldInMemory`` items; a larger batch's
    /// are read from its stored report (or its store) the first time an element
    /// is read, so a report of a million items costs nothing until then.
    public let items: ItemReports

    /// Batches of up to this many items keep their item reports in memory (they
    /// outlive the container); larger ones read them back when needed.
    public static let itemsHeldInMemory = 10_000
    /// How many items were delivered, failed and were skipped.
    public let counts: Counts
    /// Seconds of work per stage, summed over items, and the batch's wall time.
    public let stageSeconds: [StageName: Double]
    /// Wall-clock seconds the batch took (a measurement: differs between runs).
    public let wallSeconds: Double
    /// True when the batch stopped before all its items finished (a signal, a
    /// cancellation, a full disk: ``stop`` says which): no manifest yet;
    /// `share ingest --resume` finishes it.
    public var interrupted = false
    /// Why an ``interrupted`` batch stopped.
    public var stop: BatchStop?

    /// Items by outcome.
    public struct Counts: Sendable, Hashable, Codable {
        /// Every item of the batch.
        public var items: Int
        /// Delivered: in the manifest.
        public var ingested: Int
        /// Not delivered, with a reason.
        public var failed: Int
        /// Deliberately left out (a FIFO, a symbolic link out of the drop, …).
        public var skipped: Int
        /// Sidecars attached to the media they describe (not entries of their own).
        public var attached = 0

        /// Counts of `items` reports.
        public init(_ items: some Collection<ItemReport>) {
            self.items = items.count
            ingested = items.count { $0.status == .ingested }
            failed = items.count { $0.status == .failed }
            skipped = items.count { $0.status == .skipped }
            attached = items.count { $0.status == .attached }
        }

        init(items: Int, ingested: Int, failed: Int, skipped: Int) {
            (self.items, self.ingested, self.failed, self.skipped) = (items, ingested, failed, skipped)
        }

        private enum CodingKeys: String, CodingKey { case items, ingested, failed, skipped, attached }

        /// Counts written before sidecars were attached have no `attached`: 0.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            items = try c.decode(Int.self, forKey: .items)
            ingested = try c.decode(Int.self, forKey: .ingested)
            failed = try c.decode(Int.self, forKey: .failed)
            skipped = try c.decode(Int.self, forKey: .skipped)
            attached = try c.decodeIfPresent(Int.self, forKey: .attached) ?? 0
        }

        /// Counts one more item.
        mutating func add(_ status: ItemStatus) {
            items += 1
            switch status {
            case .ingested: ingested += 1
            case .failed: failed += 1
            case .skipped: skipped += 1
            case .attached: attached += 1
            }
        }
    }

    init(
        batchID: UUID, key: ShareKey, redirectURL: RedirectURL?, manifestPath: String?, schema: ManifestSchema,
        pipeline: String,
        items: ItemReports, counts: Counts, stageSeconds: [StageName: Double], wallSeconds: Double
    ) {
        self.batchID = batchID
        self.key = key
        self.redirectURL = redirectURL
        self.manifestPath = manifestPath
        self.schema = schema
        self.pipeline = pipeline
        self.items = items
        self.counts = counts
        self.stageSeconds = stageSeconds
        self.wallSeconds = wallSeconds
    }

    /// A report of items held in memory.
    init(
        batchID: UUID, key: ShareKey, redirectURL: RedirectURL?, manifestPath: String?, schema: ManifestSchema,
        pipeline: String,
        items: [ItemReport], stageSeconds: [StageName: Double], wallSeconds: Double
    ) {
        self.init(
            batchID: batchID, key: key, redirectURL: redirectURL, manifestPath: manifestPath, schema: schema,
            pipeline: pipeline,
            items: ItemReports(items), counts: Counts(items), stageSeconds: stageSeconds, wallSeconds: wallSeconds)
    }

    /// The manifest's entries: the ingested items', in input order.
    public var entries: [SharedMediaFile] { items.compactMap(\.entry) }
    /// How many items were delivered.
    public var ingestedCount: Int { counts.ingested }
    /// How many items failed.
    public var failedCount: Int { counts.failed }
    /// How many items an ``interrupted`` batch has not finished yet (they are
    /// finished by the resume: counted in ``failedCount`` until then); 0 for a finished batch.
    public var unfinishedCount: Int {
        guard interrupted else { return 0 }
        return items.filter {
            $0.status == .failed && ($0.failure.map { ItemFailure.notFinal.contains($0.reason) } ?? true)
        }.count
    }
    /// How many items were skipped.
    public var skippedCount: Int { counts.skipped }
    /// True when every item was delivered.
    public var isComplete: Bool { counts.ingested + counts.attached == counts.items }
    /// How many sidecars were attached to their media.
    public var attachedCount: Int { counts.attached }

    /// How many items were not delivered for one of `reasons`. Only the items
    /// not delivered are decoded, one at a time, from a stored report: a large
    /// batch's reports are not all held to count a few (what `share ingest`'s
    /// exit status asks, at its end, of every batch).
    package func undelivered(for reasons: Set<ItemFailure.Reason>) -> Int {
        guard counts.ingested + counts.attached < counts.items else { return 0 }
        var found = 0
        items.visit(
            whole: { $0.status == .failed || $0.status == .skipped },
            { item in
                if let reason = item.failure?.reason, reasons.contains(reason) { found += 1 }
            },
            skimmed: { _ in })
        return found
    }
}

/// What a pass over a stored report learns of an item without decoding it.
struct ItemSkim {
    /// Its place in the batch.
    let index: Int
    /// Its outcome.
    let status: ItemStatus
    /// The bytes delivered (its entry's size; 0 without one).
    let size: Int64
}

/// The item reports of a batch: a collection read in full the first time one
/// of its elements is read (its count is known before). Built in memory, or
/// from where a batch's items are kept (its stored report, its store).
public struct ItemReports: RandomAccessCollection, Sendable {
    private let storage: Storage
    /// How many items there are.
    public let count: Int

    private final class Storage: Sendable {
        private let loaded: Mutex<[ItemReport]?>
        private let load: @Sendable () -> [ItemReport]
        let visit: StoredVisit?

        init(_ items: [ItemReport]?, load: @escaping @Sendable () -> [ItemReport], visit: StoredVisit? = nil) {
            loaded = Mutex(items)
            self.load = load
            self.visit = visit
        }

        var isLoaded: Bool { loaded.withLock { $0 != nil } }

        var items: [ItemReport] {
            loaded.withLock { loaded in
                if let loaded { return loaded }
                let items = load()
                loaded = items
                return items
            }
        }

        /// The loaded reports, `count` of them: a report that could not be read
        /// back (its batch's stored report was removed) stands as one saying so.
        func items(count: Int) -> [ItemReport] {
            let items = self.items
            guard items.count < count else { return items }
            let missing = (items.count..<count).map { index in
                ItemReport(
                    index: index, source: "item \(index)", status: .failed,
                    failure: ItemFailure(
                        .manifest, .unreadableState,
                        "item \(index): its report is no longer stored (nor readable from its batch's store)"
                    ),
                    warnings: [], entry: nil, id: nil, stageSeconds: [:])
            }
            loaded.withLock { $0 = items + missing }
            return items + missing
        }
    }

    /// Reports held in memory.
    public init(_ items: [ItemReport]) {
        storage = Storage(items, load: { items })
        count = items.count
    }

    /// `count` reports that `load` reads when first needed; `visit`, when given,
    /// goes through them one at a time without holding them.
    init(count: Int, load: @escaping @Sendable () -> [ItemReport], visit: StoredVisit? = nil) {
        storage = Storage(nil, load: load, visit: visit)
        self.count = count
    }

    /// True once the reports are held in memory (always, for reports given
    /// whole; for stored ones, once something needed them all).
    var areHeld: Bool { storage.isLoaded }

    /// Calls `body` with each report in order, holding none when they are read
    /// from a stored report (a million-item batch's, replayed as events).
    func visit(_ body: (ItemReport) -> Void) {
        visit(whole: { _ in true }, body, skimmed: { _ in })
    }

    /// A pass over stored items as one at a time, each read once: for each, its
    /// ``ItemSkim`` (status and delivered size, read from its lines without
    /// decoding it) is offered to `whole`; the item is decoded and given to
    /// `body` only when `whole` says so, else the skim goes to `skimmed`. Held
    /// items all go to `body`.
    func visit(whole: (ItemSkim) -> Bool, _ body: (ItemReport) -> Void, skimmed: (ItemSkim) -> Void) {
        if let visit = storage.visit, !storage.isLoaded {
            withoutActuallyEscaping(whole) { whole in
                withoutActuallyEscaping(body) { body in
                    withoutActuallyEscaping(skimmed) { skimmed in visit(whole, body, skimmed) }
                }
            }
        } else {
            for item in self { body(item) }
        }
    }

    /// Goes through a stored report's items (see ``visit(whole:_:skimmed:)``).
    typealias StoredVisit =
        @Sendable (_ whole: (ItemSkim) -> Bool, _ body: (ItemReport) -> Void, _ skimmed: (ItemSkim) -> Void) -> Void

    /// 0.
    public var startIndex: Int { 0 }
    /// ``count``.
    public var endIndex: Int { count }
    /// The report of the item at `position` (input order).
    public subscript(position: Int) -> ItemReport { storage.items(count: count)[position] }
}
