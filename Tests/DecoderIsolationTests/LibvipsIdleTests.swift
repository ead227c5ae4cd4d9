@testable import DecoderIsolation
import Foundation
import Glibc
import MediaFormats
import MediaKit
import TestSupport
import Testing

/// Finding 13 of issue 51: libvips 8.14.1 hung `scripts/test.sh`'s memory
/// check. Its threadset stops a worker that has been idle for 15 s; when that
/// worker is handed a task at that moment, the task never runs and the
/// pipeline waits for ever (in-process) or until the item's time limit kills
/// the helper. The race itself is too narrow to provoke; what makes it
/// possible is the expiry, and that is what this shows gone: a helper and an
/// in-process decoder (a watcher with `--isolation none`, which decodes in
/// bursts) each keep every libvips worker through an idle spell longer than
/// 15 s, and then decode again.
@Suite struct LibvipsIdleTests {
    /// The thread ids of `pid`'s libvips workers (threads named "libvips worker").
    static func libvipsWorkers(of pid: pid_t) -> Set<Int32> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return Set(tasks.compactMap { tid in
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("libvips worker") ? Int32(tid) : nil
        })
    }

    @Test func workersOfAnIdleHelperAndAnIdleInProcessWatcherStayAndDecodeAgain() throws {
        #expect(Vips.idleWorkersStay, "libvips' own vips_semaphore_down_timeout is in use in the test process")
        // The watcher, decoding in-process.
        let work = TemporaryDirectory("libvips-idle")
        let inbox = work.file("inbox")
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
        watcher.arguments = ["watch", inbox, "--container", work.file("container"), "--settle", "0", "--isolation", "none", "--json"]
        FileManager.default.createFile(atPath: work.file("out"), contents: nil)
        watcher.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: work.file("out")))
        watcher.standardError = FileHandle.nullDevice
        try watcher.run()
        defer {
            kill(watcher.processIdentifier, SIGKILL)
            watcher.waitUntilExit()
        }
        func batchesFinished() -> [[String: Any]] {
            let text = (try? String(contentsOfFile: work.file("out"), encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .filter { $0["event"] as? String == "batchFinished" }
        }
        func drop(_ name: String) throws {
            let staging = work.file("staging-\(name)")
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: staging + "/photo.jpg")
            try FileManager.default.moveItem(atPath: staging, toPath: inbox + "/" + name)
        }
        try drop("first")
        #expect(HelperPoolTests.eventually { batchesFinished().count == 1 }, "the watcher's first batch did not finish")
        let watcherWorkers = Self.libvipsWorkers(of: watcher.processIdentifier)
        try #require(!watcherWorkers.isEmpty, "the watcher has no libvips worker after a thumbnail")

        // A helper, idle after one photo of its batch.
        let decoder = HelperPoolTests.decoder()
        defer { decoder.shutdown() }
        var photo = HelperPoolTests.photo()
        photo.batch = "idle"
        _ = try decoder.decode(photo)
        let helper = try #require(decoder.helperProcessIDs.first)
        let helperWorkers = Self.libvipsWorkers(of: helper)
        try #require(!helperWorkers.isEmpty, "the helper has no libvips worker after a thumbnail")

        // Waits on state: until a worker has left (libvips 8.14 stops one idle
        // for 15 s), or 20 s have passed with every one of them still there.
        let left = eventually(timeout: 20) {
            !watcherWorkers.isSubset(of: Self.libvipsWorkers(of: watcher.processIdentifier)) || !helperWorkers.isSubset(of: Self.libvipsWorkers(of: helper))
        }
        #expect(!left, "libvips workers left after an idle spell: watcher \(watcherWorkers) → \(Self.libvipsWorkers(of: watcher.processIdentifier)), helper \(helperWorkers) → \(Self.libvipsWorkers(of: helper))")

        // Both decode again: the same helper, and the same watcher.
        let again = try decoder.decode(photo)
        guard case .made(let thumbnail) = again.thumbnail else {
            Issue.record("no thumbnail after the idle spell: \(String(describing: again.thumbnail))")
            return
        }
        #expect(thumbnail.width == 360 && decoder.helperProcessIDs == [helper])
        try drop("second")
        #expect(HelperPoolTests.eventually { batchesFinished().count == 2 }, "the watcher's second batch did not finish")
        #expect(batchesFinished().last?["ingested"] as? Int == 1)
    }
}
