import Foundation
import TestSupport
import Testing

/// `share watch` on a full disk: the drop's batch stops for want of space, its
/// files stay in `.processing/` (never `.failed/`, never deleted), no new drop
/// is taken, and the batch is finished once there is room: by the next
/// `--once` run, or by the running watcher itself.
@Suite(.serialized) struct WatchDiskFullTests {
    @Test func watchOnceOnAFullDiskExits73AndTheNextRunFinishesTheDrop() throws {
        guard let full = try FullInbox() else { return }
        let (disk, inbox, container, drop) = (full.disk, full.inbox, full.container, full.drop)
        let arguments = ["watch", inbox, "--container", container, "--once", "--settle", "0", "--on-success", "delete"]

        let first = try ShareProcess.run(arguments)
        #expect(first.status == 73, "exit \(first.status): \(first.stderr.suffix(2000))")
        #expect(first.stderr.contains("container disk full"), "\(first.stderr.suffix(2000))")
        #expect(first.stderr.contains("run share watch again"), "\(first.stderr.suffix(2000))")
        #expect(first.stdout.contains("stopped=diskFull"), "\(first.stdout)")
        #expect(!first.stdout.contains("failed="), "nothing failed: \(first.stdout)")
        // Nothing deleted, nothing filed as failed: the drop waits, whole.
        #expect(Self.files(under: inbox + "/.processing").count == drop.names.count, "the drop waits in .processing")
        #expect(Self.files(under: inbox + "/.failed").isEmpty && Self.files(under: inbox + "/.done").isEmpty)

        // Still full: the next run says so again and loses nothing.
        let again = try ShareProcess.run(arguments)
        #expect(again.status == 73, "exit \(again.status): \(again.stderr.suffix(2000))")
        #expect(Self.files(under: inbox + "/.processing").count == drop.names.count)

        try disk.resize(kilobytes: 64 * 1024)
        let last = try ShareProcess.run(arguments)
        #expect(last.status == 0, "exit \(last.status): \(last.stderr.suffix(2000))")
        try DiskFullTests.expectDeliveredOnce(drop.names, container: container)
        #expect(Self.files(under: inbox + "/.processing").isEmpty, "delivered, then deleted")
    }

    @Test func aRunningWatcherFinishesTheStoppedDropOnceThereIsRoom() throws {
        guard let full = try FullInbox() else { return }
        let (disk, inbox, container, drop) = (full.disk, full.inbox, full.container, full.drop)

        let watcher = try DropBoundaryTests.Run(
            ["watch", inbox, "--container", container, "--settle", "0"], environment: [:])
        defer { if watcher.process.isRunning { kill(watcher.process.processIdentifier, SIGKILL) } }
        #expect(
            eventually { watcher.stdout.contains("stopped=diskFull") || !watcher.process.isRunning },
            "\(watcher.stderr.suffix(2000))")
        #expect(watcher.process.isRunning, "the watcher keeps running on a full disk: \(watcher.stderr.suffix(2000))")
        // A second drop, put in while the disk is full, is delivered too once there is room.
        try FileManager.default.createDirectory(atPath: inbox + "/later", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: inbox + "/later/note.txt", contents: Data("later\n".utf8))

        try disk.resize(kilobytes: 64 * 1024)
        let done = eventually { Self.files(under: inbox + "/.done").count == drop.names.count + 1 }
        #expect(done, "both drops delivered and moved to .done: \(watcher.stdout)\n\(watcher.stderr.suffix(2000))")
        kill(watcher.process.processIdentifier, SIGTERM)
        _ = watcher.finish()
        let manifests = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter {
            $0.hasSuffix(".json")
        }
        #expect(manifests.count == 2, "one manifest per drop: \(manifests)")
        #expect(watcher.stdout.components(separatedBy: "stopped=diskFull").count - 1 >= 1)
        #expect(!watcher.stdout.contains("failed=1"), "nothing failed: \(watcher.stdout)")
    }

    static func files(under folder: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
        return enumerator.compactMap { $0 as? String }.filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder + "/" + $0, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
    }
}

/// An inbox holding one drop of 200 photos and 100 notes, watched into a
/// container on a 5 MiB tmpfs (nil where no tmpfs can be mounted): the
/// drop cannot fit.
final class FullInbox {
    let disk: Tmpfs
    let work = TemporaryDirectory("watch-disk-full")
    let drop: DiskFullTests.Drop
    var inbox: String { work.path + "/inbox" }
    var container: String { disk.path + "/c" }

    init?() throws {
        guard let disk = Tmpfs(kilobytes: 5 * 1024) else { return nil }
        self.disk = disk
        drop = try DiskFullTests.photosAndNotes(photos: 200, notes: 100)
        try FileManager.default.createDirectory(atPath: work.path + "/inbox", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: drop.path, toPath: work.path + "/inbox/drop")
    }

    // The drop's folder goes back where its TemporaryDirectory removes it (if it is still whole).
    deinit { try? FileManager.default.moveItem(atPath: inbox + "/drop", toPath: drop.path) }
}
