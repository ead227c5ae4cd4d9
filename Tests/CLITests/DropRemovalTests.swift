import Foundation
import TestSupport
import Testing

/// `share watch --on-success delete` removes a delivered drop; its dropper may
/// still write in it (a shell whose working directory is in the drop keeps
/// reaching it after the claim). A folder of the drop swapped for a symbolic
/// link to another place, after it was listed and before its files go, must
/// lose only the link: before, the removal went on by path through the link
/// and deleted the files of the folder it pointed at (as root, anything: 1,797
/// of 4,000 root-only files in a 0700 folder went in one try, racing).
@Suite struct DropRemovalTests {
    @Test func aFolderSwappedForALinkWhileTheDropIsRemovedLosesOnlyTheLink() throws {
        let work = TemporaryDirectory("drop-removal")
        let root = (work.path as NSString).standardizingPath
        // Files outside the drop, named as the drop's hidden folder's (which the
        // walk leaves out, but the removal takes).
        let secret = root + "/secret"
        try FileManager.default.createDirectory(atPath: secret, withIntermediateDirectories: true)
        let names = (0..<50).map { String(format: "a%03d", $0) }
        for name in names { try Data("not the dropper's\n".utf8).write(to: URL(fileURLWithPath: secret + "/" + name)) }
        chmod(secret, 0o700)

        let inbox = root + "/inbox"
        let drop = inbox + "/drop"
        try FileManager.default.createDirectory(atPath: drop + "/.sub", withIntermediateDirectories: true)
        for name in names { FileManager.default.createFile(atPath: drop + "/.sub/" + name, contents: Data()) }
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: drop + "/photo.jpg")
        FileManager.default.createFile(atPath: drop + "/.ready", contents: nil)

        let gate = PauseGate("removing:drop/.sub")
        let share = try DropBoundaryTests.Run(
            ["watch", inbox, "--container", root + "/container", "--once", "--settle", "0", "--on-success", "delete"],
            environment: gate.environment)
        let reached = gate.waitUntilReached { share.process.isRunning }
        #expect(reached, "the removal never reached drop/.sub: \(share.stderr)")
        if reached {
            // The dropper, from inside the claimed drop (its place is found as the watcher put it).
            let claimed = try #require(
                try FileManager.default.contentsOfDirectory(atPath: inbox + "/.processing").first)
            let folder = inbox + "/.processing/" + claimed + "/drop"
            try FileManager.default.moveItem(atPath: folder + "/.sub", toPath: folder + "/.sub.orig")
            try FileManager.default.createSymbolicLink(atPath: folder + "/.sub", withDestinationPath: secret)
            gate.release()
        }
        let status = share.finish()
        #expect(status == 0, "\(share.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: secret).sorted()
        #expect(left == names, "the removal deleted \(names.count - left.count) files outside the drop")
        #expect(share.stderr.contains("ingested"), "\(share.stderr)")
        // The drop is gone, the link with it.
        let rest = (FileManager.default.enumerator(atPath: inbox + "/.processing")?.allObjects as? [String]) ?? []
        #expect(rest.isEmpty, "left: \(rest)")
    }
}
