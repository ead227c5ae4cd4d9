import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a file so that readers see either nothing or all of it: a unique
/// temporary name beside it, fsync, a rename that never replaces, and (when
/// asked) fsync of the directory so the rename survives a crash.
package enum AtomicFile {
    /// Creates `path` with `bytes`; fails if `path` exists.
    /// `beforeRename` runs once the temporary file is complete (a test hook).
    package static func create(_ path: String, bytes: some ContiguousBytes, syncDirectory: Bool, beforeRename: () -> Void = {}) throws(SystemError) {
        let temporary = FileSystem.temporaryName(for: path)
        do throws(SystemError) {
            let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
            var writeError: SystemError?
            bytes.withUnsafeBytes { buffer in
                do throws(SystemError) { try fd.writeAll(buffer, path: path) } catch { writeError = error }
            }
            if let writeError { throw writeError }
            try fd.sync(path: path)
            try fd.close(path: path)
            beforeRename()
            try FileSystem.renameNoReplace(temporary, path)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }
        if syncDirectory { try FileSystem.syncDirectory(path.parentPath) }
    }
}
