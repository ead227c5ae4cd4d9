import Foundation
import Glibc

/// Writes to stdout and stderr, unbuffered and thread-safe.
final class Terminal: @unchecked Sendable {
    static let shared = Terminal()
    private let lock = NSLock()
    let stderrIsTerminal = isatty(STDERR_FILENO) == 1
    private var statusLineShown = false

    func out(_ line: String) { write(STDOUT_FILENO, line + "\n") }

    /// A line on stderr; clears a progress line first.
    func err(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        if statusLineShown {
            raw(STDERR_FILENO, "\r\u{1B}[2K")
            statusLineShown = false
        }
        raw(STDERR_FILENO, line + "\n")
    }

    /// Redraws the progress line in place (terminals only).
    func status(_ line: String) {
        guard stderrIsTerminal else { return }
        lock.lock()
        defer { lock.unlock() }
        raw(STDERR_FILENO, "\r\u{1B}[2K" + line)
        statusLineShown = true
    }

    func clearStatus() { status("") }

    private func write(_ fd: Int32, _ text: String) {
        lock.lock()
        defer { lock.unlock() }
        raw(fd, text)
    }

    private func raw(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }
}
