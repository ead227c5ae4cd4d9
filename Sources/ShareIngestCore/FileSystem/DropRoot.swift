import Foundation
import Glibc
import ShareManifest
import Synchronization
import SystemCalls

/// A folder whose files are items (a dropped folder; the folder of a file
/// named on the command line; the spool), held open: every file of it is
/// opened beneath this descriptor and nowhere else, never by a path string
/// (``SystemCalls``' `open(beneath:)`: no `..`, no symbolic link on the way, no
/// magic link). Whoever may write into the folder can swap a file or a folder
/// of it for a link to anything: what is opened stays inside the folder held,
/// and the file opened is checked to be the one the walk saw (its
/// ``FileVersion``: device, inode, size, modification time).
///
/// The descriptor itself is immutable once made, and only read by the calls
/// that use it (`openat2`, `fstatat`, `readlinkat` are safe from any thread):
/// it is shared between a batch's threads.
final class DropRoot: @unchecked Sendable {
    /// Its path (the items' paths start with it).
    let path: SourcePath
    /// The folder (`O_PATH | O_DIRECTORY`).
    let directory: FileDescriptor
    /// Its canonical path when it was opened: how an absolute link inside the
    /// drop that points back into it is read (nil when it cannot be resolved).
    let canonicalPath: [UInt8]?

    /// Opens the folder at `path`. `followingFinalLink` false refuses a
    /// symbolic link as its last component (a watched drop: its dropper may
    /// have made it one); links before it are followed (they are the inbox's
    /// or the user's, not the dropper's).
    init(opening path: SourcePath, followingFinalLink: Bool) throws(SystemError) {
        self.path = path
        directory = try FileDescriptor.openDirectoryHandle(
            pathBytes: path.bytes, followingFinalLink: followingFinalLink, display: path.display)
        canonicalPath = path.resolved()?.bytes
    }

    /// The path of `relative` (inside it), for messages and records.
    func path(of relative: [UInt8]) -> SourcePath { relative.isEmpty ? path : path.appending(relative) }

    /// Opens the file `relative` (a path inside the folder with no link on
    /// it) for reading, non-blocking (a FIFO that took a file's place never
    /// blocks the open).
    func openFile(_ relative: [UInt8]) throws(SystemError) -> FileDescriptor {
        try directory.open(beneath: relative, O_RDONLY | O_NONBLOCK | O_NOCTTY, display: path(of: relative).display)
    }

    /// Opens the folder `relative` (inside it; empty: the root) for listing.
    func openFolder(_ relative: [UInt8]) throws(SystemError) -> FileDescriptor {
        try directory.open(beneath: relative, O_RDONLY | O_DIRECTORY, display: path(of: relative).display)
    }

    /// What a symbolic link of the drop leads to, followed the way the kernel
    /// would but beneath the root only.
    enum LinkTarget {
        /// A regular file inside the drop: its path there, with no link on it, and its status.
        case file(relative: [UInt8], status: FileStatus)
        case outside, broken
        case notRegularFile(FileType)
    }

    /// At most this many links followed for one (the kernel's own limit).
    static let maximumLinks = 40

    /// Follows the symbolic link at `relative` (whose folder has no link on
    /// its way: the walk only enters real folders) one component at a time,
    /// each looked at (`fstatat`, `readlinkat`) relative to its folder held
    /// open beneath the root: `..` above the root, or an absolute target
    /// outside the root's canonical path, is `outside`.
    func follow(link relative: [UInt8]) -> LinkTarget {
        let slash = UInt8(ascii: "/")
        var resolved = relative.split(separator: slash).map(Array.init)
        guard let name = resolved.popLast() else { return .broken }
        // Components still to resolve, the next one last.
        var pending: [[UInt8]] = [name]
        var links = 0
        while let component = pending.popLast() {
            if component.isEmpty || component == [UInt8(ascii: ".")] { continue }
            if component == [UInt8(ascii: "."), UInt8(ascii: ".")] {
                guard resolved.popLast() != nil else { return .outside }
                continue
            }
            let folderPath = Array(resolved.joined(separator: [slash]))
            let display = path(of: folderPath + [slash] + component).display
            guard let folder = try? directory.open(beneath: folderPath, O_PATH | O_DIRECTORY, display: display),
                let status = try? folder.status(ofEntry: component, display: display)
            else { return .broken }
            switch status.type {
            case .symbolicLink:
                links += 1
                guard links <= Self.maximumLinks,
                    let target = try? folder.linkTarget(ofEntry: component, display: display)
                else { return .broken }
                var steps = target.split(separator: slash).map(Array.init)
                if target.first == slash {
                    // Absolute: only back into the drop.
                    guard let inside = inside(absolute: target) else { return .outside }
                    steps = inside
                    resolved = []
                }
                pending += steps.reversed()
            case .directory:
                resolved.append(component)
                if pending.isEmpty { return .notRegularFile(.directory) }
            case .regular:
                guard pending.isEmpty else { return .broken }
                return .file(relative: Array((resolved + [component]).joined(separator: [slash])), status: status)
            default:
                return .notRegularFile(status.type)
            }
        }
        // Every component taken (the last a `.` or `..`): it leads to a folder.
        return .notRegularFile(.directory)
    }

    /// The components, beneath the root, of the absolute link target `target`
    /// when it names a place inside the root: spelled from the root's path as
    /// given or from its canonical path (empty and `.` components aside), or,
    /// failing that, resolved (`realpath`: a name only; what is opened is
    /// then looked up beneath the root all the same). Nil: outside.
    private func inside(absolute target: [UInt8]) -> [[UInt8]]? {
        func components(_ path: [UInt8]) -> [[UInt8]] {
            path.split(separator: UInt8(ascii: "/")).map(Array.init).filter { $0 != [UInt8(ascii: ".")] }
        }
        let steps = components(target)
        for base in [canonicalPath, path.bytes].compactMap({ $0 }).map(components) where steps.starts(with: base) {
            return Array(steps.dropFirst(base.count))
        }
        if let canonical = canonicalPath.map(components),
            let real = FileSystem.resolved(pathBytes: target).map(components), real.starts(with: canonical)
        {
            return Array(real.dropFirst(canonical.count))
        }
        return nil
    }
}

/// The roots a batch's items are opened beneath (``SourceFile/root``): those
/// the process that planned the batch still holds (handed over by
/// ``HeldDropRoots``), else opened by their path when first needed (a resumed
/// batch, a worker). A root opened by path may not be the folder the walk
/// saw: nothing in it is read unless it is the file the walk saw
/// (``SourceFile/expected``).
final class DropRoots: Sendable {
    /// The first root held or opened (most batches have one), found with no
    /// lock: every open of every stage asks for it. Retained here.
    private let first = Atomic<Unmanaged<DropRoot>?>(nil)
    /// The others.
    private let roots: Mutex<[[UInt8]: DropRoot]>
    /// Roots held at most (a batch of files named one by one from many folders):
    /// beyond, one is closed and opened again by path when needed.
    static let maximumHeld = 256

    init(_ held: [DropRoot] = []) {
        if let one = held.first { first.store(Unmanaged.passRetained(one), ordering: .releasing) }
        roots = Mutex(Dictionary(held.dropFirst().map { ($0.path.bytes, $0) }, uniquingKeysWith: { first, _ in first }))
    }

    deinit { first.load(ordering: .acquiring)?.release() }

    /// The root `file` is opened beneath: held, or opened now by its path.
    func root(of file: SourceFile) throws(SystemError) -> DropRoot {
        if let one = first.load(ordering: .acquiring)?.takeUnretainedValue(), file.isBeneath(one.path) { return one }
        let path = file.root
        if let held = roots.withLock({ $0[path.bytes] }) { return held }
        let opened = try DropRoot(opening: path, followingFinalLink: true)
        let retained = Unmanaged.passRetained(opened)
        if first.compareExchange(expected: nil, desired: retained, ordering: .acquiringAndReleasing).exchanged {
            return opened
        }
        // There is a first one already (made meanwhile, or another root's): `opened` is kept below instead.
        retained.release()
        if let one = first.load(ordering: .acquiring)?.takeUnretainedValue(), file.isBeneath(one.path) { return one }
        return roots.withLock { roots in
            if let raced = roots[path.bytes] { return raced }
            if roots.count >= Self.maximumHeld, let any = roots.keys.first { roots[any] = nil }
            roots[path.bytes] = opened
            return opened
        }
    }
}

/// The roots a plan opened, held from the walk to the run of the same batch
/// in the same process (``BatchContext`` takes them), so that what the run
/// opens lies beneath the very folders the walk listed.
enum HeldDropRoots {
    private static let held = Mutex<[UUID: [DropRoot]]>([:])

    /// Keeps `roots` for `batch`'s run.
    static func hold(_ roots: [DropRoot], for batch: UUID) {
        guard !roots.isEmpty else { return }
        held.withLock { $0[batch, default: []] += roots }
    }

    /// The roots kept for `batch` (now the caller's).
    static func take(_ batch: UUID) -> [DropRoot] {
        held.withLock { $0.removeValue(forKey: batch) ?? [] }
    }

    /// Closes what is still kept for `batch` (its run never started here).
    static func release(_ batch: UUID) { _ = take(batch) }
}
