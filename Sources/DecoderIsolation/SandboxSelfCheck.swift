import Foundation
import Glibc

/// A test-only mode (`share decode-helper --self-check WRITE_PATH READ_PATH`):
/// the helper sets itself up exactly as for decoding, sandbox included, then
/// tries what it must never be able to do and prints one JSON line per attempt
/// (`{"check":…,"refused":true,"error":…}`), then its /proc/self/status fields.
/// A test reads them: every attempt must be refused.
enum SandboxSelfCheck {
    /// One attempt and how it ended.
    struct Attempt: Codable {
        var check: String
        var refused: Bool
        var error: String
    }

    /// Runs the attempts, printing each; the last one is exec, which, if it were
    /// allowed, would replace this process (and its line would be missing).
    static func run(writePath: String, readPath: String, status: SandboxStatus) -> Int32 {
        report("status", refused: status.noNewPrivs && status.seccompFilter, error: statusLines())
        attempt("open-for-writing") { open(writePath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }
        attempt("open-existing-for-writing") { open("/dev/null", O_WRONLY | O_CLOEXEC) }
        attempt("read-outside-allowed-paths") { open(readPath, O_RDONLY | O_CLOEXEC) }
        attempt("create-directory") { mkdir(writePath + ".d", 0o700) }
        attempt("socket-inet") { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
        attempt("socket-unix") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0) }
        attempt("signal-parent") { kill(getppid(), 0) }
        attempt("fork") { fork() }
        attempt("exec") {
            let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
            return execv("/bin/true", arguments)
        }
        return 0
    }

    /// Runs `call` (a system call returning -1 on failure, or a descriptor or pid);
    /// a success is undone (closed, or the child exits at once).
    private static func attempt(_ name: String, _ call: () -> Int32) {
        errno = 0
        let result = call()
        let code = errno
        if result >= 0 {
            if name == "fork", result == 0 { _exit(0) }
            if name.hasPrefix("open") || name.hasPrefix("socket") || name.hasPrefix("read") { close(result) }
        }
        report(name, refused: result < 0, error: result < 0 ? String(cString: strerror(code)) : "allowed")
    }

    private static func report(_ check: String, refused: Bool, error: String) {
        guard let data = try? JSONEncoder().encode(Attempt(check: check, refused: refused, error: error)) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    private static func statusLines() -> String {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").filter { $0.hasPrefix("NoNewPrivs") || $0.hasPrefix("Seccomp:") }.joined(separator: "; ")
    }
}
