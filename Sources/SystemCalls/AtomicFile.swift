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
    package static func create(
        _ path: String, bytes: some ContiguousBytes, syncDirectory: Bool, beforeRename: () -> Void = {}
    ) throws(SystemError) {
        let writer = try AtomicFileWriter(path)
        var failure: SystemError?
        bytes.withUnsafeBytes { buffer in
            do throws(SystemError) { try writer.append(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
        try writer.commit(syncDirectory: syncDirectory, beforeRename: beforeRename)
    }

    /// Replaces `path` (or creates it) with `bytes`, so that readers see the old
    /// file or the whole new one: a temporary name beside it, fsync, a rename
    /// over it. For outputs written again on each run (a report page). `mode`
    /// less the umask is the file's (owner-only unless asked).
    package static func replace(
        _ path: String, bytes: some ContiguousBytes, syncDirectory: Bool = false, mode: mode_t = 0o600
    ) throws(SystemError) {
        let writer = try AtomicFileWriter(path, mode: mode)
        var failure: SystemError?
        bytes.withUnsafeBytes { buffer in
            do throws(SystemError) { try writer.append(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
        try writer.commit(syncDirectory: syncDirectory, replacing: true)
    }
}

/// A file written piece by piece (a manifest or report of any size, in bounded
/// memory) that appears under its name only when complete, as ``AtomicFile``
/// does: written under a unique temporary name, fsynced, renamed without ever
/// replacing, the folder fsynced when asked. Dropped without ``commit(syncDirectory:replacing:beforeRename:)``,
/// the temporary file is removed.
package final class AtomicFileWriter {
    /// The name it gets when committed.
    package let path: String
    private let temporary: String
    private var descriptor: FileDescriptor?
    private var buffer: [UInt8] = []
    private static let bufferSize = 1 << 16

    /// Starts writing what will be `path`, created with `mode` less the umask
    /// (owner-only unless asked: 0o666 for a file meant for people, such as a report page).
    package init(_ path: String, mode: mode_t = 0o600) throws(SystemError) {
        self.path = path
        temporary = FileSystem.temporaryName(for: path)
        descriptor = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: mode)
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit {
        if descriptor != nil { FileSystem.remove(temporary) }
    }

    /// Appends bytes (buffered).
    package func append(_ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Appends bytes (buffered).
    package func append(_ bytes: [UInt8]) throws(SystemError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Appends the whole content of the file at `source`, 64 KiB at a time.
    package func append(contentsOf source: String) throws(SystemError) {
        let input = try FileDescriptor.openForReading(source)
        var offset: Int64 = 0
        while true {
            let chunk = try input.read(count: 1 << 16, at: offset, path: source)
            try append(chunk)
            if chunk.count < 1 << 16 { return }
            offset += Int64(chunk.count)
        }
    }

    /// Appends a string's UTF-8 bytes (buffered).
    package func append(_ text: String) throws(SystemError) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.bufferSize { try flush() }
    }

    private func flush() throws(SystemError) {
        guard let descriptor, !buffer.isEmpty else { return }
        var failure: SystemError?
        buffer.withUnsafeBytes { raw in
            do throws(SystemError) { try descriptor.writeAll(raw, path: path) } catch { failure = error }
        }
        if let failure { throw failure }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Makes the file durable and gives it its name (failing if the name is
    /// taken, unless `replacing`); `beforeRename` runs once the temporary file
    /// is complete (a test hook).
    package func commit(syncDirectory: Bool, replacing: Bool = false, beforeRename: () -> Void = {}) throws(SystemError)
    {
        guard let descriptor else { throw SystemError("write", path: path, code: EBADF) }
        do {
            try flush()
            try descriptor.sync(path: path)
            try descriptor.close(path: path)
            self.descriptor = nil
            beforeRename()
            if replacing {
                try FileSystem.rename(temporary, path)
            } else {
                try FileSystem.renameNoReplace(temporary, path)
            }
        } catch {
            self.descriptor = nil
            FileSystem.remove(temporary)
            throw error
        }
        if syncDirectory { try FileSystem.syncDirectory(path.parentPath) }
    }
}
