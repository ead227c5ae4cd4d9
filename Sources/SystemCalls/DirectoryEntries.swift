#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The names in a folder, as raw bytes (`opendir`/`readdir`), without `.` and
/// `..`. Each name is copied by its length (`strlen(d_name)`): `readdir`'s
/// entry holds only the name and its NUL, so reading the whole 256-byte
/// `d_name` array reads past short entries, and past glibc's buffer for an
/// entry at its end.
package struct DirectoryEntries: Sequence {
    package let names: [[UInt8]]

    /// Lists the folder at `pathBytes` (all entries, hidden ones included);
    /// `display` names it in the error.
    package init(pathBytes: [UInt8], display: String) throws(SystemError) {
        guard let stream = withCPath(pathBytes, { opendir($0) }) else { throw SystemError("opendir", path: display) }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            // The name's address, without loading the entry (`pointee` would copy
            // the whole struct, 256-byte `d_name` included).
            let cName = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!).assumingMemoryBound(to: CChar.self)
            let name = Array(UnsafeRawBufferPointer(start: cName, count: strlen(cName)))
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(name)
        }
        self.names = names
    }

    package func makeIterator() -> IndexingIterator<[[UInt8]]> { names.makeIterator() }
}
