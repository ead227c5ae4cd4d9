import CSQLite
import Foundation
import MediaFormats
import MediaKit
import ShareIngest
import ShareManifest
import Synchronization
import TestSupport
import Testing

@testable import ShareIngestCore

/// A stage that does nothing but finish: what the situations below run, so
/// that what happens is the lifecycle's and the stores', not a decoder's.
struct SettleStage: PipelineStage {
    static let name = StageName("settle")
    struct Settings: StageSettings {}
    static let definition = StageDefinition(
        name, after: .copy, settings: Settings.self, document: [], workers: nil, records: [],
        make: { _, _ in SettleStage() })
    var name: StageName { Self.name }
    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure) {}
}

/// What a store does with the records it is asked to make (or the fan-in's
/// first read): nothing special, refuse the first ones, or fail every one.
final class Faults: Sendable {
    enum Fault: Sendable {
        case none
        case first(Int, StoreFailure)
        case always(StoreFailure)
    }

    private let records: Mutex<Fault>
    private let fanIn: Mutex<Int>
    private let end: Mutex<Int>

    init(records: Fault = .none, fanInFailures: Int = 0, endFailures: Int = 0) {
        self.records = Mutex(records)
        self.fanIn = Mutex(fanInFailures)
        self.end = Mutex(endFailures)
    }

    /// True when the next record of a batch's end fails.
    func nextEndFails() -> Bool {
        end.withLock { count in
            defer { count = max(0, count - 1) }
            return count > 0
        }
    }

    /// The failure of the next record, if it fails.
    func nextRecord() -> StoreFailure? {
        records.withLock { fault in
            switch fault {
            case .none: return nil
            case .always(let failure): return failure
            case .first(let count, let failure):
                fault = count > 1 ? .first(count - 1, failure) : .none
                return failure
            }
        }
    }

    /// True when the fan-in's next read fails.
    func nextFanInFails() -> Bool {
        fanIn.withLock { count in
            defer { count = max(0, count - 1) }
            return count > 0
        }
    }
}

/// The journal, as it is, but for the faults it is given: its own errors.
final class FaultyJournal: JournalStore, @unchecked Sendable {
    let journal: BatchJournal
    let faults: Faults

    init(_ journal: BatchJournal, faults: Faults) { (self.journal, self.faults) = (journal, faults) }

    private func check() throws {
        guard let failure = faults.nextRecord() else { return }
        // What the journal says when it is full, and when a record is too big for it.
        throw SQLiteError(code: failure == .refused ? SQLITE_TOOBIG : SQLITE_FULL, message: "injected")
    }

    func record(_ item: ItemState, next: NextStep, batch: UUID) throws {
        try check()
        try journal.record(item, next: next, batch: batch)
    }
    func finish(_ batch: BatchRecord, changed: [ItemState]) throws {
        if faults.nextEndFails() { throw SQLiteError(code: SQLITE_FULL, message: "injected") }
        try journal.finish(batch, changed: changed)
    }
    func record(_ changed: [ItemState], batch: UUID) throws { try journal.record(changed, batch: batch) }
    func unfinishedItems(of batch: UUID, after index: Int, limit: Int) throws -> [RecordedItem] {
        try journal.unfinishedItems(of: batch, after: index, limit: limit)
    }
    func update(_ batch: BatchRecord, durable: Bool) throws { try journal.update(batch, durable: durable) }
    func loseFanIn(_ batch: UUID, next: NextStep, lost: Int) throws {
        try journal.loseFanIn(batch, next: next, lost: lost)
    }
    func reopen(_ batch: UUID) throws { try journal.reopen(batch) }
    func batch(id: UUID) throws -> BatchRecord? { try journal.batch(id: id) }
    func batch(key: ShareKey) throws -> BatchRecord? { try journal.batch(key: key) }
    func begin(_ batch: BatchRecord, plan: BatchPlan.Details) throws { try journal.begin(batch, plan: plan) }
    func append(_ items: [ItemState], to batch: BatchRecord, plan: BatchPlan.Details) throws {
        try journal.append(items, to: batch, plan: plan)
    }
    func seal(_ batch: BatchRecord, plan: BatchPlan.Details, unfinished: Int) throws {
        try journal.seal(batch, plan: plan, unfinished: unfinished)
    }
    func items(of batch: UUID, after index: Int, limit: Int) throws -> [ItemState] {
        try journal.items(of: batch, after: index, limit: limit)
    }
    func earlierCopies(for batch: UUID) throws -> EarlierCopies {
        if faults.nextFanInFails() { throw SQLiteError(code: SQLITE_IOERR, message: "injected") }
        return try journal.earlierCopies(for: batch)
    }
    func earlierPerceptualHashes(for batch: UUID) throws -> [EarlierHash] {
        try journal.earlierPerceptualHashes(for: batch)
    }
    func livePhotoCandidates(for batch: UUID) throws -> [ItemState] { try journal.livePhotoCandidates(for: batch) }
    func exportCandidates(for batch: UUID, after: (stem: String, index: Int), limit: Int) throws -> [(
        stem: String, item: ItemState
    )] {
        try journal.exportCandidates(for: batch, after: after, limit: limit)
    }
    func burstCandidates(for batch: UUID, after: (burst: String, index: Int), limit: Int) throws -> [(
        burst: String, item: ItemState
    )] {
        try journal.burstCandidates(for: batch, after: after, limit: limit)
    }
    func counts(of batch: UUID) throws -> StoredCounts { try journal.counts(of: batch) }
    func recordedItems(of batch: UUID) throws -> [RecordedItem] { try journal.recordedItems(of: batch) }
    func recordedFanIn(of batch: UUID) throws -> RecordedFanIn? { try journal.recordedFanIn(of: batch) }
    var opener: StoreOpener { journal.opener }
}

/// The queue, as it is, but for the faults it is given: PostgreSQL's own errors.
final class FaultyQueue: JobStore {
    let queue: JobQueue
    let faults: Faults

    init(_ queue: JobQueue, faults: Faults) { (self.queue, self.faults) = (queue, faults) }

    private func check() throws {
        guard let failure = faults.nextRecord() else { return }
        // What PostgreSQL says when its disk is full, and of a value it cannot keep.
        throw PostgresError(
            message: "injected", connectionLost: false,
            sqlState: failure == .refused ? .untranslatableCharacter : .diskFull)
    }

    var leaseSeconds: Double {
        get { queue.leaseSeconds }
        set { queue.leaseSeconds = newValue }
    }
    func record(_ item: ItemState, next: NextStep, batch: UUID, lease: Lease) throws -> Bool {
        try check()
        return try queue.record(item, next: next, batch: batch, lease: lease)
    }
    func record(_ steps: [JobQueue.LeasedStep], worker: Int) throws -> Set<Int64> {
        try check()
        return try queue.record(steps, worker: worker)
    }
    func record(_ changed: [ItemState], batch: BatchRecord, lease: Lease) throws -> Bool {
        try queue.record(changed, batch: batch, lease: lease)
    }
    func finish(_ batch: BatchRecord, changed: [ItemState], lease: Lease) throws -> Bool {
        if faults.nextEndFails() {
            throw PostgresError(message: "injected", connectionLost: false, sqlState: .diskFull)
        }
        return try queue.finish(batch, changed: changed, lease: lease)
    }
    func claim(stages: [StageName], worker: Int, limit: Int, batches: Set<UUID>, blocked: Set<UUID>, alone: Bool) throws
        -> (jobs: [Job], unchecked: [UUID])
    {
        try queue.claim(stages: stages, worker: worker, limit: limit, batches: batches, blocked: blocked, alone: alone)
    }
    func release(_ jobs: [Int64], worker: Int) throws { try queue.release(jobs, worker: worker) }
    func orphans() throws -> [JobQueue.Orphan] { try queue.orphans() }
    func loseFanIn(_ job: Job, lease: Lease, next: NextStep, lost: Int) throws {
        try queue.loseFanIn(job, lease: lease, next: next, lost: lost)
    }
    func stuckBatches() throws -> [(batch: UUID, unfinished: Int)] { try queue.stuckBatches() }
    func queueFanIn(of batch: UUID) throws { try queue.queueFanIn(of: batch) }
    func batch(_ id: UUID) throws -> JobQueue.StoredBatch? { try queue.batch(id) }
    func register(name: String, stages: [StageName], concurrency: Int) throws -> Int {
        try queue.register(name: name, stages: stages, concurrency: concurrency)
    }
    func relock(worker: Int) throws -> Bool { try queue.relock(worker: worker) }
    func heartbeat(worker: Int, held: Set<Int64>, lease: Double, stagesDone: Int, failures: Int) throws -> Int {
        try queue.heartbeat(worker: worker, held: held, lease: lease, stagesDone: stagesDone, failures: failures)
    }
    func block(worker: Int, batch: UUID, reason: String) throws {
        try queue.block(worker: worker, batch: batch, reason: reason)
    }
    func unblock(worker: Int, batch: UUID) throws { try queue.unblock(worker: worker, batch: batch) }
    func unregister(worker: Int, unstarted: [Int64]) throws {
        try queue.unregister(worker: worker, unstarted: unstarted)
    }
    func listen() throws { try queue.listen() }
    func waitForWork(seconds: Double, wake: Int32) throws -> Bool {
        try queue.waitForWork(seconds: seconds, wake: wake)
    }
    var isConnected: Bool { queue.isConnected }
    func interrupt(at interruption: Interruption) { queue.interrupt(at: interruption) }
    func close() { queue.close() }
    func batch(id: UUID) throws -> BatchRecord? { try queue.batch(id: id) }
    func batch(key: ShareKey) throws -> BatchRecord? { try queue.batch(key: key) }
    func begin(_ batch: BatchRecord, plan: BatchPlan.Details) throws { try queue.begin(batch, plan: plan) }
    func append(_ items: [ItemState], to batch: BatchRecord, plan: BatchPlan.Details) throws {
        try queue.append(items, to: batch, plan: plan)
    }
    func seal(_ batch: BatchRecord, plan: BatchPlan.Details, unfinished: Int) throws {
        try queue.seal(batch, plan: plan, unfinished: unfinished)
    }
    func items(of batch: UUID, after index: Int, limit: Int) throws -> [ItemState] {
        try queue.items(of: batch, after: index, limit: limit)
    }
    func earlierCopies(for batch: UUID) throws -> EarlierCopies {
        if faults.nextFanInFails() {
            throw PostgresError(message: "injected", connectionLost: false, sqlState: .other("58030"))
        }
        return try queue.earlierCopies(for: batch)
    }
    func earlierPerceptualHashes(for batch: UUID) throws -> [EarlierHash] {
        try queue.earlierPerceptualHashes(for: batch)
    }
    func livePhotoCandidates(for batch: UUID) throws -> [ItemState] { try queue.livePhotoCandidates(for: batch) }
    func exportCandidates(for batch: UUID, after: (stem: String, index: Int), limit: Int) throws -> [(
        stem: String, item: ItemState
    )] {
        try queue.exportCandidates(for: batch, after: after, limit: limit)
    }
    func burstCandidates(for batch: UUID, after: (burst: String, index: Int), limit: Int) throws -> [(
        burst: String, item: ItemState
    )] {
        try queue.burstCandidates(for: batch, after: after, limit: limit)
    }
    func counts(of batch: UUID) throws -> StoredCounts { try queue.counts(of: batch) }
    func recordedItems(of batch: UUID) throws -> [RecordedItem] { try queue.recordedItems(of: batch) }
    func recordedFanIn(of batch: UUID) throws -> RecordedFanIn? { try queue.recordedFanIn(of: batch) }
    var opener: StoreOpener { queue.opener }
}

/// Items finished as the events heard them.
final class Told: Sendable {
    private let items = Mutex<[ItemReport]>([])
    private let batches = Mutex<[BatchReport]>([])
    var events: IngestEventSink {
        { [self] event in
            switch event {
            case .itemFinished(let item): items.withLock { $0.append(item) }
            case .batchFinished(let report): batches.withLock { $0.append(report) }
            default: break
            }
        }
    }
    var all: [ItemReport] { items.withLock { $0 } }
    /// The reports of the batches told finished.
    var finished: [BatchReport] { batches.withLock { $0 } }
}

/// One mode's holder of a batch of `settle` items, over its real store: the
/// journal and the local runner, or PostgreSQL and a worker's coordinator,
/// reaper and executor, each run by its own code.
protocol Holder: AnyObject {
    var mode: String { get }
    /// The batch's container (its manifest and stored report).
    var directory: ContainerDirectory { get }
    /// The items as the store recorded them.
    func recorded() throws -> [RecordedItem]
    func fanIn() throws -> RecordedFanIn?
    func counts() throws -> StoredCounts
    /// The holder (the process; a worker) is lost while `inFlight` items are
    /// being decoded in it (their records say so) and `alsoHeld` ones are
    /// held; those left decide as their mode does (a resumed batch; another
    /// worker's reaper).
    func lose(inFlight: [Int], alsoHeld: [Int]) throws
    /// Item `index`'s next stage, run as its holder runs it, its records
    /// failing as `faults` say; the step, where the transport reports it.
    func run(_ index: Int, faults: Faults, stopping: Bool) throws -> StageExecution.Step?
    /// The batch, its items finished, reaches its fan-in, which fails as `faults` say.
    func fanIn(faults: Faults) throws
    /// Items taken from their stage's queue, in order.
    func takingOrder() throws -> [Int]
    /// What the events were told.
    var told: Told { get }
    /// Failed items the holder counted (a worker's `failures`; locally, as told).
    func failuresCounted() throws -> Int
}

/// A batch of `count` items past their copy (or `items` as given).
func situationBatch(maxAttempts: Int) throws -> (
    record: BatchRecord, pipeline: PipelineDefinition, catalog: StageCatalog
) {
    let catalog = try StageCatalog.builtin.adding(SettleStage.definition)
    let document =
        #"{"name": "situations", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "settle"}, {"stage": "manifest"}]}"#
    let pipeline = try PipelineDefinition.decode(Data(document.utf8), file: "situations.json", catalog: catalog)
    var record = BatchRecord(
        id: UUID(), key: try ShareKey("S" + String(UUID().uuidString.prefix(8))), state: .running,
        pipelineJSON: pipeline.encodedJSON(), message: nil,
        dropName: nil, dropSignature: nil, dropPath: nil, createdAt: Date())
    record.maxAttempts = maxAttempts
    return (record, pipeline, catalog)
}

func settleItems(_ count: Int) -> [ItemState] {
    (0..<count).map { index in
        var item = ItemState(index: index, id: UUID(), source: .text("item \(index)"), label: "item-\(index)")
        item.completed = .copy
        return item
    }
}

final class LocalHolder: Holder {
    let mode = "local"
    let container: TemporaryContainer
    let journal: BatchJournal
    var record: BatchRecord
    let pipeline: PipelineDefinition
    let catalog: StageCatalog
    let told = Told()
    var directory: ContainerDirectory { container.directory }

    init(items: [ItemState], maxAttempts: Int) throws {
        container = try TemporaryContainer()
        journal = try BatchJournal(container: container.directory)
        (record, pipeline, catalog) = try situationBatch(maxAttempts: maxAttempts)
        try journal.create(
            record, items: items,
            plan: BatchPlan.Details(container: container.directory, pipeline: pipeline, maxAttempts: maxAttempts))
    }

    func runner(faults: Faults = Faults(), cancellation: CancellationFlag = CancellationFlag()) throws -> BatchRunner {
        try BatchRunner(
            record, container: container.directory, journal: FaultyJournal(journal, faults: faults),
            decoder: InProcessDecoder(), events: told.events,
            cancellation: cancellation, now: { Date() }, catalog: catalog)
    }

    func recorded() throws -> [RecordedItem] { try journal.recordedItems(of: record.id) }
    func fanIn() throws -> RecordedFanIn? { try journal.recordedFanIn(of: record.id) }
    func counts() throws -> StoredCounts { try journal.counts(of: record.id) }

    func lose(inFlight: [Int], alsoHeld: [Int]) throws {
        // What the journal holds when the process died: the records its stages
        // made before decoding (the items merely held left no record).
        for index in inFlight {
            var item = try #require(try recorded().first { $0.item.index == index }).item
            item.decodingInFlight = true
            try journal.record(item, next: .run(SettleStage.name), batch: record.id)
        }
        _ = try runner().recoverLost()
    }

    func run(_ index: Int, faults: Faults, stopping: Bool) throws -> StageExecution.Step? {
        let cancellation = CancellationFlag()
        if stopping { cancellation.cancel() }
        let runner = try runner(faults: faults, cancellation: cancellation)
        var item = InFlightItem(try #require(try recorded().first { $0.item.index == index }).item)
        return runner.execution.run(SettleStage.name, on: &item, in: runner.context, steps: runner.steps)
    }

    func fanIn(faults: Faults) throws {
        var batch = record
        _ = try? runner(faults: faults).run(&batch)
    }

    func takingOrder() throws -> [Int] {
        // What the feeder reads (the unfinished items, ready now), through a stage's queue.
        let queue = BatchRunner.stageQueue(capacity: BatchRunner.queueCapacity)
        for recorded in try journal.unfinishedItems(of: record.id, after: -1, limit: 100) where recorded.wait == 0 {
            queue.push(InFlightItem(recorded.item))
        }
        queue.close()
        var order: [Int] = []
        while let item = queue.pop() { order.append(item.index) }
        return order
    }

    func failuresCounted() throws -> Int { told.all.count { $0.status == .failed } }
}

final class DistributedHolder: Holder {
    let mode = "distributed"
    /// A throwaway server of its own, stopped with the holder.
    let server: PostgresServer
    let url: String
    let queue: JobQueue
    let container: TemporaryContainer
    var record: BatchRecord
    let pipeline: PipelineDefinition
    let catalog: StageCatalog
    let told = Told()
    let run: WorkerRun
    let worker: StageWorker
    var directory: ContainerDirectory { container.directory }

    init(items: [ItemState], maxAttempts: Int) throws {
        server = try PostgresServer()
        try StageWorker.migrate(url: server.url)
        url = server.url
        queue = try JobQueue(url: url, role: "situation")
        container = try TemporaryContainer()
        (record, pipeline, catalog) = try situationBatch(maxAttempts: maxAttempts)
        try queue.create(
            record, items: items,
            plan: BatchPlan.Details(container: container.directory, pipeline: pipeline, maxAttempts: maxAttempts))
        var settings = StageWorker.Settings()
        settings.catalog = catalog
        settings.name = "live-\(record.key)"
        worker = StageWorker(url: url, settings: settings, events: told.events, decoder: InProcessDecoder())
        let id = try queue.register(name: settings.name, stages: settings.stages, concurrency: 1)
        run = WorkerRun(worker: worker, id: id, interruption: Interruption(CancellationFlag()))
        #expect(try run.batches.check(record.id, queue: queue))
    }

    func recorded() throws -> [RecordedItem] { try queue.recordedItems(of: record.id) }
    func fanIn() throws -> RecordedFanIn? { try queue.recordedFanIn(of: record.id) }
    func counts() throws -> StoredCounts { try queue.counts(of: record.id) }

    /// Claims the job of item `index` (the manifest job: -1) for the live worker, as its coordinator does.
    func claim(_ index: Int) throws -> Job {
        let stages = index < 0 ? [StageName.manifest] : catalog.names
        var taken: [Job] = []
        while true {
            let (jobs, _) = try queue.claim(
                stages: stages, worker: run.id, limit: 1, batches: [record.id], blocked: [], alone: false)
            guard let job = jobs.first else { break }
            if job.index == index {
                try queue.release(taken.map(\.id), worker: run.id)
                run.held.withLock { _ = $0.insert(job.id) }
                return job
            }
            taken.append(job)
        }
        try queue.release(taken.map(\.id), worker: run.id)
        throw PostgresError(message: "no job of item \(index) to claim", connectionLost: false)
    }

    func lose(inFlight: [Int], alsoHeld: [Int]) throws {
        // A worker that claims the jobs, records the ones it starts decoding
        // (as an executor does), and vanishes: its session ends.
        let ghost = try JobQueue(url: url, role: "ghost")
        let id = try ghost.register(name: "ghost", stages: catalog.names, concurrency: 2)
        let wanted = Set(inFlight + alsoHeld)
        var held: [Job] = []
        while held.count < wanted.count {
            // Its coordinator's claims: jobs to run alone too.
            let jobs = try [false, true].flatMap { alone in
                try ghost.claim(
                    stages: catalog.names, worker: id, limit: 8, batches: [record.id], blocked: [], alone: alone
                ).jobs
            }
            guard !jobs.isEmpty else { break }
            held += jobs.filter { wanted.contains($0.index) }
            try ghost.release(jobs.filter { !wanted.contains($0.index) }.map(\.id), worker: id)
        }
        for job in held where inFlight.contains(job.index) {
            var item = job.item
            item.decodingInFlight = true
            var lease = job.lease(worker: id)
            lease.keeps = true
            #expect(try ghost.record(item, next: .run(job.stage), batch: record.id, lease: lease))
        }
        ghost.close()
        // Its jobs are orphans once the server has ended its session (observed).
        #expect(
            eventually(timeout: 30) { ((try? queue.orphans()) ?? []).filter { $0.worker == id }.count == held.count })
        try WorkerReaper(run).takeBack(queue)
    }

    func run(_ index: Int, faults: Faults, stopping: Bool) throws -> StageExecution.Step? {
        let job = try claim(index)
        if stopping {
            // The execution core, as an executor runs it, with a stop asked.
            let stop = CancellationFlag()
            stop.cancel()
            let execution = StageExecution(events: run.events, cancellation: stop, leaving: run.leaving)
            var item = InFlightItem(job.item)
            let context = try #require(run.batches.context(of: record.id))
            return execution.run(
                job.stage, on: &item, in: context,
                steps: LeasedSteps(queue, batch: record.id, lease: job.lease(worker: run.id)))
        }
        // The executor, with its store failing as told; then the heartbeat.
        let executor = WorkerExecutor(run, store: FaultyQueue(queue, faults: faults))
        executor.work(job)
        executor.flushLeaving()
        try heartbeat()
        return nil
    }

    func heartbeat() throws {
        let (done, failures) = run.counters.withLock { counters in
            defer { counters = (0, 0) }
            return counters
        }
        try queue.heartbeat(
            worker: run.id, held: run.held.withLock { $0 }, lease: 30, stagesDone: done, failures: failures)
    }

    func fanIn(faults: Faults) throws {
        let executor = WorkerExecutor(run, store: FaultyQueue(queue, faults: faults))
        executor.work(try claim(-1))
        try heartbeat()
    }

    func takingOrder() throws -> [Int] {
        var order: [Int] = []
        while let job = try queue.claim(
            stages: catalog.names, worker: run.id, limit: 1, batches: [record.id], blocked: [], alone: false
        ).jobs.first {
            order.append(job.index)
        }
        return order
    }

    func failuresCounted() throws -> Int {
        try heartbeat()
        return Int(
            try queue.connection.query("SELECT failures FROM share_workers WHERE id = $1", [String(run.id)]).first?[
                "failures"] ?? "") ?? -1
    }
}

/// The situations an item's life goes through, each run against both stores
/// (the real SQLite journal with the local runner; a real PostgreSQL with a
/// worker's own coordinator, reaper and executor code), checking the same
/// outcome: what each store records, what the events hear, what is counted.
/// Where a store must fail, a wrapper makes it fail with that store's own
/// typed error and is otherwise the store itself.
@Suite(.serialized) struct LifecycleSituationTests {
    enum Mode: String, CaseIterable, CustomTestStringConvertible {
        case local, distributed
        var testDescription: String { rawValue }
        /// Who holds the batch's fan-in in this mode.
        var holder: BatchLifecycle.Holder { self == .local ? .localRun : .worker }
    }

    static func holder(_ mode: Mode, items: [ItemState], maxAttempts: Int = 3) throws -> any Holder {
        switch mode {
        case .local: try LocalHolder(items: items, maxAttempts: maxAttempts)
        case .distributed: try DistributedHolder(items: items, maxAttempts: maxAttempts)
        }
    }

    /// The situations, each with the outcome both stores must show (what each
    /// situation's function checks, the same for both modes).
    enum Situation: String, CaseIterable, CustomTestStringConvertible {
        /// Two items in flight when their holder died: neither blamed, both run alone next, at once.
        case crashWhileDecoding
        /// One in flight (blamed, alone: its backoff, runs alone), one claimed only (nothing lost, ready).
        case lostHolderWithClaimedAndRunningItems
        /// A refused record costs an attempt; the stage runs again after its backoff.
        case refusedRecord
        /// A store that cannot write costs nothing: a momentary failure is waited out; a lasting one parks the item, ready, and stops its holder.
        case storeFailure
        /// A lost fan-in runs again after its backoff; after its last attempt the batch fails, with why.
        case lostFanIn
        /// A stop before a stage: the item waits before it, ready, uncounted.
        case park
        /// A retry is recorded with its backoff and not taken before it; the next one doubles it.
        case retry
        /// Out of attempts as it leaves its holder: finished, failed, told once, counted once.
        case giveUp
        /// Waiting items are taken costliest first (from their recorded sniff), then in planned order.
        case priority
        /// Both stores count a batch's items alike; an unfinished item is reported failed.
        case counts

        var testDescription: String { rawValue }
    }

    /// Every situation, against both stores.
    @Test(arguments: Situation.allCases, Mode.allCases)
    func situation(_ situation: Situation, mode: Mode) throws {
        switch situation {
        case .crashWhileDecoding: try Self.aCrashWhileDecodingTwoItems(mode: mode)
        case .lostHolderWithClaimedAndRunningItems: try Self.aLostHolderWithClaimedAndRunningItems(mode: mode)
        case .refusedRecord: try Self.aRefusedRecordCostsAnAttempt(mode: mode)
        case .storeFailure: try Self.aStoreFailureParksTheItemAndStopsItsHolder(mode: mode)
        case .lostFanIn: try Self.aLostFanInIsRetriedThenTheBatchFails(mode: mode)
        case .park: try Self.aParkLeavesTheItemReady(mode: mode)
        case .retry: try Self.aRetryWaitsForItsBackoff(mode: mode)
        case .giveUp: try Self.aGiveUpIsToldAndCountedOnce(mode: mode)
        case .priority: try Self.waitingItemsAreTakenCostliestFirst(mode: mode)
        case .counts: try Self.bothStoresCountAlike(mode: mode)
        }
    }

    /// What a situation leaves of an item, as both stores must record it.
    struct Expected: CustomStringConvertible {
        var stage: StageName? = SettleStage.name
        /// Seconds it must wait: 0, or within (the backoff less a second, the backoff].
        var wait: Double = 0
        var lostAttempts = 0
        var suspect = false
        var failure: ItemFailure.Reason?

        var description: String {
            "stage \(stage?.rawValue ?? "none") wait \(wait) lost \(lostAttempts) suspect \(suspect) failure \(failure?.rawValue ?? "none")"
        }

        func check(_ recorded: RecordedItem, _ situation: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let waits = wait == 0 ? recorded.wait < 0.01 : recorded.wait > wait - 1 && recorded.wait <= wait + 0.01
            #expect(
                recorded.stage == stage && waits && recorded.item.lostAttempts == lostAttempts
                    && recorded.item.suspect == suspect
                    && recorded.item.failure?.reason == failure && !recorded.item.decodingInFlight,
                "\(situation): item \(recorded.item.index): expected \(self), recorded stage \(recorded.stage?.rawValue ?? "none") wait \(recorded.wait) lost \(recorded.item.lostAttempts) suspect \(recorded.item.suspect) failure \(recorded.item.failure?.reason.rawValue ?? "none")",
                sourceLocation: sourceLocation)
        }
    }

    /// A crash while decoding: two items in flight when their holder died.
    /// Neither is blamed (no attempt counted), both run alone next, at once.
    static func aCrashWhileDecodingTwoItems(mode: Mode) throws {
        let holder = try holder(mode, items: settleItems(3))
        try holder.lose(inFlight: [0, 1], alsoHeld: [])
        let items = try holder.recorded()
        for index in [0, 1] { Expected(suspect: true).check(items[index], "\(mode): crash while decoding two") }
        Expected().check(items[2], "\(mode): crash while decoding two")
    }

    /// A lost holder with claimed and running items: the one in flight (being
    /// decoded) is blamed, alone, and retried after its backoff, alone; the one
    /// held but not in flight (claimed, not started) loses nothing and is ready at once.
    static func aLostHolderWithClaimedAndRunningItems(mode: Mode) throws {
        let holder = try holder(mode, items: settleItems(3))
        try holder.lose(inFlight: [0], alsoHeld: [1])
        let items = try holder.recorded()
        Expected(wait: 0.5, lostAttempts: 1, suspect: true).check(items[0], "\(mode): lost holder")
        Expected().check(items[1], "\(mode): lost holder")
        Expected().check(items[2], "\(mode): lost holder")
    }

    /// A retry: an item lost alone is recorded with its backoff, which the
    /// store keeps (it is not taken before), and a second loss doubles it.
    static func aRetryWaitsForItsBackoff(mode: Mode) throws {
        let holder = try holder(mode, items: settleItems(1))
        try holder.lose(inFlight: [0], alsoHeld: [])
        Expected(wait: 0.5, lostAttempts: 1, suspect: true).check(try holder.recorded()[0], "\(mode): first retry")
        if let distributed = holder as? DistributedHolder {
            // An idle worker's claim of a job to run alone does not take it before its backoff.
            let early = try distributed.queue.claim(
                stages: distributed.catalog.names, worker: distributed.run.id, limit: 1,
                batches: [distributed.record.id], blocked: [], alone: true)
            #expect(early.jobs.isEmpty, "a retry was handed out before its backoff")
        }
        // Its backoff passes (observed, not timed).
        #expect(eventually(timeout: 30) { (try? holder.recorded()[0].wait) == 0 })
        try holder.lose(inFlight: [0], alsoHeld: [])
        Expected(wait: 1, lostAttempts: 2, suspect: true).check(try holder.recorded()[0], "\(mode): second retry")
    }

    /// A record the store refuses (for what it holds) costs an attempt: the
    /// step is recorded as a retry, with its backoff and why.
    static func aRefusedRecordCostsAnAttempt(mode: Mode) throws {
        let holder = try holder(mode, items: settleItems(1))
        // Locally the item's record is refused once; a worker's leaving items
        // are recorded together first, and that statement is refused too.
        let step = try holder.run(0, faults: Faults(records: .first(mode == .local ? 1 : 2, .refused)), stopping: false)
        if let step { #expect(!step.stopsRun && step.recorded == .saved) }
        Expected(wait: 0.5, lostAttempts: 1).check(try holder.recorded()[0], "\(mode): refused record")
    }

    /// A store failure (it is full: its trouble, not the record's) costs the
    /// item nothing. A momentary one is waited out (the lifecycle's patience):
    /// the record is made. A lasting one leaves the item where it was, ready,
    /// and its holder stops.
    static func aStoreFailureParksTheItemAndStopsItsHolder(mode: Mode) throws {
        let holder = try holder(mode, items: settleItems(2))
        // Momentary: the record (a worker's statement, then that record again) fails twice, then is made.
        let made = try holder.run(0, faults: Faults(records: .first(2, .unavailable)), stopping: false)
        if let made { #expect(!made.stopsRun && made.recorded == .saved) }
        Expected(stage: nil).check(try holder.recorded()[0], "\(mode): momentary store failure")
        #expect(holder.told.all.map(\.index) == [0] && holder.told.all.first?.status == .ingested, "\(holder.told.all)")
        // Lasting.
        let step = try holder.run(1, faults: Faults(records: .always(.unavailable)), stopping: false)
        if let step { #expect(step.stopsRun && step.next == .park(SettleStage.name)) }
        Expected().check(try holder.recorded()[1], "\(mode): lasting store failure")
        #expect(holder.told.all.map(\.index) == [0])
        #expect(try holder.takingOrder() == [1], "\(mode): a parked item is not ready")
    }

    /// A park: a stop asked before the stage leaves the item where it was,
    /// ready at once, not counted.
    static func aParkLeavesTheItemReady(mode: Mode) throws {
        let holder = try holder(mode, items: settleItems(1))
        let step = try #require(try holder.run(0, faults: Faults(), stopping: true))
        #expect(step.next == .park(SettleStage.name) && step.recorded == .saved)
        Expected().check(try holder.recorded()[0], "\(mode): park")
        // The next holder takes it at once (a later run; any worker).
        #expect(try holder.takingOrder() == [0], "\(mode): a parked item is not ready")
    }

    /// A give-up: with one attempt, the refused record of the item's last step
    /// (as it leaves its holder) gives up on it: finished, failed, told to the
    /// events once and counted once.
    static func aGiveUpIsToldAndCountedOnce(mode: Mode) throws {
        let holder = try holder(mode, items: settleItems(1), maxAttempts: 1)
        // Locally the item's record is refused once; a worker's leaving items
        // are recorded together first, and that statement is refused too.
        _ = try holder.run(0, faults: Faults(records: .first(mode == .local ? 1 : 2, .refused)), stopping: false)
        Expected(stage: nil, lostAttempts: 1, failure: .attemptsExhausted).check(
            try holder.recorded()[0], "\(mode): give-up")
        #expect(
            holder.told.all.map(\.index) == [0] && holder.told.all.first?.failure?.reason == .attemptsExhausted,
            "\(holder.told.all)")
        #expect(try holder.failuresCounted() == 1)
    }

    /// A lost fan-in (its store fails while it runs): counted and run again
    /// after its backoff; after its last attempt the batch fails, with why.
    static func aLostFanInIsRetriedThenTheBatchFails(mode: Mode) throws {
        var finished = settleItems(1)
        finished[0].completed = SettleStage.name
        let holder = try holder(mode, items: finished, maxAttempts: 2)
        if let distributed = holder as? DistributedHolder {
            try distributed.fanIn(faults: Faults(fanInFailures: 1))
            let first = try #require(try holder.fanIn())
            #expect(first.lost == 1 && first.state == .running && first.wait > 0 && first.wait <= 0.51, "\(first)")
            // Its next attempt, once its backoff has passed.
            #expect(eventually(timeout: 30) { (try? holder.fanIn()?.wait) == 0 })
            try distributed.fanIn(faults: Faults(fanInFailures: 1))
        } else {
            // Locally the run waits out the backoff itself and tries again.
            try holder.fanIn(faults: Faults(fanInFailures: 2))
        }
        let last = try #require(try holder.fanIn())
        #expect(
            last.lost == 2 && last.state == .failed
                && last.failure?.hasPrefix("the manifest job gave up after 2 attempts: ") == true, "\(mode): \(last)")
    }

    /// The order waiting items are taken in: from what their sniff recorded
    /// (format, size and the pixels the header announced), costliest first,
    /// then the first planned.
    static func waitingItemsAreTakenCostliestFirst(mode: Mode) throws {
        let png = try #require(MediaFormat.known(id: "png"))
        let items = settleItems(3).map { item in
            var item = item
            item.sniffed = SniffedContent(
                format: png, fileExtension: "png", mimeType: png.mimeType, recognised: true, declaredExtension: nil,
                contradictedFormat: nil)
            item.size = 500_000
            item.headerPixels = [1_000_000, 24_000_000, 1_000_000][item.index]
            return item
        }
        let holder = try holder(mode, items: items)
        #expect(try holder.takingOrder() == [1, 0, 2], "\(mode)")
    }

    /// How a batch's items stand, from each store's columns: the same counts,
    /// and an unfinished item (of an interrupted batch) reported as failed.
    static func bothStoresCountAlike(mode: Mode) throws {
        var items = settleItems(4)
        items[0].completed = SettleStage.name
        items[1].failure = ItemFailure(.copy, .undecodable, "item-1: broken")
        items[2].failure = ItemFailure(
            .manifest, try #require(ItemFailure.skipping.sorted { $0.rawValue < $1.rawValue }.first), "item-2: skipped")
        let holder = try holder(mode, items: items)
        let counts = try holder.counts()
        #expect(
            counts == StoredCounts(items: 4, ingested: 1, failed: 1, skipped: 1, unfinished: 1), "\(mode): \(counts)")
        #expect(ItemLifecycle.reportCounts(counts) == BatchReport.Counts(items: 4, ingested: 1, failed: 2, skipped: 1))
    }

    // MARK: - Where the modes differ

    /// One decision about a batch that differs between the modes
    /// (``BatchLifecycle/Difference``): what each mode decides, and, where a
    /// situation shows it on the real stores, how the fan-in's record stands after it.
    struct ModeRow: Sendable, CustomTestStringConvertible {
        let difference: BatchLifecycle.Difference
        let local: BatchLifecycle.Decision
        let distributed: BatchLifecycle.Decision
        /// The batch's state and the fan-in's lost attempts after the
        /// situation, per mode; nil where no situation runs here (the tests named in the table do).
        var after: (local: (BatchState, Int), distributed: (BatchState, Int))?

        var testDescription: String { difference.rawValue }
        func decision(_ mode: Mode) -> BatchLifecycle.Decision { mode == .local ? local : distributed }
    }

    /// The rows: one per difference, as docs/design.md's decision table says.
    static let modeRows: [ModeRow] = [
        // The manifest is written but the end is not recorded: the local run
        // returns its outcome (the batch stays `manifesting`, which its next
        // start finds lost); a worker's manifest job loses an attempt.
        ModeRow(
            difference: .failedEndRecord, local: .outcomeStands, distributed: .fanInLosesAttempt,
            after: ((.manifesting, 0), (.running, 1))),
        ModeRow(difference: .batchNoLongerRunning, local: .refuse, distributed: .completeJob),
        ModeRow(difference: .stoppingWhenLost, local: .cancellationFlag, distributed: .never),
    ]

    /// Every mode difference has its row here and in docs/design.md's decision
    /// table, the lifecycle decides it as the row says, and (a failed end
    /// record) the real stores show it.
    @Test(arguments: modeRows, Mode.allCases)
    func modeDifference(_ row: ModeRow, mode: Mode) throws {
        #expect(
            Set(Self.modeRows.map(\.difference)) == Set(BatchLifecycle.Difference.allCases)
                && Self.modeRows.count == BatchLifecycle.Difference.allCases.count)
        #expect(
            BatchLifecycle.decision(row.difference, for: mode.holder) == row.decision(mode), "\(row.difference) \(mode)"
        )
        let design = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/design.md"), encoding: .utf8)
        let tableRow = design.split(separator: "\n").first {
            $0.hasPrefix("  | ") && $0.contains("`\(row.difference.rawValue)`")
        }
        #expect(tableRow != nil, "docs/design.md's decision table has no row for \(row.difference)")
        if let tableRow {
            #expect(
                tableRow.contains("`\(row.local.rawValue)`") && tableRow.contains("`\(row.distributed.rawValue)`"),
                "\(tableRow)")
        }
        guard let after = row.after else { return }
        let expected = mode == .local ? after.local : after.distributed
        switch row.difference {
        case .failedEndRecord:
            var finished = settleItems(1)
            finished[0].completed = SettleStage.name
            let holder = try Self.holder(mode, items: finished)
            try holder.fanIn(faults: Faults(endFailures: 1))
            let fanIn = try #require(try holder.fanIn())
            #expect(fanIn.state == expected.0 && fanIn.lost == expected.1, "\(mode): \(fanIn)")
        default: Issue.record("no situation for \(row.difference)")
        }
    }
}
