import Foundation
import ShareManifest
import SystemCalls

/// Where batches and their items are kept and read, in every mode: the
/// embedded SQLite journal (``BatchJournal``, a ``JournalStore``) or the
/// distributed mode's PostgreSQL queue (`JobQueue`, a ``JobStore``). Planning
/// and the fan-in use only this protocol; how a step and a batch's end are
/// recorded differs (a journal's records are its lock holder's, a queue's are
/// guarded by a job's lease), so those are in the protocols above it.
///
/// Both stores keep the same rows: a batch is mapped to and from its row in one
/// place (``BatchRecord/columns`` and ``BatchRecord/init(row:)``), an item is
/// its ``ItemState`` JSON beside the columns of ``ItemColumn``.
protocol ItemStore: AnyObject {
    /// The batch with this id, if recorded.
    func batch(id: UUID) throws -> BatchRecord?
    /// The batch that used `key`, if any: a key belongs to one batch, ever.
    func batch(key: ShareKey) throws -> BatchRecord?

    /// Starts recording a planned batch: its row (inserted, or updated for a
    /// claimed drop), `claimed` until ``seal(_:plan:unfinished:)``, with no item
    /// (those a plan cut short left are removed).
    func begin(_ batch: BatchRecord, plan: PlanDetails) throws
    /// Records some of its items (each with its UUID and label), in order, in
    /// one transaction. Each starts as ``ItemLifecycle/start(_:stopping:)``
    /// says (at the first stage, or finished when it failed while the drop was walked).
    func append(_ items: [ItemState], to batch: BatchRecord, plan: PlanDetails) throws
    /// Ends the plan: the batch `running` with `batch.itemCount` items, of which
    /// `unfinished` have stages to run; durable before any copy starts.
    func seal(_ batch: BatchRecord, plan: PlanDetails, unfinished: Int) throws

    /// Up to `limit` items of a batch with an index above `index`, in order, as
    /// last recorded: a cursor, so no caller holds a whole large batch. An item
    /// whose record cannot be read comes back failed (``ItemState/unreadable(index:id:error:)``).
    func items(of batch: UUID, after index: Int, limit: Int) throws -> [ItemState]

    /// Content of `batch` delivered before: for each item whose SHA-256 an
    /// earlier item of the batch has, that batch's first such item; for each
    /// SHA-256 of the batch, the first copy of it in each other finished batch.
    /// The fan-in decides which is still there to be a duplicate of. One entry
    /// per item or per content and share, never per pair: a drop of a hundred
    /// thousand copies of a few pictures is not squared.
    func earlierCopies(for batch: UUID) throws -> EarlierCopies

    /// The perceptual hashes of the delivered items of the other finished
    /// batches of the container, oldest batch first, each batch in order:
    /// read from their column alone (no record decoded), for the fan-in's
    /// near-duplicate index (``SimilarPictures``).
    func earlierPerceptualHashes(for batch: UUID) throws -> [EarlierHash]

    /// The items of `batch` (not failed) that may be half of a Live Photo: those
    /// whose content identifier or Live Photo name (``ItemState/livePhotoKeys``,
    /// indexed) another such item of the batch shares. The fan-in pairs them.
    func livePhotoCandidates(for batch: UUID) throws -> [ItemState]

    /// A page of the export candidates of `batch` (not failed): the photos and
    /// videos whose stem (indexed, ``ItemState/exportStem``) another item
    /// shares, in the order of their stem and index, from after `after` (a stem
    /// and an index), at most `limit` of them, each with its stem.
    func exportCandidates(for batch: UUID, after: (stem: String, index: Int), limit: Int) throws -> [(
        stem: String, item: ItemState
    )]

    /// A page of the photos of `batch` (not failed) whose Apple burst
    /// identifier (indexed, ``ItemState/burstKey``) another item shares, in the
    /// order of their identifier and index, from after `after`, at most `limit`
    /// of them, each with its identifier.
    func burstCandidates(for batch: UUID, after: (burst: String, index: Int), limit: Int) throws -> [(
        burst: String, item: ItemState
    )]

    /// How the batch's items stand, counted from the columns alone.
    func counts(of batch: UUID) throws -> StoredCounts
    /// Every item of the batch as recorded, with where and when it runs next
    /// (for `share status` and the tests that compare the stores).
    func recordedItems(of batch: UUID) throws -> [RecordedItem]
    /// The batch's fan-in as recorded; nil when the batch is unknown.
    func recordedFanIn(of batch: UUID) throws -> RecordedFanIn?

    /// How to open this store again (``StoreOpener``): what a batch's item
    /// reports are read back from, later, when its stored report is gone.
    var opener: StoreOpener { get }
}

/// A way to open a batch's store again, on whichever thread and however late:
/// a store of its own each time (the journal opened again, a new connection to
/// the queue), since the store at hand may hold a connection that is not to be
/// shared between threads (the queue's). The same in both modes.
struct StoreOpener: Sendable {
    let open: @Sendable () throws -> any ItemStore
}

extension ItemStore {
    /// The export candidates of `batch` one stem at a time (every item of the
    /// stem together), read in pages of `pageSize`: the fan-in groups shots in
    /// bounded memory, however large the drop (the largest stem aside).
    func forEachExportStem(of batch: UUID, pageSize: Int, _ body: ([ItemState]) throws -> Void) throws {
        try Self.forEachKey(
            pageSize: pageSize, page: { after, limit in try exportCandidates(for: batch, after: after, limit: limit) },
            body)
    }

    /// The photos of `batch` that share an Apple burst identifier, one burst at
    /// a time (every frame together), read in pages of `pageSize`.
    func forEachBurst(of batch: UUID, pageSize: Int, _ body: ([ItemState]) throws -> Void) throws {
        try Self.forEachKey(
            pageSize: pageSize,
            page: { after, limit in
                try burstCandidates(for: batch, after: (after.stem, after.index), limit: limit).map {
                    ($0.burst, $0.item)
                }
            }, body)
    }

    /// Pages ordered by a key and an index, handed on one key at a time.
    private static func forEachKey(
        pageSize: Int, page read: ((stem: String, index: Int), Int) throws -> [(stem: String, item: ItemState)],
        _ body: ([ItemState]) throws -> Void
    ) throws {
        var after = (stem: "", index: Int.min)
        var current: (stem: String, items: [ItemState])?
        while true {
            let page = try read(after, pageSize)
            for (stem, item) in page {
                if let open = current, open.stem != stem {
                    try body(open.items)
                    current = nil
                }
                if current == nil { current = (stem, []) }
                current?.items.append(item)
            }
            guard let last = page.last, page.count >= pageSize else { break }
            after = (last.stem, last.item.index)
        }
        if let open = current { try body(open.items) }
    }
}

/// The journal's side of a store: the process holding a batch's lock
/// (``BatchLock``) records its items' steps and its end, and a resumed batch
/// reads what is unfinished. What ``BatchRunner`` uses.
protocol JournalStore: ItemStore, Sendable {
    /// Records an item's state after a stage and where it goes next (as
    /// ``ItemLifecycle/recorded(_:at:holderKeeps:)`` says: its stage, or none
    /// once finished, and when it may run).
    func record(_ item: ItemState, next: NextStep, batch: UUID) throws
    /// Records the fan-in's end: the batch as the manifest left it (done, its
    /// counts, its manifest and URL) and the items whose state the manifest
    /// stage changed, in one durable transaction.
    func finish(_ batch: BatchRecord, changed: [ItemState]) throws
    /// Records a page of the items the fan-in changed, before its end (made
    /// durable with it by ``finish(_:changed:)``).
    func record(_ changed: [ItemState], batch: UUID) throws
    /// Up to `limit` items after `index` that were not finished when last
    /// recorded (what a resumed batch still has to do), in order, each with
    /// where and when it runs next.
    func unfinishedItems(of batch: UUID, after index: Int, limit: Int) throws -> [RecordedItem]
    /// Records the batch's row as it is now (its state, counts, manifest).
    func update(_ batch: BatchRecord, durable: Bool) throws
    /// Records that the batch's fan-in lost an attempt (`lost` now): `next`
    /// runs it again after a backoff (the batch waits `running`), or gives up
    /// (the batch ends `failed`, with why).
    func loseFanIn(_ batch: UUID, next: NextStep, lost: Int) throws
    /// A failed batch resumed: `running` again, its fan-in with no attempt lost
    /// (``BatchLifecycle/reopened``).
    func reopen(_ batch: UUID) throws
}

extension ItemStore {
    /// Records a planned batch and all its items at once (``begin(_:plan:)``,
    /// ``append(_:to:plan:)``, ``seal(_:plan:unfinished:)``).
    func create(_ batch: BatchRecord, items: [ItemState], plan: PlanDetails) throws {
        try begin(batch, plan: plan)
        try append(items, to: batch, plan: plan)
        var sealed = batch
        sealed.handle(.seal)
        sealed.itemCount = items.count
        try seal(sealed, plan: plan, unfinished: items.count { !plan.lifecycle.start($0, stopping: false).isFinished })
    }

    /// Every item of a batch, by ``items(of:after:limit:)`` in pages.
    func forEachItem(of batch: UUID, pageSize: Int = 1000, _ body: (ItemState) throws -> Void) throws {
        try forEachPage(of: batch, pageSize: pageSize) { page in
            for item in page { try body(item) }
        }
    }

    /// Every item of a batch, a page of `pageSize` at a time, in order.
    func forEachPage(of batch: UUID, pageSize: Int = 1000, _ body: ([ItemState]) throws -> Void) throws {
        var last = -1
        while true {
            let page = try items(of: batch, after: last, limit: pageSize)
            try body(page)
            guard page.count == pageSize, let end = page.last?.index else { return }
            last = end
        }
    }
}

/// Content a batch's items share with what was delivered before them (``ItemStore/earlierCopies(for:)``).
struct EarlierCopies: Sendable {
    /// Item index → the first item of its batch with the same content, when that is an earlier one.
    var inBatch: [Int: EarlierCopy] = [:]
    /// SHA-256 → the first copy of that content in each other finished batch,
    /// the oldest batch first.
    var inOtherShares: [String: [EarlierCopy]] = [:]

    /// Each store's rows: `(item, original index, original's snapshot)` for the
    /// batch, `(sha256, original index, snapshot, share key)` for other shares.
    /// A snapshot read once per original, however many items copy it.
    mutating func addInBatch(item: Int, original: Int, snapshot: () -> String?, cache: inout [Int: EarlierCopy?]) {
        if cache[original] == nil {
            let state = ItemState.decode(snapshot() ?? "", index: original, id: nil)
            cache[original] = state.copyPath.map {
                EarlierCopy(index: original, path: $0, label: state.label, shareKey: nil)
            }
        }
        if let copy = cache[original] ?? nil { inBatch[item] = copy }
    }

    mutating func addInOtherShare(sha256: String, original: Int, snapshot: String?, key: String?) {
        let state = ItemState.decode(snapshot ?? "", index: original, id: nil)
        guard let path = state.copyPath, let key = key.flatMap({ try? ShareKey($0) }) else { return }
        inOtherShares[sha256, default: []].append(
            EarlierCopy(index: original, path: path, label: state.label, shareKey: key))
    }
}

/// A copy of the same content delivered before an item (``ItemStore/earlierCopies(for:)``).
struct EarlierCopy: Sendable, Hashable {
    /// Its item's index in its batch.
    let index: Int
    /// The copy in the container.
    let path: String
    /// How its item is named in reports.
    let label: String
    /// The share it was delivered in, when not the same batch (a duplicate of it
    /// counts only while that share is not consumed).
    let shareKey: ShareKey?
}

/// How a batch's items stand in a store, counted from its columns alone (no
/// item decoded): the same counts from both (``ItemStore/counts(of:)``); how
/// they count in a report is the lifecycle's (``ItemLifecycle/reportCounts(_:)``).
struct StoredCounts: Sendable, Equatable {
    var items = 0
    /// Finished, delivered.
    var ingested = 0
    /// Finished, failed (not skipped).
    var failed = 0
    /// Finished, skipped (``ItemFailure/skipping``).
    var skipped = 0
    /// Not finished.
    var unfinished = 0
}

/// An item as a store recorded it: its state, and where and when it runs next.
struct RecordedItem: Sendable, Equatable {
    let item: ItemState
    /// The stage it waits for; nil once finished.
    let stage: StageName?
    /// Seconds from now before it may be taken (0: at once).
    let wait: Double
}

/// A batch's fan-in as a store recorded it: the attempts it lost, and when it may run.
struct RecordedFanIn: Sendable, Equatable {
    let lost: Int
    /// Seconds from now before it may run (0: at once).
    let wait: Double
    /// The batch's state.
    let state: BatchState
    /// Why the batch failed (state `failed`).
    let failure: String?
}

/// What a store's error means for the record it could not make: the one
/// reading of both stores' typed errors (``SQLiteError/storeFailure``,
/// ``PostgresError/storeFailure``) that the lifecycle decides on
/// (``ItemLifecycle/afterFailedRecord(_:next:ran:error:failure:refusedBefore:)``).
enum StoreFailure: Sendable, Equatable {
    /// The store cannot be reached (a lost connection, a server restarting):
    /// it takes the record once it is back.
    case unreachable
    /// The store is there but cannot write now (an I/O error, locked, out of
    /// resources, a timeout): its trouble, not the record's.
    case unavailable
    /// The store cannot write for want of space (its disk or quota is full):
    /// its trouble, not the record's, and a stop that says so (`share` exits
    /// 73, resumable once there is room).
    case full
    /// The store refuses this record for what it holds (too big, a value or a
    /// character it cannot keep, a constraint): the record's.
    case refused

    /// The failure `error` means; an error of neither store is the store's trouble.
    init(_ error: any Error) {
        switch error {
        case let error as any StoreError: self = error.storeFailure
        case let error as SystemError where error.isDiskFull: self = .full
        default: self = .unavailable
        }
    }
}

/// A store's own typed error, which the store reads as a ``StoreFailure``
/// itself: the SQLite journal's (``SQLiteError``) and the PostgreSQL
/// queue's (``PostgresError``) conform beside their stores, so this core
/// names neither.
protocol StoreError: Error {
    /// What the error means for the record that could not be made.
    var storeFailure: StoreFailure { get }
}

/// A value bound to, or read from, a row of either store.
enum StoreValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    init(_ value: Double?) { self = value.map { .real($0) } ?? .null }
    init(_ value: Date?) { self = value.map { .real($0.timeIntervalSince1970) } ?? .null }

    /// The value as SQL text, for a text-format parameter (PostgreSQL); nil for NULL.
    var text: String? {
        switch self {
        case .null: nil
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): value
        }
    }
}

/// A row of either store, read by column name.
protocol StoreRow {
    func text(_ column: String) -> String?
}

extension StoreRow {
    func int(_ column: String) -> Int? { text(column).flatMap { Int($0) ?? Double($0).map { Int($0) } } }
    func real(_ column: String) -> Double? { text(column).flatMap(Double.init) }
    func date(_ column: String) -> Date? { real(column).map(Date.init(timeIntervalSince1970:)) }
}

// MARK: - Migrations

/// One named change to a store's schema: applied once, in order, and recorded
/// in the store under its name (as GRDB's `DatabaseMigrator` does).
struct Migration: Sendable {
    let name: String
    let sql: String
}

/// Why a store cannot be used with this version of share.
struct SchemaMismatch: Error, Sendable, CustomStringConvertible {
    let description: String
}

/// The migrations of one store, in order: which are still to apply, and a
/// refusal when the store has one this version does not know (it was
/// written by a newer share).
struct SchemaMigrations: Sendable {
    /// What the store is called in messages ("the journal at …", "the database").
    let store: String
    let migrations: [Migration]

    /// The migrations not in `applied`, in order; throws when `applied` names
    /// one this version does not have.
    func pending(applied: Set<String>) throws(SchemaMismatch) -> [Migration] {
        let known = Set(migrations.map(\.name))
        if let newer = applied.subtracting(known).sorted().first {
            throw SchemaMismatch(
                description:
                    "\(store) was changed by a newer share (its migration \(newer) is unknown to this one, which knows \(migrations.count)): upgrade share"
            )
        }
        return migrations.filter { !applied.contains($0.name) }
    }
}
