import Foundation
import Glibc

/// Manifests in the container: `manifests/<key>.json`, written once, atomically
/// and durably; consumed by moving to `manifests/consumed/` so a share is
/// delivered exactly once.
public struct ManifestStore: Sendable {
    /// The container whose `manifests/` this is.
    public let container: ContainerDirectory
    /// Manifests larger than this are refused when read (a host reads them whole).
    public static let maximumSize = 16 << 20

    /// The manifests of `container`.
    public init(container: ContainerDirectory) { self.container = container }

    /// True when an unconsumed manifest exists for `key`.
    public func exists(_ key: ShareKey) -> Bool {
        access(container.manifestPath(key: key), F_OK) == 0
    }

    /// Writes the manifest for `key`; fails if one exists. The copies it names must
    /// already be durable (the runner fsyncs them and their folders first).
    func write(_ entries: [SharedMediaFile], schema: ManifestSchema, key: ShareKey) throws(SystemError) -> String {
        let path = container.manifestPath(key: key)
        try AtomicFile.create(path, bytes: ManifestCoder.encode(entries, schema: schema), syncDirectory: true) {
            CrashPoint.hit("manifest-temporary-written")
        }
        return path
    }

    /// The manifest's bytes, unconsumed. Throws ``RedirectError/alreadyConsumed(_:)``
    /// for a share that was delivered, ``RedirectError/unknownKey(_:)`` for one that never was.
    public func read(_ key: ShareKey) throws(RedirectError) -> Data {
        let path = container.manifestPath(key: key)
        if access(path, F_OK) != 0, access(container.consumedManifestPath(key: key), F_OK) == 0 {
            throw .alreadyConsumed(key)
        }
        return try readLimited(path, key: key)
    }

    /// Takes the manifest for `key`: moves it to `consumed/` (durably) and returns
    /// its bytes. Of two concurrent consumers exactly one succeeds.
    public func consume(_ key: ShareKey) throws(RedirectError) -> Data {
        let from = container.manifestPath(key: key)
        let to = container.consumedManifestPath(key: key)
        if rename(from, to) != 0 {
            if errno == ENOENT {
                throw access(to, F_OK) == 0 ? .alreadyConsumed(key) : .unknownKey(key)
            }
            throw .io(SystemError("rename", path: from))
        }
        do {
            try FileSystem.syncDirectory(container.manifestsDirectory)
            try FileSystem.syncDirectory(container.consumedDirectory)
        } catch { throw .io(error) }
        return try readLimited(to, key: key)
    }

    private func readLimited(_ path: String, key: ShareKey) throws(RedirectError) -> Data {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw .unknownKey(key) }
        guard st.st_mode & S_IFMT == S_IFREG else { throw .manifestNotAFile(path) }
        guard st.st_size <= Self.maximumSize else { throw .manifestTooLarge(path, Int(st.st_size)) }
        guard let data = FileManager.default.contents(atPath: path) else { throw .io(SystemError("open", path: path)) }
        return data
    }
}
