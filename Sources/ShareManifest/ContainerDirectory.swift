import Foundation
import SystemCalls

/// The shared container: where copies, thumbnails and manifests live.
///
/// Layout (documented in docs/media.md; host apps may rely on it):
/// ```
/// <root>/<UUID>.<ext>                  copied items
/// <root>/thumbnails/<UUID>.jpg         thumbnails
/// <root>/manifests/<key>.json          one manifest per share key
/// <root>/manifests/consumed/<key>.json manifests already delivered (kept until gc)
/// <root>/.share-ingest/                the journal and other private state
/// <root>/.share-ingest/reports/<key>.json  each batch's report (every item, its outcome)
/// ```
/// Files are created owner-only, mode 0600, and folders 0700, less the umask (a
/// decoder helper running as another user reads none of them); temporary
/// files are dot-files ending in `.partial`, unique per host and process.
public struct ContainerDirectory: Sendable, Hashable {
    /// The absolute path of the container.
    public let root: String
    /// The journal, the batch reports and the locks: `<root>/.share-ingest` unless
    /// placed elsewhere (e.g. on another disk, so a full container disk cannot stop
    /// the journal from recording what failed).
    public let stateDirectory: String

    /// Opens (creating if needed) the container at `path`, with its state in
    /// `stateDirectory` (default: inside the container; the CLI reads `SHARE_STATE_DIR`).
    public init(_ path: String, stateDirectory: String? = nil) throws(ContainerError) {
        let absolute =
            path.hasPrefix("/") ? path : String(decoding: FileSystem.currentDirectory(), as: UTF8.self) + "/" + path
        let standardized = URL(fileURLWithPath: absolute).standardizedFileURL.path
        self.root = standardized
        self.stateDirectory =
            stateDirectory.map { URL(fileURLWithPath: $0).standardizedFileURL.path } ?? standardized + "/.share-ingest"
        do {
            try FileSystem.makeDirectory(root)
        } catch {
            throw ContainerError(path: root, reason: error.description)
        }
        // Root's own, where share runs as root (ContainerOwnership).
        try prepareFolders(making: true)
        guard FileSystem.isWritable(root) else {
            throw ContainerError(path: root, reason: "not writable (\(SystemError.message(for: errno)))")
        }
    }

    /// Opens the container at `path`, which must exist as a folder: nothing is
    /// created (for commands that only read or tidy a container: a mistyped
    /// path must not become a new, empty container).
    public init(existing path: String, stateDirectory: String? = nil) throws(ContainerError) {
        let absolute =
            path.hasPrefix("/") ? path : String(decoding: FileSystem.currentDirectory(), as: UTF8.self) + "/" + path
        let standardized = URL(fileURLWithPath: absolute).standardizedFileURL.path
        self.root = standardized
        self.stateDirectory =
            stateDirectory.map { URL(fileURLWithPath: $0).standardizedFileURL.path } ?? standardized + "/.share-ingest"
        switch (try? FileStatus.of(root))?.type {
        case .directory?: break
        case nil: throw ContainerError(path: root, reason: "does not exist", isMissing: true)
        case _?: throw ContainerError(path: root, reason: "is not a folder", isMissing: true)
        }
        try prepareFolders(making: false)
    }

    /// The paths of a container at `path`, opened and checked for nothing: for
    /// a plan that writes nothing (`share ingest --dry-run`).
    package init(unopened path: String) {
        root = URL(fileURLWithPath: path).standardizedFileURL.path
        stateDirectory = root + "/.share-ingest"
    }

    /// The container used when none is given: `$SHARE_CONTAINER`, else
    /// `$XDG_DATA_HOME/share-ingest/container`, else
    /// `$HOME/.local/share/share-ingest/container` (the home folder of the
    /// user database only when `HOME` is unset, as the XDG base directories say).
    public static var defaultPath: String {
        if let explicit = ProcessEnvironment.value("SHARE_CONTAINER"), !explicit.isEmpty { return explicit }
        let home = ProcessEnvironment.value("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let data =
            ProcessEnvironment.value("XDG_DATA_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (home + "/.local/share")
        return data + "/share-ingest/container"
    }

    /// `<root>/thumbnails`.
    public var thumbnailsDirectory: String { root + "/thumbnails" }
    /// `<root>/manifests`.
    public var manifestsDirectory: String { root + "/manifests" }
    /// `<root>/manifests/consumed`: manifests already delivered.
    public var consumedDirectory: String { root + "/manifests/consumed" }
    /// `<state>/reports`: each batch's stored report.
    public var reportsDirectory: String { stateDirectory + "/reports" }
    /// `<state>/reports/<key>.json`: a batch's stored report.
    public func reportPath(key: ShareKey) -> String { "\(reportsDirectory)/\(key.rawValue).json" }

    /// `<root>/.spool`: in-memory inputs written down when their batch is planned,
    /// so a resumed batch or a worker on another machine can read them; removed
    /// when the batch finishes.
    package var spoolDirectory: String { root + "/.spool" }

    /// `<root>/<UUID>.<ext>`: an item's copy.
    public func mediaPath(id: UUID, fileExtension: String) -> String { "\(root)/\(id.uuidString).\(fileExtension)" }
    /// `<root>/thumbnails/<UUID>.jpg`: an item's thumbnail.
    public func thumbnailPath(id: UUID) -> String { "\(thumbnailsDirectory)/\(id.uuidString).jpg" }
    /// `<root>/<UUID>.compatible.jpg`: an item's compatible copy (a JPEG of a HEIC, AVIF, JPEG XL or RAW photo), beside it.
    public func compatiblePath(id: UUID) -> String { "\(root)/\(id.uuidString).compatible.jpg" }
    /// `<root>/manifests/<key>.json`: the manifest a host reads.
    public func manifestPath(key: ShareKey) -> String { "\(manifestsDirectory)/\(key.rawValue).json" }
    /// `<root>/manifests/consumed/<key>.json`: where a consumed manifest goes.
    public func consumedManifestPath(key: ShareKey) -> String { "\(consumedDirectory)/\(key.rawValue).json" }

    /// The resolved (`realpath`) form of `path` if it is a regular file inside this
    /// container and not a symbolic link; otherwise why not.
    public func checkedFile(_ path: String) -> Result<String, ContainerPathError> {
        guard let status = try? FileStatus.ofLink(path) else { return .failure(.missing(path)) }
        if status.type == .symbolicLink { return .failure(.symbolicLink(path)) }
        guard let real = FileSystem.resolved(path) else { return .failure(.missing(path)) }
        let rootReal = FileSystem.resolved(root) ?? root
        guard real.hasPrefix(rootReal + "/") else { return .failure(.outsideContainer(path)) }
        guard status.type == .regular else { return .failure(.notRegularFile(path)) }
        return .success(real)
    }
}

/// Why a container could not be opened or created: its path and the reason.
public struct ContainerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The container's root.
    public let path: String
    /// What is wrong (the failed call, "not writable", …).
    public let reason: String
    /// True when the container does not exist (or is no folder) and was not to be created.
    public let isMissing: Bool
    /// True when the container (or a folder of it) is refused as unsafe: a root
    /// `share` found it another user's, writable by others, or a link.
    package let isRefused: Bool

    /// A container at `path` that cannot be used, and why.
    public init(path: String, reason: String) {
        self.init(path: path, reason: reason, isMissing: false)
    }

    /// A container at `path` that cannot be used, and why; `isMissing` when it does not exist and was not to be made.
    public init(path: String, reason: String, isMissing: Bool) {
        self.path = path
        self.reason = reason
        self.isMissing = isMissing
        self.isRefused = false
    }

    /// A container at `path` refused as unsafe (``isRefused``), and why.
    package init(path: String, reason: String, isRefused: Bool) {
        self.path = path
        self.reason = reason
        self.isMissing = false
        self.isRefused = isRefused
    }

    /// `container <path> is not usable: <reason>`.
    public var description: String { "container \(path) is not usable: \(reason)" }
}

/// Why a manifest entry's path was refused.
public enum ContainerPathError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file does not exist.
    case missing(String)
    /// The path is a symbolic link (never followed).
    case symbolicLink(String)
    /// The file resolves to a place outside the container.
    case outsideContainer(String)
    /// The path is a folder, FIFO, device or socket.
    case notRegularFile(String)
    /// The entry's path is not a local `file://` URL.
    case notAFileURL(String)

    /// The path and why it was refused.
    public var description: String {
        switch self {
        case .missing(let p): "\(p): file does not exist"
        case .symbolicLink(let p): "\(p): is a symbolic link; refused"
        case .outsideContainer(let p): "\(p): is outside the container; refused"
        case .notRegularFile(let p): "\(p): is not a regular file; refused"
        case .notAFileURL(let p): "\(p): is not a file:// URL"
        }
    }
}
