import Foundation
import TestSupport
import Testing

/// An operator's slip must not destroy shares (issue 51, findings 10 and 11):
/// `watch` refuses an inbox that is the container, lies inside it or holds it,
/// before touching anything; `status`, `open`, `report` and `gc` never make a
/// container where none is.
@Suite struct OperatorSlipTests {
    /// A container holding one delivered share: its URL.
    static func delivered(in container: String) throws -> String {
        let run = try ShareProcess.run([
            "ingest", "--container", container, "--key", "Kept", Fixtures.media("photo.jpg"),
        ])
        #expect(run.status == 0, "\(run.stderr)")
        return try #require(run.lastLine)
    }

    /// Everything under `path`, relative, sorted (what a refused command must leave as it was).
    static func tree(_ path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
    }

    /// `watch same --container same`: observed moving each copy into `.done/`, after which `share open` failed.
    @Test func anInboxThatIsTheContainerIsRefused() throws {
        let work = TemporaryDirectory("slip-same")
        let same = work.file("same")
        let url = try Self.delivered(in: same)
        let before = Self.tree(same)
        let run = try ShareProcess.run([
            "watch", same, "--container", same, "--once", "--settle", "0", "--isolation", "none",
        ])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(
            run.stderr
                == "share watch: INBOX \(same) is the container \(same): give the container a folder of its own, outside the inbox\n",
            "\(run.stderr)")
        #expect(Self.tree(same) == before, "something was moved or made")
        // The same folder named another way (a link to it) is the same folder.
        try FileManager.default.createSymbolicLink(atPath: work.file("link"), withDestinationPath: same)
        let linked = try ShareProcess.run([
            "watch", work.file("link"), "--container", same, "--once", "--settle", "0", "--isolation", "none",
        ])
        #expect(linked.status == 64 && linked.stderr.contains("is the container"), "\(linked.stderr)")
        let open = try ShareProcess.run(["open", url, "--container", same, "--consume"])
        #expect(open.status == 0, "the delivered share no longer opens: \(open.stderr)")
    }

    /// `watch inbox --container inbox/c`: observed moving the container into `.failed/<batch>/c`.
    @Test func aContainerInsideTheInboxIsRefused() throws {
        let work = TemporaryDirectory("slip-inside")
        let inbox = work.file("inbox")
        let url = try Self.delivered(in: inbox + "/c")
        let before = Self.tree(inbox)
        let run = try ShareProcess.run([
            "watch", inbox, "--container", inbox + "/c", "--once", "--settle", "0", "--isolation", "none",
        ])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("INBOX \(inbox) holds the container \(inbox)/c"), "\(run.stderr)")
        #expect(Self.tree(inbox) == before)
        #expect(try ShareProcess.run(["open", url, "--container", inbox + "/c", "--consume"]).status == 0)
        // One not made yet, inside the inbox, is refused as well (and not made).
        let later = try ShareProcess.run([
            "watch", inbox, "--container", inbox + "/new/c", "--once", "--isolation", "none",
        ])
        #expect(later.status == 64 && later.stderr.contains("holds the container"), "\(later.stderr)")
        #expect(!FileManager.default.fileExists(atPath: inbox + "/new"))
    }

    @Test func anInboxInsideTheContainerIsRefused() throws {
        let work = TemporaryDirectory("slip-holds")
        let container = work.file("c")
        let url = try Self.delivered(in: container)
        try FileManager.default.createDirectory(atPath: container + "/inbox", withIntermediateDirectories: true)
        let before = Self.tree(container)
        let run = try ShareProcess.run([
            "watch", container + "/inbox", "--container", container, "--once", "--settle", "0", "--isolation", "none",
        ])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("INBOX \(container)/inbox lies inside the container \(container)"), "\(run.stderr)")
        #expect(Self.tree(container) == before)
        #expect(try ShareProcess.run(["open", url, "--container", container]).status == 0)
    }

    /// A sibling whose name extends the container's is not inside it.
    @Test func aSiblingFolderIsNotTheContainer() throws {
        let work = TemporaryDirectory("slip-sibling")
        try FileManager.default.createDirectory(atPath: work.file("box-inbox"), withIntermediateDirectories: true)
        let run = try ShareProcess.run([
            "watch", work.file("box-inbox"), "--container", work.file("box"), "--once", "--isolation", "none",
        ])
        #expect(run.status == 0, "\(run.stderr)")
    }

    /// Observed: `share watch /nope` said "not a folder".
    @Test func aMissingInboxIsNamedAsMissing() throws {
        let work = TemporaryDirectory("slip-nope")
        let run = try ShareProcess.run(["watch", work.file("nope"), "--container", work.file("c"), "--once"])
        #expect(run.status == 66 && run.stderr == "share: INBOX \(work.file("nope")) does not exist\n", "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("c")), "a container was made")
        let file = try work.add("file", bytes: [1])
        let notFolder = try ShareProcess.run(["watch", file, "--container", work.file("c"), "--once"])
        #expect(notFolder.status == 66 && notFolder.stderr.contains("is not a folder"), "\(notFolder.stderr)")
    }

    /// Observed: each of them made the container and a journal.
    @Test(arguments: [
        ["status"], ["gc", "--older-than", "0"], ["open", "ShareMedia://dataUrl=Key#media"],
        ["report", "Key", "--html", "/tmp/never.html"],
    ])
    func aCommandThatReadsAContainerNeverMakesOne(arguments: [String]) throws {
        let work = TemporaryDirectory("slip-missing")
        let container = URL(fileURLWithPath: work.file("mistyped")).standardizedFileURL.path
        let run = try ShareProcess.run(arguments + ["--container", container])
        #expect(run.status == 66, "\(arguments): \(run.status) \(run.stderr)")
        #expect(run.stderr == "share: container \(container) is not usable: does not exist\n", "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: container), "\(arguments[0]) made the container")
        // The default container, too.
        let home = URL(fileURLWithPath: work.file("home")).standardizedFileURL.path
        let defaulted = try ShareProcess.run(
            arguments, environment: ["HOME": home, "XDG_DATA_HOME": "", "SHARE_CONTAINER": ""])
        #expect(
            defaulted.status == 66 && defaulted.stderr.contains("\(home)/.local/share/share-ingest/container"),
            "\(defaulted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home), "\(arguments[0]) made the default container")
    }

    /// An existing folder that no batch has run in: `status` lists nothing and makes nothing in it.
    @Test func statusOfAnEmptyFolderMakesNoJournal() throws {
        let work = TemporaryDirectory("slip-empty")
        try FileManager.default.createDirectory(atPath: work.file("c"), withIntermediateDirectories: true)
        let run = try ShareProcess.run(["status", "--container", work.file("c")])
        #expect(run.status == 0 && run.stdout == "no batches\n", "\(run.stdout)\(run.stderr)")
        #expect(Self.tree(work.file("c")).isEmpty)
    }
}
