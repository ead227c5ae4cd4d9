import Foundation
import SystemCalls

/// The manifest dialects that share-extension plugins write, so a host app can be
/// tested against each: a ``ManifestSchema`` and a ``PathSpelling``.
///
/// Two ways to use one in a test:
/// - ingest real files and get the manifest this plugin would have written:
///   `ShareIngestor(container: c, pipeline: .standard.simulating(.seedExtension))`;
/// - write a manifest by hand (e.g. one naming a file outside the container):
///   `ManifestStore(container: c).write(entries, as: .seedExtension, key: key)`.
public enum PluginFlavor: String, Sendable, Hashable, CaseIterable {
    /// The reference iOS share extension (seed 004) and older plugins: legacy
    /// `type` 0/1/2, text-only shares as an array of strings, percent-encoded
    /// `file://` URLs (`URL.absoluteString`).
    case seedExtension
    /// Newer plugins (receive_sharing_intent 1.5+ and its kin), and share-ingest's
    /// `default` pipeline: `type` as a string (`image`, `video`, `file`, `text`,
    /// `url`), `mimeType`, `message`, percent-encoded paths; text beside files.
    /// share-ingest also fills `fileName`, `size`, `width` and `height`, which the
    /// plugins leave out: a host that supports them must not depend on those.
    case receiveSharingIntentV2
    /// Plugins that build paths as `"file://" + path` with nothing escaped (a
    /// space stays a space): legacy types. Not a valid URL; hosts must cope.
    case unencodedPaths

    /// The JSON layout this plugin writes.
    public var schema: ManifestSchema {
        switch self {
        case .receiveSharingIntentV2: .v2
        case .seedExtension, .unencodedPaths: .legacy
        }
    }

    /// How this plugin spells `file://` paths.
    public var pathSpelling: PathSpelling {
        switch self {
        case .unencodedPaths: .unencoded
        case .seedExtension, .receiveSharingIntentV2: .percentEncoded
        }
    }

    /// The manifest this plugin would write for `entries`, in its schema, with file
    /// paths re-spelled its way (the entries may hold either spelling).
    public func encode(_ entries: [SharedMediaFile]) -> Data {
        ManifestCoder.encode(entries.map(adapt), schema: schema)
    }

    private func adapt(_ entry: SharedMediaFile) -> SharedMediaFile {
        var entry = entry
        if entry.type != .text && entry.type != .url {
            entry.path = respell(entry.path)
            entry.thumbnail = entry.thumbnail.map(respell)
        }
        return entry
    }

    private func respell(_ urlString: String) -> String {
        guard let path = ManifestCoder.filePath(fromURLString: urlString) else { return urlString }
        return ManifestCoder.fileURLString(path, spelling: pathSpelling)
    }
}

extension ManifestStore {
    /// Writes a manifest for `key` exactly as `flavor` writes it, for host-app tests:
    /// a share as a plugin would leave it, or a hand-made one (an entry outside the
    /// container, a missing file) to check that the host refuses it. The entries are
    /// written as given, unchecked; fails if a manifest for `key` exists.
    ///
    /// - Returns: the manifest's path.
    @discardableResult
    public func write(_ entries: [SharedMediaFile], as flavor: PluginFlavor, key: ShareKey) throws(SystemError)
        -> String
    {
        try write(flavor.encode(entries), key: key)
    }
}
