import Glibc
import ShareManifest

/// The names in a folder, as raw bytes (`opendir`/`readdir`), without `.` and
/// `..`. Each name is copied by its length (`strlen(d_name)`): `readdir`'s
/// entry holds only the name and its NUL, so reading the whole 256-byte
/// `d_name` array reads past short entries, and past glibc's buffer for an
/// entry at its end.
struct DirectoryEntries: Sequence {
    let names: [[UInt8]]

    /// Lists `path` (all entries, hidden ones included).
    init(_ path: SourcePath) throws(SystemError) {
        guard let stream = path.withCString({ opendir($0) }) else { throw SystemError("opendir", path: path.display) }
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

    func makeIterator() -> IndexingIterator<[[UInt8]]> { names.makeIterator() }
}
