import Foundation
import Synchronization
import SystemCalls

/// Writes to stdout and stderr, unbuffered and thread-safe.
final class Terminal: Sendable {
    static let shared = Terminal()
    let stderrIsTerminal = StandardStream.isTerminal(STDERR_FILENO)
    /// Whether a progress line is on screen (it is cleared before other output).
    private let statusLineShown = Mutex(false)

    func out(_ line: String) { statusLineShown.withLock { _ in raw(STDOUT_FILENO, line + "\n") } }

    /// A line on stderr; clears a progress line first.
    func err(_ line: String) {
        statusLineShown.withLock { shown in
            if shown {
                raw(STDERR_FILENO, "\r\u{1B}[2K")
                shown = false
            }
            raw(STDERR_FILENO, line + "\n")
        }
    }

    /// Redraws the progress line in place (terminals only).
    func status(_ line: String) {
        guard stderrIsTerminal else { return }
        statusLineShown.withLock { shown in
            raw(STDERR_FILENO, "\r\u{1B}[2K" + line)
            shown = true
        }
    }

    func clearStatus() { status("") }

    private func raw(_ fd: Int32, _ text: String) {
        StandardStream.write(Array(text.utf8), to: fd)
    }
}
