import Foundation
import ShareManifest
import SystemCalls

/// Why a whole batch could not be run (as opposed to one item failing).
public enum ShareIngestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The container cannot be created or written.
    case containerUnusable(path: String, reason: String)
    /// The container's disk (or the journal's, `SHARE_STATE_DIR`) is full:
    /// `path` could not be written; `freeBytes` were free then. Nothing is
    /// lost: the same command (or `--resume`) goes on once there is room.
    case diskFull(path: String, freeBytes: Int64?)
    /// A manifest already exists under this key and has not been consumed.
    case manifestExists(key: ShareKey, path: String)
    /// Nothing to ingest.
    case noInputs
    /// A source named on the command line does not exist or cannot be read.
    case inputMissing(path: String, reason: String)
    /// The pipeline definition is invalid.
    case pipeline(PipelineError)
    /// The redirect scheme is not a valid URL scheme.
    case badScheme(String)
    /// The key belongs to an earlier batch (its manifest may have been consumed).
    case keyTaken(key: ShareKey, batch: UUID)
    /// No batch has this id or key.
    case unknownBatch(String)
    /// The batch is not interrupted: there is nothing to resume.
    case batchNotResumable(UUID, BatchState)
    /// Another process is working on this batch.
    case batchBusy(UUID)
    /// The store of batches (the SQLite journal or PostgreSQL) failed; what it said.
    case storeUnavailable(String)
    /// The process planning the batch stopped before all its items were
    /// recorded: nothing was copied; the batch is abandoned.
    case planInterrupted(UUID)

    /// A sentence for people, naming what to change.
    public var description: String {
        switch self {
        case .containerUnusable(let path, let reason): "container \(path) is not usable: \(reason)"
        case .diskFull(let path, let free):
            BatchStop.diskFull(path: path, freeBytes: free).description
                + "; nothing is lost: free some space and run it again"
        case .manifestExists(let key, let path):
            "a manifest for key \(key) already exists (\(path)) and has not been consumed; choose another --key or consume it first"
        case .noInputs: "nothing to ingest: give files, folders, --text or --url"
        case .inputMissing(let path, let reason): "\(path): \(reason)"
        case .pipeline(let error): error.description
        case .badScheme(let scheme):
            "\(JSONText.string(scheme)) is not a valid URL scheme (a letter, then letters, digits, + - .)"
        case .keyTaken(let key, let batch): "the key \(key) was already used by batch \(batch); choose another --key"
        case .unknownBatch(let id): "no batch with id or key \(id) in this container (see share status)"
        case .batchNotResumable(let id, let state):
            "batch \(id) is \(state.rawValue); only interrupted batches can be resumed"
        case .batchBusy(let id): "batch \(id) is being worked on by another process"
        case .storeUnavailable(let reason): "the batch store is not usable: \(reason)"
        case .planInterrupted(let id):
            "batch \(id) was interrupted while it was being planned: nothing was copied, and it is now abandoned; share the files again"
        }
    }
}

extension ShareIngestError {
    /// What a failure of `container`'s journal means for the command: a full
    /// disk is said as such (the journal's folder, what is free); anything
    /// else leaves the container unusable, with what SQLite said.
    static func journal(_ error: any Error, container: ContainerDirectory) -> ShareIngestError {
        guard StoreFailure(error) == .full else {
            return .containerUnusable(path: container.root, reason: "journal: \(error)")
        }
        let folder = container.stateDirectory
        return .diskFull(path: folder, freeBytes: (try? FileSystem.space(of: folder))?.available)
    }
}
