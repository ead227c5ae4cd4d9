import Foundation
import MediaFormats
import Synchronization
import SystemCalls

/// One running decoder helper, seen from the parent: its pid, the parent's end
/// of their socket, and the batch it serves. Used by one thread at a time (the
/// pool hands it out).
package final class HelperProcess: @unchecked Sendable {
    /// Its process id; 0 until its ready message says it, for a helper forked
    /// from a ``HelperTemplate`` (read from any thread).
    package var pid: pid_t { knownPID.load(ordering: .acquiring) }
    private let knownPID: Atomic<pid_t>
    /// What it can decode: what it was started or forked as, raised once its
    /// ready message says it has libvips' modules. (Guarded by the pool's lock.)
    package var kind: HelperKind
    /// The template it was forked from, which reaps it; nil when it was started
    /// on its own (a child of this process).
    private let template: HelperTemplate?
    private let socket: MessageSocket
    /// Its ready message, once read and accepted.
    private(set) var ready: HelperReady?
    /// How it ended, once reaped.
    private(set) var exit: HelperExit?
    /// The batch it was given its first request for, and the only one it may
    /// ever decode for; nil while it has had none. (Guarded by the pool's lock.)
    package var batch: BatchBinding?
    /// When it was last given back idle (monotonic seconds), to retire the
    /// longest idle first. (Guarded by the pool's lock.)
    package var idleSince: Double = 0

    private init(pid: pid_t, socket: UnixSocket, kind: HelperKind, template: HelperTemplate?) {
        self.knownPID = Atomic(pid)
        self.kind = kind
        self.template = template
        self.socket = MessageSocket(socket)
    }

    deinit {
        if exit == nil { _ = stop() }
    }

    /// Starts `executable arguments…` with one end of a new socket pair as its
    /// descriptor 3, and `environment` (nothing else of this process's); its
    /// standard error is this process's when `keepStandardError`, else /dev/null.
    /// It loads libvips' modules, and with `sandboxOnlyLoaders` ImageMagick and librsvg.
    /// It is told this process's pid, so that it dies with it: the kernel forgets
    /// a parent-death signal when the helper changes user, so the helper sets
    /// its own once it has, and exits if its parent is already gone.
    package static func start(
        executable: String, arguments: [String], environment: [String: String], keepStandardError: Bool,
        sandboxOnlyLoaders: Bool
    ) throws(SystemError) -> HelperProcess {
        let (pid, socket) = try spawn(
            executable: executable,
            arguments: arguments + (sandboxOnlyLoaders ? ["--sandbox-only-loaders"] : []) + [
                "--parent", String(Processes.current),
            ],
            environment: environment, keepStandardError: keepStandardError)
        return HelperProcess(
            pid: pid, socket: socket, kind: sandboxOnlyLoaders ? .sandboxOnly : .modules, template: nil)
    }

    /// Asks `template` to fork a helper of `kind` (``HelperKind/base`` or
    /// ``HelperKind/modules``); nil when the template is gone.
    package static func fork(from template: HelperTemplate, kind: HelperKind) -> HelperProcess? {
        guard let (ours, theirs) = try? UnixSocket.pair() else { return nil }
        let sent = template.spawn(helperSocket: theirs.raw, withModules: kind >= .modules)
        theirs.close()
        guard sent else { return nil }
        return HelperProcess(pid: 0, socket: ours, kind: kind, template: template)
    }

    /// Starts `executable arguments…` with one end of a new socket pair as its
    /// descriptor 3; returns its pid and the other end.
    package static func spawn(
        executable: String, arguments: [String], environment: [String: String], keepStandardError: Bool
    ) throws(SystemError) -> (pid_t, UnixSocket) {
        let (ours, theirs) = try UnixSocket.pair()
        let pid = try Processes.spawnHelper(
            executable, arguments: [executable] + arguments, environment: environment, socket: theirs,
            keepStandardError: keepStandardError)
        return (pid, ours)
    }

    /// Waits (until `deadline`, monotonic seconds) for the helper's ready message.
    package func awaitReady(deadline: Double) throws(HelperFailure) -> HelperReady {
        if let ready { return ready }
        let message: ReceivedMessage
        do {
            message = try socket.receive(maximum: HelperMessage.maximumRequest, deadline: deadline)
        } catch {
            throw failure(error)
        }
        guard message.kind == HelperMessage.Kind.ready.rawValue,
            let ready = try? JSONDecoder().decode(HelperReady.self, from: Data(message.body))
        else { throw .malformed(ProtocolError("the first message was not a ready message")) }
        if template != nil { knownPID.store(ready.pid, ordering: .releasing) }
        self.ready = ready
        return ready
    }

    /// True when the idle helper has not died, been stopped or spoken out of
    /// turn (its socket has nothing to read and is not closed).
    package var isIdleAndAlive: Bool {
        exit == nil && !socket.socket.waitReadable(milliseconds: 0) && !isStopped
    }

    /// True while it is stopped by a signal (SIGSTOP from outside) or a tracer:
    /// it answers nothing until it is continued, and is replaced instead.
    var isStopped: Bool { exit == nil && Processes.isStopped(pid) }

    /// Sends `request` with `descriptor` and waits for the result until `deadline`.
    package func decode(_ request: DecodeRequest, descriptor: FileDescriptor, deadline: Double) throws(HelperFailure)
        -> HelperReply
    {
        let body: [UInt8]
        do { body = try HelperMessage.requestBody(request) } catch {
            throw .malformed(ProtocolError("cannot encode the request: \(error)"))
        }
        guard socket.send(HelperMessage.frame(.decode, body), attaching: descriptor.raw) else {
            reap()
            throw .notDelivered
        }
        // A helper stopped by a signal while it has the request is given up at
        // once (killed), not waited for until the deadline.
        let stopped = { [self] in isStopped }
        let accepted: ReceivedMessage
        do throws(MessageSocket.ReadFailure) {
            accepted = try socket.receive(maximum: 0, deadline: deadline, abandon: stopped)
        } catch {
            guard case .closed = error else { throw failure(error) }
            // Gone before it took the request (killed while idle): nothing was decoded.
            reap()
            throw .notDelivered
        }
        guard accepted.kind == HelperMessage.Kind.accepted.rawValue, accepted.descriptor == nil else {
            throw .malformed(ProtocolError("a message of type \(accepted.kind) instead of an acceptance"))
        }
        let message: ReceivedMessage
        do {
            message = try socket.receive(maximum: HelperMessage.maximumResult, deadline: deadline, abandon: stopped)
        } catch {
            throw failure(error)
        }
        if message.kind == HelperMessage.Kind.forbiddenCall.rawValue, message.body.count == 4 {
            // Its seccomp policy trapped a call: it is dying of SIGSYS.
            let number = Int32(littleEndian: message.body.withUnsafeBytes { $0.loadUnaligned(as: Int32.self) })
            let pid = self.pid
            reap()
            throw .forbiddenCall(number, pid: pid)
        }
        guard message.kind == HelperMessage.Kind.result.rawValue, message.descriptor == nil else {
            throw .malformed(ProtocolError("a message of type \(message.kind) instead of a result"))
        }
        do throws(ProtocolError) {
            return try HelperReply.parse(message.body[...])
        } catch {
            throw .malformed(error)
        }
    }

    private func failure(_ error: MessageSocket.ReadFailure) -> HelperFailure {
        switch error {
        case .closed: .died(reap())
        case .timedOut: .timedOut
        case .malformed(let problem): .malformed(problem)
        case .failed(let code):
            .malformed(ProtocolError("reading from the helper failed: \(SystemError.message(for: code))"))
        case .abandoned: stoppedFailure()
        }
    }

    /// Kills a helper found stopped (it cannot be continued safely: whoever
    /// stopped it may stop it again) and reaps it.
    private func stoppedFailure() -> HelperFailure {
        let pid = self.pid
        reap()
        return .stopped(pid: pid)
    }

    /// Kills the helper (SIGKILL) and reaps it; its exit, which is the real cause
    /// when it was already dying (a signal does not replace an exit in progress).
    @discardableResult
    package func stop() -> HelperExit { reap() }

    /// Reaps the helper after its socket closed: it is dead or dying; SIGKILL ends
    /// one that closed its socket and lived on. A forked helper is reaped by its
    /// template; one that never said its pid (its fork failed, or it died before
    /// it was ready) cannot be, and one whose template is gone died with it.
    @discardableResult
    private func reap() -> HelperExit {
        if let exit { return exit }
        defer { socket.socket.close() }
        if let template {
            let ended = pid > 0 ? template.reap(pid) ?? .signaled(SIGKILL) : .signaled(SIGKILL)
            exit = ended
            return ended
        }
        Processes.send(SIGKILL, to: pid)
        let ended = Processes.waitForExit(of: pid).map(HelperExit.init(waitStatus:)) ?? .signaled(SIGKILL)
        exit = ended
        return ended
    }
}

/// The batch a helper serves (``DecodeRequest/batch``; nil for requests that name none).
package struct BatchBinding: Equatable, Sendable {
    package let batch: String?
}

/// A helper's answer before the parent has checked it (see ``ReplyCheck``).
package struct HelperReply {
    package let result: WireResult
    /// The thumbnail's bytes.
    package let jpeg: ArraySlice<UInt8>
    /// The compatible copy's bytes.
    package var compatible: ArraySlice<UInt8> = []
    /// Each preview's bytes, in ``WireResult/previews``' order.
    package var previews: [ArraySlice<UInt8>] = []

    /// A result message's body split into its parts: the JSON, the
    /// thumbnail's bytes, each preview's (their lengths in the JSON) and the
    /// compatible copy's (the last ``WireResult/compatibleLength``).
    package static func parse(_ body: ArraySlice<UInt8>) throws(ProtocolError) -> HelperReply {
        let (result, bytes) = try HelperMessage.parseResult(body)
        let compatible = result.compatibleLength ?? 0
        guard compatible >= 0, compatible <= bytes.count else {
            throw ProtocolError("a result whose compatible copy is \(compatible) bytes of \(bytes.count)")
        }
        // The previews' bytes come before the compatible copy's, in their order.
        let pictures = bytes.dropLast(compatible)
        var previews: [ArraySlice<UInt8>] = []
        var end = pictures.endIndex
        for preview in (result.previews ?? []).reversed() {
            guard preview.length >= 0, preview.length <= end - pictures.startIndex else {
                throw ProtocolError("a result whose preview is \(preview.length) bytes of \(pictures.count)")
            }
            previews.insert(pictures[(end - preview.length)..<end], at: 0)
            end -= preview.length
        }
        return HelperReply(
            result: result, jpeg: pictures[..<end], compatible: bytes.suffix(compatible), previews: previews)
    }
}

/// Why a helper gave no answer.
package enum HelperFailure: Error {
    /// It died before or while answering (reaped: how it ended).
    case died(HelperExit)
    /// The request could not be sent: the helper had already gone (an idle
    /// helper killed from outside); nothing was decoded.
    case notDelivered
    /// It did not answer before the deadline (it is still running: stop it).
    case timedOut
    /// It was stopped by a signal from outside (SIGSTOP) while it had the
    /// request, and was killed: the file was not the cause.
    case stopped(pid: pid_t)
    /// It broke the protocol.
    case malformed(ProtocolError)
    /// Its seccomp policy trapped system call `number` (the helper reported it,
    /// and was killed).
    case forbiddenCall(Int32, pid: pid_t)
}
