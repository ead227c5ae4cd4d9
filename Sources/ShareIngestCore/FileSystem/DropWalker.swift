import Glibc
import ShareManifest
import SystemCalls

/// One entry found in a dropped folder: a file to ingest, or something left
/// out and why; and, before the entries of each folder, the names it lists.
enum DropEntry {
    /// A folder was listed: its entries (of these names, hidden ones left
    /// out, in this order) follow, files first, up to the next `folder`.
    case folder(SortedNames)
    /// A regular file.
    case file(DropFile)
    case skipped(SourcePath, ItemFailure)
}

/// A regular file found in a drop, as the walk saw it.
struct DropFile {
    /// Where it is beneath the root, with no symbolic link on the way: for a
    /// link the walk followed, its target's place.
    let relative: [UInt8]
    /// Where the walk met it (the link's own place for a link).
    let shownAs: SourcePath
    /// The same place beneath the root: the path inside the drop that
    /// ``DropSelection`` matches.
    let place: [UInt8]
    /// Its name as people know it (the link's, for a link).
    let name: String
    /// What the walk saw of it: what is opened later must be this file.
    let version: FileVersion
}

/// Walks a dropped folder depth-first in name order: hidden entries (a leading
/// dot) are skipped silently, unless asked for (`hidden`); symbolic links are followed only to regular files
/// inside the drop; FIFOs, sockets and devices are reported and never opened;
/// trees deeper than `maximumDepth` are reported.
///
/// Every folder is listed, and every entry looked at, through descriptors
/// beneath the root held open (``DropRoot``), never by a path string: a folder
/// swapped for a link to another place while the walk goes on is met as a
/// link (and not followed), never listed.
struct DropWalker: Sequence, IteratorProtocol {
    static let maximumDepth = 64

    private let root: DropRoot
    /// True: hidden entries are walked too.
    private let hidden: Bool
    /// Names left out at the root whatever ``hidden`` says (a watched drop's `.ready` marker).
    private let ignoredAtRoot: [[UInt8]]
    /// Folders still to list (beneath the root), the next one last.
    private var pending: [(relative: [UInt8], depth: Int)] = []
    /// The folder being walked: its sorted names (only they are held, however
    /// many: a flat drop of a million files is walked in bounded memory), the
    /// next one to look at, and its subfolders, walked after its files.
    private var current:
        (
            folder: FileDescriptor, relative: [UInt8], depth: Int, names: SortedNames, position: Int,
            subdirectories: [[UInt8]]
        )?

    init(root: DropRoot, hidden: Bool = false, ignoringAtRoot ignored: [[UInt8]] = []) {
        self.root = root
        self.hidden = hidden
        ignoredAtRoot = ignored
        pending.append(([], 0))
    }

    mutating func next() -> DropEntry? {
        while true {
            if var folder = current {
                while folder.position < folder.names.count {
                    let name = folder.names[folder.position]
                    folder.position += 1
                    if let entry = entry(
                        name, in: &folder.subdirectories, of: folder.folder, at: folder.relative, depth: folder.depth)
                    {
                        current = folder
                        return entry
                    }
                }
                // Depth-first, in name order: push in reverse so the first is popped first.
                for subdirectory in folder.subdirectories.reversed() {
                    pending.append((subdirectory, folder.depth + 1))
                }
                current = nil
            }
            guard let next = pending.popLast() else { return nil }
            let path = root.path(of: next.relative)
            CrashPoint.hit("listing:" + SourcePath.displayName(next.relative))
            do {
                let folder = try root.openFolder(next.relative)
                // Hidden names (a leading dot) are not part of a drop, unless asked for.
                let (hidden, ignored) = (self.hidden, next.relative.isEmpty ? ignoredAtRoot : [])
                let names = try SortedNames(directory: folder, display: path.display) { name in
                    (hidden || name.first != UInt8(ascii: ".")) && !ignored.contains { $0.elementsEqual(name) }
                }
                current = (folder, next.relative, next.depth, names, 0, [])
                CrashPoint.hit("listed:" + SourcePath.displayName(next.relative))
                return .folder(names)
            } catch  where error.code == ELOOP || error.code == EXDEV {
                return .skipped(
                    path,
                    ItemFailure(
                        .copy, .symbolicLink,
                        "\(path.display): became a symbolic link after it was listed; not followed"))
            } catch {
                return .skipped(
                    path, ItemFailure(.copy, .unreadable, "\(path.display): cannot list folder: \(error.message)"))
            }
        }
    }

    /// What the entry `name` of the folder open as `folder` (at `relative`,
    /// `depth`) is; nil for a subfolder (added to `subdirectories`).
    private func entry(
        _ name: [UInt8], in subdirectories: inout [[UInt8]], of folder: FileDescriptor, at relative: [UInt8], depth: Int
    ) -> DropEntry? {
        let entryRelative = relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name
        let path = root.path(of: entryRelative)
        guard let status = try? folder.status(ofEntry: name, display: path.display) else {
            return .skipped(path, ItemFailure(.copy, .unreadable, "\(path.display): vanished before it could be read"))
        }
        switch status.type {
        case .regular:
            return .file(
                DropFile(
                    relative: entryRelative, shownAs: path, place: entryRelative, name: SourcePath.displayName(name),
                    version: FileVersion(status)))
        case .directory:
            if depth + 1 >= Self.maximumDepth {
                return .skipped(
                    path,
                    ItemFailure(
                        .copy, .tooDeep,
                        "\(path.display): folder nested deeper than \(Self.maximumDepth) levels, not walked"))
            }
            subdirectories.append(entryRelative)
            return nil
        case .symbolicLink:
            switch root.follow(link: entryRelative) {
            case .file(let target, let status):
                return .file(
                    DropFile(
                        relative: target, shownAs: path, place: entryRelative, name: SourcePath.displayName(name),
                        version: FileVersion(status)))
            case .outside:
                return .skipped(
                    path,
                    ItemFailure(
                        .copy, .symbolicLink,
                        "\(path.display) is a symbolic link pointing outside the drop; not followed"))
            case .broken:
                return .skipped(
                    path, ItemFailure(.copy, .symbolicLink, "\(path.display) is a broken symbolic link (or a loop)"))
            case .notRegularFile:
                return .skipped(
                    path,
                    ItemFailure(
                        .copy, .symbolicLink,
                        "\(path.display) is a symbolic link to something that is not a regular file; not followed"))
            }
        default:
            return .skipped(
                path, ItemFailure(.copy, .notRegularFile, "\(path.display) \(status.type.phrase); not read"))
        }
    }
}
