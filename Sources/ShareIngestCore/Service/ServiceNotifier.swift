import Foundation
import Synchronization
import SystemCalls

/// The service manager's notification protocol (systemd's `sd_notify`), spoken
/// over the datagram socket `NOTIFY_SOCKET` names: `READY=1` once the process
/// can work, `WATCHDOG=1` every half of `WATCHDOG_USEC` from then on (with a
/// `STATUS=` line of live counts), `STOPPING=1` when it is asked to stop. Without
/// `NOTIFY_SOCKET` (not run by systemd with `Type=notify`) it does nothing.
package final class ServiceNotifier: Sendable {
    private let socket: UnixDatagramSender?
    /// Seconds between watchdog pings (half of `WATCHDOG_USEC`), nil without a watchdog.
    package let watchdogInterval: Double?
    private let stopped = Atomic(false)
    private let wake = WakePipe()

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` (a watchdog meant for another process is not ours).
    package init() {
        let path = ProcessEnvironment.value("NOTIFY_SOCKET").flatMap { $0.isEmpty ? nil : $0 }
        socket = path.flatMap { try? UnixDatagramSender(path: $0) }
        let usec = ProcessEnvironment.value("WATCHDOG_USEC").flatMap(Double.init)
        let pid = ProcessEnvironment.value("WATCHDOG_PID").flatMap(Int32.init)
        if let usec, usec > 0, pid == nil || pid == Processes.current {
            watchdogInterval = usec / 2 / 1_000_000
        } else {
            watchdogInterval = nil
        }
    }

    /// True when a service manager listens.
    package var isActive: Bool { socket != nil }

    /// `READY=1` with a status line, then the watchdog pings (each with `status()`'s line) until ``stopping(_:)``.
    package func ready(_ status: String, watchdogStatus: @escaping @Sendable () -> String) {
        guard let socket else { return }
        socket.send("READY=1\nSTATUS=\(Self.line(status))")
        guard let interval = watchdogInterval else { return }
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                _ = try? Polling.wait([wake.readEnd], milliseconds: Int32(max(interval, 0.01) * 1000))
                wake.drain()
                guard !stopped.load(ordering: .relaxed) else { return }
                socket.send("WATCHDOG=1\nSTATUS=\(Self.line(watchdogStatus()))")
            }
        }
        thread.name = "share-watchdog"
        thread.start()
    }

    /// A new status line alone.
    package func status(_ status: String) { socket?.send("STATUS=\(Self.line(status))") }

    /// `STOPPING=1` (SIGTERM): the service manager waits for the exit; the pings stop.
    package func stopping(_ status: String) {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
        socket?.send("STOPPING=1\nSTATUS=\(Self.line(status))")
    }

    /// One line (a newline would start another assignment).
    private static func line(_ text: String) -> String { text.replacingOccurrences(of: "\n", with: " ") }
}
