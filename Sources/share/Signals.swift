import Dispatch
import Glibc
import ShareIngest

/// SIGINT and SIGTERM ask the batch to stop: no new items are taken, items in
/// flight finish their current stage (nothing is rolled back: the journal
/// knows where each item is, and `--resume` goes on from there), and the
/// program exits cleanly.
enum Signals {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static func cancel(_ flag: CancellationFlag, onSignal: @escaping @Sendable (Int32) -> Void = { _ in }) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                flag.cancel()
                onSignal(number)
            }
            source.resume()
            sources.append(source)
        }
    }
}
