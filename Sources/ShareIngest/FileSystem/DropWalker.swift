import Glibc

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
        guard let stream = directory.withCString({ opendir($0) }) else {
            ready.append(.skipped(directory, ItemFailure(.copy, .unreadable, "\(directory.display): cannot list folder: \(String(cString: strerror(errno)))")))
            return
        }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            // Only the name and its NUL are there: copying the whole 256-byte
            // `d_name` (as `entry.pointee.d_name` does) reads past short entries
            // and past the end of glibc's directory buffer.
            let cName = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!).assumingMemoryBound(to: CChar.self)
            let name = Array(UnsafeRawBufferPointer(start: cName, count: strlen(cName)))
            if name.first == UInt8(ascii: ".") { continue }  // hidden, "." and ".."
            names.append(name)
        }
        closedir(stream)
        names.sort { $0.lexicographicallyPrecedes($1) }
        var subdirectories: [SourcePath] = []
        for name in names {
            let path = directory.appending(name)
            guard let st = path.linkStatus() else {
                ready.append(.skipped(path, ItemFailure(.copy, .unreadable, "\(path.display): vanished before it could be read")))
                continue
            }
            switch st.st_mode & S_IFMT {
            case S_IFREG:
                ready.append(.file(path, shownAs: path, name: SourcePath.displayName(name)))
            case S_IFDIR:
                if depth + 1 >= Self.maximumDepth {
                    ready.append(.skipped(path, ItemFailure(.copy, .tooDeep, "\(path.display): folder nested deeper than \(Self.maximumDepth) levels, not walked")))
                } else {
                    subdirectories.append(path)
                }
            case S_IFLNK:
                ready.append(symbolicLink(path, name: name))
            default:
                ready.append(.skipped(path, ItemFailure(.copy, .notRegularFile, "\(path.display) \(FileTypeName.of(st.st_mode)); not read")))
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
        guard let st = target.linkStatus(), st.st_mode & S_IFMT == S_IFREG else {
            return .skipped(path, ItemFailure(.copy, .symbolicLink, "\(path.display) is a symbolic link to something that is not a regular file; not followed"))
        }
        return .file(target, shownAs: path, name: SourcePath.displayName(name))
    }
}
