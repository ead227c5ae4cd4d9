import Foundation
import SystemCalls

/// A source file: the path read (a symbolic link already resolved) and the
/// name the user knows it by. How it is shown in reports is the item's
/// ``ItemState/label``, decided once when the batch is planned.
///
/// It is opened beneath its ``root`` (the dropped folder it was found in; the
/// folder of a file named on its own; the spool), never by its path
/// (``DropRoots``), and is read only when it is the file the plan saw
/// (``expected``). Both are recorded with the item, so a resumed batch and a
/// worker check the same: the root with the source (only where it is not the
/// file's own folder), what the plan saw as the item's ``ItemState/sourceVersion``
/// (which the sniff then confirms), not twice.
struct SourceFile: Sendable, Hashable {
    let path: SourcePath
    let name: String
    /// How many leading bytes of `path` are its root's path; nil: its own
    /// folder is its root (also a record from before roots).
    let rootLength: Int?
    /// What the plan alone knows of it, boxed: an item's state is copied
    /// from stage to stage, and this is nil once it is read back.
    private let planned: Planned?

    /// What the plan saw of it (device, inode, size, modification time):
    /// anything else found at its place is not read. Not recorded with the
    /// source: an item records it as its ``ItemState/sourceVersion``, a carried
    /// sidecar as its own ``CarriedSidecar/expected``.
    var expected: FileVersion? { planned?.expected }
    /// Why the walk refused it (a FIFO, a link pointing outside, a folder it
    /// could not list, one too deep): it is never opened, and its first stage
    /// fails it with this, so it is reported as every other item is, with an
    /// event and a line of its own, in every mode.
    var refused: ItemFailure? { planned?.refused }

    private final class Planned: Sendable, Hashable {
        let expected: FileVersion?
        let refused: ItemFailure?

        init(expected: FileVersion?, refused: ItemFailure?) { (self.expected, self.refused) = (expected, refused) }
        static func == (a: Planned, b: Planned) -> Bool { a.expected == b.expected && a.refused == b.refused }
        func hash(into hasher: inout Hasher) {
            hasher.combine(expected)
            hasher.combine(refused)
        }
    }

    init(
        path: SourcePath, name: String, rootLength: Int? = nil, expected: FileVersion? = nil,
        refused: ItemFailure? = nil
    ) {
        // Its own folder as its root is said by no length (as a record says it).
        let own = rootLength == path.parent.bytes.count
        (self.path, self.name, self.rootLength) = (path, name, own ? nil : rootLength)
        planned = expected == nil && refused == nil ? nil : Planned(expected: expected, refused: refused)
    }

    /// This file, refused by the walk for `failure`.
    func refused(_ failure: ItemFailure) -> SourceFile {
        SourceFile(path: path, name: name, rootLength: rootLength, expected: expected, refused: failure)
    }

    /// The file `relative` (no link on it) beneath `root`, seen as `expected`.
    init(root: SourcePath, relative: [UInt8], name: String, expected: FileVersion?) {
        self.init(path: root.appending(relative), name: name, rootLength: root.bytes.count, expected: expected)
    }

    /// The folder it is opened beneath.
    var root: SourcePath {
        if let rootLength, rootLength <= path.bytes.count {
            return SourcePath(bytes: Array(path.bytes.prefix(rootLength)))
        }
        return path.parent
    }

    /// True when `root` is the folder it is opened beneath (compared in place, nothing allocated).
    func isBeneath(_ root: SourcePath) -> Bool {
        let length = rootLength ?? path.bytes.lastIndex(of: UInt8(ascii: "/")).map { $0 == 0 ? 1 : $0 } ?? -1
        guard length > 0, length == root.bytes.count, length <= path.bytes.count else { return false }
        return path.bytes.withUnsafeBufferPointer { own in
            root.bytes.withUnsafeBufferPointer { memcmp(own.baseAddress!, $0.baseAddress!, length) == 0 }
        }
    }

    /// Its path beneath ``root``.
    var relative: [UInt8] {
        let root = self.root.bytes
        guard path.bytes.starts(with: root) else { return path.lastComponent }
        return Array(path.bytes.dropFirst(root.count).drop { $0 == UInt8(ascii: "/") })
    }
}
