import Foundation
import SystemCalls

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
        FileSystem.exists(container.manifestPath(key: key))
    }

    /// Writes the manifest for `key` atomically and durably; fails if one exists.
    /// The copies it names must already be durable (the pipeline fsyncs them and
    /// their folders first). `beforeRename` is a test hook.
    package func write(_ manifest: Data, key: ShareKey, beforeRename: () -> Void = {}) throws(SystemError) -> String {
        let path = container.manifestPath(key: key)
        try AtomicFile.create(path, bytes: manifest, syncDirectory: true, beforeRename: beforeRename)
        return path
    }

    /// Starts writing the manifest for `key` entry by entry (a batch of any
    /// size in bounded memory); it appears, complete, at ``ManifestWriter/commit(beforeRename:)``.
    package func writer(key: ShareKey, schema: ManifestSchema, textOnly: Bool) throws(SystemError) -> ManifestWriter {
        try ManifestWriter(path: container.manifestPath(key: key), schema: schema, textOnly: textOnly)
    }

    /// The manifest's bytes, unconsumed. Throws ``RedirectError/alreadyConsumed(_:)``
    /// for a share that was delivered, ``RedirectError/unknownKey(_:)`` for one that never was.
    public func read(_ key: ShareKey) throws(RedirectError) -> Data {
        let path = container.manifestPath(key: key)
        if !FileSystem.exists(path), FileSystem.exists(container.consumedManifestPath(key: key)) {
            throw .alreadyConsumed(key)
        }
        return try readLimited(path, key: key)
    }

    /// Takes the manifest for `key`: moves it to `consumed/` (durably) and returns
    /// its bytes. Of two concurrent consumers exactly one succeeds.
    public func consume(_ key: ShareKey) throws(RedirectError) -> Data {
        let from = container.manifestPath(key: key)
        let to = container.consumedManifestPath(key: key)
        do {
            try FileSystem.rename(from, to)
        } catch {
            if error.isMissing { throw FileSystem.exists(to) ? .alreadyConsumed(key) : .unknownKey(key) }
            throw .io(error)
        }
        do {
            try FileSystem.syncDirectory(container.manifestsDirectory)
            try FileSystem.syncDirectory(container.consumedDirectory)
        } catch { throw .io(error) }
        return try readLimited(to, key: key)
    }

    private func readLimited(_ path: String, key: ShareKey) throws(RedirectError) -> Data {
        guard let status = try? FileStatus.ofLink(path) else { throw .unknownKey(key) }
        guard status.type == .regular else { throw .manifestNotAFile(path) }
        guard status.size <= Self.maximumSize else { throw .manifestTooLarge(path, Int(status.size)) }
        let data: Data
        do { data = Data(try FileSystem.readWholeFile(path)) } catch { throw .io(error) }
        return data
    }
}

/// A manifest written entry by entry, byte for byte what ``ManifestCoder/encode(_:schema:)``
/// writes for the same entries, and as durable: it appears under its name only
/// when complete (``AtomicFileWriter``), after the copies it names were made durable.
package final class ManifestWriter {
    private let file: AtomicFileWriter
    private let schema: ManifestSchema
    private let textOnly: Bool
    /// Entries written so far.
    package private(set) var count = 0

    init(path: String, schema: ManifestSchema, textOnly: Bool) throws(SystemError) {
        file = try AtomicFileWriter(path)
        self.schema = schema
        self.textOnly = textOnly
        try file.append("[")
    }

    /// The manifest's path once committed.
    package var path: String { file.path }

    /// Appends one entry.
    package func append(_ entry: SharedMediaFile) throws(SystemError) {
        try file.append(
            (count == 0 ? "\n  " : ",\n  ") + ManifestCoder.encodeEntry(entry, schema: schema, textOnly: textOnly))
        count += 1
    }

    /// Ends the array, makes the file durable and gives it its name (failing if a
    /// manifest of that key exists); `beforeRename` is a test hook.
    package func commit(beforeRename: () -> Void = {}) throws(SystemError) {
        try file.append(ManifestCoder.closing(empty: count == 0))
        try file.commit(syncDirectory: true, beforeRename: beforeRename)
    }
}
