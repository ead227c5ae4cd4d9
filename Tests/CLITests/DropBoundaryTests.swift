import Foundation
import TestSupport
import Testing

/// What a dropper can reach (issue 51, finding 1): someone who may write into
/// a drop swaps its folders and files for symbolic links to a place it may not
/// read, or for other files, at each moment a real `share` opens them: after
/// the walk, before the copy, before the probe reads a Takeout JSON, before
/// the fan-in copies a carried sidecar; in `share ingest`, `share ingest --db`
/// with a real `share worker`, and `share watch`. Each swap lands while the
/// process is held at that point (``PauseGate``), so it lands on any machine.
/// A canary file outside the drop must never be read: its bytes are in no file
/// of the container, and what was swapped is reported not delivered (the rest
/// of the drop is).
@Suite(.serialized) struct DropBoundaryTests {
    /// A process of `share`, its output in files.
    final class Run {
        let process = Process()
        let files = TemporaryDirectory("boundary-run")

        init(_ arguments: [String], environment: [String: String], directory: String? = nil) throws {
            process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
            for name in ["out", "err"] { _ = FileManager.default.createFile(atPath: files.file(name), contents: nil) }
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: files.file("out")))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: files.file("err")))
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        var stdout: String { (try? String(contentsOfFile: files.file("out"), encoding: .utf8)) ?? "" }
        var stderr: String { (try? String(contentsOfFile: files.file("err"), encoding: .utf8)) ?? "" }

        /// Waits for its end (a generous deadline; killed after it).
        func finish(timeout: Double = 300) -> Int32? {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(2000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return nil
            }
            return process.terminationStatus
        }
    }

    /// The canary: files outside the drop, in a folder only root may enter,
    /// named like the drop's, each holding `marker` (a JPEG carries it after its end).
    struct Canary {
        let folder: String
        let marker: [UInt8]

        init(in work: String) throws {
            folder = work + "/secret-dir"
            marker = Array("CANARY-\(UUID().uuidString)-never-read".utf8)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let photo = try Array(Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg"))))
            for name in ["X.jpg", "Y.jpg"] { try Self.write(folder + "/" + name, photo + marker) }
            try Self.write(
                folder + "/X.jpg.json",
                ExportSidecarTests.takeoutJSON(title: "X.jpg", description: String(decoding: marker, as: UTF8.self)))
            for i in 0..<40 {
                try Self.write(folder + "/P\(i).jpg", photo + marker)
                try Self.write(
                    folder + "/P\(i).jpg.json",
                    ExportSidecarTests.takeoutJSON(
                        title: "P\(i).jpg", description: String(decoding: marker, as: UTF8.self)))
            }
            chmod(folder, 0o700)
        }

        static func write(_ path: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
        }

        /// Starts hearing every open of the canary folder or of a file in it,
        /// and every read of a canary file, whatever path it is reached by (inotify).
        func watch() -> CanaryWatch { CanaryWatch(folder: folder) }

        /// The container files (copies, sidecars, thumbnails, manifests, reports, the journal) holding the marker.
        func found(in container: String) -> [String] {
            let all = (FileManager.default.enumerator(atPath: container)?.allObjects as? [String]) ?? []
            return all.filter { relative in
                guard let data = FileManager.default.contents(atPath: container + "/" + relative) else { return false }
                return data.range(of: Data(marker)) != nil
            }
        }
    }

    /// What inotify heard of the canary: the folder's watch hears opens and
    /// reads of it and of its files through it; each file's own watch hears
    /// reads of it through any name (a hard link in the drop).
    final class CanaryWatch {
        private let fd: Int32

        init(folder: String) {
            fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            precondition(fd >= 0)
            // Listed before the folder's watch starts (or the listing would be heard).
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for name in names { precondition(inotify_add_watch(fd, folder + "/" + name, UInt32(IN_ACCESS)) >= 0) }
            precondition(inotify_add_watch(fd, folder, UInt32(IN_OPEN | IN_ACCESS)) >= 0)
        }

        deinit { close(fd) }

        /// The events heard so far, in words (`open X.jpg`, `read P3.jpg.json`, `open (the folder)`).
        func heard() -> [String] {
            var found: [String] = []
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = read(fd, &buffer, buffer.count)
                guard n > 0 else { return found }
                var offset = 0
                while offset + 16 <= n {
                    let mask = buffer[offset + 4..<offset + 8].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
                    let length = Int(
                        buffer[offset + 12..<offset + 16].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
                    let name = String(
                        decoding: buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }, as: UTF8.self)
                    if mask & UInt32(IN_OPEN | IN_ACCESS) != 0 {
                        found.append(
                            (mask & UInt32(IN_OPEN) != 0 ? "open " : "read ")
                                + (name.isEmpty ? "(a file or the folder)" : name))
                    }
                    offset += 16 + length
                }
            }
        }
    }

    /// The drop: `top.jpg`, and `zzz/` with `X.jpg`, its Takeout JSON and `Y.jpg`.
    static func makeDrop(at path: String) throws {
        try FileManager.default.createDirectory(atPath: path + "/zzz", withIntermediateDirectories: true)
        for name in ["top.jpg", "zzz/X.jpg", "zzz/Y.jpg"] {
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: path + "/" + name)
        }
        try Data(ExportSidecarTests.takeoutJSON(title: "X.jpg")).write(
            to: URL(fileURLWithPath: path + "/zzz/X.jpg.json"))
    }

    /// How a dropper changes the drop while `share` is held.
    enum Swap: String, CaseIterable {
        /// `mv zzz zzz.orig; ln -s SECRET zzz`: the reporter's swap.
        case folderForLink
        /// `mv zzz/NAME …; ln -s SECRET/NAME zzz/NAME`.
        case fileForLink
        /// `zzz/NAME` replaced by another file (a hard link to the canary's).
        case fileForOtherFile

        func apply(drop: String, name: String, canary: Canary) throws {
            let files = FileManager.default
            switch self {
            case .folderForLink:
                try files.moveItem(atPath: drop + "/zzz", toPath: drop + "/zzz.orig")
                try files.createSymbolicLink(atPath: drop + "/zzz", withDestinationPath: canary.folder)
            case .fileForLink:
                try files.moveItem(atPath: drop + "/zzz/" + name, toPath: drop + "/" + name + ".orig")
                try files.createSymbolicLink(
                    atPath: drop + "/zzz/" + name, withDestinationPath: canary.folder + "/" + name)
            case .fileForOtherFile:
                try files.removeItem(atPath: drop + "/zzz/" + name)
                #expect(link(canary.folder + "/" + name, drop + "/zzz/" + name) == 0)
            }
        }
    }

    /// Where `share` is held, and the file swapped there.
    static let moments: [(point: String, name: String)] = [
        ("after-walk", "X.jpg"), ("after-walk", "X.jpg.json"), ("copy:X.jpg", "X.jpg"), ("probe:X.jpg", "X.jpg.json"),
        ("before-sidecar-copy:X.jpg.json", "X.jpg.json"),
    ]

    /// The report's items by their path relative to the drop (as it was named).
    static func outcomes(report path: String, drop: String) throws -> [String: [String: Any]] {
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        var found: [String: [String: Any]] = [:]
        for item in try #require(report["items"] as? [[String: Any]]) {
            let source = try #require(item["source"] as? String)
            found[source.hasPrefix(drop + "/") ? String(source.dropFirst(drop.count + 1)) : source] = item
        }
        return found
    }

    /// What every run must show: the canary read nowhere, the swapped file not
    /// delivered (failed or skipped, saying why), the rest of the drop delivered.
    static func check(
        _ report: String, drop: String, container: String, canary: Canary, heard: [String], swapped: String, swap: Swap,
        context: String
    ) throws {
        #expect(heard.isEmpty, "\(context): the canary was opened or read: \(heard)")
        #expect(
            canary.found(in: container).isEmpty, "\(context): the canary was read into \(canary.found(in: container))")
        let items = try outcomes(report: report, drop: drop)
        #expect(items["top.jpg"]?["status"] as? String == "ingested", "\(context): \(items["top.jpg"] ?? [:])")
        let name = "zzz/" + swapped
        let item = items[name]
        #expect(
            item?["status"] as? String != "ingested" && item?["status"] as? String != "attached",
            "\(context): \(name) was delivered: \(item ?? [:])")
        let reason = item?["reason"] as? String
        #expect(
            ["changedWhileCopying", "symbolicLink", "unreadable"].contains(reason ?? ""),
            "\(context): \(name): \(item ?? [:])")
        if swap != .folderForLink {
            // The rest of its folder is delivered.
            #expect(items["zzz/Y.jpg"]?["status"] as? String == "ingested", "\(context): \(items["zzz/Y.jpg"] ?? [:])")
        }
    }

    enum Mode: String { case ingest, distributed, watch }

    /// Runs one swap at one moment in `mode`: `share` held at `point`, the
    /// swap made, `share` let go; then checked.
    static func run(
        _ mode: Mode, point: String, name: String, swap: Swap, work: String, canary: Canary, database: String? = nil,
        extra: [String: String] = [:]
    ) throws {
        let tag = "\(mode.rawValue)-\(point.replacingOccurrences(of: ":", with: "_"))-\(name)-\(swap.rawValue)"
        let base = (work + "/" + tag as NSString).standardizingPath
        let container = base + "/container"
        let report = base + "/report.json"
        let gate = PauseGate(point)
        let held = gate.environment.merging(extra) { $1 }
        var drop = base + "/drop"
        var arguments: [String]
        var worker: Run?
        switch mode {
        case .ingest:
            try makeDrop(at: drop)
            arguments = ["ingest", "--container", container, "--report", report, drop]
        case .distributed:
            try makeDrop(at: drop)
            arguments = ["ingest", "--db", try #require(database), "--container", container, "--report", report, drop]
        case .watch:
            let inbox = base + "/inbox"
            try makeDrop(at: inbox + "/drop")
            FileManager.default.createFile(atPath: inbox + "/drop/.ready", contents: nil)
            drop = inbox + "/drop"
            arguments = ["watch", inbox, "--container", container, "--once", "--on-success", "keep"]
        }
        // The walk is the planner's; the stages and the fan-in are the worker's.
        let inWorker = mode == .distributed && point != "after-walk"
        if mode == .distributed {
            worker = try Run(
                ["worker", "--db", try #require(database), "--name", tag, "--concurrency", "1"],
                environment: inWorker ? held : extra)
        }
        let watch = canary.watch()
        let share = try Run(arguments, environment: inWorker ? extra : held)
        let holder = inWorker ? try #require(worker) : share
        defer {
            if let worker, worker.process.isRunning {
                kill(worker.process.processIdentifier, SIGTERM)
                _ = worker.finish(timeout: 60)
            }
        }
        let reached = gate.waitUntilReached { holder.process.isRunning }
        #expect(reached, "\(tag): \(point) never reached: \(share.stderr) \(worker?.stderr ?? "")")
        guard reached else {
            _ = share.finish(timeout: 60)
            return
        }
        try swap.apply(drop: drop, name: name, canary: canary)
        gate.release()
        let status = share.finish()
        #expect(
            status != nil && status != 2,
            "\(tag): exit \(String(describing: status)): \(share.stderr) \(worker?.stderr ?? "")")
        var reportPath = report
        if mode == .watch {
            let reports =
                (try? FileManager.default.contentsOfDirectory(atPath: container + "/.share-ingest/reports").filter {
                    $0.hasSuffix(".json")
                }) ?? []
            try #require(reports.count == 1, "\(tag): \(reports) \(share.stderr)")
            reportPath = container + "/.share-ingest/reports/" + reports[0]
        }
        try check(
            reportPath, drop: drop, container: container, canary: canary, heard: watch.heard(), swapped: name,
            swap: swap, context: tag)
    }

    /// Every moment and swap through `share ingest`, with `openat2` and with
    /// the component-by-component walk a kernel without it gets
    /// (`SHARE_TEST_OPENAT2=missing`, a debug build's switch).
    @Test(arguments: ["openat2", "component walk"])
    func aDropperReachesNothingOutsideTheDropThroughIngest(resolution: String) throws {
        let work = TemporaryDirectory("boundary-ingest")
        let canary = try Canary(in: work.path)
        let extra = resolution == "openat2" ? [:] : ["SHARE_TEST_OPENAT2": "missing"]
        for (point, name) in Self.moments {
            for swap in Swap.allCases {
                try Self.run(
                    .ingest, point: point, name: name, swap: swap, work: work.path, canary: canary, extra: extra)
            }
        }
    }

    /// The same through `share ingest --db` and a real `share worker`: the
    /// worker opens the drop's folder by its path, then everything beneath it,
    /// and checks each file against what the planner's walk saw.
    @Test func aDropperReachesNothingOutsideTheDropThroughAWorker() throws {
        let work = TemporaryDirectory("boundary-db")
        let canary = try Canary(in: work.path)
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        for (point, name) in Self.moments {
            for swap in Swap.allCases {
                try Self.run(
                    .distributed, point: point, name: name, swap: swap, work: work.path, canary: canary,
                    database: server.url)
            }
        }
    }

    /// The same through `share watch` (the drop claimed into `.processing/`).
    @Test func aDropperReachesNothingOutsideTheDropThroughWatch() throws {
        let work = TemporaryDirectory("boundary-watch")
        let canary = try Canary(in: work.path)
        for (point, name) in Self.moments {
            for swap in Swap.allCases {
                try Self.run(.watch, point: point, name: name, swap: swap, work: work.path, canary: canary)
            }
        }
    }

    /// The reporter's scenario, as they ran it: an inbox anyone may write to
    /// (0777); as `nobody`, `drop/zzz/` with 40 photos and their Takeout
    /// JSONs, and a shell whose working folder is `drop`; once `share watch`
    /// (root) has claimed the drop (moved it into `.processing/<batch>/`, the
    /// shell's folder with it), the shell runs `mv zzz zzz.orig; ln -s
    /// /root-only-folder zzz`. Held at each moment: after the claim (the walk
    /// meets the link: not followed, reported), after the root folder is listed,
    /// after the walk, before a copy and before the fan-in copies a JSON (what
    /// the walk saw is gone: each is reported not delivered). No byte of the
    /// root-only folder is read.
    /// (With `openat2`, and with the component walk of a kernel without it.)
    @Test(
        arguments: [
            "after-claim", "listed:", "listing:zzz", "after-walk", "copy:P7.jpg", "before-sidecar-copy:P7.jpg.json",
        ], ["openat2", "component walk"])
    func theReportersInboxDropperSwappingAFolderAfterTheClaimReadsNothing(point: String, resolution: String) throws {
        let work = TemporaryDirectory("boundary-reporter")
        let root = (work.path as NSString).standardizingPath
        let canary = try Canary(in: root)
        let inbox = root + "/inbox"
        let drop = inbox + "/drop"
        chmod(root, 0o755)
        try FileManager.default.createDirectory(atPath: drop + "/zzz", withIntermediateDirectories: true)
        // others may write; the sticky bit keeps the watcher's .processing its own (an inbox without it is refused)
        chmod(inbox, 0o1777)
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg")))
        for i in 0..<40 {
            try photo.write(to: URL(fileURLWithPath: drop + "/zzz/P\(i).jpg"))
            try Data(ExportSidecarTests.takeoutJSON(title: "P\(i).jpg")).write(
                to: URL(fileURLWithPath: drop + "/zzz/P\(i).jpg.json"))
        }
        let nobody = (uid: uid_t(65534), gid: gid_t(65534))
        for path in [drop, drop + "/zzz"]
            + (try FileManager.default.contentsOfDirectory(atPath: drop + "/zzz")).map({ drop + "/zzz/" + $0 })
        {
            #expect(chown(path, nobody.uid, nobody.gid) == 0)
        }
        // The dropper's shell, in `drop`, waiting for its cue.
        let dropper = Process()
        dropper.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        dropper.arguments = [
            "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", "/bin/sh", "-c",
            "read cue; mv zzz zzz.orig && ln -s '\(canary.folder)' zzz",
        ]
        dropper.currentDirectoryURL = URL(fileURLWithPath: drop)
        let cue = Pipe()
        dropper.standardInput = cue
        try dropper.run()
        defer { if dropper.isRunning { kill(dropper.processIdentifier, SIGKILL) } }

        let gate = PauseGate(point)
        let container = root + "/container"
        let watch = canary.watch()
        let environment = gate.environment.merging(resolution == "openat2" ? [:] : ["SHARE_TEST_OPENAT2": "missing"]) {
            $1
        }
        let share = try Run(
            ["watch", inbox, "--container", container, "--once", "--settle", "0"], environment: environment)
        let reached = gate.waitUntilReached { share.process.isRunning }
        #expect(reached, "\(point) never reached: \(share.stderr)")
        guard reached else { return }
        cue.fileHandleForWriting.write(Data("go\n".utf8))
        dropper.waitUntilExit()
        #expect(dropper.terminationStatus == 0, "the dropper's swap failed")
        gate.release()
        let status = share.finish()
        #expect(status == 0, "exit \(String(describing: status)): \(share.stderr)")

        #expect(watch.heard().isEmpty, "the root-only folder was opened or read: \(watch.heard())")
        #expect(canary.found(in: container).isEmpty, "its bytes are in \(canary.found(in: container))")
        let reports = try FileManager.default.contentsOfDirectory(atPath: container + "/.share-ingest/reports").filter {
            $0.hasSuffix(".json")
        }
        try #require(reports.count == 1, "\(reports)")
        let items = try Self.outcomes(report: container + "/.share-ingest/reports/" + reports[0], drop: drop)
        let delivered = items.filter { ["ingested", "attached"].contains($0.value["status"] as? String ?? "") }.keys
            .sorted()
        switch point {
        case "listing:zzz":
            // `zzz` was met as a folder, and is a link by the time it is listed: not followed.
            #expect(
                items["zzz"]?["status"] as? String == "skipped" && items["zzz"]?["reason"] as? String == "symbolicLink",
                "\(items)")
            #expect(
                (items["zzz"]?["error"] as? String)?.contains("became a symbolic link after it was listed") == true,
                "\(items["zzz"] ?? [:])")
            #expect(delivered.isEmpty, "\(delivered)")
        case "after-claim", "listed:":
            // The walk met `zzz` as a link (not followed, one line of its own) and walked `zzz.orig`.
            #expect(
                items["zzz"]?["status"] as? String == "skipped" && items["zzz"]?["reason"] as? String == "symbolicLink",
                "\(items["zzz"] ?? [:])")
            #expect((items["zzz"]?["error"] as? String)?.contains("outside the drop") == true, "\(items["zzz"] ?? [:])")
            // After the claim, `zzz.orig` is listed and delivered; once the root was listed, it was not there to list.
            #expect(
                delivered.count == (point == "after-claim" ? 80 : 0)
                    && delivered.allSatisfy { $0.hasPrefix("zzz.orig/") }, "\(delivered)")
            #expect(
                share.stderr.contains("share: skipped: \(drop)/zzz is a symbolic link pointing outside the drop"),
                "\(share.stderr)")
        default:
            // What the walk saw is gone: every file of `zzz` not delivered, each saying why.
            let refused = items.filter {
                $0.key.hasPrefix("zzz/") && !["ingested", "attached"].contains($0.value["status"] as? String ?? "")
            }
            #expect(
                !refused.isEmpty
                    && refused.allSatisfy {
                        ["changedWhileCopying", "unreadable"].contains($0.value["reason"] as? String ?? "")
                    }, "\(refused)")
            #expect(items.filter { $0.key.hasPrefix("zzz/") }.count == 80)
        }
    }

    /// A drop that is itself a symbolic link (to a root-only folder, or to a
    /// root-only file), dropped into an inbox: `share watch` does not follow
    /// it, reports it skipped with a line of its own, and opens nothing behind it.
    @Test func aDroppedLinkIsNotFollowed() throws {
        let work = TemporaryDirectory("boundary-dropped-link")
        let root = (work.path as NSString).standardizingPath
        let canary = try Canary(in: root)
        let inbox = root + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: inbox + "/folder", withDestinationPath: canary.folder)
        try FileManager.default.createSymbolicLink(
            atPath: inbox + "/X.jpg.json", withDestinationPath: canary.folder + "/X.jpg.json")
        let container = root + "/container"
        let watch = canary.watch()
        let run = try ShareProcess.run(["watch", inbox, "--container", container, "--once", "--settle", "0"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(watch.heard().isEmpty, "opened or read behind the link: \(watch.heard())")
        #expect(canary.found(in: container).isEmpty, "\(canary.found(in: container))")
        for name in ["folder", "X.jpg.json"] {
            #expect(
                run.stderr.contains(
                    "share: skipped: \(inbox)/\(name) is a symbolic link; a dropped link is not followed"),
                "\(run.stderr)")
        }
        #expect(
            run.stdout.split(separator: "\n").filter { $0.contains("ingested=0 failed=0 skipped=1") }.count == 2,
            "\(run.stdout)")
    }

    /// Every input refused while a drop is walked (issue 52: every input in
    /// every output) has one line of its own in plain output and one `item`
    /// event with `--json`, with its reason, and is counted once, in `share
    /// ingest`, `share ingest --db` with a worker, `share watch` and `share
    /// watch --db`: a FIFO, a link pointing outside, a link loop, a folder
    /// that cannot be listed (it vanishes while the walk is held just before
    /// listing it), a folder nested too deep.
    @Test func everyInputTheWalkRefusesHasALineAndAnEventInEveryMode() throws {
        let work = TemporaryDirectory("boundary-refused")
        let root = (work.path as NSString).standardizingPath
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let workers = DistributedTests.Workers(url: server.url)
        try workers.start("refused")
        defer { workers.stopAll() }
        // What each refused input's line and event must say: its name and reason.
        let refused: [(name: String, reason: String, says: String)] = [
            ("pipe.jpg", "notRegularFile", "is a FIFO"), ("outside.jpg", "symbolicLink", "pointing outside the drop"),
            ("loop.jpg", "symbolicLink", "broken symbolic link (or a loop)"),
            ("gone", "unreadable", "cannot list folder"),
            ("d", "tooDeep", "nested deeper than 64 levels"),
        ]
        func makeDrop(_ drop: String) throws {
            try FileManager.default.createDirectory(atPath: drop + "/gone", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: drop + "/photo.jpg")
            #expect(mkfifo(drop + "/pipe.jpg", 0o644) == 0)
            try FileManager.default.createSymbolicLink(
                atPath: drop + "/outside.jpg", withDestinationPath: Fixtures.media("photo.jpg"))
            try FileManager.default.createSymbolicLink(atPath: drop + "/loop.jpg", withDestinationPath: "loop.jpg")
            let deep = drop + "/" + (0..<64).map { _ in "d" }.joined(separator: "/")
            try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: deep + "/deep.jpg")
        }
        for mode in ["ingest", "ingest --db", "watch", "watch --db"] {
            for json in [false, true] {
                let tag = mode.replacingOccurrences(of: " --", with: "-") + (json ? "-json" : "")
                let gate = PauseGate("listing:gone")
                var arguments: [String]
                var drop = root + "/drop-" + tag
                let container = root + "/c-" + tag
                let database = mode.hasSuffix("--db") ? ["--db", server.url] : []
                if mode.hasPrefix("watch") {
                    let inbox = root + "/inbox-" + tag
                    drop = inbox + "/drop"
                    try makeDrop(drop)
                    FileManager.default.createFile(atPath: drop + "/.ready", contents: nil)
                    arguments =
                        ["watch", inbox] + database + ["--container", container, "--once", "--on-success", "keep"]
                } else {
                    try makeDrop(drop)
                    arguments = ["ingest"] + database + ["--container", container, drop]
                }
                let run = try Run(arguments + (json ? ["--json"] : []), environment: gate.environment)
                let reached = gate.waitUntilReached { run.process.isRunning }
                #expect(reached, "\(tag): the walk never reached gone/: \(run.stderr)")
                try FileManager.default.removeItem(atPath: drop + "/gone")
                gate.release()
                let status = run.finish()
                #expect(
                    status == (mode.hasPrefix("watch") ? 0 : 1),
                    "\(tag): exit \(String(describing: status)): \(run.stderr) \(workers.log("refused"))")
                if json {
                    let events = run.stdout.split(separator: "\n").compactMap {
                        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                    }
                    let items = events.filter { $0["event"] as? String == "item" }
                    for input in refused {
                        let heard = items.filter { ($0["source"] as? String)?.hasSuffix("/" + input.name) == true }
                        #expect(heard.count == 1, "\(tag): \(input.name) heard \(heard.count) times: \(items)")
                        #expect(
                            heard.first?["reason"] as? String == input.reason
                                && (heard.first?["error"] as? String)?.contains(input.says) == true, "\(tag): \(heard)")
                    }
                    #expect(items.count == 1 + refused.count, "\(tag): \(items.count) item events")
                    let finished = events.filter { $0["event"] as? String == "batchFinished" }
                    #expect(
                        finished.count == 1 && finished.first?["skipped"] as? Int == 4
                            && finished.first?["failed"] as? Int == 1, "\(tag): \(finished)")
                } else {
                    for input in refused {
                        let lines = run.stderr.split(separator: "\n").filter {
                            $0.contains(drop + "/" + input.name) && $0.contains(input.says)
                        }
                        #expect(lines.count == 1, "\(tag): \(input.name): \(lines.count) lines in \(run.stderr)")
                    }
                    if mode.hasPrefix("watch") {
                        #expect(run.stdout.contains("ingested=1 failed=1 skipped=4"), "\(tag): \(run.stdout)")
                    } else {
                        #expect(
                            run.stderr.contains("1 of 6 items ingested, 1 failed, 4 skipped"), "\(tag): \(run.stderr)")
                    }
                }
            }
        }
    }
}
