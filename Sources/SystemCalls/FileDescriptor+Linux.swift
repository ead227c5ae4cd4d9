#if os(Linux)
import CSystem
import Glibc

extension FileDescriptor {
    /// Copies up to `count` bytes from this descriptor's offset to `output`'s,
    /// inside the kernel (`copy_file_range`; a reflink where the file system
    /// can). Returns the bytes copied, 0 at the end of the input; throws with
    /// the call's `errno` (the caller decides whether to fall back to read/write).
    package func copyRange(to output: FileDescriptor, count: Int, path: String) throws(SystemError) -> Int {
        let n = retryingInterrupts { shim_copy_file_range(raw, output.raw, count) }
        guard n >= 0 else { throw SystemError("copy_file_range", path: path) }
        return n
    }

    /// Copies up to `count` bytes from `offset` of this descriptor to `output`'s
    /// position, inside the kernel (`copy_file_range` with an input offset; this
    /// descriptor's own position does not move). Returns the bytes copied, 0 at
    /// the end of the input; throws with the call's `errno`.
    package func copyRange(to output: FileDescriptor, from offset: Int64, count: Int, path: String) throws(SystemError) -> Int {
        var position = offset
        let n = retryingInterrupts { shim_copy_file_range_from(raw, &position, output.raw, count) }
        guard n >= 0 else { throw SystemError("copy_file_range", path: path) }
        return n
    }

    /// Writes everything cached for the file system that holds this descriptor
    /// (`syncfs`): the data and metadata of every file written on it, durable
    /// in one call instead of an fsync each.
    package func syncFileSystem(path: String) throws(SystemError) {
        guard retryingInterrupts({ shim_syncfs(raw) }) == 0 else { throw SystemError("syncfs", path: path) }
    }
}
#endif

#if os(Linux)
extension FileDescriptor {
    /// Makes descriptor number `target` a copy of this one (`dup2`, retried on
    /// EINTR), replacing what was there; this one stays open.
    package func duplicate(onto target: Int32, path: String) throws(SystemError) {
        guard retryingInterrupts({ dup2(raw, target) }) == target else { throw SystemError("dup2", path: path) }
    }
}
#endif
