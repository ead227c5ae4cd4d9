import ShareManifest
import SystemCalls

/// What a drop looks like right now: a hash of its tree (names, types, sizes,
/// mtimes), whether it carries a `.ready` marker, and how many files it has. Two
/// equal signatures `settle` seconds apart mean nobody is writing into it.
struct DropSignature: Equatable {
    let hash: UInt64
    let ready: Bool
    let files: Int
    /// The bytes its files hold (their lengths).
    var bytes: Int64 = 0

    var text: String { String(hash, radix: 16) }

    /// Reads the signature of `path` (a folder, walked whole, or a single
    /// file). The folder is held open and walked through descriptors beneath
    /// it (``DropRoot``), never by path strings: a subfolder its dropper swaps
    /// for a link is met as a link, not listed.
    static func read(_ path: String) -> DropSignature? {
        var hasher = FNV1a()
        var files = 0
        var ready = false
        var bytes: Int64 = 0
        let rootPath = SourcePath(path)
        guard let status = try? rootPath.linkStatus() else { return nil }
        hasher.add(status)
        guard status.type == .directory, let root = try? DropRoot(opening: rootPath, followingFinalLink: false) else {
            return DropSignature(
                hash: hasher.value, ready: false, files: 1, bytes: status.type == .regular ? status.size : 0)
        }
        var pending: [[UInt8]] = [[]]
        while let relative = pending.popLast() {
            guard let folder = try? root.openFolder(relative),
                let names = try? SortedNames(directory: folder, display: path)
            else { continue }
            for name in names {
                if relative.isEmpty && name == Array(".ready".utf8) { ready = true }
                guard let status = try? folder.status(ofEntry: name, display: path) else { continue }
                let child = relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name
                hasher.add(rootPath.appending(child).bytes)
                hasher.add(status)
                if status.type == .directory { pending.append(child) } else { files += 1 }
                if status.type == .regular { bytes += status.size }
            }
        }
        return DropSignature(hash: hasher.value, ready: ready, files: files, bytes: bytes)
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

    mutating func add(_ status: FileStatus) {
        for number in [
            UInt64(status.mode), UInt64(bitPattern: status.size), UInt64(bitPattern: Int64(status.modifiedSeconds)),
            UInt64(bitPattern: Int64(status.modifiedNanoseconds)),
        ] {
            withUnsafeBytes(of: number) { add($0) }
        }
    }
}
