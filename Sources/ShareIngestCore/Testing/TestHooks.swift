import Foundation
import Glibc
import Synchronization
import SystemCalls

// The pipeline's test hooks, in one place. They exist only in debug and test
// builds: a release `share` has no crash points and no throttle, whatever its
// environment says (the calls compile to nothing).

/// Named points where a test can make the process die (`SHARE_CRASH_POINT=<name>`
/// raises SIGKILL there), to prove that a crash at that instruction loses nothing;
/// or hold it there (``TestPause``) while it changes the world or aims a signal.
/// Before each stage of each item: `<stage>:<file name>`; `before-plan` (the
/// journal open, nothing of the batch recorded yet), `copied:<file name>` (a
/// new copy is at its name), `after-plan`,
/// `after-walk` (the plan's walk is done, nothing recorded yet), `after-claim`
/// (a watched drop is moved in, not yet walked), `listing:<folder>` and
/// `listed:<folder>` (the walk is about to list, and has listed, a folder of
/// the drop, relative to it), `before-sidecar-copy:<name>`
/// (the fan-in is about to open a carried sidecar), `before-manifest`,
/// `manifest-temporary-written`, `after-manifest`, `manifest-job`.
enum CrashPoint {
    #if DEBUG
        private static let armed = ProcessEnvironment.value("SHARE_CRASH_POINT")
    #endif

    @inline(__always)
    static func hit(_ name: @autoclosure () -> String) {
        #if DEBUG
            let name = name()
            if let armed, armed == name { Processes.raiseInSelf(SIGKILL) }
            TestPause.hit(name)
        #endif
    }
}

/// A test-only gate at a named point (``CrashPoint``): with
/// `SHARE_TEST_PAUSE_AT=<point>` (a trailing `*` matches any end; `#n`: the
/// n-th hit in this process, else the first) and `SHARE_TEST_PAUSE_GATE=<FIFO>`,
/// the thread that reaches it opens the FIFO for reading (so a test that
/// opens it for writing, non-blocking, succeeds only from then on: the process
/// is there) and waits for one byte (or the writer's close); every later hit
/// of the point waits too until then. So a test changes what it wants, or
/// kills the process, while it is known to stand at that point, on a machine
/// of any speed, with no sleep.
enum TestPause {
    #if DEBUG
        private static let aim: (pattern: String, prefix: Bool, nth: Int)? = ProcessEnvironment.value(
            "SHARE_TEST_PAUSE_AT"
        ).map { text in
            let parts = text.split(separator: "#", maxSplits: 1)
            let pattern = String(parts.first ?? "")
            let nth = parts.count > 1 ? max(1, Int(parts[1]) ?? 1) : 1
            return pattern.hasSuffix("*") ? (String(pattern.dropLast()), true, nth) : (pattern, false, nth)
        }
        private static let gate = ProcessEnvironment.value("SHARE_TEST_PAUSE_GATE")
        private static let hits = Mutex(0)
        private static let opened = NSCondition()
        nonisolated(unsafe) private static var released = false
    #endif

    static func hit(_ name: String) {
        #if DEBUG
            guard let aim, let gate, aim.prefix ? name.hasPrefix(aim.pattern) : name == aim.pattern else { return }
            let n = hits.withLock { hits in
                hits += 1
                return hits
            }
            guard n >= aim.nth else { return }
            if n == aim.nth {
                // Blocks until the test opens the gate for writing, then until it writes (or closes).
                if let fd = try? FileDescriptor.open(gate, O_RDONLY) {
                    var byte: UInt8 = 0
                    _ = withUnsafeMutableBytes(of: &byte) { try? fd.readAvailable(into: $0, path: gate) }
                }
                opened.lock()
                released = true
                opened.broadcast()
                opened.unlock()
            } else {
                opened.lock()
                while !released { opened.wait() }
                opened.unlock()
            }
        #endif
    }
}

/// A test-only brake (`SHARE_TEST_THROTTLE_MS=<ms>`): a pause after each planned
/// item, after each stage of each item and around the batch's end, so a test can
/// aim a real signal at observed progress (k copies on disk, the manifest) on a
/// machine of any speed.
enum TestThrottle {
    #if DEBUG
        private static let seconds: Double? = ProcessEnvironment.value("SHARE_TEST_THROTTLE_MS")
            .flatMap(Double.init).map { max(0, $0) / 1000 }
    #endif

    @inline(__always)
    static func pause() {
        #if DEBUG
            if let seconds { MonotonicClock.sleep(seconds) }
        #endif
    }
}
