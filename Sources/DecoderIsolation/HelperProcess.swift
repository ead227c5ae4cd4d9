import CShims
import CSystem
import Foundation
import Glibc
import MediaFormats
import Synchronization

/// One running decoder helper, seen from the parent: its pid and the parent's
/// end of their socket. Used by one thread at a time (the pool hands it out).
final class HelperProcess: @unchecked Sendable {
    /// Its process id; 0 until its ready message says it, for a helper forked
    /// from a ``HelperTemplate`` (read from any thread).
    var pid: pid_t { knownPID.load(ordering: .acquiring) }
    private let knownPID: Atomic<pid_t>
    /// Whether it was started with the loaders only a sandbox may run (SVG, PSD).
    let allowsSandboxOnlyLoaders: Bool
    /// The template it was forked from, which reaps it; nil when it was started
    /// on its own (a child of this process).
    private let template: HelperTemplate?
    private let socket: MessageSocket
    /// Its ready message, once read.
    private(set) var ready: HelperReady?
    /// How it ended, once reaped.
    private(set) var exit: HelperExit?

    private init(pid: pid_t, socket: Int32, allowsSandboxOnlyLoaders: Bool, template: HelperTemplate?) {
        self.knownPID = Atomic(pid)
        self.allowsSandboxOnlyLoaders = allowsSandboxOnlyLoaders
        self.template = template
        self.socket = MessageSocket(descriptor: socket)
    }

    deinit {
        if exit == nil { _ = stop() }
        close(socket.descriptor)
    }

    /// A connected pair of Unix stream sockets (close-on-exec): the parent's end
    /// and the helper's; nil (errno set) when there is none.
    static func socketPair() -> [Int32]? {
        var ends: [Int32] = [-1, -1]
        return socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 ? ends : nil
    }

    /// Starts `executable arguments…` with one end of a new socket pair as its
    /// descriptor 3 (see `shim_spawn_helper`), and `environment`; its standard
    /// error is this process's when `keepStandardError`, else /dev/null.
    static func start(
        executable: String, arguments: [String], environment: [String: String], keepStandardError: Bool, allowsSandboxOnlyLoaders: Bool
    ) throws(SpawnError) -> HelperProcess {
        let (pid, socket) = try spawn(
            executable: executable, arguments: arguments + (allowsSandboxOnlyLoaders ? ["--sandbox-only-loaders"] : []), environment: environment,
            keepStandardError: keepStandardError)
        return HelperProcess(pid: pid, socket: socket, allowsSandboxOnlyLoaders: allowsSandboxOnlyLoaders, template: nil)
    }

    /// Asks `template` to fork a helper; nil when the template is gone.
    static func fork(from template: HelperTemplate) -> HelperProcess? {
        guard let ends = socketPair() else { return nil }
        let sent = template.spawn(helperSocket: ends[1])
        close(ends[1])
        guard sent else {
            close(ends[0])
            return nil
        }
        return HelperProcess(pid: 0, socket: ends[0], allowsSandboxOnlyLoaders: false, template: template)
    }

    /// Starts `executable arguments…` with one end of a new socket pair as its
    /// descriptor 3; returns its pid and the other end.
    static func spawn(executable: String, arguments: [String], environment: [String: String], keepStandardError: Bool) throws(SpawnError) -> (pid_t, Int32) {
        guard let ends = socketPair() else { throw SpawnError(executable: executable, code: errno) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = shim_spawn_helper(executable, argv, envp, ends[1], keepStandardError ? 1 : 0, &pid)
        close(ends[1])
        guard status == 0 else {
            close(ends[0])
            throw SpawnError(executable: executable, code: status)
        }
        return (pid, ends[0])
    }

    /// Waits (until `deadline`, monotonic seconds) for the helper's ready message.
    func awaitReady(deadline: Double) throws(HelperFailure) -> HelperReady {
        if let ready { return ready }
        let message: (kind: UInt8, body: [UInt8], descriptor: Int32)
        do {
            message = try socket.receive(maximum: HelperMessage.maximumRequest, deadline: deadline)
        } catch {
            throw failure(error)
        }
        if message.descriptor >= 0 { close(message.descriptor) }
        guard message.kind == HelperMessage.Kind.ready.rawValue,
            let ready = try? JSONDecoder().decode(HelperReady.self, from: Data(message.body))
        else { throw .malformed(ProtocolError("the first message was not a ready message")) }
        if template != nil { knownPID.store(ready.pid, ordering: .releasing) }
        self.ready = ready
        return ready
    }

    /// True when the idle helper has not died or spoken out of turn (its socket
    /// has nothing to read and is not closed).
    var isIdleAndAlive: Bool {
        guard exit == nil else { return false }
        var poller = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) == 0
    }

    /// Sends `request` with `descriptor` and waits for the result until `deadline`.
    func decode(_ request: DecodeRequest, descriptor: Int32, deadline: Double) throws(HelperFailure) -> Result<DecodedMedia, MediaError> {
        let body: Data
        do { body = try JSONEncoder().encode(request) } catch { throw .malformed(ProtocolError("cannot encode the request: \(error)")) }
        guard socket.send(HelperMessage.frame(.decode, Array(body)), attaching: descriptor) else {
            reap()
            throw .notDelivered
        }
        let accepted: (kind: UInt8, body: [UInt8], descriptor: Int32)
        do throws(MessageSocket.ReadFailure) {
            accepted = try socket.receive(maximum: 0, deadline: deadline)
        } catch {
            guard case .closed = error else { throw failure(error) }
            // Gone before it took the request (killed while idle): nothing was decoded.
            reap()
            throw .notDelivered
        }
        if accepted.descriptor >= 0 { close(accepted.descriptor) }
        guard accepted.kind == HelperMessage.Kind.accepted.rawValue else {
            throw .malformed(ProtocolError("a message of type \(accepted.kind) instead of an acceptance"))
        }
        let message: (kind: UInt8, body: [UInt8], descriptor: Int32)
        do {
            message = try socket.receive(maximum: HelperMessage.maximumResult, deadline: deadline)
        } catch {
            throw failure(error)
        }
        if message.descriptor >= 0 { close(message.descriptor) }
        guard message.kind == HelperMessage.Kind.result.rawValue else {
            throw .malformed(ProtocolError("a message of type \(message.kind) instead of a result"))
        }
        do throws(ProtocolError) {
            let (result, jpeg) = try HelperMessage.parseResult(message.body[...])
            return try result.outcome(jpeg: jpeg)
        } catch {
            throw .malformed(error)
        }
    }

    private func failure(_ error: MessageSocket.ReadFailure) -> HelperFailure {
        switch error {
        case .closed: .died(reap())
        case .timedOut: .timedOut
        case .malformed(let problem): .malformed(problem)
        case .failed(let code): .malformed(ProtocolError("reading from the helper failed: \(String(cString: strerror(code)))"))
        }
    }

    /// Kills the helper (SIGKILL) and reaps it; its exit, which is the real cause
    /// when it was already dying (a signal does not replace an exit in progress).
    @discardableResult
    func stop() -> HelperExit { reap() }

    /// Reaps the helper after its socket closed: it is dead or dying; SIGKILL ends
    /// one that closed its socket and lived on. A forked helper is reaped by its
    /// template; one that never said its pid (its fork failed, or it died before
    /// it was ready) cannot be, and one whose template is gone died with it.
    @discardableResult
    private func reap() -> HelperExit {
        if let exit { return exit }
        if let template {
            let ended = pid > 0 ? template.reap(pid) ?? .signaled(SIGKILL) : .signaled(SIGKILL)
            exit = ended
            return ended
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        var result: pid_t
        repeat {
            result = waitpid(pid, &status, 0)
        } while result < 0 && errno == EINTR
        let ended = result == pid ? HelperExit(waitStatus: status) : .signaled(SIGKILL)
        exit = ended
        return ended
    }
}

/// Why a helper gave no answer.
enum HelperFailure: Error {
    /// It died before or while answering (reaped: how it ended).
    case died(HelperExit)
    /// The request could not be sent: the helper had already gone (an idle
    /// helper killed from outside); nothing was decoded.
    case notDelivered
    /// It did not answer before the deadline (it is still running: stop it).
    case timedOut
    /// It broke the protocol.
    case malformed(ProtocolError)
}

/// A helper that could not be started.
struct SpawnError: Error, CustomStringConvertible {
    let executable: String
    let code: Int32
    var description: String { "cannot start the decoder helper \(executable): \(String(cString: strerror(code)))" }
}
