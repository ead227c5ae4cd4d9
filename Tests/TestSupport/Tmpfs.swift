import Foundation
import Glibc

/// A tmpfs of `kilobytes` mounted on a new folder, unmounted when released;
/// nil (with the reason printed) where mounting is not allowed.
public final class Tmpfs {
    public let directory = TemporaryDirectory("tmpfs")
    public var path: String { directory.path }

    public init?(kilobytes: Int) {
        let result = try? MediaTools.run(
            "/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", directory.path])
        guard let result, result.status == 0 else {
            print(
                "Tmpfs: cannot mount a tmpfs (\(result?.output ?? "mount failed")); the disk-full cases that need one are not exercised"
            )
            return nil
        }
    }

    deinit { _ = try? MediaTools.run("/bin/umount", ["-l", directory.path]) }

    /// Bytes a new file may still take.
    public var free: Int {
        var st = statvfs()
        statvfs(path, &st)
        return Int(st.f_bavail) * Int(st.f_bsize)
    }

    /// Leaves exactly `bytes` (a multiple of the page size) free.
    public func fill(leaving bytes: Int) throws {
        let filler = path + "/filler"
        let size = free - bytes
        guard size >= 0 else { throw Failure("only \(free) bytes free, \(bytes) asked for") }
        let fd = open(filler, O_WRONLY | O_CREAT, 0o600)
        defer { close(fd) }
        guard posix_fallocate(fd, 0, off_t(size)) == 0, free == bytes else {
            throw Failure("cannot leave exactly \(bytes) bytes free (\(free) are)")
        }
    }

    /// Frees what ``fill(leaving:)`` took.
    public func empty() { unlink(path + "/filler") }

    /// Grows (or shrinks) the file system to `kilobytes`, its files kept.
    public func resize(kilobytes: Int) throws {
        let result = try MediaTools.run("/bin/mount", ["-o", "remount,size=\(kilobytes)k", directory.path])
        guard result.status == 0 else { throw Failure("cannot resize the tmpfs at \(path) to \(kilobytes) KiB") }
    }

    /// What went wrong preparing the file system.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
