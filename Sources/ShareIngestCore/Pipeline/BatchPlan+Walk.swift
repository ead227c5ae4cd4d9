import Foundation
import Glibc
import ShareManifest
import SystemCalls

extension BatchPlan {
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
        // Files named one by one (and in-memory data) are matched among themselves, by label.
        let named = SidecarAssembly(
            carriesSidecars ? FolderSidecars(names: namedLabels(inputs, shownRoot: shownRoot)) : FolderSidecars())
        return try withoutActuallyEscaping(body) { (body) throws(ShareIngestError) -> [DropRoot] in
            var walk = PlanWalk(
                batch: batch, container: container, identifiers: identifiers, shownRoot: shownRoot,
                followsLinkedInputs: followsLinkedInputs, carriesSidecars: carriesSidecars, sizeLimits: sizeLimits,
                selection: selection, dropRefusal: dropRefusal, body: body, named: named,
                labels: InputLabels(shownRoot: shownRoot))
            for given in inputs { try walk.plan(given) }
            walk.hand(walk.named.finish(identifiers: identifiers))
            return Array(walk.roots.values)
        }
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

/// One walk of a batch's inputs
/// (``BatchPlan/walk(_:batch:container:identifiers:shownRoot:carriesSidecars:sizeLimits:selection:refusingEveryFile:_:)``):
/// what it has opened, counted and matched so far, and a step per kind of input.
private struct PlanWalk {
    let batch: UUID
    let container: ContainerDirectory
    let identifiers: IdentifierSource
    let shownRoot: (actual: String, shown: String)?
    let followsLinkedInputs: Bool
    let carriesSidecars: Bool
    let sizeLimits: SizeLimits
    let selection: DropSelection
    let dropRefusal: ItemFailure?
    let body: (ItemState) -> Void
    /// The files and data named one by one, matched among themselves.
    var named: SidecarAssembly
    /// How the inputs are named in reports.
    var labels: InputLabels
    /// The folder being walked's files.
    var folder = SidecarAssembly(FolderSidecars())
    /// The roots opened, by path.
    var roots: [[UInt8]: DropRoot] = [:]
    /// The next input's index.
    var count = 0

    /// The root at `path` (a folder of named files or of the spool), opened once.
    mutating func root(_ path: SourcePath) -> DropRoot? {
        if let known = roots[path.bytes] { return known }
        let opened = try? DropRoot(opening: path, followingFinalLink: true)
        roots[path.bytes] = opened
        return opened
    }

    /// The file `name` in the folder `folder` (opened as a root), as the plan sees it now.
    mutating func namedFile(_ folder: SourcePath, _ name: [UInt8], shownName: String) -> (
        file: SourceFile, size: Int64?
    ) {
        guard let root = root(folder) else {
            return (SourceFile(path: folder.appending(name), name: shownName), nil)
        }
        let status = try? root.directory.status(ofEntry: name, display: folder.appending(name).display)
        let version = status.flatMap { $0.type == .regular ? FileVersion($0) : nil }
        return (SourceFile(root: folder, relative: name, name: shownName, expected: version), status?.size)
    }

    func hand(_ items: [ItemState]) {
        for item in items { body(item) }
    }

    /// Plans the next input: a sidecar of `assembly` waits for its media
    /// (no UUID of its own), any other file is an item.
    mutating func add(
        _ source: ItemSource, label: String, key: String?, size: Int64? = nil,
        in assembly: WritableKeyPath<PlanWalk, SidecarAssembly>, id: UUID? = nil
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
        if let key, case .file(let file) = source, self[keyPath: assembly].isSidecar(key) {
            hand(self[keyPath: assembly].meetSidecar(key, index: count, file: file, label: label, size: size))
            return
        }
        var item = ItemState(index: count, id: id ?? identifiers.next(), source: source, label: label)
        // What the walk saw of it, recorded with it: its sniff and copy read only that file.
        if case .file(let file) = source { item.sourceVersion = file.expected }
        guard let key else { return body(item) }
        hand(self[keyPath: assembly].meetMedia(key, item))
    }

    /// An input the walk refused: an item whose first stage fails it, never opening it (``SourceFile/refused``).
    mutating func skip(_ file: SourceFile, label: String, failure: ItemFailure) {
        body(ItemState(index: count, id: identifiers.next(), source: .file(file.refused(failure)), label: label))
        count += 1
        TestThrottle.pause()
    }

    /// Plans one input of the batch, in input order.
    mutating func plan(_ given: ShareInput) throws(ShareIngestError) {
        let (input, label) = labels.next(given)
        switch input {
        case .text(let text): add(.text(text), label: ItemState.label(ofText: text), key: nil, in: \.named)
        case .url(let url): add(.url(url), label: ItemState.label(ofURL: url), key: nil, in: \.named)
        case .data(let data, let name): try spool(data, name: name, label: label)
        case .path(let source): planPath(source, label: label)
        }
    }

    /// In-memory data: written to the container's spool (durably), then planned as a file named on its own.
    mutating func spool(_ data: Data, name: String, label: String) throws(ShareIngestError) {
        let id = identifiers.next()
        let spooled: String
        do { spooled = try Spool.write(data, batch: batch, item: id, container: container) } catch {
            throw .containerUnusable(
                path: container.root, reason: "cannot spool the in-memory input \(name): \(error)")
        }
        let file = namedFile(
            SourcePath(spooled.parentPath), Array(spooled.lastPathComponentOfPath.utf8), shownName: name
        ).file
        add(.file(file), label: label, key: label, size: Int64(data.count), in: \.named, id: id)
    }

    /// A path given: a folder is walked, a dropped link refused, a file planned on its own.
    mutating func planPath(_ source: SourcePath, label: String) {
        let type = (try? followsLinkedInputs ? source.status() : source.linkStatus())?.type
        if type == .directory {
            walkFolder(source, label: label)
        } else if type == .symbolicLink {
            // A watched drop that is itself a link: its dropper pointed it somewhere.
            skipInput(
                source, label: label, .symbolicLink, "\(label) is a symbolic link; a dropped link is not followed")
        } else {
            planNamedFile(source, label: label)
        }
    }

    /// A path given that the walk refuses as a whole.
    mutating func skipInput(_ source: SourcePath, label: String, _ reason: ItemFailure.Reason, _ message: String) {
        skip(
            SourceFile(path: source, name: SourcePath.displayName(source.lastComponent)), label: label,
            failure: ItemFailure(.copy, reason, message))
    }

    /// A folder given: opened as a root and walked (``DropWalker``), its sidecars matched folder by folder.
    mutating func walkFolder(_ source: SourcePath, label: String) {
        let root: DropRoot
        do { root = try DropRoot(opening: source, followingFinalLink: followsLinkedInputs) } catch {
            skipInput(
                source, label: label,
                error.code == ELOOP ? .symbolicLink : .unreadable,
                error.code == ELOOP
                    ? "\(label): became a symbolic link before it could be opened; not followed"
                    : "\(label): cannot open folder: \(error.message)")
            return
        }
        roots[source.bytes] = root
        // A watched drop's .ready marker is the inbox's, never an item (hidden files taken or not).
        let marker = shownRoot == nil ? [] : [Array(".ready".utf8)]
        for entry in DropWalker(root: root, hidden: selection.hidden, ignoringAtRoot: marker) {
            switch entry {
            case .folder(let names):
                // The last folder's files have all been met.
                hand(folder.finish(identifiers: identifiers))
                folder = SidecarAssembly(carriesSidecars ? FolderSidecars(listing: names) : FolderSidecars())
            case .file(let found):
                let file = SourceFile(
                    root: root.path, relative: found.relative, name: found.name, expected: found.version)
                let shown = labels.shown(found.shownAs).display
                if let left = selection.refusal(of: found.place, label: shown) {
                    skip(file, label: shown, failure: left)
                    continue
                }
                add(.file(file), label: shown, key: found.name, size: found.version.size, in: \.folder)
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
    }

    /// A file named by the user: a symbolic link is followed (not a dropped one).
    mutating func planNamedFile(_ source: SourcePath, label: String) {
        let file = followsLinkedInputs ? (source.resolved() ?? source) : source
        let (found, size) = namedFile(
            file.parent, file.lastComponent, shownName: SourcePath.displayName(source.lastComponent))
        // A file named on its own is matched by its name (its path inside its "drop").
        if let left = selection.refusal(of: source.lastComponent, label: label) {
            skip(found, label: label, failure: left)
            return
        }
        add(.file(found), label: label, key: label, size: size, in: \.named)
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
