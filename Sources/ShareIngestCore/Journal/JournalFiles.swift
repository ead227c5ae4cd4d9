import Glibc
import ShareManifest
import SystemCalls

// SQLite opens the journal by path and follows the links on it: it resolves
// the whole path it is given (its unix VFS's full path name: a
// `/proc/self/fd/N/journal.sqlite` of a checked folder comes back as the
// folder's name, so that pins nothing) and names the -wal and -shm files after
// the result. So a root `share` checks, just before SQLite opens them, that
// the journal's folder is root's own and written by nobody else (reached
// beneath the container's open folder, no link on the way:
// ContainerOwnership), and that the journal, its -wal and its -shm are, where
// they exist, regular files of root's with no other name. Nobody else may
// then add, remove or replace an entry of that folder, so what was checked is
// what SQLite opens: a planted `journal.sqlite -> /etc/…` (made while the
// container was another user's) is refused, never written through.

/// The checks of a root `share` on the journal's files before SQLite opens them.
enum JournalFiles {
    /// The journal's file and the two SQLite makes beside it.
    static let names = ["journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"]

    /// Refuses (where `share` runs as root) a journal folder that is not
    /// root's own, and a journal file that is a link, no regular file, another
    /// user's, or has another name (a hard link).
    static func check(_ container: ContainerDirectory) throws(ShareIngestError) {
        guard ContainerOwnership.applies, let folder = try openFolder(container) else { return }
        for name in names {
            let path = container.stateDirectory + "/" + name
            var st = stat()
            guard fstatat(folder.raw, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno == ENOENT { continue }
                throw .containerUnusable(path: container.root, reason: SystemError("fstatat", path: path).description)
            }
            let status = FileStatus(st)
            if status.type != .regular {
                throw .inputMissing(
                    path: path,
                    reason: "\(status.type.phrase), not the journal; refused: root would write through it (remove it)")
            }
            if status.owner != UInt32(Credentials.effectiveUserID) {
                throw .inputMissing(
                    path: path,
                    reason: "owned by user \(status.owner), not root; refused (remove it, or chown root: \(path))")
            }
            if st.st_nlink != 1 {
                throw .inputMissing(
                    path: path, reason: "has \(st.st_nlink) names (a hard link to another file); refused (remove it)")
            }
        }
    }

    /// The journal's folder, opened and checked; nil when it does not exist yet.
    private static func openFolder(_ container: ContainerDirectory) throws(ShareIngestError) -> FileDescriptor? {
        do {
            let root = container.root
            guard container.stateDirectory.hasPrefix(root + "/") else {
                return try ContainerOwnership.openTop(container.stateDirectory, container: root)
            }
            guard let top = try ContainerOwnership.openTop(root, container: root) else { return nil }
            return try ContainerOwnership.openBeneath(
                top, topPath: root, String(container.stateDirectory.dropFirst(root.count + 1)), container: root)
        } catch {
            throw .inputMissing(path: error.path, reason: error.reason)
        }
    }
}
