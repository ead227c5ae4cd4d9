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

    /// `.<name>.<host>-<pid>-<random>.partial` → host and pid.
    static func owner(of name: String) -> (host: String, pid: pid_t)? {
        let stem = name.dropLast(".partial".count)
        guard let lastDot = stem.lastIndex(of: ".") else { return nil }
        let tag = stem[stem.index(after: lastDot)...].split(separator: "-")
        guard tag.count == 3, let pid = pid_t(tag[1]) else { return nil }
        return (String(tag[0]), pid)
    }
}
