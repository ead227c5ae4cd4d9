import Foundation
import TestSupport
import Testing

/// `share watch` on real folders, with real processes and signals.
@Suite struct WatchCommandTests {
    /// A `share watch` running in the background; its stdout lines, with arrival times.
    final class Watcher: @unchecked Sendable {
        let process = Process()
        private let lock = NSLock()
        private var lines: [(Date, String)] = []

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
            process.arguments = ["watch"] + arguments
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let handle = out.fileHandleForReading
            Thread { [self] in
                var buffer = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let newline = buffer.firstIndex(of: 0x0A) {
                        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                        buffer.removeSubrange(buffer.startIndex...newline)
                        lock.lock()
                        lines.append((Date(), line))
                        lock.unlock()
                    }
                }
            }.start()
        }

        /// JSON `batchFinished` events so far, with their arrival times.
        var finished: [(Date, [String: Any])] {
            lock.lock()
            defer { lock.unlock() }
            return lines.compactMap { time, line in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    object["event"] as? String == "batchFinished"
                else { return nil }
                return (time, object)
            }
        }

        func waitFor(batches: Int, timeout: Double) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while finished.count < batches && Date() < deadline { usleep(20_000) }
            return finished.count >= batches
        }

        func stop() -> Int32 {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    static func manifestEntries(_ container: String) throws -> [[String: Any]] {
        try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter { $0.hasSuffix(".json") }
            .flatMap { name in
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: container + "/manifests/" + name))) as! [[String: Any]]
            }
    }

    @Test func readyDropIsTakenAtOnceAndASlowDropOnlyOnceItSettles() throws {
        let work = TemporaryDirectory("watch")
        let inbox = work.path + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let settle = 3.0
        let watcher = try Watcher([
            inbox, "--container", work.path + "/container", "--settle", String(settle), "--json",
        ])
        // A slow writer: a file every 0.3 s, well inside the settle time, until the
        // complete drop below has been delivered (and at least five files).
        let slow = inbox + "/slow"
        try FileManager.default.createDirectory(atPath: slow, withIntermediateDirectories: true)
        var lastWrite = Date()
        var written = 0
        let giveUp = Date().addingTimeInterval(120)
        while written < 5 || (watcher.finished.isEmpty && Date() < giveUp) {
            try FileManager.default.copyItem(
                atPath: Fixtures.media("photo.jpg"), toPath: "\(slow)/photo-\(written).jpg")
            lastWrite = Date()
            written += 1
            if written == 2 {
                // Meanwhile a complete drop, marked ready.
                try FileManager.default.createDirectory(atPath: inbox + "/quick", withIntermediateDirectories: true)
                try FileManager.default.copyItem(
                    atPath: Fixtures.media("clip-h264.mp4"), toPath: inbox + "/quick/clip.mp4")
                FileManager.default.createFile(atPath: inbox + "/quick/.ready", contents: nil)
            }
            usleep(300_000)
        }
        // The complete drop is out; the slow one is still being written to.
        #expect(!watcher.finished.isEmpty, "the ready drop was not taken while another was being written")
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: "\(slow)/photo-\(written).jpg")
        lastWrite = Date()
        written += 1
        #expect(watcher.waitFor(batches: 2, timeout: 120))
        // SIGTERM outside a service manager: 128 + 15.
        #expect(watcher.stop() == 143)
        let events = watcher.finished
        #expect(events.count == 2)
        guard events.count == 2 else { return }
        // The ready drop came out first, while the slow one was still being written.
        #expect(events[0].1["ingested"] as? Int == 1)
        #expect(events[0].0 < lastWrite)
        // The slow one only after it settled, and with every file.
        #expect(events[1].1["ingested"] as? Int == written)
        #expect(events[1].0.timeIntervalSince(lastWrite) >= settle - 0.1)
        #expect(FileManager.default.fileExists(atPath: inbox + "/.done"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: inbox).filter { !$0.hasPrefix(".") }.isEmpty)
    }

    @Test func twoWatchersNeverIngestADropTwice() throws {
        let work = TemporaryDirectory("two")
        let inbox = work.path + "/inbox"
        let container = work.path + "/container"
        for i in 0..<12 {
            let drop = "\(inbox)/drop-\(i)"
            try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
            try Data("drop \(i)".utf8).write(to: URL(fileURLWithPath: "\(drop)/note-\(i).txt"))
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: "\(drop)/photo-\(i).jpg")
            FileManager.default.createFile(atPath: drop + "/.ready", contents: nil)
        }
        let arguments = ["watch", inbox, "--container", container, "--once", "--quiet"]
        let firstDone = DispatchSemaphore(value: 0)
        let firstStatus = LockedStatus()
        Thread {
            firstStatus.value = (try? ShareProcess.run(arguments))?.status
            firstDone.signal()
        }.start()
        let second = try ShareProcess.run(arguments)
        #expect(second.status == 0, "\(second.stderr)")
        firstDone.wait()
        #expect(firstStatus.value == 0)
        let entries = try Self.manifestEntries(container)
        let names = entries.compactMap { $0["fileName"] as? String }
        #expect(names.count == 24, "\(names.count) entries")
        #expect(Set(names).count == 24, "a drop was ingested twice")
        let manifests = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter {
            $0.hasSuffix(".json")
        }
        #expect(manifests.count == 12)
    }

    @Test func keptDropsAreNotTakenAgainAndReportDirGetsPictures() throws {
        let work = TemporaryDirectory("keep")
        let inbox = work.path + "/inbox"
        let container = work.path + "/container"
        try FileManager.default.createDirectory(atPath: inbox + "/album", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: inbox + "/album/a.jpg")
        FileManager.default.createFile(atPath: inbox + "/album/.ready", contents: nil)
        let arguments = [
            "watch", inbox, "--container", container, "--once", "--on-success", "keep", "--report-dir",
            work.path + "/reports",
        ]
        let first = try ShareProcess.run(arguments)
        #expect(first.status == 0)
        #expect(first.stdout.contains("ingested=1"))
        #expect(FileManager.default.fileExists(atPath: inbox + "/album/a.jpg"))
        let pictures = try FileManager.default.contentsOfDirectory(atPath: work.path + "/reports")
        #expect(pictures.contains { $0.hasSuffix(".html") } && pictures.contains { $0.hasSuffix(".jpg") })
        let second = try ShareProcess.run(arguments)
        #expect(second.status == 0)
        #expect(!second.stdout.contains("ingested="))
        #expect(try Self.manifestEntries(container).count == 1)
    }

    @Test func dropWhereEverythingFailsGoesToFailedWithItsReport() throws {
        let work = TemporaryDirectory("failed")
        let inbox = work.path + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox + "/bad", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.media("random.jpg"), toPath: inbox + "/bad/random.jpg")
        FileManager.default.createFile(atPath: inbox + "/bad/.ready", contents: nil)
        let result = try ShareProcess.run(["watch", inbox, "--container", work.path + "/c", "--once"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("ingested=0 failed=1"))
        let failed = try FileManager.default.contentsOfDirectory(atPath: inbox + "/.failed")
        #expect(failed.count == 1)
        let report = inbox + "/.failed/" + failed[0] + "/report.json"
        #expect(FileManager.default.fileExists(atPath: report))
        #expect((try? String(contentsOfFile: report, encoding: .utf8))?.contains("not JPEG") == true)
    }
}

/// An exit status set by one thread and read by another.
final class LockedStatus: @unchecked Sendable {
    private let lock = NSLock()
    private var status: Int32?
    var value: Int32? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return status
        }
        set {
            lock.lock()
            status = newValue
            lock.unlock()
        }
    }
}
