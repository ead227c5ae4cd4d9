#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What kind of file a path names.
package enum FileType: Sendable, Equatable {
    case regular, directory, symbolicLink, fifo, socket, characterDevice, blockDevice, unknown

    package init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symbolicLink
        case S_IFIFO: self = .fifo
        case S_IFSOCK: self = .socket
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        default: self = .unknown
        }
    }

    /// For reports: "is a FIFO (named pipe)".
    package var phrase: String {
        switch self {
        case .directory: "is a directory"
        case .fifo: "is a FIFO (named pipe)"
        case .socket: "is a socket"
        case .characterDevice: "is a character device"
        case .blockDevice: "is a block device"
        case .symbolicLink: "is a symbolic link"
        case .regular, .unknown: "is not a regular file"
        }
    }
}

/// The facts of `stat`/`lstat`/`fstat` the package uses, with the file type decoded once.
package struct FileStatus: Sendable, Equatable {
    package let type: FileType
    package let size: Int64
    package let device: UInt64
    package let inode: UInt64
    package let modifiedSeconds: Int
    package let modifiedNanoseconds: Int
    package let mode: UInt32
    /// The owner's user id.
    package let owner: UInt32
    /// Bytes the file takes on its disk (`st_blocks` × 512): less than its
    /// `size` for a sparse file, whose holes take none.
    package let allocatedBytes: Int64

    /// True when the file has holes: fewer bytes on disk than its size.
    package var isSparse: Bool { type == .regular && allocatedBytes < size }

    package init(_ st: stat) {
        type = FileType(mode: st.st_mode)
        size = Int64(st.st_size)
        allocatedBytes = Int64(st.st_blocks) * 512
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        mode = UInt32(st.st_mode)
        owner = UInt32(st.st_uid)
        #if canImport(Darwin)
            modifiedSeconds = Int(st.st_mtimespec.tv_sec)
            modifiedNanoseconds = Int(st.st_mtimespec.tv_nsec)
        #else
            modifiedSeconds = Int(st.st_mtim.tv_sec)
            modifiedNanoseconds = Int(st.st_mtim.tv_nsec)
        #endif
    }

    /// `stat(path)` (following a final symbolic link).
    package static func of(_ path: String) throws(SystemError) -> FileStatus {
        var st = stat()
        guard stat(path, &st) == 0 else { throw SystemError("stat", path: path) }
        return FileStatus(st)
    }

    /// `stat` of a path given as raw bytes; `display` names it in the error.
    package static func of(pathBytes: [UInt8], display: String) throws(SystemError) -> FileStatus {
        var st = stat()
        guard withCPath(pathBytes, { stat($0, &st) }) == 0 else { throw SystemError("stat", path: display) }
        return FileStatus(st)
    }

    /// `lstat` of a path given as raw bytes; `display` names it in the error.
    package static func ofLink(pathBytes: [UInt8], display: String) throws(SystemError) -> FileStatus {
        var st = stat()
        guard withCPath(pathBytes, { lstat($0, &st) }) == 0 else { throw SystemError("lstat", path: display) }
        return FileStatus(st)
    }

    /// `lstat(path)` (a symbolic link is reported as one).
    package static func ofLink(_ path: String) throws(SystemError) -> FileStatus {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw SystemError("lstat", path: path) }
        return FileStatus(st)
    }
}
