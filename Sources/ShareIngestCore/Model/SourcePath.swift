import ShareManifest
import SystemCalls

/// A source path as raw bytes: file names on Linux need not be UTF-8, and a
/// lossy String would name a different (or no) file.
public struct SourcePath: Sendable, Hashable, CustomStringConvertible {
    /// The path's bytes, exactly as the file system has them.
    public let bytes: [UInt8]

    /// A path from its raw bytes.
    public init(bytes: [UInt8]) { self.bytes = bytes }
    /// A path from a string (its UTF-8 bytes).
    public init(_ string: String) { self.bytes = Array(string.utf8) }

    /// This path with one more component.
    func appending(_ component: [UInt8]) -> SourcePath {
        var joined = bytes
        if joined.last != UInt8(ascii: "/") { joined.append(UInt8(ascii: "/")) }
        joined.append(contentsOf: component)
        return SourcePath(bytes: joined)
    }

    /// The path of `name` in this path's folder (this path with its last
    /// component replaced).
    func sibling(named name: [UInt8]) -> SourcePath {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return SourcePath(bytes: name) }
        return SourcePath(bytes: Array(bytes[...slash]) + name)
    }

    /// The folder it is in: the path without its last component (`/` for a
    /// top-level entry, `.` for a bare name).
    var parent: SourcePath {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return SourcePath(".") }
        return SourcePath(bytes: slash == 0 ? [UInt8(ascii: "/")] : Array(bytes[..<slash]))
    }

    /// The last component's bytes.
    var lastComponent: [UInt8] {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return bytes }
        return Array(bytes[(slash + 1)...])
    }

    /// For messages and manifests: invalid UTF-8 shown as U+FFFD, control characters escaped.
    public var display: String { Self.displayName(bytes) }
    /// The path for messages: ``display``.
    public var description: String { display }

    static func displayName(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        // A control character is one byte below 0x20 or 0x7F (never part of a longer sequence).
        guard bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                escaped += scalar == "\n" ? "\\n" : scalar == "\t" ? "\\t" : "\\x" + String(scalar.value, radix: 16)
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    func open(_ flags: Int32) throws(SystemError) -> FileDescriptor {
        try FileDescriptor.open(pathBytes: bytes, flags, display: display)
    }

    /// `stat`: follows a final symbolic link.
    func status() throws(SystemError) -> FileStatus {
        try FileStatus.of(pathBytes: bytes, display: display)
    }

    /// `lstat`: a symbolic link is reported as one.
    func linkStatus() throws(SystemError) -> FileStatus {
        try FileStatus.ofLink(pathBytes: bytes, display: display)
    }

    /// The path made absolute against the current directory (not resolved:
    /// symbolic links and `..` stay as they are).
    var absolute: SourcePath {
        guard bytes.first != UInt8(ascii: "/") else { return self }
        return SourcePath(bytes: FileSystem.currentDirectory()).appending(
            bytes.starts(with: Array("./".utf8)) ? Array(bytes.dropFirst(2)) : bytes)
    }

    /// The canonical absolute path (`realpath`), nil if it cannot be resolved.
    func resolved() -> SourcePath? {
        FileSystem.resolved(pathBytes: bytes).map(SourcePath.init(bytes:))
    }

    /// True if `self` is `root` or inside it (both resolved).
    func isInside(_ root: SourcePath) -> Bool {
        bytes == root.bytes
            || (bytes.count > root.bytes.count && bytes.starts(with: root.bytes)
                && bytes[root.bytes.count] == UInt8(ascii: "/"))
            || (root.bytes == [UInt8(ascii: "/")])
    }
}
