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
}
#endif
