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

    /// Walks `inputs` and hands each item to `body`: folders are walked
    /// (``DropWalker``); entries that cannot be items are kept as skipped items
    /// so the report lists them; in-memory inputs are written to the
    /// container's spool (durably) so that they survive an interruption and
    /// reach remote workers. Each input takes its index in input order.
    ///
    /// With `carriesSidecars`, the export sidecars among a folder's files (and
    /// among the files and data named one by one) are matched by name to the
    /// photos and videos they describe (``FolderSidecars``) and carried by
    /// them (``ItemState/carriedSidecars``) instead of being items: a media
    /// item is handed on once each of its sidecars has been met, so items may
    /// come out of index order (``SidecarAssembly``).
    ///
    /// Each file is recorded with the folder it is to be opened beneath (its
    /// root: the folder walked, the folder of a file named on its own, the
    /// spool) and with what the walk saw of it (``SourceFile``); returns the
    /// roots, open.
    ///
    /// - Parameter shownRoot: reports name the files under this path instead of
    ///   the actual root (a claimed drop is read from `.processing/<batch>/` but is
    ///   known to people by its place in the inbox). Such a drop (a watched
    ///   one) is not followed when it is itself a symbolic link: its dropper
    ///   made it, and may have pointed it anywhere.
    @discardableResult
    static func walk(
        _ inputs: [ShareInput], batch: UUID, container: ContainerDirectory, identifiers: IdentifierSource,
        shownRoot: (actual: String, shown: String)? = nil, carriesSidecars: Bool = true, sizeLimits: SizeLimits = .none,
        selection: DropSelection = .all, refusingEveryFile dropRefusal: ItemFailure? = nil, _ body: (ItemState) -> Void
    ) throws(ShareIngestError) -> [DropRoot] {
        let followsLinkedInputs = shownRoot == nil
        var roots: [[UInt8]: DropRoot] = [:]
        /// The root at `path` (a folder of named files or of the spool), opened once.
        func root(_ path: SourcePath) -> DropRoot? {
            if let known = roots[path.bytes] { return known }
            let opened = try? DropRoot(opening: path, followingFinalLink: true)
            roots[path.bytes] = opened
            return opened
        }
        /// The file `name` in the folder `folder` (opened as a root), as the plan sees it now.
        func namedFile(_ folder: SourcePath, _ name: [UInt8], shownName: String) -> (file: SourceFile, size: Int64?) {
            guard let root = root(folder) else {
                return (SourceFile(path: folder.appending(name), name: shownName), nil)
            }
            let status = try? root.directory.status(ofEntry: name, display: folder.appending(name).display)
            let version = status.flatMap { $0.type == .regular ? FileVersion($0) : nil }
            return (SourceFile(root: folder, relative: name, name: shownName, expected: version), status?.size)
        }
        var count = 0
        // Files named one by one (and in-memory data) are matched among themselves, by label.
        var named = SidecarAssembly(
            carriesSidecars ? FolderSidecars(names: namedLabels(inputs, shownRoot: shownRoot)) : FolderSidecars())
        var folder = SidecarAssembly(FolderSidecars())
        func hand(_ items: [ItemState]) {
            for item in items { body(item) }
        }
        /// Plans the next input: a sidecar of `assembly` waits for its media
        /// (no UUID of its own), any other file is an item.
        func add(
            _ source: ItemSource, label: String, key: String?, size: Int64? = nil, in assembly: inout SidecarAssembly,
            id: UUID? = nil
        ) {
            defer {
                count += 1
                TestThrottle.pause()
            }
            // Over a size limit: refused before anything is copied (a sidecar too).
            if case .file(let file) = source,
                let failure = dropRefusal.map({ ItemFailure($0.stage, $0.reason, "\(label): \($0.message)") })
                    ?? sizeLimits.refusal(ofFile: size, label: label)
            {
                return body(
                    ItemState(
                        index: count, id: id ?? identifiers.next(), source: .file(file.refused(failure)), label: label))
            }
            if let key, case .file(let file) = source, assembly.isSidecar(key) {
                hand(assembly.meetSidecar(key, index: count, file: file, label: label, size: size))
                return
            }
            var item = ItemState(index: count, id: id ?? identifiers.next(), source: source, label: label)
            // What the walk saw of it, recorded with it: its sniff and copy read only that file.
            if case .file(let file) = source { item.sourceVersion = file.expected }
            guard let key else { return body(item) }
            hand(assembly.meetMedia(key, item))
        }
        /// An input the walk refused: an item whose first stage fails it, never opening it (``SourceFile/refused``).
        func skip(_ file: SourceFile, label: String, failure: ItemFailure) {
            body(ItemState(index: count, id: identifiers.next(), source: .file(file.refused(failure)), label: label))
            count += 1
            TestThrottle.pause()
        }
        var labels = InputLabels(shownRoot: shownRoot)
        for given in inputs {
            let (input, label) = labels.next(given)
            switch input {
            case .text(let text): add(.text(text), label: ItemState.label(ofText: text), key: nil, in: &named)
            case .url(let url): add(.url(url), label: ItemState.label(ofURL: url), key: nil, in: &named)
            case .data(let data, let name):
                let id = identifiers.next()
                let spooled: String
                do { spooled = try Spool.write(data, batch: batch, item: id, container: container) } catch {
                    throw .containerUnusable(
                        path: container.root, reason: "cannot spool the in-memory input \(name): \(error)")
                }
                let file = namedFile(
                    SourcePath(spooled.parentPath), Array(spooled.lastPathComponentOfPath.utf8), shownName: name
                ).file
                add(.file(file), label: label, key: label, size: Int64(data.count), in: &named, id: id)
            case .path(let source):
                func skipInput(_ reason: ItemFailure.Reason, _ message: String) {
                    skip(
                        SourceFile(path: source, name: SourcePath.displayName(source.lastComponent)), label: label,
                        failure: ItemFailure(.copy, reason, message))
                }
                let type = (try? followsLinkedInputs ? source.status() : source.linkStatus())?.type
                if type == .directory {
                    let root: DropRoot
                    do { root = try DropRoot(opening: source, followingFinalLink: followsLinkedInputs) } catch {
                        skipInput(
                            error.code == ELOOP ? .symbolicLink : .unreadable,
                            error.code == ELOOP
                                ? "\(label): became a symbolic link before it could be opened; not followed"
                                : "\(label): cannot open folder: \(error.message)")
                        continue
                    }
                    roots[source.bytes] = root
                    // A watched drop's .ready marker is the inbox's, never an item (hidden files taken or not).
                    let marker = shownRoot == nil ? [] : [Array(".ready".utf8)]
                    for entry in DropWalker(root: root, hidden: selection.hidden, ignoringAtRoot: marker) {
                        switch entry {
                        case .folder(let names):
                            // The last folder's files have all been met.
                            hand(folder.finish(identifiers: identifiers))
                            folder = SidecarAssembly(
                                carriesSidecars ? FolderSidecars(listing: names) : FolderSidecars())
                        case .file(let found):
                            let file = SourceFile(
                                root: root.path, relative: found.relative, name: found.name, expected: found.version)
                            let shown = labels.shown(found.shownAs).display
                            if let left = selection.refusal(of: found.place, label: shown) {
                                skip(file, label: shown, failure: left)
                                continue
                            }
                            add(.file(file), label: shown, key: found.name, size: found.version.size, in: &folder)
                        case .skipped(let file, let failure):
                            let shown = labels.shown(file).display
                            let message = failure.message.replacingOccurrences(of: file.display, with: shown)
                            skip(
                                SourceFile(path: file, name: SourcePath.displayName(file.lastComponent)), label: shown,
                                failure: ItemFailure(failure.stage, failure.reason, message))
                        }
                    }
                    hand(folder.finish(identifiers: identifiers))
                    folder = SidecarAssembly(FolderSidecars())
                } else if type == .symbolicLink {
                    // A watched drop that is itself a link: its dropper pointed it somewhere.
                    skipInput(.symbolicLink, "\(label) is a symbolic link; a dropped link is not followed")
                } else {
                    // A file named by the user: a symbolic link is followed (not a dropped one).
                    let file = followsLinkedInputs ? (source.resolved() ?? source) : source
                    let (found, size) = namedFile(
                        file.parent, file.lastComponent,
                        shownName: SourcePath.displayName(source.lastComponent))
                    // A file named on its own is matched by its name (its path inside its "drop").
                    if let left = selection.refusal(of: source.lastComponent, label: label) {
                        skip(found, label: label, failure: left)
                        continue
                    }
                    add(.file(found), label: label, key: label, size: size, in: &named)
                }
            }
        }
        hand(named.finish(identifiers: identifiers))
        return Array(roots.values)
    }

    /// The labels of the files and data named one by one in `inputs` (what
    /// ``walk(_:batch:container:identifiers:shownRoot:carriesSidecars:sizeLimits:selection:refusingEveryFile:_:)``
    /// will call them), in order: they are matched among themselves.
    private static func namedLabels(_ inputs: [ShareInput], shownRoot: (actual: String, shown: String)?) -> [String] {
        var labels = InputLabels(shownRoot: shownRoot)
        return inputs.compactMap { given in
            let (input, label) = labels.next(given)
            switch input {
            case .data: return label
            case .path(let path):
                // A watched drop (`shownRoot`) is not followed when it is a link: no folder then.
                let status = try? (shownRoot == nil ? path.status() : path.linkStatus())
                return status?.type == .directory ? nil : label
            case .text, .url: return nil
            }
        }
    }
}

/// How a batch's inputs are named in reports: relative paths are read
/// through their absolute form and shown as given; a claimed drop's files by
/// their place in the inbox (`shownRoot`).
private struct InputLabels {
    private var roots: [(actual: [UInt8], shown: [UInt8])]

    init(shownRoot: (actual: String, shown: String)?) {
        roots = shownRoot.map { [(actual: Array($0.actual.utf8), shown: Array($0.shown.utf8))] } ?? []
    }

    /// The input to read for `given` (a relative path made absolute) and the
    /// label of a file or data input (empty for text and links).
    mutating func next(_ given: ShareInput) -> (input: ShareInput, label: String) {
        switch given {
        case .path(let path):
            var input = path
            if path.bytes.first != UInt8(ascii: "/") {
                input = path.absolute
                roots.append((input.bytes, path.bytes))
            }
            return (.path(input), shown(input).display)
        case .data(_, let name): return (given, "data:" + name)
        case .text, .url: return (given, "")
        }
    }

    /// `path` as people know it.
    func shown(_ path: SourcePath) -> SourcePath {
        guard let root = roots.first(where: { path.bytes.starts(with: $0.actual) }) else { return path }
        return SourcePath(bytes: root.shown + path.bytes.dropFirst(root.actual.count))
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
