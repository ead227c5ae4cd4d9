import Glibc
import ShareManifest
import SystemCalls

/// One entry found in a dropped folder: a file to ingest, or something left
/// out and why; and, before the entries of each folder, the names it lists.
enum DropEntry {
    /// A folder was listed: its entries (of these names, hidden ones left
    /// out, in this order) follow, files first, up to the next `folder`.
    case folder(SortedNames)
    /// A regular file (`path` is what to read: for a symbolic link, its
    /// target), of `size` bytes when it was listed.
    case file(SourcePath, shownAs: SourcePath, name: String, size: Int64)
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
    /// Folders still to list, the next one last.
    private var pending: [(path: SourcePath, depth: Int)] = []
    /// The folder being walked: its sorted names (only they are held, however
    /// many: a flat drop of a million files is walked in bounded memory), the
    /// next one to look at, and its subfolders, walked after its files.
    private var current: (directory: SourcePath, depth: Int, names: SortedNames, position: Int, subdirectories: [SourcePath])?

    init(root: SourcePath) {
        self.root = root
        self.resolvedRoot = root.resolved()
        pending.append((root, 0))
    }

    mutating func next() -> DropEntry? {
        while true {
            if var folder = current {
                while folder.position < folder.names.count {
                    let name = folder.names[folder.position]
                    folder.position += 1
                    let path = folder.directory.appending(name)
                    if let entry = entry(path, name: name, depth: folder.depth, subdirectories: &folder.subdirectories) {
                        current = folder
                        return entry
                    }
                }
                // Depth-first, in name order: push in reverse so the first is popped first.
                for subdirectory in folder.subdirectories.reversed() { pending.append((subdirectory, folder.depth + 1)) }
                current = nil
            }
            guard let directory = pending.popLast() else { return nil }
            do {
                // Hidden names (a leading dot) are not part of a drop.
                let names = try SortedNames(pathBytes: directory.path.bytes, display: directory.path.display) { $0.first != UInt8(ascii: ".") }
                current = (directory.path, directory.depth, names, 0, [])
                return .folder(names)
            } catch {
                return .skipped(directory.path, ItemFailure(.copy, .unreadable, "\(directory.path.display): cannot list folder: \(error.message)"))
            }
        }
    }

    /// What the entry `path` of a folder at `depth` is; nil for a subfolder (added to `subdirectories`).
    private func entry(_ path: SourcePath, name: [UInt8], depth: Int, subdirectories: inout [SourcePath]) -> DropEntry? {
        guard let status = try? path.linkStatus() else {
            return .skipped(path, ItemFailure(.copy, .unreadable, "\(path.display): vanished before it could be read"))
        }
        switch status.type {
        case .regular:
            return .file(path, shownAs: path, name: SourcePath.displayName(name), size: status.size)
        case .directory:
            if depth + 1 >= Self.maximumDepth {
                return .skipped(path, ItemFailure(.copy, .tooDeep, "\(path.display): folder nested deeper than \(Self.maximumDepth) levels, not walked"))
            }
            subdirectories.append(path)
            return nil
        case .symbolicLink:
            return symbolicLink(path, name: name)
        default:
            return .skipped(path, ItemFailure(.copy, .notRegularFile, "\(path.display) \(status.type.phrase); not read"))
        }
    }

    private func symbolicLink(_ path: SourcePath, name: [UInt8]) -> DropEntry {
        guard let target = path.resolved() else {
            return .skipped(path, ItemFailure(.copy, .symbolicLink, "\(path.display) is a broken symbolic link (or a loop)"))
        }
        guard let resolvedRoot, target.isInside(resolvedRoot) else {
            return .skipped(path, ItemFailure(.copy, .symbolicLink, "\(path.display) is a symbolic link pointing outside the drop; not followed"))
        }
        guard let status = try? target.linkStatus(), status.type == .regular else {
            return .skipped(path, ItemFailure(.copy, .symbolicLink, "\(path.display) is a symbolic link to something that is not a regular file; not followed"))
        }
        return .file(target, shownAs: path, name: SourcePath.displayName(name), size: status.size)
    }
}
