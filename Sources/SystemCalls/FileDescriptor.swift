#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Owns an open file descriptor and closes it once.
package final class FileDescriptor {
    package let raw: Int32
    private var closed = false

    package init(_ raw: Int32) { self.raw = raw }

    /// A descriptor owned by someone else (a library's, one passed to a helper):
    /// used through the funnel, never closed here.
    package init(borrowing raw: Int32) {
        self.raw = raw
        closed = true
    }
    deinit { if !closed { _ = closeFile(raw) } }

    /// Opens `path` (always close-on-exec); throws with the call and path on failure.
    /// Beneath a held folder (``AnchoredFolders``), through its descriptor, the
    /// final name not followed if it is a link.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> FileDescriptor {
        #if os(Linux)
            if let (folder, name) = try AnchoredFolders.entry(path) {
                let fd = withCPath(name) { cName in
                    retryingInterrupts { openat(folder.raw, cName, flags | O_CLOEXEC | O_NOFOLLOW, mode) }
                }
                guard fd >= 0 else { throw SystemError("openat", path: path) }
                return FileDescriptor(fd)
            }
        #endif
        let fd = retryingInterrupts { openFile(path, flags | O_CLOEXEC, mode) }
        guard fd >= 0 else { throw SystemError("open", path: path) }
        return FileDescriptor(fd)
    }

    /// Opens `path` read-only.
    package static func openForReading(_ path: String) throws(SystemError) -> FileDescriptor {
        try open(path, O_RDONLY)
    }

    /// Opens a path given as raw bytes (file names on Linux need not be UTF-8);
    /// `display` names it in the error.
    package static func open(pathBytes: [UInt8], _ flags: Int32, mode: mode_t = 0, display: String) throws(SystemError)
        -> FileDescriptor
    {
        let fd = withCPath(pathBytes) { path in retryingInterrupts { openFile(path, flags | O_CLOEXEC, mode) } }
        guard fd >= 0 else { throw SystemError("open", path: display) }
        return FileDescriptor(fd)
    }

    /// A new descriptor for the same open file (`fcntl(F_DUPFD_CLOEXEC)`), owned separately.
    package func duplicate(path: String) throws(SystemError) -> FileDescriptor {
        let copy = fcntl(raw, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw SystemError("dup", path: path) }
        return FileDescriptor(copy)
    }

    /// Gives up ownership: the caller (a C library that closes what it is given) closes it.
    package func release() -> Int32 {
        closed = true
        return raw
    }

    /// Switches `O_NONBLOCK` on or off.
    package func setBlocking(_ blocking: Bool) {
        let flags = fcntl(raw, F_GETFL)
        _ = fcntl(raw, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK)
    }

    /// Reads what is there, up to `count` bytes, at the current offset: 0 at the
    /// end (or nothing available on a non-blocking descriptor: `EAGAIN` gives 0 too).
    package func readAvailable(into buffer: UnsafeMutableRawBufferPointer, path: String) throws(SystemError) -> Int {
        let n = retryingInterrupts { readFile(raw, buffer.baseAddress, buffer.count) }
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return 0 }
            throw SystemError("read", path: path)
        }
        return n
    }

    /// Waits up to `milliseconds` (-1: without a limit) for the descriptor to
    /// become readable (or hung up); true when it is.
    package func waitReadable(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: raw, events: Int16(POLLIN), revents: 0)
        return retryingInterrupts { poll(&descriptor, 1, milliseconds) } > 0
    }

    package func status(path: String) throws(SystemError) -> FileStatus {
        var st = stat()
        guard fstat(raw, &st) == 0 else { throw SystemError("fstat", path: path) }
        return FileStatus(st)
    }

    package func sync(path: String) throws(SystemError) {
        guard retryingInterrupts({ fsync(raw) }) == 0 else { throw SystemError("fsync", path: path) }
    }

    /// Closes now, reporting the error (a delayed write error can surface here).
    package func close(path: String) throws(SystemError) {
        closed = true
        guard closeFile(raw) == 0 else { throw SystemError("close", path: path) }
    }

    /// Writes all of `bytes`.
    package func writeAll(_ bytes: UnsafeRawBufferPointer, path: String) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = retryingInterrupts { writeFile(raw, bytes.baseAddress! + offset, bytes.count - offset) }
            guard n > 0 else { throw SystemError("write", path: path) }
            offset += n
        }
    }

    /// Fills `buffer` from `offset` (`pread`, never moving the position): the
    /// bytes read, fewer only at the end of the file.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String) throws(SystemError)
        -> Int
    {
        var filled = 0
        while filled < buffer.count {
            let n = retryingInterrupts {
                pread(raw, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset) + off_t(filled))
            }
            if n < 0 { throw SystemError("read", path: path) }
            if n == 0 { break }
            filled += n
        }
        return filled
    }

    /// Writes all of `bytes` at `offset` (`pwrite`, never moving the position).
    package func write(_ bytes: [UInt8], at offset: Int64, path: String) throws(SystemError) {
        var failure: SystemError?
        bytes.withUnsafeBytes { raw in
            do throws(SystemError) { try write(raw, at: offset, path: path) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Writes all of `bytes` at `offset` (`pwrite`, never moving the position).
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64, path: String) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let n = retryingInterrupts {
                pwrite(self.raw, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            }
            guard n > 0 else { throw SystemError("pwrite", path: path) }
            done += n
        }
    }

    /// Moves the position back to the start (`lseek`), for a library that reads
    /// from where the descriptor stands.
    package func rewind(path: String) throws(SystemError) {
        guard lseek(raw, 0, SEEK_SET) == 0 else { throw SystemError("lseek", path: path) }
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the file).
    package func read(count: Int, at offset: Int64, path: String) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                retryingInterrupts {
                    pread(self.raw, raw.baseAddress! + filled, raw.count - filled, off_t(offset) + off_t(filled))
                }
            }
            if n < 0 { throw SystemError("read", path: path) }
            if n == 0 { break }
            filled += n
        }
        return Array(buffer.prefix(filled))
    }
}

// `open`, `close`, `read` and `write` are shadowed by the methods above inside the class.
private func openFile(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func closeFile(_ fd: Int32) -> Int32 { close(fd) }
private func readFile(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
private func writeFile(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, buffer, count) }

/// Runs `body` with a NUL-terminated copy of a path's raw bytes.
package func withCPath<T>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) throws -> T) rethrows -> T {
    try (bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { try body($0.baseAddress!) }
}
