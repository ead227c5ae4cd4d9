import Foundation
import TestSupport
import Testing

/// `share open` and `share gc` on manifests that name a file in a real sibling
/// folder whose name extends the container's (`<root>-evil/x.jpg`), directly
/// or through a folder link inside the container: `open` refuses the share as
/// outside the container (not as missing) and leaves it unconsumed; `gc` never
/// removes the sibling's file.
@Suite struct ConfinementCommandTests {
    /// `<parent>/box` (the container) beside `<parent>/box-evil/x.jpg`; `box/escape` links to the sibling folder.
    static func layout() throws -> (parent: TemporaryDirectory, root: String, sibling: String) {
        let parent = TemporaryDirectory("confine-cli")
        let root = URL(fileURLWithPath: parent.path + "/box").standardizedFileURL.path
        try parent.add("box-evil/x.jpg", copying: Fixtures.media("photo.jpg"))
        // A container's folders (`status` would refuse a missing one, and creates nothing).
        for folder in ["", "/manifests/consumed", "/thumbnails", "/.share-ingest/reports"] {
            try FileManager.default.createDirectory(atPath: root + folder, withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(atPath: root + "/escape", withDestinationPath: root + "-evil")
        return (parent, root, root + "-evil")
    }

    static func manifest(_ paths: [String]) -> Data {
        Data(
            ("["
                + paths.map { #"{"path": "file://\#($0)", "thumbnail": null, "type": "image"}"# }.joined(separator: ",")
                + "]").utf8)
    }

    @Test(arguments: ["direct", "folder link", "dot-dot"])
    func shareOpenRefusesAnEntryInTheSiblingAsOutside(way: String) throws {
        let (parent, root, sibling) = try Self.layout()
        let path =
            switch way {
            case "direct": sibling + "/x.jpg"
            case "folder link": root + "/escape/x.jpg"
            default: root + "/../box-evil/x.jpg"
            }
        try Self.manifest([path]).write(to: URL(fileURLWithPath: root + "/manifests/evil.json"))
        let open = try ShareProcess.run(["open", "ShareMedia://dataUrl=evil#media", "--container", root, "--consume"])
        #expect(open.status == 66, "\(open.stderr)")
        #expect(open.stderr.contains("manifest entry 0: \(path): is outside the container; refused"), "\(open.stderr)")
        #expect(open.stdout.isEmpty, "\(open.stdout)")
        #expect(FileManager.default.fileExists(atPath: root + "/manifests/evil.json"), "the refused share was consumed")
        #expect(FileManager.default.contentsEqual(atPath: sibling + "/x.jpg", andPath: Fixtures.media("photo.jpg")))
        _ = parent
    }

    /// `gc` removes the files a consumed manifest names, but only inside the
    /// container: a consumed manifest rewritten to name the sibling's file
    /// (directly and through the folder link) must not make it remove that file.
    @Test func gcNeverRemovesAFileInTheSibling() throws {
        let (parent, root, sibling) = try Self.layout()
        try parent.add("drop/photo.jpg", copying: Fixtures.media("photo.jpg"))
        let ingest = try ShareProcess.run([
            "ingest", "--quiet", "--container", root, "--key", "Real", parent.file("drop"),
        ])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let open = try ShareProcess.run(["open", "ShareMedia://dataUrl=Real#media", "--container", root, "--consume"])
        #expect(open.status == 0, "\(open.stderr)")
        let consumed = root + "/manifests/consumed/Real.json"
        #expect(FileManager.default.fileExists(atPath: consumed))
        try Self.manifest([sibling + "/x.jpg", root + "/escape/x.jpg", root + "/../box-evil/x.jpg"]).write(
            to: URL(fileURLWithPath: consumed))
        let gc = try ShareProcess.run(["gc", "--container", root, "--older-than", "0"])
        #expect(gc.status == 0, "\(gc.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: consumed), "gc did not collect the consumed share: \(gc.stderr)")
        #expect(
            FileManager.default.fileExists(atPath: sibling + "/x.jpg"),
            "gc removed a file outside the container: \(gc.stdout)\(gc.stderr)")
    }

    /// `gc` removes only regular files named by the share's items, each
    /// relative to the open folder: an item's copy and thumbnail replaced by
    /// links to the sibling's file are left, links and target alike.
    @Test func gcLeavesLinksNamedLikeAnItemsFiles() throws {
        let (parent, root, sibling) = try Self.layout()
        try parent.add("drop/photo.jpg", copying: Fixtures.media("photo.jpg"))
        let ingest = try ShareProcess.run([
            "ingest", "--quiet", "--container", root, "--key", "Linked", parent.file("drop"),
        ])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        #expect(
            try ShareProcess.run(["open", "ShareMedia://dataUrl=Linked#media", "--container", root, "--consume"]).status
                == 0)
        let owned = { (folder: String) in
            try FileManager.default.contentsOfDirectory(atPath: folder).filter {
                $0.count > 37 && UUID(uuidString: String($0.prefix(36))) != nil
            }
        }
        let copies = try owned(root)
        let thumbnails = try owned(root + "/thumbnails")
        #expect(copies.count == 1 && thumbnails.count == 1, "\(copies) \(thumbnails)")
        var links: [String] = []
        for path in copies.map({ root + "/" + $0 }) + thumbnails.map({ root + "/thumbnails/" + $0 }) {
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: sibling + "/x.jpg")
            links.append(path)
        }
        let gc = try ShareProcess.run(["gc", "--container", root, "--older-than", "0", "--verbose"])
        #expect(gc.status == 0, "\(gc.stderr)")
        #expect(
            gc.stderr.contains("collected 1 consumed share, 2 files"),
            "only the manifest and the report go: \(gc.stderr)")
        for link in links {
            #expect(
                (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == sibling + "/x.jpg",
                "gc removed the link \(link)")
            #expect(!gc.stdout.contains(link), "\(gc.stdout)")
        }
        #expect(FileManager.default.contentsEqual(atPath: sibling + "/x.jpg", andPath: Fixtures.media("photo.jpg")))
    }
}

/// Where the machine offers a helper no file-system confinement (no Landlock,
/// no namespaces, not root; the debug-only switches hide the first two from the
/// sandbox shim), `share ingest` refuses to decode (exit 2, naming what is
/// missing and the option that accepts it), `share doctor` exits 1 saying why,
/// and `--isolation process-weaker` decodes knowingly. And the release binary
/// obeys none of the test switches.
@Suite(.serialized) struct SandboxFallbackCommandTests {
    static let hidden = ["SHARE_TEST_NO_LANDLOCK": "1", "SHARE_TEST_NO_NAMESPACES": "1"]

    /// A work folder `nobody` can write, with a photo in its drop.
    static func work() throws -> TemporaryDirectory {
        let work = TemporaryDirectory("fallback")
        try work.add("drop/photo.jpg", copying: Fixtures.media("photo.jpg"))
        for path in [work.path, work.file("drop"), work.file("drop/photo.jpg")] { chmod(path, 0o777) }
        return work
    }

    @Test(.enabled(if: geteuid() == 0, "runs as nobody with runuser"))
    func noConfinementAtAllIsRefusedUnlessAccepted() throws {
        let work = try Self.work()
        let refused = try ShareProcess.run(
            ["ingest", "--container", work.file("container"), work.file("drop")], environment: Self.hidden,
            under: ["/usr/sbin/runuser", "-u", "nobody", "--"])
        #expect(refused.status == 69, "\(refused.stderr)")
        #expect(
            refused.stderr.contains(
                "this machine offers a helper no file-system confinement: the kernel has no Landlock"),
            "\(refused.stderr)")
        #expect(
            refused.stderr.contains("accept the weaker sandbox knowingly with --isolation process-weaker"),
            "\(refused.stderr)")
        let thumbnails = (try? FileManager.default.contentsOfDirectory(atPath: work.file("container/thumbnails"))) ?? []
        #expect(thumbnails.isEmpty, "something was decoded: \(thumbnails)")

        let doctor = try ShareProcess.run(
            ["doctor", "--json"], environment: Self.hidden, under: ["/usr/sbin/runuser", "-u", "nobody", "--"])
        #expect(doctor.status == 1, "\(doctor.stdout)\(doctor.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any], "\(doctor.stdout)")
        #expect(json["confinement"] as? String == "none" && json["landlockABI"] as? Int == 0, "\(doctor.stdout)")
        #expect(
            (json["shortfalls"] as? [String])?.first?.contains("no user and mount namespace can be made") == true,
            "\(doctor.stdout)")
        let text = try ShareProcess.run(
            ["doctor"], environment: Self.hidden, under: ["/usr/sbin/runuser", "-u", "nobody", "--"])
        #expect(text.status == 1 && text.stdout.contains("WEAKER than this machine allows:"), "\(text.stdout)")

        let accepted = try ShareProcess.run(
            [
                "ingest", "--isolation", "process-weaker", "--quiet", "--container", work.file("container"),
                work.file("drop"),
            ], environment: Self.hidden,
            under: ["/usr/sbin/runuser", "-u", "nobody", "--"])
        #expect(accepted.status == 0, "\(accepted.stderr)")
    }

    /// The refusal comes before anything is recorded, though the helpers now
    /// start only when an item needs decoding (issue 59): on such a machine a
    /// batch of text alone is refused as a drop of photos is (exit 69, the same
    /// message), and neither leaves a batch behind: the same inputs with
    /// `--isolation process-weaker` are then ingested at once (an unfinished
    /// batch of them would be refused with exit 75, naming it).
    @Test(.enabled(if: geteuid() == 0, "runs as nobody with runuser"))
    func aRefusalComesBeforeTheBatchIsRecorded() throws {
        let work = try Self.work()
        try work.add("texts/note.txt", bytes: Array("hello\n".utf8))
        for path in [work.file("texts"), work.file("texts/note.txt")] { chmod(path, 0o777) }
        let nobody = ["/usr/sbin/runuser", "-u", "nobody", "--"]
        for inputs in [["--text", "hello", work.file("texts")], [work.file("drop")]] {
            let refused = try ShareProcess.run(
                ["ingest", "--container", work.file("container")] + inputs, environment: Self.hidden, under: nobody)
            #expect(refused.status == 69, "\(inputs): \(refused.stderr)")
            #expect(refused.stderr.hasPrefix("share: --isolation process: "), "\(refused.stderr)")
            #expect(
                refused.stderr.contains("this machine offers a helper no file-system confinement"), "\(refused.stderr)")
            let accepted = try ShareProcess.run(
                ["ingest", "--isolation", "process-weaker", "--quiet", "--container", work.file("container")] + inputs,
                environment: Self.hidden,
                under: nobody)
            #expect(accepted.status == 0, "\(inputs): \(accepted.stderr)")
        }
    }

    /// Without Landlock, a machine that can make namespaces (as an ordinary
    /// user) or chroot (as root) gives every helper that confinement: `share
    /// doctor` says so and exits 1 (weaker than the strongest), `share ingest` decodes.
    @Test(.enabled(if: geteuid() == 0, "runs as nobody with runuser"), arguments: [false, true])
    func withoutLandlockTheNextConfinementIsUsedAndDoctorSaysSo(asRoot: Bool) throws {
        let work = try Self.work()
        let environment = asRoot ? Self.hidden : ["SHARE_TEST_NO_LANDLOCK": "1"]
        let wrapper = asRoot ? [] : ["/usr/sbin/runuser", "-u", "nobody", "--"]
        let doctor = try ShareProcess.run(["doctor"], environment: environment, under: wrapper)
        #expect(doctor.status == 1, "\(doctor.stdout)\(doctor.stderr)")
        let expected =
            asRoot ? "chroot into an empty folder" : "a user and mount namespace with a read-only root of its own"
        #expect(doctor.stdout.contains("  confinement:      \(expected)"), "\(doctor.stdout)")
        #expect(
            doctor.stdout.contains(
                "The helper's sandbox is as strong as this machine allows, but weaker than the strongest:"),
            "\(doctor.stdout)")
        #expect(doctor.stdout.contains("Landlock is not available"), "\(doctor.stdout)")
        let ingest = try ShareProcess.run(
            ["ingest", "--quiet", "--container", work.file("container"), work.file("drop")], environment: environment,
            under: wrapper)
        #expect(ingest.status == 0, "\(ingest.stderr)")
    }

    /// The release binary (built by scripts/test.sh; `SHARE_RELEASE_BINARY`
    /// names it) ignores every test switch: a planned crash, a skipped sandbox
    /// step, the recording policy and the hidden Landlock. Its helper has the
    /// allowlist and Landlock, and the photo is decoded.
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["SHARE_RELEASE_BINARY"] != nil
                || ProcessInfo.processInfo.environment["CI"] == "true"))
    func theReleaseBinaryIgnoresTheTestSwitches() throws {
        let binary = try #require(
            ProcessInfo.processInfo.environment["SHARE_RELEASE_BINARY"],
            "CI must build the release binary (scripts/test.sh)")
        try #require(FileManager.default.isExecutableFile(atPath: binary), "\(binary) is missing")
        let work = try Self.work()
        let switches = [
            "SHARE_TEST_HELPER_FAULT": "segv:photo.jpg", "SHARE_TEST_SANDBOX_SKIP": "landlock,seccomp,privileges",
            "SHARE_SANDBOX_RECORD": "1",
            "SHARE_TEST_NO_LANDLOCK": "1", "SHARE_TEST_NO_NAMESPACES": "1",
        ]
        let doctor = try Self.runBinary(binary, ["doctor", "--json"], environment: switches)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any],
            "\(doctor.stdout)\(doctor.stderr)")
        let helper = json["helper"] as? [String: Any] ?? [:]
        #expect(helper["policy"] as? String == "allowlist" && helper["seccomp"] as? Int == 2, "\(doctor.stdout)")
        if (json["landlockABI"] as? Int ?? 0) > 0 {
            #expect(helper["confinement"] as? String == "landlock", "\(doctor.stdout)")
        }
        let report = work.file("report.json")
        let ingest = try Self.runBinary(
            binary, ["ingest", "--container", work.file("container"), "--report", report, work.file("drop")],
            environment: switches)
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        #expect(text.contains("\"ingested\"") && !text.contains("decoderCrashed"), "\(text)")
    }

    /// Runs `binary arguments…` to its end (its output in files, so neither pipe can fill up).
    static func runBinary(_ binary: String, _ arguments: [String], environment: [String: String]) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let outputs = TemporaryDirectory("release-run")
        FileManager.default.createFile(atPath: outputs.file("out"), contents: nil)
        FileManager.default.createFile(atPath: outputs.file("err"), contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputs.file("out")))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: outputs.file("err")))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let out = (try? String(contentsOfFile: outputs.file("out"), encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: outputs.file("err"), encoding: .utf8)) ?? ""
        return (process.terminationStatus, out, err)
    }
}
