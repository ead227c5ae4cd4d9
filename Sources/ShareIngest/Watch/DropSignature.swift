import Glibc

/// What a drop looks like right now: a hash of its tree (names, types, sizes,
/// mtimes), whether it carries a `.ready` marker, and how many files it has. Two
/// equal signatures `settle` seconds apart mean nobody is writing into it.
struct DropSignature: Equatable {
    let hash: UInt64
    let ready: Bool
    let files: Int

    var text: String { String(hash, radix: 16) }

    /// Reads the signature of `path` (a folder, walked whole, or a single file).
    static func read(_ path: String) -> DropSignature? {
        var hasher = FNV1a()
        var files = 0
        var ready = false
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        hasher.add(st)
        if st.st_mode & S_IFMT == S_IFDIR {
            var pending = [path]
            while let directory = pending.popLast() {
                guard let stream = opendir(directory) else { continue }
                var names: [String] = []
                while let entry = readdir(stream) {
                    // Only the name and its NUL are there: never copy the whole 256-byte `d_name`.
                    let cName = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!).assumingMemoryBound(to: CChar.self)
                    let name = String(decoding: UnsafeRawBufferPointer(start: cName, count: strlen(cName)), as: UTF8.self)
                    if name != "." && name != ".." { names.append(name) }
                }
                closedir(stream)
                for name in names.sorted() {
                    let child = directory + "/" + name
                    if directory == path && name == ".ready" { ready = true }
                    guard lstat(child, &st) == 0 else { continue }
                    hasher.add(child)
                    hasher.add(st)
                    if st.st_mode & S_IFMT == S_IFDIR { pending.append(child) } else { files += 1 }
                }
            }
        } else {
            files = 1
        }
        return DropSignature(hash: hasher.value, ready: ready, files: files)
    }
}

/// 64-bit FNV-1a: a small, stable hash for change detection (not for security).
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            value ^= UInt64(byte)
            value &*= 0x100_0000_01b3
        }
    }

    mutating func add(_ text: String) { add(text.utf8) }

    mutating func add(_ st: stat) {
        for number in [UInt64(st.st_mode), UInt64(bitPattern: Int64(st.st_size)), UInt64(bitPattern: Int64(st.st_mtim.tv_sec)), UInt64(bitPattern: Int64(st.st_mtim.tv_nsec))] {
            withUnsafeBytes(of: number) { add($0) }
        }
    }
}
