import Foundation

/// The test's side of a pause point of a debug `share` (its `TestPause`):
/// a FIFO the process opens for reading when a thread of it reaches `point`
/// (`SHARE_TEST_PAUSE_AT`: a name of its crash points, `*` at the end for any
/// end, `#n` for the n-th hit), where it then waits for one byte. So the test
/// knows, without a sleep and on a machine of any speed, that the process
/// stands there, does what it wants (swaps a file, aims a signal), then lets
/// it go on.
public final class PauseGate {
    public let point: String
    public let path: String
    private let directory = TemporaryDirectory("pause-gate")
    private var writer: Int32 = -1

    /// A gate at `point` (a FIFO of its own).
    public init(_ point: String) {
        self.point = point
        path = directory.path + "/gate"
        precondition(mkfifo(path, 0o600) == 0, "mkfifo \(path): \(String(cString: strerror(errno)))")
    }

    deinit {
        if writer >= 0 { close(writer) }
    }

    /// What the process needs in its environment to stop there.
    public var environment: [String: String] { ["SHARE_TEST_PAUSE_AT": point, "SHARE_TEST_PAUSE_GATE": path] }

    /// Waits until a process stands at the point (it opened the FIFO: a
    /// non-blocking open for writing succeeds only then): true; false when
    /// `alive` says the process ended first, or after `timeout` seconds (a
    /// slow machine only makes this wait longer).
    public func waitUntilReached(timeout: Double = 300, alive: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if fd >= 0 {
                writer = fd
                return true
            }
            guard errno == ENXIO, alive() else { return false }
            usleep(500)
        }
        return false
    }

    /// Lets the process go on from the point.
    public func release() {
        guard writer >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(writer, &byte, 1)
        close(writer)
        writer = -1
    }
}
