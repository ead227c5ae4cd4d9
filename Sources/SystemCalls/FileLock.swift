#if os(Linux)
import Glibc

/// An exclusive advisory lock on a file (`flock`), held while the object lives
/// and released by the kernel if the process dies. Locks belong to the open
/// file: a second lock of the same file, even in this process, is refused.
package final class FileLock {
    private let descriptor: FileDescriptor

    /// Takes the lock on `path` (created if missing), or returns nil if someone holds it.
    package init?(_ path: String) {
        guard let descriptor = try? FileDescriptor.open(path, O_RDWR | O_CREAT, mode: 0o600) else { return nil }
        guard retryingInterrupts({ flock(descriptor.raw, LOCK_EX | LOCK_NB) }) == 0 else { return nil }
        self.descriptor = descriptor
    }

    deinit { flock(descriptor.raw, LOCK_UN) }
}
#endif
