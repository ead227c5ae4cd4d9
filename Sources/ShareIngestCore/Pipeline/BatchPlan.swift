import Foundation
import Glibc
import ShareManifest
import SystemCalls

/// What is decided before the first byte is copied, the same for a local batch,
/// a watched drop and a distributed one: the pipeline checked, the batch's id
/// and key (free in the store and in the container), then each item with its
/// UUID, in input order.
///
/// Identifiers are drawn batch first, then one per item in input order (folders
/// walked depth-first in name order), so a reproducible ``IdentifierSource``
/// gives the same names in every mode.
struct BatchPlan {
    /// The batch as it will be recorded.
    var record: BatchRecord

    /// What a store records with a planned batch besides its row and items (``PlanDetails``).
    typealias Details = PlanDetails

    /// Checks `pipeline` and chooses the key: `key`, else the pipeline's, else
    /// `ShareKey-<batch UUID>`; a key whose manifest exists or that another batch
    /// used is refused.
    init(
        pipeline: PipelineDefinition, key: ShareKey?, message: String?, container: ContainerDirectory,
        store: any ItemStore,
        identifiers: IdentifierSource, now: Date, maxAttempts: Int, id: UUID? = nil
    ) throws(ShareIngestError) {
        do { try pipeline.validate() } catch { throw .pipeline(error) }
        let id = id ?? identifiers.next()
        let key = key ?? pipeline.manifest.key ?? ShareKey.unique(id: id)
        if ManifestStore(container: container).exists(key) {
            throw .manifestExists(key: key, path: container.manifestPath(key: key))
        }
        let other: BatchRecord?
        do { other = try store.batch(key: key) } catch { throw .storeUnavailable("\(error)") }
        if let other, other.id != id { throw .keyTaken(key: key, batch: other.id) }
        record = BatchRecord(
            id: id, key: key, state: .running, pipelineJSON: pipeline.encodedJSON(), message: message, createdAt: now)
        record.maxAttempts = ItemLifecycle.attempts(maxAttempts)
    }

    /// Refuses what cannot be a batch before anything starts: no inputs, or a
    /// path argument that does not exist.
    static func check(_ inputs: [ShareInput]) throws(ShareIngestError) {
        guard !inputs.isEmpty else { throw .noInputs }
        for case .path(let path) in inputs {
            do { _ = try path.status() } catch { throw .inputMissing(path: path.display, reason: error.message) }
        }
    }

    /// The absolute form of every path input (made absolute against the current
    /// directory where the batch is planned: workers on other machines, and a
    /// resume from another directory, read the same files).
    static func absolute(_ inputs: [ShareInput]) -> [ShareInput] {
        inputs.map { input in
            guard case .path(let path) = input else { return input }
            return .path(path.absolute)
        }
    }

    /// Items planned per transaction: a drop of any size is recorded without
    /// being held in memory.
    static let chunkSize = 2000

    /// Plans `inputs` into `store` as `record`'s items, a chunk at a time (see
    /// ``walk(_:batch:container:identifiers:shownRoot:carriesSidecars:sizeLimits:selection:refusingEveryFile:_:)``),
    /// then marks the batch running: its items are durable before any copy
    /// starts. Returns the batch as recorded. A plan cut short leaves the batch
    /// `claimed`, with no copy made: the next run plans it again (a watched
    /// drop) or abandons it. The batch's item count is its inputs': the items
    /// and the sidecars they carry.
    ///
    /// With `holdingRoots`, the folders the walk listed stay open for this
    /// process's run of the batch (``HeldDropRoots``: the caller runs it here,
    /// and releases them if it does not).
    static func commit(
        _ record: BatchRecord, inputs: [ShareInput], into store: any ItemStore, plan: Details,
        identifiers: IdentifierSource,
        shownRoot: (actual: String, shown: String)? = nil, holdingRoots: Bool = false
    ) throws(ShareIngestError) -> BatchRecord {
        var batch = record
        var chunk: [ItemState] = []
        var count = 0
        var unfinished = 0
        CrashPoint.hit("before-plan")
        do {
            try store.begin(batch, plan: plan)
            var failure: (any Error)?
            let dropRefusal =
                plan.sizeLimits.drop == nil ? nil : plan.sizeLimits.refusal(ofDrop: SizeLimits.bytes(of: inputs))
            let roots = try walk(
                inputs, batch: batch.id, container: plan.container, identifiers: identifiers, shownRoot: shownRoot,
                carriesSidecars: plan.carriesSidecars,
                sizeLimits: plan.sizeLimits, selection: plan.selection, refusingEveryFile: dropRefusal
            ) { item in
                guard failure == nil else { return }
                chunk.append(item)
                count += 1 + item.reportedSidecars.count
                if plan.lifecycle.start(item, stopping: false) != .finished { unfinished += 1 }
                if chunk.count >= chunkSize {
                    do { try store.append(chunk, to: batch, plan: plan) } catch { failure = error }
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            if let failure { throw failure }
            CrashPoint.hit("after-walk")
            if holdingRoots { HeldDropRoots.hold(roots, for: batch.id) }
            try store.append(chunk, to: batch, plan: plan)
            batch.handle(.seal)
            batch.itemCount = count
            try store.seal(batch, plan: plan, unfinished: unfinished)
        } catch let error as ShareIngestError {
            throw error
        } catch let error as SchemaMismatch {
            throw .storeUnavailable(error.description)
        } catch  where store is any JournalStore && StoreFailure(error) == .full {
            // Said as a full disk: nothing was copied yet; the same command runs again once there is room.
            throw .journal(error, container: plan.container)
        } catch {
            throw .containerUnusable(path: plan.container.root, reason: "cannot record the plan: \(error)")
        }
        return batch
    }
}

/// Puts the sidecars of one folder (or of the files named one by one) into
/// the media items they describe (``FolderSidecars``) as the walk meets them,
/// in name order. A sidecar takes its index in input order but is no item of
/// its own; a media item is held until each of its sidecars has been met (in
/// a drop they are near it: `X.jpg`, `X.jpg.json`; `IMG_1234.AAE`,
/// `IMG_1234.HEIC`), then handed on, with them, in input order. At the end of
/// the folder, what is still held is handed on as it is, and a sidecar that
/// its first media never took (that name was no file after all) is an item
/// of its own.
struct SidecarAssembly {
    private let folder: FolderSidecars
    /// Sidecars met before some of their media: kept until each has taken them.
    private var met: [String: Sidecar] = [:]
    /// Media items held for sidecars not met yet, by name.
    private var held: [String: Held] = [:]
    /// The names already met (a file named twice is matched once).
    private var seen: Set<String> = []

    private struct Sidecar {
        let index: Int
        let file: SourceFile
        let label: String
        let size: Int64?
        /// How many of its media have taken it, and whether its first did.
        var taken = 0
        var reported = false
    }

    private struct Held {
        var item: ItemState
        /// Its name, and its sidecars' (in input order).
        let name: String
        let names: [String]
        var found: [String: Sidecar]
    }

    init(_ folder: FolderSidecars) { self.folder = folder }

    /// True when the file called `name` is a sidecar carried by its media.
    func isSidecar(_ name: String) -> Bool { folder.media[name] != nil && !seen.contains(name) }

    /// The sidecar `name` (input `index`, `size` bytes when listed) is met:
    /// returns the media items that now have all their sidecars.
    mutating func meetSidecar(_ name: String, index: Int, file: SourceFile, label: String, size: Int64?) -> [ItemState]
    {
        seen.insert(name)
        var sidecar = Sidecar(index: index, file: file, label: label, size: size)
        let media = folder.media[name] ?? []
        var ready: [ItemState] = []
        for file in media {
            guard var waiting = held[file] else { continue }
            take(&sidecar, named: name, by: file)
            waiting.found[name] = sidecar
            if waiting.found.count == waiting.names.count {
                held[file] = nil
                ready.append(carrying(waiting))
            } else {
                held[file] = waiting
            }
        }
        if sidecar.taken < media.count { met[name] = sidecar }
        return ready.sorted { $0.index < $1.index }
    }

    /// The media item `item`, called `name`, is met: returns it, with its
    /// sidecars, once they have all been met (else it is held).
    mutating func meetMedia(_ name: String, _ item: ItemState) -> [ItemState] {
        guard let names = folder.sidecars[name], !seen.contains(name) else { return [item] }
        seen.insert(name)
        var found: [String: Sidecar] = [:]
        for sidecarName in names {
            guard var sidecar = met[sidecarName] else { continue }
            take(&sidecar, named: sidecarName, by: name)
            found[sidecarName] = sidecar
            met[sidecarName] = sidecar.taken < (folder.media[sidecarName]?.count ?? 0) ? sidecar : nil
        }
        let waiting = Held(item: item, name: name, names: names, found: found)
        guard found.count == names.count else {
            held[name] = waiting
            return []
        }
        return [carrying(waiting)]
    }

    /// The end of the folder: the media items still held, with the sidecars
    /// they found, and each sidecar its first media did not take, as an item
    /// of its own (its UUID drawn now), in input order.
    mutating func finish(identifiers: IdentifierSource) -> [ItemState] {
        var ready = held.values.map(carrying)
        for sidecar in met.values where !sidecar.reported {
            ready.append(
                ItemState(
                    index: sidecar.index, id: identifiers.next(), source: .file(sidecar.file), label: sidecar.label))
        }
        held = [:]
        met = [:]
        return ready.sorted { $0.index < $1.index }
    }

    private mutating func take(_ sidecar: inout Sidecar, named name: String, by media: String) {
        sidecar.taken += 1
        if folder.media[name]?.first == media { sidecar.reported = true }
    }

    /// `waiting.item` with the sidecars it found, in input order, each
    /// attached to it (and its copy to be named by its UUID). A sidecar's file
    /// and label are kept only where they are not its name beside the item.
    private func carrying(_ waiting: Held) -> ItemState {
        var item = waiting.item
        item.carriedSidecars = waiting.names.compactMap { name in
            guard let sidecar = waiting.found[name] else { return nil }
            var carried = CarriedSidecar(
                index: sidecar.index, name: sidecar.file.name, ownPath: nil, ownLabel: nil, size: sidecar.size)
            carried.expected = sidecar.file.expected
            if carried.source(carriedBy: item) != sidecar.file || carried.label(carriedBy: item) != sidecar.label {
                carried = CarriedSidecar(
                    index: sidecar.index, name: sidecar.file.name, ownPath: sidecar.file.path, ownLabel: sidecar.label,
                    size: sidecar.size)
                carried.ownRootLength = sidecar.file.rootLength
                carried.expected = sidecar.file.expected
            }
            carried.borrowed = folder.media[name]?.first != waiting.name
            return carried
        }
        return item
    }
}

/// In-memory inputs on disk: `<container>/.spool/<batch>/<item UUID>`, written
/// durably at planning and removed when the batch finishes.
enum Spool {
    static func directory(of batch: UUID, in container: ContainerDirectory) -> String {
        "\(container.spoolDirectory)/\(batch.uuidString)"
    }

    /// Writes `data` for one item; returns its path.
    static func write(_ data: Data, batch: UUID, item: UUID, container: ContainerDirectory) throws(SystemError)
        -> String
    {
        let folder = directory(of: batch, in: container)
        let fresh = !FileSystem.exists(folder)
        try FileSystem.makeDirectory(folder)
        if fresh { try FileSystem.syncDirectory(container.spoolDirectory) }
        let path = "\(folder)/\(item.uuidString)"
        if FileSystem.exists(path) { FileSystem.remove(path) }  // left by a plan that never committed
        try AtomicFile.create(path, bytes: data, syncDirectory: true)
        return path
    }

    /// Removes a finished batch's spool (nothing is read from it any more).
    static func remove(batch: UUID, in container: ContainerDirectory) {
        FileSystem.removeTree(directory(of: batch, in: container))
    }
}
