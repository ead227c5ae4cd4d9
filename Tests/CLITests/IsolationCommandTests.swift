import Foundation
import Glibc
import TestSupport
import Testing

/// `share ingest` decodes in sandboxed helper processes by default
/// (`--isolation process`): what a user sees when a file crashes the decoder,
/// exhausts its memory, loops, or when a helper is killed from outside, and
/// which formats only the sandbox decodes.
@Suite struct IsolationCommandTests {
    // MARK: - Helpers

    /// Runs a tool (vips, ffmpeg) to make test media.
    static func make(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(tool) \(arguments)")
    }

    /// The report's items by the last component of their source.
    static func items(_ reportPath: String) throws -> [String: [String: Any]] {
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as? [String: Any]
        )
        var items: [String: [String: Any]] = [:]
        for item in report["items"] as? [[String: Any]] ?? [] {
            items[((item["source"] as? String ?? "") as NSString).lastPathComponent] = item
        }
        return items
    }

    /// A pipeline like the default one with 1-second time limits (facts and thumbnail).
    static func quickPipeline(in directory: TemporaryDirectory) throws -> String {
        try directory.add(
            "quick.json",
            bytes: Array(
                """
                {"name": "quick", "stages": [
                  {"stage": "sniff"}, {"stage": "copy", "workers": 2}, {"stage": "probe", "workers": 2, "timeLimit": 1},
                  {"stage": "thumbnail", "workers": 2, "timeLimit": 1, "for": ["image", "video", "document"]}, {"stage": "manifest"}]}
                """.utf8))
    }

    // MARK: - Failures of one item

    /// SIGSEGV, abort(), an endless loop and a 10 GB allocation in the decoder
    /// each fail their own item with the reason a user can act on; every other
    /// item of the batch is delivered, and a video whose poster crashes the
    /// decoder is still delivered, without a poster.
    @Test func eachDecoderFaultFailsOnlyItsItem() throws {
        let drop = TemporaryDirectory("faults")
        for name in ["segv", "abort", "loop", "alloc", "good-1", "good-2", "good-3"] {
            try drop.add("\(name).jpg", copying: Fixtures.media("photo.jpg"))
        }
        try drop.add("clip.mp4", copying: Fixtures.media("clip-h264.mp4"))
        try drop.add("poster-crash.mp4", copying: Fixtures.media("clip-h264.mp4"))
        let work = TemporaryDirectory("faults-work")
        let reportPath = work.file("report.json")
        let result = try ShareProcess.run(
            [
                "ingest", "--container", work.file("container"), "--pipeline", try Self.quickPipeline(in: work),
                "--report", reportPath, drop.path,
            ],
            environment: [
                "SHARE_TEST_HELPER_FAULT":
                    "segv:segv.jpg,abort:abort.jpg,loop:loop.jpg,alloc:alloc.jpg,segv-thumbnail:poster-crash.mp4"
            ])
        #expect(result.status == 1, "\(result.stderr)")
        let items = try Self.items(reportPath)
        let expected: [(String, String, String)] = [
            ("segv.jpg", "decoderCrashed", "SIGSEGV"), ("abort.jpg", "decoderCrashed", "SIGABRT"),
            ("loop.jpg", "timeLimit", "decoder helper was stopped"),
            ("alloc.jpg", "memoryLimit", "MiB of address space"),
        ]
        for (name, reason, text) in expected {
            #expect(items[name]?["status"] as? String == "failed", "\(name): \(items[name] ?? [:])")
            #expect(items[name]?["reason"] as? String == reason, "\(name): \(items[name] ?? [:])")
            let message = items[name]?["error"] as? String ?? ""
            #expect(message.contains(text) && message.contains(name), "\(name): \(message)")
        }
        for name in ["good-1.jpg", "good-2.jpg", "good-3.jpg", "clip.mp4"] {
            #expect(items[name]?["status"] as? String == "ingested", "\(name): \(items[name] ?? [:])")
            #expect(items[name]?["thumbnail"] as? String != nil, "\(name)")
            let warnings = items[name]?["warnings"] as? [String] ?? []
            #expect(warnings.isEmpty, "\(name): \(items[name] ?? [:])")
        }
        let posterCrash = items["poster-crash.mp4"] ?? [:]
        #expect(posterCrash["status"] as? String == "ingested", "\(posterCrash)")
        #expect(posterCrash["type"] as? String == "video")
        #expect(posterCrash["thumbnail"] as? String == nil)
        #expect(
            (posterCrash["warnings"] as? [String])?.contains {
                $0.contains("no poster frame") && $0.contains("SIGSEGV")
            } == true, "\(posterCrash)")
        #expect(result.stderr.contains("5 of 9 items ingested, 4 failed"), "\(result.stderr)")
    }

    // MARK: - A helper killed from outside

    /// The decoder helpers of `parent`: its children running the helper mode, and
    /// the children of its helper template.
    static func helpers(of parent: pid_t) -> [pid_t] {
        let children = decodeHelperChildren(of: parent)
        // Helpers forked from the template are its children; the template (whose
        // command line they share) decodes nothing itself.
        return children.flatMap { child in
            isTemplate(child) ? decodeHelperChildren(of: child) : [child]
        }
    }

    private static func decodeHelperChildren(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 2,
                Int32(fields[1]) == parent
            else { return false }
            return commandLine(of: pid).contains("decode-helper")
                || ["share-template", "share-decoder"].contains(name(of: pid))
        }
    }

    /// A template started as `decode-helper --template`, or forked from `share` at
    /// its start (then named `share-template`; its helpers `share-decoder`).
    static func isTemplate(_ pid: pid_t) -> Bool {
        commandLine(of: pid).split(separator: "\0").contains("--template") || name(of: pid) == "share-template"
    }

    /// The process's name (`/proc/PID/comm`).
    static func name(of pid: pid_t) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "").trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    private static func commandLine(of pid: pid_t) -> String {
        (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
    }

    /// True while `pid` holds an open descriptor of a file in `container`: the
    /// request it was handed, i.e. it is decoding an item. (Reading another
    /// process's descriptors needs root or CAP_SYS_PTRACE: helpers are not dumpable.)
    static func isDecoding(_ pid: pid_t, in container: String) -> Bool {
        let directory = "/proc/\(pid)/fd"
        for fd in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(fd)"),
                target.hasPrefix(container + "/"), !target.contains("/.share-ingest/")
            {
                return true
            }
        }
        return false
    }

    /// SIGKILL on a helper while it decodes an item of a 40-photo batch costs no
    /// item: that photo is decoded again in a fresh helper (and says so), the
    /// rest never notice, and the batch exits 0.
    @Test(.enabled(if: geteuid() == 0, "reads a helper's /proc/PID/fd, which needs root"))
    func killingAHelperMidBatchCostsNoItem() throws {
        let drop = TemporaryDirectory("forty")
        let scratch = TemporaryDirectory("forty-scratch")
        // 1920×1440 photos: long enough to decode that a helper is caught at it.
        let large = scratch.file("large.jpg")
        try Self.make("/usr/bin/vips", ["resize", Fixtures.media("photo.jpg"), large + "[Q=90]", "3"])
        let photo = try Data(contentsOf: URL(fileURLWithPath: large))
        for index in 0..<40 {
            try drop.add(String(format: "IMG_%04d.JPG", index), bytes: Array(photo) + Array("unique \(index)".utf8))
        }
        let work = TemporaryDirectory("forty-work")
        // As /proc spells it (the temporary folder's path may hold "//").
        let container = try #require(realpath(work.path, nil).map { String(cString: $0) }) + "/container"
        let reportPath = work.file("report.json")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
        process.arguments = ["ingest", "--quiet", "--container", container, "--report", reportPath, drop.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()

        // Wait (on what /proc shows) until a helper holds one of the copies, then kill it.
        var killed: pid_t?
        let deadline = Date().addingTimeInterval(120)
        while killed == nil, process.isRunning, Date() < deadline {
            for helper in Self.helpers(of: process.processIdentifier) where Self.isDecoding(helper, in: container) {
                if kill(helper, SIGKILL) == 0 { killed = helper }
                break
            }
            usleep(200)
        }
        process.waitUntilExit()
        let victim = try #require(killed, "no helper was seen decoding")
        #expect(process.terminationStatus == 0)
        let items = try Self.items(reportPath)
        #expect(items.count == 40)
        #expect(items.values.allSatisfy { $0["status"] as? String == "ingested" && $0["thumbnail"] as? String != nil })
        let retried = items.filter {
            ($0.value["warnings"] as? [String] ?? []).contains { $0.contains("read again in a fresh helper") }
        }
        #expect(retried.count == 1, "items decoded again: \(retried.keys.sorted())")
        #expect((retried.first?.value["warnings"] as? [String])?.first?.contains("SIGKILL") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container + "/thumbnails").count == 40)
        #expect(kill(victim, 0) != 0)
    }

    // MARK: - The helper template

    /// A field of /proc/PID/stat after the command name (3 is the state, 4 the
    /// parent, 5 the process group).
    static func statField(_ pid: pid_t, _ number: Int) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > number - 3
        else { return nil }
        return Int32(fields[number - 3])
    }

    static func children(of parent: pid_t) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }.filter {
            statField($0, 4) == parent
        }
    }

    /// `share ingest` starts its helper template (`share-helper`, since issue 59:
    /// `share` no longer forks one from itself): a child named
    /// `share-template`, in a process group of its own (a Ctrl-C meant for share
    /// does not reach it), holding nothing of share's but its socket and
    /// /dev/null; its helpers are named `share-decoder` and sandboxed. With
    /// `--isolation none` its helpers are not sandboxed.
    @Test(.enabled(if: geteuid() == 0, "reads the template's /proc/PID/fd, which needs root"))
    func ingestStartsItsHelperTemplate() throws {
        let drop = TemporaryDirectory("template-drop")
        for index in 0..<6 {
            try drop.add(
                "IMG_\(index).JPG",
                bytes: Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg")))) + [UInt8(index)])
        }
        for isolation in ["process", "none"] {
            let work = TemporaryDirectory("template-work")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
            process.arguments = [
                "ingest", "--quiet", "--isolation", isolation, "--container", work.file("container"), drop.path,
            ]
            // Slow enough that the helpers are seen at work.
            process.environment = ProcessInfo.processInfo.environment.merging(["SHARE_TEST_THROTTLE_MS": "100"]) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let share = process.processIdentifier
            var templates: Set<pid_t> = []
            var decoders: Set<pid_t> = []
            var sandboxed = true
            var ownGroup = true
            var descriptors: Set<String> = []
            while process.isRunning {
                for child in Self.children(of: share) where Self.name(of: child) == "share-template" {
                    templates.insert(child)
                    ownGroup = ownGroup && Self.statField(child, 5) == child
                    if let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(child)/fd"),
                        !open.isEmpty
                    {
                        descriptors = Set(open)
                    }
                    for helper in Self.children(of: child) where Self.name(of: helper) == "share-decoder" {
                        let status = (try? String(contentsOfFile: "/proc/\(helper)/status", encoding: .utf8)) ?? ""
                        // (a helper seen before it has locked itself down is not counted)
                        guard status.contains("Seccomp:\t2") else { continue }
                        decoders.insert(helper)
                        sandboxed = sandboxed && status.contains("NoNewPrivs:\t1")
                    }
                }
                usleep(5_000)
            }
            #expect(process.terminationStatus == 0, "--isolation \(isolation)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: work.file("container/thumbnails")).count == 6)
            if isolation == "none" {
                // `share` decodes nothing itself: its helpers decode, without their sandbox.
                #expect(decoders.isEmpty, "sandboxed helpers with --isolation none: \(decoders)")
                continue
            }
            #expect(templates.count == 1, "templates seen: \(templates)")
            #expect(!decoders.isEmpty && sandboxed, "helpers seen: \(decoders)")
            #expect(ownGroup)
            #expect(
                descriptors.isSubset(of: ["0", "1", "2", "3"]) && descriptors.contains("3"),
                "the template's descriptors: \(descriptors.sorted())")
        }
    }

    // MARK: - Small and odd videos

    /// Small and odd-size videos in the codecs people share (their frames are
    /// converted at their own size, which once overflowed the RGB buffer), with
    /// ordinary photos: every item is delivered with a thumbnail, and nothing aborts.
    @Test func smallOddVideosAndPhotosAllGetThumbnails() throws {
        let drop = TemporaryDirectory("odd-videos")
        let videos: [(name: String, size: String, arguments: [String])] = [
            ("h264-268x156.mp4", "268x156", ["-c:v", "libx264", "-pix_fmt", "yuv420p"]),
            ("h264-264x150.mp4", "264x150", ["-c:v", "libx264", "-pix_fmt", "yuv420p"]),
            ("h264-2x2.mp4", "2x2", ["-c:v", "libx264", "-pix_fmt", "yuv420p"]),
            ("flv1-268x156.flv", "268x156", ["-c:v", "flv1"]),
            ("vp8-6x4.webm", "6x4", ["-c:v", "libvpx"]),
            ("mjpeg-268x156.avi", "268x156", ["-c:v", "mjpeg", "-pix_fmt", "yuvj420p"]),
        ]
        for video in videos {
            try Self.make(
                "/usr/bin/ffmpeg",
                ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=\(video.size):d=1.5:r=10"] + video.arguments + [
                    drop.file(video.name)
                ])
        }
        for name in ["photo.jpg", "portrait-exif6.jpg", "screenshot.png"] {
            try drop.add(name, copying: Fixtures.media(name))
        }
        let work = TemporaryDirectory("odd-work")
        let reportPath = work.file("report.json")
        let result = try ShareProcess.run([
            "ingest", "--container", work.file("container"), "--report", reportPath, drop.path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let items = try Self.items(reportPath)
        #expect(items.count == videos.count + 3)
        for (name, item) in items {
            #expect(item["status"] as? String == "ingested", "\(name): \(item)")
            #expect(item["thumbnail"] as? String != nil, "\(name): \(item)")
        }
        for video in videos {
            #expect(items[video.name]?["type"] as? String == "video", "\(video.name)")
        }
    }

    // MARK: - Formats only the sandbox decodes

    /// SVG (librsvg) and PSD (ImageMagick) get thumbnails in the sandboxed
    /// helpers; with `--isolation none` those loaders stay blocked, the files are
    /// delivered without a thumbnail, and the warning says why. (ICO is read by
    /// libavcodec, in both modes.)
    @Test func sandboxOnlyFormatsGetThumbnailsOnlyFromHelpers() throws {
        let drop = TemporaryDirectory("sandbox-formats")
        let scratch = TemporaryDirectory("sandbox-formats-scratch")
        let small = scratch.file("small.png")
        try Self.make("/usr/bin/vips", ["thumbnail", Fixtures.media("photo.jpg"), small, "64"])
        try Self.make("/usr/bin/vips", ["magicksave", small, drop.file("layers.psd"), "--format", "PSD"])
        try drop.add(
            "drawing.svg",
            bytes: Array(
                """
                <?xml version="1.0"?>
                <svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><rect width="400" height="200" fill="#c00"/>\
                <text x="20" y="120" font-size="60" fill="white">Hello</text></svg>
                """.utf8))
        try drop.add("photo.jpg", copying: Fixtures.media("photo.jpg"))
        let formats = ["layers.psd", "drawing.svg"]

        for isolation in ["process", "none"] {
            let work = TemporaryDirectory("sandbox-formats-\(isolation)")
            let reportPath = work.file("report.json")
            let result = try ShareProcess.run([
                "ingest", "--isolation", isolation, "--container", work.file("container"), "--report", reportPath,
                drop.path,
            ])
            #expect(result.status == 0, "\(isolation): \(result.stderr)")
            let items = try Self.items(reportPath)
            #expect(items["photo.jpg"]?["thumbnail"] as? String != nil)
            for name in formats {
                let item = items[name] ?? [:]
                #expect(item["status"] as? String == "ingested", "\(isolation) \(name): \(item)")
                #expect(item["type"] as? String == "file", "\(isolation) \(name): \(item)")
                let warnings = item["warnings"] as? [String] ?? []
                if isolation == "process" {
                    let thumbnail = try #require(item["thumbnail"] as? String, "\(name): \(item)")
                    let size = try ImageInspector.size(try #require(URL(string: thumbnail)).path)
                    #expect(max(size.width, size.height) <= 360 && min(size.width, size.height) > 0, "\(name): \(size)")
                    #expect(warnings.isEmpty, "\(name): \(warnings)")
                } else {
                    #expect(item["thumbnail"] as? String == nil, "\(name): \(item)")
                    #expect(
                        warnings.contains { $0.contains("only in sandboxed decoder helpers") }, "\(name): \(warnings)")
                }
            }
        }
    }

    // MARK: - The sandbox, checked

    /// What `share doctor --json` says this machine offers.
    static func machine() throws -> [String: Any] {
        let result = try ShareProcess.run(["doctor", "--json"])
        return try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            "\(result.stdout)\(result.stderr)")
    }

    /// `share doctor` prints what this machine supports and what a real helper
    /// gets, read from its /proc/PID/status: as root, the unprivileged user, no
    /// capability, no-new-privs and the seccomp filter; and it says the helper's
    /// sandbox is as strong as the machine allows.
    @Test func doctorShowsTheMachineAndARealHelper() throws {
        let result = try ShareProcess.run(["doctor"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        for line in [
            "This machine", "  seccomp filters:  available", "  confinement:      Landlock", "  NoNewPrivs:\t1",
            "  Seccomp:\t2",
            "  seccomp policy:   allowlist", "  CPU time:         1800 s in all (hard limit)",
            "The helper has the strongest sandbox: Landlock and the seccomp allowlist.",
        ] {
            #expect(result.stdout.contains(line), "missing \"\(line)\" in:\n\(result.stdout)")
        }
        #expect(result.stdout.contains("A decoder helper (pid "), "\(result.stdout)")
        if geteuid() == 0 {
            // A uid of their own (issue 58), which the helper's status shows.
            let line =
                result.stdout.split(separator: "\n").first {
                    $0.hasPrefix("  running as:       root: helpers switch to uid ")
                } ?? ""
            let uid =
                line.components(separatedBy: "switch to uid ").last?.split(separator: " ").first.flatMap { Int($0) }
                ?? 0
            #expect(
                line.hasSuffix("uid \(uid) and gid \(uid) of their own (no account, no other process)"),
                "\(result.stdout)")
            #expect(result.stdout.contains("  Uid:\t\(uid)\t\(uid)\t\(uid)\t\(uid)"), "\(result.stdout)")
            #expect(
                result.stdout.contains("  CapEff:\t0000000000000000")
                    && result.stdout.contains("  CapBnd:\t0000000000000000"), "\(result.stdout)")
        }
    }

    /// A helper that comes up in a weaker sandbox than the machine allows (here a
    /// test-only switch leaves out Landlock and seccomp): `share ingest` decodes
    /// nothing, says so in one line naming what is missing, and exits 69 (what it
    /// may have copied by then is a batch `--resume` finishes); `share doctor`
    /// shows the same and exits 1.
    @Test func weakerSandboxStopsTheCommandWithOneError() throws {
        let machine = try Self.machine()
        let work = TemporaryDirectory("weaker")
        let environment = ["SHARE_TEST_SANDBOX_SKIP": "landlock,seccomp"]
        let result = try ShareProcess.run(
            ["ingest", "--container", work.file("container"), Fixtures.media("photo.jpg")], environment: environment)
        #expect(result.status == 69, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        let line = String(lines.first ?? "")
        #expect(line.hasPrefix("share: --isolation process: the decoder helper (pid "), "\(line)")
        #expect(line.contains("runs in a weaker sandbox than this machine allows: "), "\(line)")
        if machine["seccomp"] as? Bool == true {
            #expect(line.contains("seccomp mode 0 with the none policy (expected 2 with the allowlist)"), "\(line)")
        }
        if let abi = machine["landlockABI"] as? Int, abi > 0 {
            #expect(line.contains("Landlock ABI 0 (this machine offers \(abi))"), "\(line)")
        }
        let thumbnails = (try? FileManager.default.contentsOfDirectory(atPath: work.file("container/thumbnails"))) ?? []
        let manifests = ((try? FileManager.default.contentsOfDirectory(atPath: work.file("container/manifests"))) ?? [])
            .filter { $0.hasSuffix(".json") }
        #expect(
            thumbnails.isEmpty && manifests.isEmpty, "something was decoded or delivered: \(thumbnails) \(manifests)")

        let doctor = try ShareProcess.run(["doctor"], environment: environment)
        #expect(doctor.status == 1, "\(doctor.stdout)")
        #expect(doctor.stdout.contains("WEAKER than this machine allows:\n  - "), "\(doctor.stdout)")
    }

    /// The parent's checks of every reply never refuse what the real decoders
    /// make: every fixture (media, HEIF, modern phone and camera media, the fidelity table's classes, the sample
    /// drop) goes through the helpers, and no item fails as `decoderMisbehaved`.
    @Test func noFixtureIsRefusedByTheReplyChecks() throws {
        let work = TemporaryDirectory("all-fixtures")
        let reportPath = work.file("report.json")
        let folders = ["media", "heif", "modern", "fidelity", "sample-drop"].map {
            Fixtures.packageRoot.appendingPathComponent("testdata/\($0)").path
        }
        let result = try ShareProcess.run(
            ["ingest", "--quiet", "--container", work.file("container"), "--report", reportPath] + folders)
        #expect(result.status == 0 || result.status == 1, "\(result.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as? [String: Any]
        )
        let items = report["items"] as? [[String: Any]] ?? []
        #expect(items.count > 100, "\(items.count) items")
        let refused = items.filter { $0["reason"] as? String == "decoderMisbehaved" }
        #expect(refused.isEmpty, "refused: \(refused.map { "\($0["source"] ?? "?"): \($0["error"] ?? "?")" })")
        #expect(items.filter { $0["thumbnail"] != nil }.count > 80)
    }

    @Test func isolationMustBeProcessOrNone() throws {
        let result = try ShareProcess.run(["ingest", "--isolation", "sandbox", Fixtures.media("photo.jpg")])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--isolation must be process, process-weaker or none"), "\(result.stderr)")
    }
}
