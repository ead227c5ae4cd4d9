import Foundation
import Glibc
import MediaFormats
import MediaKit
import TestSupport
import Testing

@testable import DecoderIsolation

/// Finding 13 of issue 51: libvips 8.14.1 hung `scripts/test.sh`'s memory
/// check. Its threadset stops a worker that has been idle for 15 s; when that
/// worker is handed a task at that moment, the task never runs and the
/// pipeline waits for ever (in-process) or until the item's time limit kills
/// the helper. The race itself is too narrow to provoke; what makes it
/// possible is the expiry, and that is what this shows gone: a helper and an
/// in-process decoder (MediaKit's, in this process; a watcher with
/// `--isolation none` decoded in-process before issue 59) each keep every libvips worker through an idle spell longer than
/// 15 s, and then decode again.
@Suite struct LibvipsIdleTests {
    /// The thread ids of `pid`'s libvips workers (threads named "libvips worker").
    static func libvipsWorkers(of pid: pid_t) -> Set<Int32> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return Set(
            tasks.compactMap { tid in
                let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8)) ?? ""
                return name.hasPrefix("libvips worker") ? Int32(tid) : nil
            })
    }

    @Test func workersOfAnIdleHelperAndAnIdleInProcessWatcherStayAndDecodeAgain() throws {
        #expect(Vips.idleWorkersStay, "libvips' own vips_semaphore_down_timeout is in use in the test process")
        // An in-process decoder (MediaKit's, which `share --isolation none` no
        // longer is since issue 59), in this process.
        let inProcess = InProcessDecoder()
        inProcess.prepare()
        _ = try inProcess.decode(HelperPoolTests.photo())
        let own = getpid()
        let watcherWorkers = Self.libvipsWorkers(of: own)
        try #require(!watcherWorkers.isEmpty, "this process has no libvips worker after a thumbnail")

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
            !watcherWorkers.isSubset(of: Self.libvipsWorkers(of: own))
                || !helperWorkers.isSubset(of: Self.libvipsWorkers(of: helper))
        }
        #expect(
            !left,
            "libvips workers left after an idle spell: in-process \(watcherWorkers) → \(Self.libvipsWorkers(of: own)), helper \(helperWorkers) → \(Self.libvipsWorkers(of: helper))"
        )

        // Both decode again: the same helper, and this process.
        let again = try decoder.decode(photo)
        guard case .made(let thumbnail) = again.thumbnail else {
            Issue.record("no thumbnail after the idle spell: \(String(describing: again.thumbnail))")
            return
        }
        #expect(thumbnail.width == 360 && decoder.helperProcessIDs == [helper])
        guard case .made(let inProcessThumbnail) = try inProcess.decode(HelperPoolTests.photo()).thumbnail else {
            Issue.record("no in-process thumbnail after the idle spell")
            return
        }
        #expect(inProcessThumbnail.width == 360)
    }
}
