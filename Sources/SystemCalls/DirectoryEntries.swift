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
        var names: [[UInt8]] = []
        try Self.forEach(pathBytes: pathBytes, display: display) { names.append(Array($0)) }
        self.names = names
    }

    /// Calls `body` with each name in the folder, one at a time, holding none:
    /// a folder of a million files is read in constant memory. The buffer is
    /// valid only during the call.
    package static func forEach(pathBytes: [UInt8], display: String, _ body: (UnsafeRawBufferPointer) -> Void) throws(SystemError) {
        guard let stream = withCPath(pathBytes, { opendir($0) }) else { throw SystemError("opendir", path: display) }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            // The name's address, without loading the entry (`pointee` would copy
            // the whole struct, 256-byte `d_name` included).
            let cName = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!).assumingMemoryBound(to: CChar.self)
            let name = UnsafeRawBufferPointer(start: cName, count: strlen(cName))
            if name.elementsEqual([UInt8(ascii: ".")]) || name.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) { continue }
            body(name)
        }
    }

    package func makeIterator() -> IndexingIterator<[[UInt8]]> { names.makeIterator() }
}
