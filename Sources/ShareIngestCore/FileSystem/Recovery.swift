import Foundation
import Glibc
import ShareManifest
import SystemCalls

/// Clean-up after a crash: removes temporary files (`.partial`) that a dead
/// process on this host left in the container. Files of live processes, and of
/// other hosts sharing the container, are left alone.
enum Recovery {
    static func sweep(_ container: ContainerDirectory) {
        for directory in [
            container.root, container.thumbnailsDirectory, container.manifestsDirectory, container.reportsDirectory,
        ] {
            for name in FileSystem.names(in: directory, endingWith: ".partial") where name.hasPrefix(".") {
                if let owner = owner(of: name), owner.host == FileSystem.hostTag, !FileSystem.processExists(owner.pid) {
                    FileSystem.remove(directory + "/" + name)
                }
            }
        }
    }

    /// The temporary files of copies and thumbnails (`.<UUID>.<ext>.….partial`,
    /// `.<UUID>.jpg.….partial`) in the container, by the UUID of the item they
    /// belong to: once the items of a batch have all finished, nobody writes its
    /// temporaries any more, and the fan-in removes them, whoever left them.
    static func temporaries(in container: ContainerDirectory) -> [UUID: [String]] {
        var found: [UUID: [String]] = [:]
        for directory in [container.root, container.thumbnailsDirectory] {
            for name in FileSystem.names(in: directory, endingWith: ".partial")
            where name.count > 38 && name.hasPrefix(".") {
                guard let id = UUID(uuidString: String(name.dropFirst().prefix(36))) else { continue }
                found[id, default: []].append(directory + "/" + name)
            }
        }
        return found
    }

    /// `.<name>.<host>-<pid>-<random>.partial` → host and pid.
    static func owner(of name: String) -> (host: String, pid: pid_t)? {
        let stem = name.dropLast(".partial".count)
        guard let lastDot = stem.lastIndex(of: ".") else { return nil }
        let tag = stem[stem.index(after: lastDot)...].split(separator: "-")
        guard tag.count == 3, let pid = pid_t(tag[1]) else { return nil }
        return (String(tag[0]), pid)
    }
}
