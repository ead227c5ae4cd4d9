import Foundation
import Synchronization
import SystemCalls

/// A helper template: one `share-helper decode-helper --template` process (the
/// helper executable, which links the decoding libraries; `share` is to link none)
/// that loads the decoding libraries and sets them up (`InProcessDecoder.prepare()`)
/// once, then forks the decoder helpers the parent asks for, loading libvips'
/// modules first when a helper needs them (``HelperKind``). Each child goes on
/// as if it had been started on its own: it gives up its privileges, enters its
/// ``Sandbox``, says it is ready and serves requests.
///
/// Why: a helper started on its own costs about 60 ms of CPU before it can
/// decode (the dynamic loader maps and relocates some 185 libraries, then
/// libvips loads its modules); a command that starts two helpers paid that
/// twice. A fork of the template costs a few milliseconds and shares the
/// template's pages until they are written.
///
/// The template never sees untrusted bytes: it holds no input, only its socket
/// to the parent. It is single-threaded (nothing in `prepare()` starts a thread;
/// decoding would, which is why the template never decodes), so a fork of it is
/// safe, unlike a fork of the threaded parent. Its children are its own, so it
/// also reaps them for the parent (``reap(_:)``); a child dies with the template
/// (`PR_SET_PDEATHSIG`), and the template exits when the parent closes its socket.
/// Helpers that may run the sandbox-only loaders (SVG, PSD) are still started on
/// their own: they load more before they lock themselves down.
///
/// The template is started (exec'd) once per command, with only the helper
/// arguments and the allowed environment (``HelperEnvironment``): it never
/// holds the command line (a `--db` URL, a `--message`) or a secret of the
/// environment. (Before issue 59 `share` forked itself into the template at its
/// start; `share` no longer links the decoders, so there is nothing to fork.)
package final class HelperTemplate: Sendable {
    /// The template's process id (a child of this process).
    package let pid: pid_t

    /// The parent's end of the template's socket; nil once the template is gone.
    private let control: Mutex<MessageSocket?>

    private init(pid: pid_t, socket: UnixSocket) {
        self.pid = pid
        self.control = Mutex(MessageSocket(socket))
    }

    deinit { stop() }

    /// Starts `executable arguments… --template` (the helper arguments, as for a
    /// helper started on its own). Returns at once: the template loads its
    /// libraries while the parent goes on, and takes requests when it is done.
    package static func start(
        executable: String, arguments: [String], environment: [String: String], keepStandardError: Bool
    ) throws(SystemError) -> HelperTemplate {
        let (pid, socket) = try HelperProcess.spawn(
            executable: executable, arguments: arguments + ["--template"], environment: environment,
            keepStandardError: keepStandardError)
        return HelperTemplate(pid: pid, socket: socket)
    }

    /// Asks the template to fork a helper whose socket is `helperSocket` (sent,
    /// not kept: the caller closes its copy), with libvips' modules loaded when
    /// `withModules`. False when the template is gone. The helper's ready message
    /// on the other end says its pid; when the fork fails, that end closes without one.
    package func spawn(helperSocket: Int32, withModules: Bool) -> Bool {
        control.withLock { control in
            guard let socket = control else { return false }
            if socket.send(HelperMessage.frame(.spawn, withModules ? [1] : []), attaching: helperSocket) { return true }
            Self.close(&control)
            return false
        }
    }

    /// Kills (SIGKILL) and reaps the template's child `pid`: how it ended, or nil
    /// when the template is gone (its children died with it) or `pid` was not its
    /// child. Only the template signals its children, so a pid is never signalled
    /// after it was reaped and could name another process.
    package func reap(_ pid: pid_t) -> HelperExit? {
        control.withLock { control in
            guard let socket = control else { return nil }
            var body: [UInt8] = []
            withUnsafeBytes(of: Int32(pid).littleEndian) { body.append(contentsOf: $0) }
            guard socket.send(HelperMessage.frame(.reap, body)),
                let answer = try? socket.receive(maximum: 8), answer.kind == HelperMessage.Kind.reaped.rawValue
            else {
                Self.close(&control)
                return nil
            }
            return Self.int32(answer.body).map { HelperExit(waitStatus: $0) }
        }
    }

    /// Closes the socket (the template exits, and its children with it) and reaps the template.
    package func stop() {
        let wasOpen = control.withLock { control in
            defer { Self.close(&control) }
            return control != nil
        }
        guard wasOpen else { return }
        Processes.send(SIGKILL, to: pid)
        _ = Processes.waitForExit(of: pid)
    }

    private static func close(_ control: inout MessageSocket?) {
        control?.socket.close()
        control = nil
    }

    package static func int32(_ bytes: [UInt8]) -> Int32? {
        guard bytes.count == 4 else { return nil }
        return Int32(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(as: Int32.self) })
    }
}
