import Foundation
import TestSupport
import Testing

/// Issue 58, finding 9: `watch` compared the inbox and the container as
/// paths, so a container bind-mounted onto the inbox passed (and an earlier
/// share was destroyed: its folders taken as drops), and a `--report-dir`
/// inside the inbox made every report a new drop (87 batches in 15 s). The
/// folders are now compared by the device and inode of each and of each of
/// their ancestors, and a report folder in the inbox is refused (exit 64).
@Suite(.serialized) struct FolderIdentityTests {
    /// Everything under `path`, relative, sorted.
    static func tree(_ path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
    }

    /// `mount --bind source target`, undone by the returned closure.
    static func bind(_ source: String, onto target: String) throws -> () -> Void {
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["--bind", source, target]
        try mount.run()
        mount.waitUntilExit()
        try #require(mount.terminationStatus == 0, "mount --bind \(source) \(target) failed")
        return {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [target]
            if (try? umount.run()) != nil { umount.waitUntilExit() }
        }
    }

    @Test func aContainerBindMountedOntoTheInboxIsTheContainer() throws {
        let work = TemporaryDirectory("identity-bind")
        let container = (work.file("c") as NSString).standardizingPath
        let inbox = (work.file("inbox") as NSString).standardizingPath
        let earlier = try ShareProcess.run([
            "ingest", "--container", container, "--key", "Kept", "--isolation", "none", Fixtures.media("photo.jpg"),
        ])
        #expect(earlier.status == 0, "\(earlier.stderr)")
        let url = try #require(earlier.lastLine)
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: false)
        do {
            let unmount = try Self.bind(container, onto: inbox)
            defer { unmount() }
            let before = Self.tree(container)
            let run = try ShareProcess.run([
                "watch", inbox, "--container", container, "--once", "--settle", "0", "--isolation", "none",
            ])
            #expect(run.status == 64, "\(run.stdout) \(run.stderr)")
            #expect(
                run.stderr
                    == "share watch: INBOX \(inbox) is the container \(container): give the container a folder of its own, outside the inbox\n",
                "\(run.stderr)")
            #expect(Self.tree(container) == before, "something was moved or made")
        }
        let open = try ShareProcess.run(["open", url, "--container", container])
        #expect(open.status == 0, "the earlier share no longer opens: \(open.stderr)")
    }

    @Test func aReportFolderInsideTheInboxIsRefused() throws {
        let work = TemporaryDirectory("identity-reports")
        let inbox = (work.file("inbox") as NSString).standardizingPath
        try work.add("inbox/drop/photo.jpg", copying: Fixtures.media("photo.jpg"))
        try work.add("inbox/drop/.ready", bytes: [])
        let before = Self.tree(inbox)
        for reports in [inbox + "/reports", inbox, inbox + "/drop/deeper"] {
            let run = try ShareProcess.run([
                "watch", inbox, "--container", work.file("c"), "--once", "--settle", "0", "--isolation", "none",
                "--report-dir", reports,
            ])
            #expect(run.status == 64, "\(reports): \(run.stdout) \(run.stderr)")
            #expect(run.stderr.contains("--report-dir \(reports) is inside INBOX \(inbox)"), "\(run.stderr)")
            #expect(Self.tree(inbox) == before, "\(reports): the inbox was changed")
        }
        // Named through a link, it is still inside.
        try FileManager.default.createSymbolicLink(atPath: work.file("via"), withDestinationPath: inbox)
        let linked = try ShareProcess.run([
            "watch", inbox, "--container", work.file("c"), "--once", "--isolation", "none", "--report-dir",
            work.file("via/r"),
        ])
        #expect(linked.status == 64 && linked.stderr.contains("is inside INBOX"), "\(linked.stderr)")
        // Beside the inbox, reports are written and the drop delivered once.
        let beside = try ShareProcess.run([
            "watch", inbox, "--container", work.file("c"), "--once", "--settle", "0", "--isolation", "none",
            "--report-dir", work.file("reports"),
        ])
        #expect(
            beside.status == 0 && beside.stdout.contains("ingested=1 failed=0"), "\(beside.stdout) \(beside.stderr)")
        #expect(beside.stdout.split(separator: "\n").count == 1, "\(beside.stdout)")
    }
}
