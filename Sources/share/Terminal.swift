import Foundation
import ShareIngestCore
import Synchronization
import SystemCalls

/// Writes to stdout and stderr, unbuffered and thread-safe.
final class Terminal: Sendable {
    static let shared = Terminal()
    let stderrIsTerminal = StandardStream.isTerminal(STDERR_FILENO)
    /// Whether a progress line is on screen (it is cleared before other output).
    private let statusLineShown = Mutex(false)

    func out(_ line: String, newline: Bool = true) {
        statusLineShown.withLock { _ in raw(STDOUT_FILENO, newline ? line + "\n" : line) }
    }

    /// A line of text for people on stdout that names what came from outside
    /// (a dropped file's or folder's name, a library's message): every control,
    /// format and separator character escaped (``DisplayText``), as on stderr.
    func text(_ line: String) { out(DisplayText.escaped(line)) }

    /// How stderr's lines are written (`--log-format`): plain text, or one JSON object per line.
    private let format = Mutex(ServiceLogLine.Format.plain)
    var logFormat: ServiceLogLine.Format {
        get { format.withLock { $0 } }
        set { format.withLock { $0 = newValue } }
    }

    /// A line on stderr, in the log format: plain lines become `message` events.
    func err(_ line: String) {
        log(ServiceLogLine(plain: line), plain: line)
    }

    /// A log line on stderr: `plain` as it is in plain text (else `share: message`),
    /// the line's fields as JSON with `--log-format json`; passwords scrubbed in both.
    func log(_ line: ServiceLogLine, plain: String? = nil) {
        write(line.rendered(logFormat, plain: plain))
    }

    /// A line on stderr; clears a progress line first.
    private func write(_ line: String) {
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
        guard stderrIsTerminal, logFormat == .plain else { return }
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
