import Foundation
import ShareManifest
import SystemCalls

/// A container's temporaries, for its fan-in (``BatchCompletion``): what
/// the journal's ``Recovery`` sweeps after a crash, read by item.
extension ContainerDirectory {
    /// The temporary files of copies and thumbnails (`.<UUID>.<ext>.….partial`,
    /// `.<UUID>.jpg.….partial`) in this container, by the UUID of the item they
    /// belong to: once the items of a batch have all finished, nobody writes its
    /// temporaries any more, and the fan-in removes them, whoever left them.
    func temporaries() -> [UUID: [String]] {
        var found: [UUID: [String]] = [:]
        for directory in [root, thumbnailsDirectory] {
            for name in FileSystem.names(in: directory, endingWith: ".partial")
            where name.count > 38 && name.hasPrefix(".") {
                guard let id = UUID(uuidString: String(name.dropFirst().prefix(36))) else { continue }
                found[id, default: []].append(directory + "/" + name)
            }
        }
        return found
    }
}
