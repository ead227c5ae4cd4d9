import Foundation
import MediaFormats
import ShareManifest
import Synchronization
import SystemCalls

/// What a worker knows about a batch it works on: read once, checked visible.
final class PreparedBatch: Sendable {
    let context: BatchContext
    /// When its visibility was last checked (monotonic seconds).
    let checked: Double

    init(
        _ stored: JobQueue.StoredBatch, decoder: any MediaDecoder, catalog: StageCatalog, cancellation: CancellationFlag
    ) throws {
        // An item waiting for space is taken again later (``ItemLifecycle/SpaceWait/retryLater``):
        // a worker serves every batch and has nobody to tell.
        context = try BatchContext(
            stored.record, container: try ContainerDirectory(stored.container), decoder: decoder, catalog: catalog,
            cancellation: cancellation,
            spaceWait: .retryLater)
        checked = MonotonicClock.now()
    }
}

/// The batches a worker has looked at: those whose files it sees and can write
/// (prepared, with their contexts), and those it cannot, with why (logged once,
/// recorded for `share status --db`, checked again every ``recheckInterval``).
final class WorkerBatches: Sendable {
    private let worker: StageWorker
    private let id: Int
    private let prepared = Mutex<[UUID: PreparedBatch]>([:])
    private let blocked = Mutex<[UUID: (reason: String, since: Double)]>([:])
    /// Batches already reported as blocked, with the reason reported.
    private let reported = Mutex<[UUID: String]>([:])
    /// Each batch's lifecycle and the settings of its items' reports, for the
    /// reaper (which needs no file of the batch).
    private let rules = Mutex<[UUID: BatchRules]>([:])

    /// Seconds after which a batch's visibility is checked again.
    static let recheckInterval = 30.0

    /// Set when the worker is to stop (a long copy looks at it as it goes).
    private let cancellation: CancellationFlag

    init(worker: StageWorker, id: Int, cancellation: CancellationFlag) {
        self.worker = worker
        self.id = id
        self.cancellation = cancellation
    }

    /// The context of a batch checked usable here, if it was.
    func context(of batch: UUID) -> BatchContext? { prepared.withLock { $0[batch]?.context } }

    /// The batches checked usable, not too long ago.
    func usable(now: Double) -> Set<UUID> {
        prepared.withLock { Set($0.filter { now - $0.value.checked < Self.recheckInterval }.keys) }
    }

    /// The batches this worker refuses now (checked again once their reason is old).
    func refused(now: Double) -> Set<UUID> {
        blocked.withLock { blocked in
            for (batch, entry) in blocked where now - entry.since > Self.recheckInterval { blocked[batch] = nil }
            return Set(blocked.keys)
        }
    }

    /// Forgets a batch that is done.
    func forget(_ batch: UUID) {
        prepared.withLock { _ = $0.removeValue(forKey: batch) }
        rules.withLock { _ = $0.removeValue(forKey: batch) }
    }

    /// Checks a batch this worker has not checked yet (or not for a while): true
    /// when its jobs can run here; else why not is recorded and logged (once).
    func check(_ batch: UUID, queue: any JobClaims & WorkerRoster) throws -> Bool {
        guard let stored = try queue.batch(batch) else { return false }
        var reason = WorkerVisibility.problem(with: stored)
        var ready: PreparedBatch?
        if reason == nil {
            do {
                ready = try PreparedBatch(
                    stored, decoder: worker.decoder, catalog: worker.settings.catalog, cancellation: cancellation)
            } catch {
                reason = "cannot use batch \(batch): \(error)"
            }
        }
        prepared.withLock { prepared in
            if prepared.count > 512 { prepared.removeAll() }
            prepared[batch] = ready
        }
        if let reason {
            blocked.withLock { $0[batch] = (reason, MonotonicClock.now()) }
            try queue.block(worker: id, batch: batch, reason: reason)
            let known = reported.withLock { reported in
                defer { reported[batch] = reason }
                return reported[batch] == reason
            }
            if !known {
                worker.emit(
                    .blocked, "not taking the jobs of batch \(batch.uuidString): \(reason)",
                    ["batch": batch.uuidString, "error": reason])
            }
            return false
        }
        if reported.withLock({ $0.removeValue(forKey: batch) != nil }) {
            try queue.unblock(worker: id, batch: batch)
            worker.emit(
                .unblocked, "batch \(batch.uuidString) is usable here again; taking its jobs",
                ["batch": batch.uuidString])
        }
        return true
    }

    /// A batch's lifecycle and how its items are reported, read from its row
    /// (its pipeline as it started), without touching its files.
    func rules(of batch: UUID, queue: any JobClaims) throws -> BatchRules? {
        if let known = rules.withLock({ $0[batch] }) { return known }
        guard let stored = try queue.batch(batch),
            let pipeline = try? stored.record.pipeline(catalog: worker.settings.catalog)
        else { return nil }
        let found = BatchRules(
            lifecycle: ItemLifecycle(
                pipeline: pipeline, maxAttempts: stored.record.maxAttempts, spaceWait: .retryLater),
            manifest: ManifestStage(settings: pipeline.manifest),
            message: stored.record.message)
        rules.withLock { rules in
            if rules.count > 512 { rules.removeAll() }
            rules[batch] = found
        }
        return found
    }
}

/// What deciding an item's fate and reporting it needs of its batch.
struct BatchRules: Sendable {
    let lifecycle: ItemLifecycle
    let manifest: ManifestStage
    let message: String?
}
