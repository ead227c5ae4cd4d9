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
        package func copyRange(to output: FileDescriptor, from offset: Int64, count: Int, path: String)
            throws(SystemError) -> Int
        {
            var position = offset
            let n = retryingInterrupts { shim_copy_file_range_from(raw, &position, output.raw, count) }
            guard n >= 0 else { throw SystemError("copy_file_range", path: path) }
            return n
        }

        /// Where the next bytes of data are at or after `offset` (`lseek(SEEK_DATA)`),
        /// nil when only a hole is left up to the end. On a file system that does
        /// not track holes, every byte is data.
        package func nextData(from offset: Int64, path: String) throws(SystemError) -> Int64? {
            let found = lseek(raw, off_t(offset), seekData)
            if found < 0 {
                if errno == ENXIO { return nil }
                throw SystemError("lseek", path: path)
            }
            return Int64(found)
        }

        /// Where the hole after the data at `offset` starts (`lseek(SEEK_HOLE)`):
        /// the end of the file when no hole follows.
        package func nextHole(from offset: Int64, path: String) throws(SystemError) -> Int64 {
            let found = lseek(raw, off_t(offset), seekHole)
            guard found >= 0 else { throw SystemError("lseek", path: path) }
            return Int64(found)
        }

        /// Sets the file's size to `size` (`ftruncate`): what a copy that ends in a
        /// hole does last, so the hole takes no disk.
        package func truncate(to size: Int64, path: String) throws(SystemError) {
            guard retryingInterrupts({ ftruncate(raw, off_t(size)) }) == 0 else {
                throw SystemError("ftruncate", path: path)
            }
        }

        /// The space of the file system that holds this descriptor (`fstatvfs`):
        /// bytes an unprivileged writer may still use, and its size.
        package func space(path: String) throws(SystemError) -> DiskSpace {
            var st = statvfs()
            guard fstatvfs(raw, &st) == 0 else { throw SystemError("fstatvfs", path: path) }
            return DiskSpace(
                available: Int64(st.f_bavail) * Int64(st.f_frsize), total: Int64(st.f_blocks) * Int64(st.f_frsize))
        }

        /// Writes everything cached for the file system that holds this descriptor
        /// (`syncfs`): the data and metadata of every file written on it, durable
        /// in one call instead of an fsync each.
        package func syncFileSystem(path: String) throws(SystemError) {
            guard retryingInterrupts({ shim_syncfs(raw) }) == 0 else { throw SystemError("syncfs", path: path) }
        }
    }
#endif

// `SEEK_DATA` and `SEEK_HOLE` (Linux 3.1) are defined by glibc only under
// _GNU_SOURCE, which Swift's Glibc module does not set: their values, from <unistd.h>.
private let seekData: Int32 = 3
private let seekHole: Int32 = 4

/// The space of one file system (``FileDescriptor/space(path:)``).
package struct DiskSpace: Sendable, Equatable {
    /// Bytes an unprivileged writer may still use (`f_bavail`).
    package let available: Int64
    /// Its size.
    package let total: Int64
}

#if os(Linux)
    extension FileDescriptor {
        /// Makes descriptor number `target` a copy of this one (`dup2`, retried on
        /// EINTR), replacing what was there; this one stays open.
        package func duplicate(onto target: Int32, path: String) throws(SystemError) {
            guard retryingInterrupts({ dup2(raw, target) }) == target else { throw SystemError("dup2", path: path) }
        }
    }
#endif
