import Glibc
import ShareManifest
import SystemCalls

/// One entry found in a dropped folder: a file to ingest, or something left out and why.
enum DropEntry {
    /// A regular file (`path` is what to read: for a symbolic link, its target).
    case file(SourcePath, shownAs: SourcePath, name: String)
    case skipped(SourcePath, ItemFailure)
}

/// Walks a dropped folder depth-first in name order: hidden entries (a leading
/// dot) are skipped silently; symbolic links are followed only to regular files
/// inside the drop; FIFOs, sockets and devices are reported and never opened;
/// trees deeper than `maximumDepth` are reported.
struct DropWalker: Sequence, IteratorProtocol {
    static let maximumDepth = 64

    private let root: SourcePath
    private let resolvedRoot: SourcePath?
    private var pending: [(path: SourcePath, depth: Int)] = []
    private var ready: [DropEntry] = []

    init(root: SourcePath) {
        self.root = root
        self.resolvedRoot = root.resolved()
        pending.append((root, 0))
    }

    mutating func next() -> DropEntry? {
        while ready.isEmpty {
            guard let directory = pending.popLast() else { return nil }
            list(directory.path, depth: directory.depth)
        }
        return ready.removeFirst()
    }

    private mutating func list(_ directory: SourcePath, depth: Int) {
        let listing: DirectoryEntries
        do { listing = try directory.entries() } catch {
            ready.append(.skipped(directory, ItemFailure(.copy, .unreadable, "\(directory.display): cannot list folder: \(error.message)")))
            return
        }
        // Hidden names (a leading dot) are not part of a drop.
        var names = listing.names.filter { $0.first != UInt8(ascii: ".") }
        names.sort { $0.lexicographicallyPrecedes($1) }
        var subdirectories: [SourcePath] = []
        for name in names {
            let path = directory.appending(name)
            guard let status = try? path.linkStatus() else {
                ready.append(.skipped(path, ItemFailure(.copy, .unreadable, "\(path.display): vanished before it could be read")))
                continue
            }
            switch status.type {
            case .regular:
                ready.append(.file(path, shownAs: path, name: SourcePath.displayName(name)))
            case .directory:
                if depth + 1 >= Self.maximumDepth {
                    ready.append(.skipped(path, ItemFailure(.copy, .tooDeep, "\(path.display): folder nested deeper than \(Self.maximumDepth) levels, not walked")))
                } else {
                    subdirectories.append(path)
                }
            case .symbolicLink:
                ready.append(symbolicLink(path, name: name))
            default:
                ready.append(.skipped(path, ItemFailure(.copy, .notRegularFile, "\(path.display) \(status.type.phrase); not read")))
            }
        }
        // Depth-first, in name order: push in reverse so the first is popped first.
        for subdirectory in subdirectories.reversed() { pending.append((subdirectory, depth + 1)) }
    }

    private func symbolicLink(_ path: SourcePath, name: [UInt8]) -> DropEntry {
        guard let target = path.resolved() else {
            return .skipped(path, ItemFailure(.copy, .symbolicLink, "\(path.display) is a broken symbolic link (or a loop)"))
        }
        guard let resolvedRoot, target.isInside(resolvedRoot) else {
            return .skipped(path, ItemFailure(.copy, .symbolicLink, "\(path.display) is a symbolic link pointing outside the drop; not followed"))
        }
        guard (try? target.linkStatus())?.type == .regular else {
            return .skipped(path, ItemFailure(.copy, .symbolicLink, "\(path.display) is a symbolic link to something that is not a regular file; not followed"))
        }
        return .file(target, shownAs: path, name: SourcePath.displayName(name))
    }
}
