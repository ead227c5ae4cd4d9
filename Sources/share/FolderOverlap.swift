import Foundation
import Glibc
import SystemCalls

/// Whether the folders `watch` is given (inbox, container, report folder) lie
/// apart, compared by identity: the device and inode of each folder and of
/// each of its ancestors (walked by `..` from the folder itself), not by path.
/// A path says nothing of bind mounts: a container bind-mounted onto the inbox
/// has another path and is the same folder.
enum FolderOverlap {
    /// Why `inbox` and `container` cannot be used together, if they cannot: the
    /// same folder, or one inside the other (the watcher would take its own
    /// copies as drops, or move the container away). A container not made yet
    /// is placed by its nearest existing folder.
    static func ofInbox(_ inbox: String, container: String) -> String? {
        guard let inboxPlace = FolderPlace(inbox), let containerPlace = FolderPlace(container) else { return nil }
        if containerPlace.missing == 0, containerPlace.folder == inboxPlace.folder {
            return
                "INBOX \(inbox) is the container \(container): give the container a folder of its own, outside the inbox"
        }
        if containerPlace.missing == 0, inboxPlace.ancestors.contains(containerPlace.folder) {
            return
                "INBOX \(inbox) lies inside the container \(container): give the inbox a folder outside the container"
        }
        if containerPlace.folder == inboxPlace.folder || containerPlace.ancestors.contains(inboxPlace.folder) {
            return "INBOX \(inbox) holds the container \(container): give the container a folder outside the inbox"
        }
        return nil
    }

    /// Why `--report-dir` cannot be `reports`: the inbox or a folder inside it
    /// (each report written there would be taken as a new drop, whose batch
    /// writes another report).
    static func ofReports(_ reports: String, inbox: String) -> String? {
        guard let inboxPlace = FolderPlace(inbox), let reportsPlace = FolderPlace(reports) else { return nil }
        guard reportsPlace.folder == inboxPlace.folder || reportsPlace.ancestors.contains(inboxPlace.folder) else {
            return nil
        }
        return
            "--report-dir \(reports) is inside INBOX \(inbox): each report would be taken as a new drop; give the reports a folder outside the inbox"
    }
}

/// A folder's identity and its ancestors', for ``FolderOverlap``.
struct FolderPlace {
    /// A folder's identity: its device and inode.
    struct Identity: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    /// The folder, or its nearest existing ancestor when it does not exist.
    let folder: Identity
    /// Its parent, the parent's parent, … up to `/`.
    let ancestors: [Identity]
    /// How many trailing names of the path do not exist (0: the folder exists).
    let missing: Int

    /// The place of `path` (links followed, as the commands follow them); nil
    /// when no folder on it can be opened (the command reports that itself).
    init?(_ path: String) {
        let absolute =
            path.hasPrefix("/") ? path : String(decoding: FileSystem.currentDirectory(), as: UTF8.self) + "/" + path
        var existing = URL(fileURLWithPath: absolute).standardizedFileURL.path
        var missing = 0
        var handle: FileDescriptor?
        while handle == nil {
            do {
                handle = try FileDescriptor.openDirectoryHandle(
                    pathBytes: Array(existing.utf8), followingFinalLink: true, display: existing)
            } catch {
                guard error.code == ENOENT, existing != "/" else { return nil }
                existing = (existing as NSString).deletingLastPathComponent
                missing += 1
            }
        }
        guard var current = handle, let first = try? current.status(path: existing) else { return nil }
        var identities = [Identity(device: first.device, inode: first.inode)]
        // Up by `..` until it is the folder itself (`/`, or the root of this mount namespace).
        while true {
            let fd = openat(current.raw, "..", O_PATH | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { break }
            let parent = FileDescriptor(fd)
            guard let status = try? parent.status(path: existing) else { break }
            let identity = Identity(device: status.device, inode: status.inode)
            if identity == identities.last { break }
            identities.append(identity)
            current = parent
        }
        self.folder = identities[0]
        self.ancestors = Array(identities.dropFirst())
        self.missing = missing
    }
}
