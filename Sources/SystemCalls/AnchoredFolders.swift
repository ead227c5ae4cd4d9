#if os(Linux)
    import Glibc
    import Synchronization

    // A root `share` checks that the container's folders are its own before it
    // writes there (ContainerOwnership), but a path is looked up again on every
    // call: an ancestor of the container that someone else may write in (the
    // container's parent, say) can be swapped for a link after the check, and
    // every later write by name would follow it. So the checked folder is held
    // open, and the funnel's calls that create, rename or remove by path resolve
    // a path beneath it through the held descriptor (`openat2` beneath it, no link
    // followed, then `openat`/`renameat`/`unlinkat` on the final name), as the
    // drop's files are read: the container stays the folder that was checked,
    // whatever happens to its name.

    /// Folders held open whose paths the funnel resolves through their descriptors.
    package enum AnchoredFolders {
        /// At most this many are held (the oldest let go first): a command uses one
        /// or two containers; a host app's tests may make hundreds.
        static let capacity = 64

        /// A held folder: its path as spelled, and its descriptor (only read once held).
        private struct Folder: @unchecked Sendable {
            let path: [UInt8]
            let handle: FileDescriptor
        }

        /// The held folders, oldest first.
        private static let held = Mutex<[Folder]>([])

        /// From now on, paths beneath `path` (as spelled: the same string the
        /// callers build their paths from) are resolved through `handle`, a
        /// descriptor of that folder (`O_PATH` is enough).
        package static func hold(_ path: String, handle: FileDescriptor) {
            let folder = Folder(path: Array(path.utf8), handle: handle)
            guard folder.path.count > 1, folder.path.first == UInt8(ascii: "/") else { return }
            held.withLock { held in
                held.removeAll { $0.path == folder.path }
                held.append(folder)
                if held.count > capacity { held.removeFirst(held.count - capacity) }
            }
        }

        /// The held folder `path` lies beneath (the longest such), and the rest of
        /// the path inside it; nil when it lies beneath none.
        static func anchor(of path: String) -> (handle: FileDescriptor, relative: [UInt8])? {
            let bytes = Array(path.utf8)
            let slash = UInt8(ascii: "/")
            let folder = held.withLock { held in
                held.filter {
                    bytes.count > $0.path.count + 1 && bytes.starts(with: $0.path) && bytes[$0.path.count] == slash
                }
                .max { $0.path.count < $1.path.count }
            }
            return folder.map { ($0.handle, Array(bytes[($0.path.count + 1)...])) }
        }

        /// For a path beneath a held folder: its parent folder, opened beneath the
        /// held one (no link followed, no way out), and its final name; nil for a
        /// path beneath none (the caller uses the path).
        static func entry(_ path: String) throws(SystemError) -> (folder: FileDescriptor, name: [UInt8])? {
            guard let (handle, relative) = anchor(of: path) else { return nil }
            let slash = UInt8(ascii: "/")
            var trimmed = relative
            while trimmed.last == slash { trimmed.removeLast() }
            guard !trimmed.isEmpty else { return nil }
            let cut = trimmed.lastIndex(of: slash)
            let name = cut.map { Array(trimmed[($0 + 1)...]) } ?? trimmed
            guard name != Array("..".utf8), name != Array(".".utf8) else {
                throw SystemError("openat2", path: path, code: EXDEV)
            }
            let parent = cut.map { Array(trimmed[..<$0]) } ?? []
            let folder = parent.isEmpty ? handle : try handle.open(beneath: parent, O_PATH | O_DIRECTORY, display: path)
            return (folder, name)
        }
    }
#endif
