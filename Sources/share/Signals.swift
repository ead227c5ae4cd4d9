import Foundation
import Glibc
import ShareIngest
import Synchronization

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

    private static var termination: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        return set
    }

    /// Blocks SIGINT and SIGTERM and starts the thread that waits for them. Call
    /// it first in `main`, while the process has one thread.
    static func start() {
        var set = termination
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let waiter = Thread { waitForSignals() }
        waiter.name = "share-signals"
        waiter.start()
    }

    /// From now on SIGINT and SIGTERM set `flag` (and call `onSignal`) instead of
    /// ending the process.
    static func cancel(_ flag: CancellationFlag, onSignal: @escaping @Sendable (Int32) -> Void = { _ in }) {
        handler.withLock { handler in
            handler = { number in
                flag.cancel()
                onSignal(number)
            }
        }
    }

    private static func waitForSignals() {
        var set = termination
        while true {
            var number: Int32 = 0
            guard sigwait(&set, &number) == 0 else { continue }
            if let handle = handler.withLock({ $0 }) {
                handle(number)
                continue
            }
            // No command asked for it: its default action, ending the process.
            signal(number, SIG_DFL)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            raise(number)
        }
    }
}
