import Foundation
import Glibc
import ShareManifest
import SystemCalls

/// Whether this machine sees a distributed batch's files as its planner did.
///
/// At planning, a random token is written into the container
/// (`<container>/.share-ingest/visibility/<batch>`) and recorded with the batch,
/// with the absolute paths of the inputs. Before a worker takes any job of a
/// batch it checks that it finds the same token (the container is mounted here,
/// at the same path, and is the same one), that it can write the container's
/// folders, and that it sees every input. A worker that cannot does not take
/// the batch's jobs, and says why (log, `share status --db`).
enum WorkerVisibility {
    static func tokenPath(container root: String, batch: UUID) -> String {
        "\(root)/.share-ingest/visibility/\(batch.uuidString)"
    }

    /// Writes a new token for `batch` into `container`, durably; returns it.
    static func writeToken(container: ContainerDirectory, batch: UUID) throws(ShareIngestError) -> String {
        let token = UUID().uuidString
        let path = tokenPath(container: container.root, batch: batch)
        do {
            try FileSystem.makeDirectory(path.parentPath)
            FileSystem.remove(path)  // left by a plan that never committed
            try AtomicFile.create(path, bytes: Array(token.utf8), syncDirectory: true)
        } catch {
            throw .containerUnusable(
                path: container.root, reason: "cannot write the batch's visibility token: \(error)")
        }
        return token
    }

    /// Removes a finished batch's token.
    static func removeToken(container root: String, batch: UUID) {
        FileSystem.remove(tokenPath(container: root, batch: batch))
    }

    /// Why this process cannot work on the batch (a sentence naming the path and
    /// the error), or nil if it can.
    static func problem(with batch: JobQueue.StoredBatch) -> String? {
        let root = batch.container
        let id = batch.record.id.uuidString
        do {
            guard try FileStatus.of(root).type == .directory else {
                return "cannot use the container \(root): not a folder here"
            }
        } catch {
            return "cannot see the container \(root): \(error.message) (is it mounted here, at the same path?)"
        }
        if let token = batch.token {
            let path = tokenPath(container: root, batch: batch.record.id)
            do {
                let fd = try FileDescriptor.open(path, O_RDONLY)
                let found = try fd.read(count: 128, at: 0, path: path)
                guard found == Array(token.utf8) else {
                    return
                        "the folder \(root) here is not the container batch \(id) was planned in (its visibility token differs)"
                }
            } catch {
                return
                    "cannot see batch \(id)'s token in the container \(root): \(error.message) (is the same container mounted here, at the same path?)"
            }
        }
        for folder in [root, root + "/thumbnails", root + "/manifests"] {
            let probe = FileSystem.temporaryName(for: folder + "/.share-worker-probe")
            do {
                let fd = try FileDescriptor.open(probe, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
                try fd.close(path: probe)
                FileSystem.remove(probe)
            } catch {
                return "cannot write the container: \(folder): \(error.message)"
            }
        }
        for input in batch.roots {
            do { _ = try FileStatus.of(input) } catch {
                return
                    "cannot see the input \(input) of batch \(id): \(error.message) (is it mounted here, at the same path?)"
            }
        }
        return nil
    }
}
