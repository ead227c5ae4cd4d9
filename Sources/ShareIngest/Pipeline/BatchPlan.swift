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

    /// What a store records with a planned batch besides its row and items.
    struct Details: Sendable {
        /// Where its items go: the journal's own container, or the one every worker writes into.
        var container: ContainerDirectory
        /// Where each item starts (its first stage) and how many attempts it may lose.
        var lifecycle: ItemLifecycle
        /// Distributed: the token written into the container (``WorkerVisibility``).
        var token: String?
        /// Distributed: the absolute inputs, which every worker must see.
        var roots: [String] = []

        init(container: ContainerDirectory, pipeline: PipelineDefinition, maxAttempts: Int, token: String? = nil, roots: [String] = []) {
            self.container = container
            self.lifecycle = ItemLifecycle(stages: pipeline.itemStages, maxAttempts: maxAttempts)
            self.token = token
            self.roots = roots
        }
    }

    /// Checks `pipeline` and chooses the key: `key`, else the pipeline's, else
    /// `ShareKey-<batch UUID>`; a key whose manifest exists or that another batch
    /// used is refused.
    init(
        pipeline: PipelineDefinition, key: ShareKey?, message: String?, container: ContainerDirectory, store: any ItemStore,
        identifiers: IdentifierSource, now: Date, maxAttempts: Int, id: UUID? = nil
    ) throws(ShareIngestError) {
        do { try pipeline.validate() } catch { throw .pipeline(error) }
        let id = id ?? identifiers.next()
        let key = key ?? pipeline.manifest.key ?? ShareKey.unique(id: id)
        if ManifestStore(container: container).exists(key) { throw .manifestExists(key: key, path: container.manifestPath(key: key)) }
        let other: BatchRecord?
        do { other = try store.batch(key: key) } catch { throw .storeUnavailable("\(error)") }
        if let other, other.id != id { throw .keyTaken(key: key, batch: other.id) }
        record = BatchRecord(id: id, key: key, state: .running, pipelineJSON: pipeline.encodedJSON(), message: message, createdAt: now)
        record.maxAttempts = max(1, maxAttempts)
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

    /// The items of `inputs`, in order: folders are walked (``DropWalker``);
    /// entries that cannot be items are kept as skipped items so the report lists
    /// them; in-memory inputs are written to the container's spool (durably) so
    /// that they survive an interruption and reach remote workers.
    ///
    /// - Parameter shownRoot: reports name the files under this path instead of
    ///   the actual root (a claimed drop is read from `.processing/<batch>/` but is
    ///   known to people by its place in the inbox).
    static func items(
        for inputs: [ShareInput], batch: UUID, container: ContainerDirectory, identifiers: IdentifierSource,
        shownRoot: (actual: String, shown: String)? = nil
    ) throws(ShareIngestError) -> [ItemState] {
        var items: [ItemState] = []
        try walk(inputs, batch: batch, container: container, identifiers: identifiers, shownRoot: shownRoot) { items.append($0) }
        return items
    }

    /// Items planned per transaction: a drop of any size is recorded without
    /// being held in memory.
    static let chunkSize = 2000

    /// Plans `inputs` into `store` as `record`'s items, a chunk at a time (see
    /// ``items(for:batch:container:identifiers:shownRoot:)``), then marks the
    /// batch running: its items are durable before any copy starts. Returns the
    /// batch as recorded. A plan cut short leaves the batch `claimed`, with no
    /// copy made: the next run plans it again (a watched drop) or abandons it.
    static func commit(
        _ record: BatchRecord, inputs: [ShareInput], into store: any ItemStore, plan: Details, identifiers: IdentifierSource,
        shownRoot: (actual: String, shown: String)? = nil
    ) throws(ShareIngestError) -> BatchRecord {
        var batch = record
        var chunk: [ItemState] = []
        var count = 0
        var unfinished = 0
        do {
            try store.begin(batch, plan: plan)
            var failure: (any Error)?
            try walk(inputs, batch: batch.id, container: plan.container, identifiers: identifiers, shownRoot: shownRoot) { item in
                guard failure == nil else { return }
                chunk.append(item)
                count += 1
                if plan.lifecycle.start(item, stopping: false) != .finished { unfinished += 1 }
                if chunk.count >= chunkSize {
                    do { try store.append(chunk, to: batch, plan: plan) } catch { failure = error }
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            if let failure { throw failure }
            try store.append(chunk, to: batch, plan: plan)
            batch.state = .running
            batch.itemCount = count
            try store.seal(batch, plan: plan, unfinished: unfinished)
        } catch let error as ShareIngestError {
            throw error
        } catch let error as SchemaMismatch {
            throw .storeUnavailable(error.description)
        } catch {
            throw .containerUnusable(path: plan.container.root, reason: "cannot record the plan: \(error)")
        }
        return batch
    }

    /// Walks `inputs` and hands each item to `body`, in order (see
    /// ``items(for:batch:container:identifiers:shownRoot:)``).
    static func walk(
        _ inputs: [ShareInput], batch: UUID, container: ContainerDirectory, identifiers: IdentifierSource,
        shownRoot: (actual: String, shown: String)? = nil, _ body: (ItemState) -> Void
    ) throws(ShareIngestError) {
        var count = 0
        func add(_ source: ItemSource, label: String, id: UUID? = nil, failure: ItemFailure? = nil) {
            body(ItemState(index: count, id: id ?? identifiers.next(), source: source, label: label, failure: failure))
            count += 1
            TestThrottle.pause()
        }
        // Relative paths are read through their absolute form, and shown as given.
        var shownRoots = shownRoot.map { [(actual: Array($0.actual.utf8), shown: Array($0.shown.utf8))] } ?? []
        func shown(_ path: SourcePath) -> SourcePath {
            guard let root = shownRoots.first(where: { path.bytes.starts(with: $0.actual) }) else { return path }
            return SourcePath(bytes: root.shown + path.bytes.dropFirst(root.actual.count))
        }
        for given in inputs {
            var input = given
            if case .path(let path) = given, path.bytes.first != UInt8(ascii: "/") {
                let absolute = path.absolute
                shownRoots.append((absolute.bytes, path.bytes))
                input = .path(absolute)
            }
            switch input {
            case .text(let text): add(.text(text), label: ItemState.label(ofText: text))
            case .url(let url): add(.url(url), label: ItemState.label(ofURL: url))
            case .data(let data, let name):
                let id = identifiers.next()
                let spooled: String
                do { spooled = try Spool.write(data, batch: batch, item: id, container: container) } catch {
                    throw .containerUnusable(path: container.root, reason: "cannot spool the in-memory input \(name): \(error)")
                }
                add(.file(SourceFile(path: SourcePath(spooled), name: name)), label: "data:" + name, id: id)
            case .path(let source):
                if (try? source.status())?.type == .directory {
                    for entry in DropWalker(root: source) {
                        switch entry {
                        case .file(let file, let shownAs, let name): add(.file(SourceFile(path: file, name: name)), label: shown(shownAs).display)
                        case .skipped(let file, let failure):
                            let label = shown(file).display
                            let message = failure.message.replacingOccurrences(of: file.display, with: label)
                            add(.file(SourceFile(path: file, name: SourcePath.displayName(file.lastComponent))), label: label,
                                failure: ItemFailure(failure.stage, failure.reason, message))
                        }
                    }
                } else {
                    // A file named by the user: a symbolic link is followed.
                    add(.file(SourceFile(path: source.resolved() ?? source, name: SourcePath.displayName(source.lastComponent))), label: shown(source).display)
                }
            }
        }
    }
}

/// In-memory inputs on disk: `<container>/.spool/<batch>/<item UUID>`, written
/// durably at planning and removed when the batch finishes.
enum Spool {
    static func directory(of batch: UUID, in container: ContainerDirectory) -> String {
        "\(container.spoolDirectory)/\(batch.uuidString)"
    }

    /// Writes `data` for one item; returns its path.
    static func write(_ data: Data, batch: UUID, item: UUID, container: ContainerDirectory) throws(SystemError) -> String {
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
