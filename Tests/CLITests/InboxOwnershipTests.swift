import Foundation
import TestSupport
import Testing

/// The watcher moves claimed drops through `INBOX/.processing/<batch>/` (and
/// `.done`, `.failed`) by path. A dropper who could replace `.processing` (one
/// made before the watcher's, or renamed away in an inbox others may write in
/// with no sticky bit) could swap a claimed drop's holder for a link to a
/// folder only the watcher may read: the watcher of eb269dd then ingested it
/// (a root-only photo delivered into the container). `share watch` now refuses,
/// before anything is claimed, an inbox others may write in without the sticky
/// bit, one owned by another user, and a `.processing`, `.done` or `.failed`
/// that is a link or not its own; a sticky world-writable inbox is watched.
@Suite struct InboxOwnershipTests {
    static let nobody = (uid: uid_t(65534), gid: gid_t(65534))

    /// An inbox with one drop of `nobody`'s, and a root-only folder named as
    /// the drop beside it (what a swapped holder would lead to).
    static func inbox(_ work: TemporaryDirectory, mode: mode_t) throws -> (inbox: String, secret: String) {
        let root = (work.path as NSString).standardizingPath
        chmod(root, 0o755)
        let inbox = root + "/inbox"
        let secret = root + "/rootonly"
        try FileManager.default.createDirectory(atPath: inbox + "/drop", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: secret + "/drop", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: inbox + "/drop/mine.jpg")
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: secret + "/drop/SECRET.jpg")
        chmod(secret, 0o700)
        FileManager.default.createFile(atPath: inbox + "/drop/.ready", contents: nil)
        for path in [inbox + "/drop", inbox + "/drop/mine.jpg", inbox + "/drop/.ready"] {
            #expect(chown(path, nobody.uid, nobody.gid) == 0)
        }
        chmod(inbox, mode)
        return (inbox, secret)
    }

    static func watch(_ inbox: String, _ work: TemporaryDirectory) throws -> ShareProcess {
        try ShareProcess.run(["watch", inbox, "--container", work.file("container"), "--once", "--settle", "0"])
    }

    @Test func aProcessingFolderADropperMadeIsRefusedBeforeAnyClaim() throws {
        let work = TemporaryDirectory("inbox-owner")
        let (inbox, _) = try Self.inbox(work, mode: 0o1777)
        // The dropper's own .processing, made before the watcher's first start.
        try FileManager.default.createDirectory(atPath: inbox + "/.processing", withIntermediateDirectories: false)
        #expect(chown(inbox + "/.processing", Self.nobody.uid, Self.nobody.gid) == 0)
        chmod(inbox + "/.processing", 0o777)
        let run = try Self.watch(inbox, work)
        #expect(run.status == 66, "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains(inbox + "/.processing: owned by user 65534"), "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: inbox + "/drop/mine.jpg"), "the drop was claimed")

        // A link in its place is refused too.
        try FileManager.default.removeItem(atPath: inbox + "/.processing")
        try FileManager.default.createSymbolicLink(
            atPath: inbox + "/.processing", withDestinationPath: work.path + "/rootonly")
        let linked = try Self.watch(inbox, work)
        #expect(linked.status == 66 && linked.stderr.contains(".processing: is a symbolic link"), "\(linked.stderr)")

        // Once the watcher's own, the drop is watched and delivered.
        try FileManager.default.removeItem(atPath: inbox + "/.processing")
        let watched = try Self.watch(inbox, work)
        #expect(watched.status == 0, "\(watched.stderr)")
        #expect(watched.stdout.contains("ingested=1 failed=0"), "\(watched.stdout)")
    }

    @Test func anInboxOthersMayWriteInWithoutTheStickyBitIsRefused() throws {
        let work = TemporaryDirectory("inbox-sticky")
        let (inbox, _) = try Self.inbox(work, mode: 0o777)
        let run = try Self.watch(inbox, work)
        #expect(run.status == 66, "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("no sticky bit") && run.stderr.contains("chmod +t \(inbox)"), "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: inbox + "/drop/mine.jpg"), "the drop was claimed")
        #expect(!FileManager.default.fileExists(atPath: inbox + "/.processing"), "the inbox was changed")
        // Group-writable alike (the README's inbox is 3770: setgid and sticky).
        chmod(inbox, 0o2770)
        #expect(try Self.watch(inbox, work).status == 66)
        chmod(inbox, 0o3770)
        let watched = try Self.watch(inbox, work)
        #expect(
            watched.status == 0 && watched.stdout.contains("ingested=1 failed=0"), "\(watched.stdout) \(watched.stderr)"
        )
    }

    /// Where fs.protected_hardlinks is 0, anyone may hard-link a file they
    /// cannot read (root's 0600 /etc/shadow) into a shared inbox, and the link
    /// is the file: an inbox others may write in is then not watched. (The
    /// setting is the machine's: a debug build's switch says it is 0.)
    @Test func aSharedInboxIsRefusedWhereAnyoneMayHardLinkAnyFile() throws {
        let work = TemporaryDirectory("inbox-hardlinks")
        let (inbox, _) = try Self.inbox(work, mode: 0o1777)
        let unprotected = try ShareProcess.run(
            ["watch", inbox, "--container", work.file("container"), "--once", "--settle", "0"],
            environment: ["SHARE_TEST_PROTECTED_HARDLINKS": "0"])
        #expect(
            unprotected.status == 66 && unprotected.stderr.contains("fs.protected_hardlinks is 0"),
            "\(unprotected.stderr)")
        #expect(FileManager.default.fileExists(atPath: inbox + "/drop/mine.jpg"), "the drop was claimed")
        // An inbox only the watcher writes in needs no such protection.
        chmod(inbox, 0o755)
        let own = try ShareProcess.run(
            ["watch", inbox, "--container", work.file("container"), "--once", "--settle", "0"],
            environment: ["SHARE_TEST_PROTECTED_HARDLINKS": "0"])
        #expect(own.status == 0 && own.stdout.contains("ingested=1"), "\(own.stdout) \(own.stderr)")
    }

    @Test func anInboxOwnedByAnotherUserIsRefused() throws {
        let work = TemporaryDirectory("inbox-other-owner")
        let (inbox, _) = try Self.inbox(work, mode: 0o755)
        #expect(chown(inbox, Self.nobody.uid, Self.nobody.gid) == 0)
        let run = try Self.watch(inbox, work)
        #expect(run.status == 66 && run.stderr.contains("the inbox is owned by user 65534"), "\(run.stderr)")
    }
}
