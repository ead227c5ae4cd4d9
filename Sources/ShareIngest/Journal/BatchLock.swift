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
}
