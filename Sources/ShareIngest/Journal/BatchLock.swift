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
        guard let lock = FileLock("\(directory)/\(batch.uuidString).lock") else { return nil }
        self.lock = lock
    }

    /// True when a process holds the batch's lock (works on it); nothing is locked to find out.
    static func isHeld(batch: UUID, container: ContainerDirectory) -> Bool {
        FileLock.isHeld("\(container.stateDirectory)/locks/\(batch.uuidString).lock")
    }
}

extension BatchJournal {
    /// True when `batch` is unfinished (claimed, running or manifesting) and no
    /// process works on it any more (its lock is free): it was stopped by a
    /// signal, a crash or a power cut, and `share ingest --resume` (or the
    /// watcher's next start) finishes it. `share status` shows it as `interrupted`.
    public func isInterrupted(_ batch: BatchRecord) -> Bool {
        [.claimed, .running, .manifesting].contains(batch.state) && !BatchLock.isHeld(batch: batch.id, container: container)
    }
}
