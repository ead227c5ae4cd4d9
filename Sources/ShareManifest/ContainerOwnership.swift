import SystemCalls

#if os(Linux)
    import Glibc
#endif

// Where `share` runs as root, everything it writes in the container (copies,
// thumbnails, manifests, the journal, reports, locks) is written by name.
// Whoever owns the container, or any folder of it, or may write in one,
// could plant a link there (`manifests` -> /etc, `.share-ingest/journal.sqlite`
// -> a file of root's) and have root write through it. So a root `share`
// uses only a container whose folders are root's own and written by nobody
// else, as the inbox checks demand of the inbox. Each folder is reached
// beneath the container's open folder (`openat2`, RESOLVE_BENEATH and no
// links: the drop's helper), so a link anywhere on the way is refused, not
// followed; once all of them are root's, nobody else can put anything in
// them. The checked folders are then held open (AnchoredFolders), and every
// write by path beneath them goes through the held descriptor, so a container
// renamed or swapped for a link later, by whoever may write in its parent,
// is still the one written in. Other users' `share` runs are not checked:
// they write only what their own rights allow.

#if os(Linux)
    /// The checks of a root `share` on the container's folders.
    package enum ContainerOwnership {
        /// True where `share` runs as root (effective user 0): the checks apply.
        package static var applies: Bool { Credentials.effectiveUserID == 0 }

        /// Opens the folder at `path` (a link as its last component followed: the
        /// operator's own name for it) and checks it is root's own; nil when it does
        /// not exist. `container` names the container in the error.
        package static func openTop(_ path: String, container: String) throws(ContainerError) -> FileDescriptor? {
            let handle: FileDescriptor
            do {
                handle = try FileDescriptor.openDirectoryHandle(
                    pathBytes: Array(path.utf8), followingFinalLink: true, display: path)
            } catch {
                if error.code == ENOENT { return nil }
                throw ContainerError(path: container, reason: refusal(path, error: error), isRefused: true)
            }
            try check(handle, path: path, container: container)
            return handle
        }

        /// Opens `relative` beneath `top` (no link followed, no way out) and checks
        /// it is a folder of root's own; nil when it does not exist.
        package static func openBeneath(_ top: FileDescriptor, topPath: String, _ relative: String, container: String)
            throws(ContainerError) -> FileDescriptor?
        {
            let path = topPath + "/" + relative
            let handle: FileDescriptor
            do {
                handle = try top.open(beneath: Array(relative.utf8), O_PATH | O_DIRECTORY, display: path)
            } catch {
                if error.code == ENOENT { return nil }
                throw ContainerError(path: container, reason: refusal(path, error: error), isRefused: true)
            }
            try check(handle, path: path, container: container)
            return handle
        }

        /// Checks the open folder `handle` (named `path`) is root's and written by nobody else.
        package static func check(_ handle: FileDescriptor, path: String, container: String) throws(ContainerError) {
            let status: FileStatus
            do { status = try handle.status(path: path) } catch {
                throw ContainerError(path: container, reason: error.description)
            }
            let me = UInt32(Credentials.effectiveUserID)
            if status.owner != me {
                throw ContainerError(
                    path: container,
                    reason:
                        "\(path): owned by user \(status.owner), who could plant links there that root would write through; refused (chown root: \(path) && chmod go-w \(path))",
                    isRefused: true)
            }
            if status.mode & 0o022 != 0 {
                throw ContainerError(
                    path: container,
                    reason:
                        "\(path): group or others may write in it (mode \(String(status.mode & 0o7777, radix: 8))) and could plant links there that root would write through; refused (chmod go-w \(path))",
                    isRefused: true)
            }
        }

        /// Why opening the folder `path` failed: a link, something else than a folder, or the call's error.
        private static func refusal(_ path: String, error: SystemError) -> String {
            switch error.code {
            case ELOOP, EXDEV:
                "\(path): is a symbolic link (or leads out of the container); refused (remove it: share makes its own folder)"
            case ENOTDIR: "\(path): is not a folder; refused (remove it: share makes its own folder)"
            default: error.description
            }
        }
    }
#endif

extension ContainerDirectory {
    /// The container's folders, each beneath its top (the container or the
    /// state folder), in the order they are made; `made` says whether opening
    /// the container makes it (the others, `.spool` and `locks`, are made when
    /// first needed, and checked if present).
    var ownFolders: [(top: String, relative: String, made: Bool)] {
        var folders: [(top: String, relative: String, made: Bool)] = [
            (root, "thumbnails", true), (root, "manifests", true), (root, "manifests/consumed", true),
            (root, ".spool", false),
        ]
        let inside = stateDirectory.hasPrefix(root + "/") ? String(stateDirectory.dropFirst(root.count + 1)) : nil
        let state = inside.map { (root, $0 + "/") } ?? (stateDirectory, "")
        if let inside { folders.append((root, inside, true)) }
        folders += [(state.0, state.1 + "reports", true), (state.0, state.1 + "locks", false)]
        return folders
    }

    /// Checks (where `share` runs as root) and, with `making`, makes the
    /// container's folders. The container itself must exist.
    func prepareFolders(making: Bool) throws(ContainerError) {
        #if os(Linux)
            if ContainerOwnership.applies { return try prepareOwnFolders(making: making) }
        #endif
        guard making else { return }
        for folder in ownFolders where folder.made { try make(folder.top + "/" + folder.relative) }
    }

    #if os(Linux)
        /// ``prepareFolders(making:)`` as root: each folder checked before it is
        /// used or made in, and again once made.
        private func prepareOwnFolders(making: Bool) throws(ContainerError) {
            var handles: [String: FileDescriptor] = [:]
            for folder in ownFolders {
                if handles[folder.top] == nil {
                    if making, folder.top != root { try make(folder.top) }
                    guard let handle = try ContainerOwnership.openTop(folder.top, container: root) else { continue }
                    handles[folder.top] = handle
                    // What is written beneath it from now on is written in this folder, the one checked,
                    // whatever later happens to its path (AnchoredFolders).
                    AnchoredFolders.hold(folder.top, handle: handle)
                }
                guard let handle = handles[folder.top] else { continue }
                if try ContainerOwnership.openBeneath(handle, topPath: folder.top, folder.relative, container: root)
                    == nil, making && folder.made
                {
                    try make(folder.top + "/" + folder.relative)
                    _ = try ContainerOwnership.openBeneath(
                        handle, topPath: folder.top, folder.relative, container: root)
                }
            }
        }
    #endif

    private func make(_ path: String) throws(ContainerError) {
        do { try FileSystem.makeDirectory(path) } catch { throw ContainerError(path: root, reason: error.description) }
    }
}
