import Foundation
import Glibc
import SystemCalls

// The pipeline's test hooks, in one place. They exist only in debug and test
// builds: a release `share` has no crash points and no throttle, whatever its
// environment says (the calls compile to nothing).

/// Named points where a test can make the process die (`SHARE_CRASH_POINT=<name>`
/// raises SIGKILL there), to prove that a crash at that instruction loses nothing.
enum CrashPoint {
    #if DEBUG
    private static let armed = ProcessEnvironment.value("SHARE_CRASH_POINT")
    #endif

    @inline(__always)
    static func hit(_ name: @autoclosure () -> String) {
        #if DEBUG
        if let armed, armed == name() { Processes.raiseInSelf(SIGKILL) }
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
