import Foundation
import Glibc
import ShareManifest

/// A fresh, empty container in a new temporary folder, removed (with everything
/// in it) when the object is released or ``remove()`` is called: for tests.
///
/// ```swift
/// let container = try TemporaryContainer()
/// let report = try ShareIngestor(container: container.directory).ingest([.text("hi")])
/// // container.directory.root is gone once `container` is released
/// ```
public final class TemporaryContainer: @unchecked Sendable {
    /// The container, ready for ``ShareIngestor`` and ``RedirectHandler``.
    public let directory: ContainerDirectory
    /// The temporary folder (the container's root), made by `mkdtemp`.
    public var root: String { directory.root }

    private let lock = NSLock()
    private var removed = false

    /// Creates `<temporary folder>/<label>-XXXXXX` (`$TMPDIR`, else `/tmp`) and the
    /// container layout inside it.
    public init(label: String = "share-ingest-container") throws(ShareIngestError) {
        let base = NSTemporaryDirectory().hasSuffix("/") ? NSTemporaryDirectory() : NSTemporaryDirectory() + "/"
        var template = Array((base + label + "-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard created != nil else {
            throw .containerUnusable(path: base + label + "-XXXXXX", reason: "mkdtemp: \(String(cString: strerror(errno)))")
        }
        let path = String(cString: created!)
        do {
            directory = try ContainerDirectory(path)
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw .containerUnusable(path: error.path, reason: error.reason)
        }
    }

    /// Removes the container and everything in it now (releasing the object does
    /// the same); later calls do nothing.
    public func remove() {
        lock.lock()
        defer { lock.unlock() }
        guard !removed else { return }
        removed = true
        try? FileManager.default.removeItem(atPath: directory.root)
    }

    deinit { remove() }
}
