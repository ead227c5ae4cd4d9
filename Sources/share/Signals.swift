import Foundation
import Glibc
import ShareIngestCore
import Synchronization
import SystemCalls

/// SIGINT and SIGTERM ask the batch to stop: no new items are taken, items in
/// flight finish their current stage (nothing is rolled back: the journal
/// knows where each item is, and `--resume` goes on from there), and the
/// program exits cleanly.
///
/// Both are blocked in every thread from the top of `main` (``start()``, before
/// any other thread exists: threads inherit the mask), and one thread takes them
/// with `sigwait`. A Dispatch signal source, used before, blocks the signal only
/// in some threads: one that arrived in a thread started earlier was handled
/// there and lost, and a worker went on serving after SIGTERM.
enum Signals {
    /// What a signal does once a command asked for it (``cancel(_:onSignal:)``).
    private static let handler = Mutex<(@Sendable (Int32) -> Void)?>(nil)

    private static let termination = SignalSet([SIGINT, SIGTERM])

    /// The first SIGINT or SIGTERM a command asked to hear, if one came: the
    /// command then exits 128 + its number (``ExitStatus/after(signal:)``).
    private static let first = Atomic<Int32>(0)
    static var received: Int32? {
        let number = first.load(ordering: .relaxed)
        return number == 0 ? nil : number
    }

    /// True under a service manager (systemd sets `NOTIFY_SOCKET` for
    /// `Type=notify` units and `INVOCATION_ID` for every unit), where SIGTERM is
    /// how a service is stopped: `watch` and `worker` then exit 0.
    static var underServiceManager: Bool {
        ["NOTIFY_SOCKET", "INVOCATION_ID"].contains { ProcessEnvironment.value($0).map { !$0.isEmpty } ?? false }
    }

    /// How a service (`watch`, `worker`) that stopped on a signal exits: 0 on
    /// SIGTERM under a service manager, else 128 + the signal; 0 without one.
    static var serviceExit: ExitStatus {
        guard let signal = received else { return .success }
        return signal == SIGTERM && underServiceManager ? .success : ExitStatus.after(signal: signal)
    }

    /// Blocks SIGINT and SIGTERM and starts the thread that waits for them. Call
    /// it first in `main`, while the process has one thread.
    static func start() {
        termination.block()
        let waiter = Thread { waitForSignals() }
        waiter.name = "share-signals"
        waiter.start()
    }

    /// From now on SIGINT and SIGTERM set `flag` (and call `onSignal`) instead of
    /// ending the process.
    static func cancel(_ flag: CancellationFlag, onSignal: @escaping @Sendable (Int32) -> Void = { _ in }) {
        handler.withLock { handler in
            handler = { number in
                _ = first.compareExchange(expected: 0, desired: number, ordering: .relaxed)
                flag.cancel()
                onSignal(number)
            }
        }
    }

    private static func waitForSignals() {
        while true {
            let number = termination.wait()
            if let handle = handler.withLock({ $0 }) {
                handle(number)
                continue
            }
            // No command asked for it: its default action, ending the process.
            termination.raiseWithDefaultAction(number)
        }
    }
}
