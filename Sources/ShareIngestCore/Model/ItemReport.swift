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

/// Why an item was not delivered: which stage, what kind of problem, and the
/// specific message (naming the file and what the library said).
public struct ItemFailure: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kinds of failure a caller can match on.
    public enum Reason: String, Sendable, Codable {
        /// The source cannot be opened or read (permissions, a vanished file).
        case unreadable
        /// The source is empty.
        case empty
        /// A FIFO, socket or device in a drop: never opened (status `skipped`).
        case notRegularFile
        /// A symbolic link leading out of the drop, or to something not a regular file (status `skipped`).
        case symbolicLink
        /// A folder nested too deeply in a drop: not walked (status `skipped`).
        case tooDeep
        /// The content contradicts the name (random bytes named `.jpg`), or the media is not what its header claims.
        case contentMismatch
        /// An image or frame larger than the pipeline's `pixelLimit`; refused before decoding.
        case tooManyPixels
        /// The media cannot be decoded (truncated, damaged, no decodable video stream).
        case undecodable
        /// Probing or thumbnailing took longer than the stage's `timeLimit`.
        case timeLimit
        /// Decoding needed more memory than a decoder helper may use.
        case memoryLimit
        /// The decoder crashed on this file (the message names the signal); the batch went on.
        case decoderCrashed
        /// The sandboxed decoder answered with something the checks refuse (the
        /// message says what), or its sandbox was weaker than this machine allows.
        case decoderMisbehaved
        /// A stage that decodes media was started on this file several times and the
        /// whole process died each time (decoding in-process): not tried again.
        case crashedRepeatedly
        /// The source changed while it was being copied.
        case changedWhileCopying
        /// The container's disk or quota is full: not final (the item waits
        /// for space, and the batch with it; `--resume` delivers it once there is room).
        case diskFull
        /// Larger than what may be written (`EFBIG`: the container's file
        /// system's largest file, a process's file-size limit) or than the size
        /// limit asked for (`--max-item-size`, `--max-drop-size`): final.
        case tooLarge
        /// Another input/output error (the message has the call and `errno`).
        case io
        /// A shared link that is not a URL.
        case notAURL
        /// Text beside files in a legacy manifest, which cannot hold both (status `skipped`).
        case unsupportedBySchema
        /// A stop was asked while its stage ran (a long copy): not final; the
        /// stage runs again, from its start, when the batch resumes.
        case cancelled
        /// A distributed job failed (its worker died, or an error that is not the
        /// file's fault) more often than the batch's `maxAttempts`.
        case attemptsExhausted
        /// Its content was already delivered (earlier in the batch, or in a share
        /// not yet consumed) and the pipeline skips duplicates (status `skipped`).
        case duplicate
        /// The item's recorded state (in the journal or the queue) cannot be read
        /// (a damaged or foreign record): it is reported failed, never dropped.
        case unreadableState
        /// Location privacy is on and the file holds location metadata that
        /// cannot be removed in place (compressed, or in a structure the parser
        /// cannot read): it is not delivered with it.
        case locationNotRemovable
        /// Left out by the batch's selection (`--include`, `--exclude`):
        /// never copied (status `skipped`; the message names the pattern).
        case filtered
        /// Left out by the capture-date range (`--taken-after`, `--taken-before`):
        /// taken outside it, or with no capture date to compare; its copy removed
        /// (status `skipped`; the message says when it was taken).
        case outsideDateRange
    }

    /// The reasons that leave an item out deliberately (status `skipped`, not `failed`).
    static let skipping: Set<Reason> = [
        .notRegularFile, .symbolicLink, .tooDeep, .unsupportedBySchema, .duplicate, .filtered, .outsideDateRange,
    ]
    /// The reasons that are no verdict on the item: it is finished when its batch resumes.
    public static let notFinal: Set<Reason> = [.diskFull, .cancelled]

    /// The stage that failed (`copy` for entries skipped while walking a drop).
    public let stage: StageName
    /// What kind of problem: match on this in tests.
    public let reason: Reason
    /// The specific message: names the file and says what the library reported.
    public let message: String

    /// A failure at `stage` for `reason`, with the message people read.
    public init(_ stage: StageName, _ reason: Reason, _ message: String) {
        self.stage = stage
        self.reason = reason
        self.message = message
    }

    /// The ``message``.
    public var description: String { message }

    /// A failure to write into the container, classified once: `diskFull` when
    /// the disk or quota is full, `tooLarge` for a file larger than may be
    /// written, else `io`.
    init(_ stage: StageName, writing error: SystemError, _ message: String) {
        self.init(stage, error.isDiskFull ? .diskFull : error.kind == .tooLarge ? .tooLarge : .io, message)
    }
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

    /// The JSON report document (`--report FILE`, and the report stored beside
    /// each manifest): every input with its status (``BatchReportDocument``).
    /// Held in memory: ``write(to:container:)`` writes one of any size.
    public func json() -> Data {
        BatchReportDocument.header(of: self).joined(
            items: items.map { BatchReportDocument.encode(BatchReportDocument.Item($0)) })
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
                        "item \(index): its report is no longer stored (the batch's stored report and journal are gone)"
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
