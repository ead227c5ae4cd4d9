import Foundation
import Glibc
import ShareManifest
import Synchronization
import SystemCalls

/// A fresh, empty container in a new temporary folder, removed (with everything
/// in it) when the object is released or ``remove()`` is called: for tests.
///
/// ```swift
/// let container = try TemporaryContainer()
/// let report = try ShareIngestor(container: container.directory).ingest([.text("hi")])
/// // container.directory.root is gone once `container` is released
/// ```
public final class TemporaryContainer: Sendable {
    /// The container, ready for ``ShareIngestor`` and ``RedirectHandler``.
    public let directory: ContainerDirectory
    /// The temporary folder (the container's root), made by `mkdtemp`.
    public var root: String { directory.root }

    private let removed = Mutex(false)

    /// Creates `<temporary folder>/<label>-XXXXXX` (`$TMPDIR`, else `/tmp`) and the
    /// container layout inside it.
    public init(label: String = "share-ingest-container") throws(ShareIngestError) {
        let base = NSTemporaryDirectory().hasSuffix("/") ? NSTemporaryDirectory() : NSTemporaryDirectory() + "/"
        let path: String
        do { path = try FileSystem.makeTemporaryDirectory(base + label + "-XXXXXX") } catch {
            throw .containerUnusable(path: error.path, reason: error.description)
        }
        do {
            directory = try ContainerDirectory(path)
        } catch {
            FileSystem.removeTree(path)
            throw .containerUnusable(path: error.path, reason: error.reason)
        }
    }

    /// Removes the container and everything in it now (releasing the object does
    /// the same); later calls do nothing.
    public func remove() {
        guard
            removed.withLock({ removed in
                defer { removed = true }
                return !removed
            })
        else { return }
        FileSystem.removeTree(directory.root)
    }

    deinit { remove() }
}
