import Foundation
import SystemCalls

/// A share as the host app receives it after the redirect.
public struct ReceivedShare: Sendable, Hashable {
    /// The manifest key the redirect named.
    public let key: ShareKey
    /// What the share holds, from its entries (not from the URL's fragment).
    public let kind: RedirectKind
    /// The schema the manifest was written in.
    public let schema: ManifestSchema
    /// Entries, each file path checked (the entry's, its thumbnail's and its
    /// compatible copy's): inside the container, a regular file, no symbolic link.
    public let entries: [SharedMediaFile]
    /// The manifest exactly as stored.
    public let manifestJSON: Data
}

/// Why a redirect could not be honoured.
public enum RedirectError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The redirect URL is malformed.
    case badURL(RedirectURLError)
    /// No manifest has this key.
    case unknownKey(ShareKey)
    /// The share was delivered before: a share is consumed once.
    case alreadyConsumed(ShareKey)
    /// The manifest is larger than ``ManifestStore/maximumSize`` (path, size).
    case manifestTooLarge(String, Int)
    /// The manifest path is not a regular file (a symbolic link, a folder).
    case manifestNotAFile(String)
    /// The manifest is not valid JSON in either schema (path, why).
    case badManifest(String, ManifestError)
    /// An entry names a file (its `path`, `thumbnail`, or a `motionVideo`,
    /// `livePhoto`, `compatible`, `previews` or `sidecars` path) that is missing, outside the container, a symbolic link
    /// or not a regular file.
    case badEntry(index: Int, ContainerPathError)
    /// Reading or moving the manifest failed.
    case io(SystemError)

    /// A sentence for people: the key or path and what is wrong.
    public var description: String {
        switch self {
        case .badURL(let e): e.description
        case .unknownKey(let key): "no manifest for key \(key)"
        case .alreadyConsumed(let key): "the share with key \(key) was already consumed"
        case .manifestTooLarge(let path, let size):
            "\(path): manifest is \(size) bytes; refusing more than \(ManifestStore.maximumSize)"
        case .manifestNotAFile(let path): "\(path): manifest is not a regular file"
        case .badManifest(let path, let e): "\(path): \(e)"
        case .badEntry(let index, let e): "manifest entry \(index): \(e)"
        case .io(let e): e.description
        }
    }
}

/// The host side: parses a redirect URL, loads its manifest (both schemas, both
/// path spellings) and checks every entry before anyone opens a file.
public struct RedirectHandler: Sendable {
    /// The container shares are read from.
    public let container: ContainerDirectory

    /// A handler for shares in `container`.
    public init(container: ContainerDirectory) { self.container = container }

    /// Opens the share a redirect URL names; with `consume`, takes it so it is
    /// delivered once.
    public func open(_ redirect: String, consume: Bool = false) throws(RedirectError) -> ReceivedShare {
        let parsed: (url: RedirectURL?, key: ShareKey, scheme: String)
        do { parsed = try RedirectURL.parse(redirect) } catch { throw .badURL(error) }
        return try open(key: parsed.key, expectedKind: parsed.url?.kind, consume: consume)
    }

    /// Opens the share stored under `key`.
    public func open(key: ShareKey, expectedKind: RedirectKind? = nil, consume: Bool = false) throws(RedirectError)
        -> ReceivedShare
    {
        let store = ManifestStore(container: container)
        // Validate before consuming, so a bad manifest is not taken.
        let data = try store.read(key)
        let share = try validate(data, key: key)
        if consume { _ = try store.consume(key) }
        return share
    }

    func validate(_ data: Data, key: ShareKey) throws(RedirectError) -> ReceivedShare {
        let path = container.manifestPath(key: key)
        let decoded: (entries: [SharedMediaFile], schema: ManifestSchema)
        do { decoded = try ManifestCoder.decode(data) } catch { throw .badManifest(path, error) }
        var entries: [SharedMediaFile] = []
        for (index, var entry) in decoded.entries.enumerated() {
            if entry.type != .text && entry.type != .url {
                entry.path = try checked(entry.path, index: index)
                if let thumbnail = entry.thumbnail { entry.thumbnail = try checked(thumbnail, index: index) }
                // share-ingest's own links name container files too: checked the same way.
                if var video = entry.motionVideo {
                    video.path = try checked(video.path, index: index)
                    if let poster = video.thumbnail { video.thumbnail = try checked(poster, index: index) }
                    entry.motionVideo = video
                }
                if var live = entry.livePhoto {
                    live.photo = try checked(live.photo, index: index)
                    live.video = try checked(live.video, index: index)
                    entry.livePhoto = live
                }
                if let compatible = entry.compatible {
                    entry.compatible?.path = try checked(compatible.path, index: index)
                }
                if let previews = entry.previews {
                    var checkedPreviews: [SharedMediaFile.Preview] = []
                    for var preview in previews {
                        preview.path = try checked(preview.path, index: index)
                        checkedPreviews.append(preview)
                    }
                    entry.previews = checkedPreviews
                }
                if let sidecars = entry.sidecars {
                    var checkedSidecars: [SharedMediaFile.Sidecar] = []
                    for var sidecar in sidecars {
                        sidecar.path = try checked(sidecar.path, index: index)
                        checkedSidecars.append(sidecar)
                    }
                    entry.sidecars = checkedSidecars
                }
            }
            entries.append(entry)
        }
        return ReceivedShare(
            key: key, kind: RedirectKind(types: entries.map(\.type)), schema: decoded.schema, entries: entries,
            manifestJSON: data)
    }

    /// Returns the entry's URL re-spelled canonically (percent-encoded) after checking the file.
    private func checked(_ urlString: String, index: Int) throws(RedirectError) -> String {
        guard let path = ManifestCoder.filePath(fromURLString: urlString) else {
            throw .badEntry(index: index, .notAFileURL(urlString))
        }
        switch container.checkedFile(path) {
        case .success(let real): return URL(fileURLWithPath: real).absoluteString
        case .failure(let error): throw .badEntry(index: index, error)
        }
    }
}
