import Foundation
import Synchronization
import SystemCalls

/// A helper template: one `share decode-helper --template` process that loads
/// the decoding libraries and sets them up (`InProcessDecoder.prepare()`) once,
/// then forks the decoder helpers the parent asks for, loading libvips' modules
/// first when a helper needs them (``HelperKind``). Each child goes on as if it had been started on its own:
/// it gives up its privileges, enters its ``Sandbox``, says it is ready and
/// serves requests.
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
/// The `share` commands that decode go further (``forkEarly()``): first thing
/// in `main`, while they have one thread and before any of their arguments or
/// environment is copied, they fork themselves into the template, so not even
/// the template pays the dynamic loader (`share --help` alone costs about 55 ms
/// of CPU, 60 % of it symbol lookups). The fork keeps only the allowed
/// environment variables (``HelperEnvironment``) and wipes the original
/// argument and environment areas, so neither the template nor its helpers
/// hold the command line (a `--db` URL, a `--message`) or a secret of the
/// environment; it then sets the libraries up at once, while the parent is
/// still reading its arguments and opening its journal.
final class HelperTemplate: Sendable {
    /// The template's process id (a child of this process).
    let pid: pid_t

    /// A template forked at this process's start (``forkEarly()``) that no pool has claimed yet.
    private static let early = Mutex<(pid: pid_t, socket: UnixSocket)?>(nil)
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
    static func start(executable: String, arguments: [String], environment: [String: String], keepStandardError: Bool) throws(SystemError) -> HelperTemplate {
        let (pid, socket) = try HelperProcess.spawn(
            executable: executable, arguments: arguments + ["--template"], environment: environment, keepStandardError: keepStandardError)
        return HelperTemplate(pid: pid, socket: socket)
    }

    /// Forks this process into a helper template for the first pool that needs
    /// one (``claimEarly(arguments:environment:keepStandardError:)``), as the
    /// `share` commands that decode do at their start. The child has this
    /// process's libraries loaded and relocated, keeps only the allowed
    /// environment and wipes the command line (see `shim_fork_template`), sets
    /// the libraries up, and waits to be told the arguments a started template
    /// would have had (``EarlyTemplate``). Does nothing unless this process has
    /// one thread (a fork of a threaded process may inherit a lock another
    /// thread held), nor under valgrind: valgrind follows every fork (its
    /// helpers then die in their sandbox before they are ready), while a started
    /// template is followed only with `--trace-children=yes`, as the README describes.
    ///
    /// Call it before anything copies the arguments or the environment (Swift's
    /// `CommandLine.arguments`, Foundation's `ProcessInfo`): what this process
    /// has copied by then, the template holds too.
    static func forkEarly() {
        let underValgrind = ProcessEnvironment.value("LD_PRELOAD")?.contains("vgpreload") == true
        guard !underValgrind, threads() == 1, let (ours, theirs) = try? UnixSocket.pair() else { return }
        let pid = Processes.forkTemplate(childEnd: theirs, parentEnd: ours, keeping: HelperEnvironment.names)
        if pid == 0 {
            // (Descriptor 3 stays open until the exit: the template holds it all its life.)
            let control = UnixSocket(adopting: 3)
            let status = EarlyTemplate.run(MessageSocket(control))
            withExtendedLifetime(control) { Processes.exit(status) }
        }
        guard pid > 0 else { return }
        early.withLock { $0 = (pid, ours) }
    }

    /// This process's threads (`Threads:` in /proc/self/status), nil if unknown.
    private static func threads() -> Int? {
        guard let status = try? FileSystem.readWholeFile("/proc/self/status") else { return nil }
        let line = String(decoding: status, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("Threads:") }
        return line.flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) }
    }

    /// The template ``forkEarly()`` made, told to go on as `share decode-helper
    /// arguments… --template` with `environment` would; nil when there is none, or
    /// it has gone. Claimed once.
    static func claimEarly(arguments: [String], environment: [String: String], keepStandardError: Bool) -> HelperTemplate? {
        guard let (pid, socket) = early.withLock({ early in defer { early = nil }; return early }) else { return nil }
        let template = HelperTemplate(pid: pid, socket: socket)
        let configuration = EarlyTemplate.Configuration(arguments: arguments + ["--template"], environment: environment, keepStandardError: keepStandardError)
        guard let body = try? JSONEncoder().encode(configuration),
            template.control.withLock({ $0?.send(HelperMessage.frame(.configure, Array(body))) }) == true
        else {
            template.stop()
            return nil
        }
        return template
    }

    /// Asks the template to fork a helper whose socket is `helperSocket` (sent,
    /// not kept: the caller closes its copy), with libvips' modules loaded when
    /// `withModules`. False when the template is gone. The helper's ready message
    /// on the other end says its pid; when the fork fails, that end closes without one.
    func spawn(helperSocket: Int32, withModules: Bool) -> Bool {
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
    func reap(_ pid: pid_t) -> HelperExit? {
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
    func stop() {
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

    fileprivate static func int32(_ bytes: [UInt8]) -> Int32? {
        guard bytes.count == 4 else { return nil }
        return Int32(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(as: Int32.self) })
    }
}

/// The template's side: what `share decode-helper --template` runs once its
/// libraries are set up.
enum HelperTemplateLoop {
    /// How ``serve(_:)`` returned.
    enum Outcome {
        /// In a forked child: descriptor 3 is now the helper's socket; go on as a
        /// helper whose parent (the template) is `template`.
        case helper(template: pid_t)
        /// In the template, when the parent closed the socket (0) or broke the protocol (1).
        case finished(Int32)
    }

    /// Answers the parent's requests on `control` (descriptor 3) one at a time.
    static func serve(_ control: MessageSocket) -> Outcome {
        while true {
            let message: ReceivedMessage
            do {
                message = try control.receive(maximum: 64)
            } catch .closed {
                return .finished(0)
            } catch {
                return .finished(1)
            }
            switch HelperMessage.Kind(rawValue: message.kind) {
            case .spawn where message.descriptor != nil:
                // A helper that needs libvips' modules: loaded here once (the
                // template is not sandboxed), for it and every later child.
                if message.body == [1] { DecoderHelper.loadModules(sandboxOnlyLoaders: false) }
                // The child gets the descriptor as 3; a failed fork closes it, which
                // the parent sees as a helper that ended before it was ready.
                let template = Processes.current
                if Processes.forkHelper(socket: message.descriptor!) == 0 {
                    // Descriptor 3 is the helper's socket now: the template's object
                    // for it must not close it.
                    _ = control.socket.release()
                    return .helper(template: template)
                }
            case .reap:
                var answer: [UInt8] = []
                if let pid = HelperTemplate.int32(message.body), pid > 0 {
                    Processes.send(SIGKILL, to: pid)
                    if let status = Processes.waitForExit(of: pid) { withUnsafeBytes(of: status.littleEndian) { answer.append(contentsOf: $0) } }
                }
                guard control.send(HelperMessage.frame(.reaped, answer)) else { return .finished(1) }
            default:
                return .finished(1)
            }
        }
    }
}

/// The child of ``HelperTemplate/forkEarly()``: it sets the libraries up at
/// once (with the allowed environment it kept), then waits for the parent's
/// ``Configuration``, takes its environment, sends its standard error to
/// /dev/null unless told to keep it, and goes on as `share decode-helper
/// arguments…` (``DecoderHelper/main(_:)``) would. Exits 0 when the parent
/// closes the socket first: it never needed a decoder.
enum EarlyTemplate {
    /// What a started template would have been given.
    struct Configuration: Codable {
        /// `share decode-helper`'s arguments, `--template` included.
        let arguments: [String]
        let environment: [String: String]
        let keepStandardError: Bool
    }

    static func run(_ control: MessageSocket) -> Int32 {
        DecoderHelper.prepareLibraries(sandboxOnlyLoaders: false)
        let message: ReceivedMessage
        do {
            message = try control.receive(maximum: HelperMessage.maximumRequest)
        } catch .closed {
            return 0
        } catch {
            return 1
        }
        guard message.kind == HelperMessage.Kind.configure.rawValue,
            let configuration = try? JSONDecoder().decode(Configuration.self, from: Data(message.body)),
            let settings = try? HelperSettings(configuration.arguments), settings.isTemplate
        else { return 1 }
        ProcessEnvironment.replace(with: configuration.environment)
        if !configuration.keepStandardError, let null = try? FileDescriptor.open("/dev/null", O_WRONLY) {
            try? null.duplicate(onto: 2, path: "/dev/null")
        }
        return DecoderHelper.run(settings, control: control)
    }
}
