import Foundation
import Glibc
import ShareManifest
import SystemCalls

/// Clean-up after a crash: removes temporary files (`.partial`) that a dead
/// process on this host left in the container. Files of live processes, and of
/// other hosts sharing the container, are left alone.
enum Recovery {
    static func sweep(_ container: ContainerDirectory) {
        for directory in [container.root, container.thumbnailsDirectory, container.manifestsDirectory, container.reportsDirectory] {
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
            for name in FileSystem.names(in: directory, endingWith: ".partial") where name.count > 38 && name.hasPrefix(".") {
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

/// Named points where a test can make the process die (`SHARE_CRASH_POINT=<name>`
/// raises SIGKILL there), to prove that a crash at that instruction loses nothing.
enum CrashPoint {
    private static let armed = ProcessInfo.processInfo.environment["SHARE_CRASH_POINT"]

    static func hit(_ name: String) {
        if armed == name { Processes.raiseInSelf(SIGKILL) }
    }
}

/// A test-only brake (`SHARE_TEST_THROTTLE_MS=<ms>`): a pause after each planned
/// item, after each stage of each item and around the batch's end, so a test can
/// aim a real signal at observed progress (k copies on disk, the manifest) on a
/// machine of any speed. Unset, it costs one branch.
enum TestThrottle {
    private static let seconds: Double? = ProcessInfo.processInfo.environment["SHARE_TEST_THROTTLE_MS"]
        .flatMap(Double.init).map { max(0, $0) / 1000 }

    static func pause() {
        if let seconds { MonotonicClock.sleep(seconds) }
    }
}
