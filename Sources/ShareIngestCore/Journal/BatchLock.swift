import Foundation
import ShareManifest
import SystemCalls

/// An exclusive lock on one batch (`flock` on `<state>/locks/<batch>.lock`),
/// held while a process works on it and released by the kernel if it dies.
final class BatchLock {
    private let lock: FileLock

    /// Takes the lock, or returns nil if another process holds it.
    init?(batch: UUID, container: ContainerDirectory) {
        let directory = container.stateDirectory + "/locks"
        try? FileSystem.makeDirectory(directory)
        guard let lock = FileLock(Self.path(of: batch, container: container)) else { return nil }
        self.lock = lock
    }

    /// True when a process holds the batch's lock (works on it); nothing is locked to find out.
    static func isHeld(batch: UUID, container: ContainerDirectory) -> Bool {
        FileLock.isHeld(path(of: batch, container: container))
    }

    /// When a process last let go of the batch (its run stopped), if one ever held it.
    static func lastReleased(batch: UUID, container: ContainerDirectory) -> Date? {
        FileLock.lastReleased(path(of: batch, container: container)).map(Date.init(timeIntervalSince1970:))
    }

    private static func path(of batch: UUID, container: ContainerDirectory) -> String {
        "\(container.stateDirectory)/locks/\(batch.uuidString).lock"
    }
}

extension BatchJournal {
    /// True when `batch` is unfinished (claimed, running or manifesting) and no
    /// process works on it any more (its lock is free): it was stopped by a
    /// signal, a crash or a power cut, and `share ingest --resume` (or the
    /// watcher's next start) finishes it. `share status` shows it as `interrupted`.
    public func isInterrupted(_ batch: BatchRecord) -> Bool {
        batch.state.isUnfinished && !BatchLock.isHeld(batch: batch.id, container: container)
    }

    /// The batches of `share ingest` (not of a watched drop: the watcher
    /// finishes those) made of exactly `inputs` (``InputsSignature``) that
    /// are not finished, oldest first; `held` tells whether a process works on
    /// each now.
    public func unfinishedBatches(of inputs: [ShareInput]) throws(ShareIngestError) -> [(
        batch: BatchRecord, held: Bool
    )] {
        let signature = InputsSignature.of(inputs)
        return try batches(in: BatchLifecycle.unfinished).reversed()
            .filter { $0.dropName == nil && $0.dropSignature == signature }
            .map { ($0, BatchLock.isHeld(batch: $0.id, container: container)) }
    }
}
