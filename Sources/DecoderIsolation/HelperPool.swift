import Foundation
import Glibc
import MediaFormats

/// The parent's helpers: idle ones waiting for a request, busy ones decoding.
/// A caller takes an idle helper (or a new one is started: one per concurrent
/// caller, i.e. per decoding worker), gives it back after a clean answer, and
/// discards it (killed and reaped) after anything else. Helpers keep librsvg and
/// ImageMagick blocked (and start faster) unless started for a format that needs
/// them; such a helper serves every format.
///
/// New helpers are forked from a ``HelperTemplate`` (started with the first
/// helper); those with the sandbox-only loaders, and all of them if the
/// template cannot be started or has gone, are started on their own.
final class HelperPool: @unchecked Sendable {
    private let configuration: ProcessIsolatedDecoder.Configuration
    private let lock = NSLock()
    private var idle: [HelperProcess] = []
    private var busy: [ObjectIdentifier: HelperProcess] = [:]
    private var started = 0
    private var template: TemplateState = .notStarted
    private enum TemplateState {
        case notStarted
        case running(HelperTemplate)
        case unavailable
    }
    /// Set when a helper could not sandbox itself (the system cannot), or when
    /// helpers kept failing to start (the executable is not `share`, or cannot
    /// run): every later item fails at once with this error instead of starting
    /// helpers in vain.
    private var startFailure: MediaError?

    init(configuration: ProcessIsolatedDecoder.Configuration) {
        self.configuration = configuration
    }

    deinit { shutdown() }

    /// Starts helpers until `count` are alive (idle or busy); they load their
    /// libraries and sandbox themselves while the parent goes on.
    func prestart(_ count: Int) {
        while true {
            lock.lock()
            let alive = idle.count + busy.count
            lock.unlock()
            guard alive < count, let helper = try? start(sandboxOnlyLoaders: false) else { return }
            lock.lock()
            idle.append(helper)
            lock.unlock()
        }
    }

    /// An idle, ready helper (one with the sandbox-only loaders when
    /// `sandboxOnlyLoaders`), started if none is idle. Throws when a helper cannot
    /// be started or is not ready in time (`label` names the item for the message).
    func checkout(for label: String, sandboxOnlyLoaders: Bool) throws(MediaError) -> HelperProcess {
        for _ in 0..<3 {
            lock.lock()
            let failure = startFailure
            var helper = idle.lastIndex { !sandboxOnlyLoaders || $0.allowsSandboxOnlyLoaders }.map { idle.remove(at: $0) }
            lock.unlock()
            if let failure { throw MediaError(failure.kind, "\(label): \(failure.message)") }
            if helper == nil {
                do throws(SpawnError) {
                    helper = try start(sandboxOnlyLoaders: sandboxOnlyLoaders)
                } catch {
                    let failure = MediaError(.decoderCrashed, "\(error)")
                    // A missing or unrunnable executable stays so; a fork refused for
                    // lack of memory or processes may not.
                    guard [ENOENT, EACCES, ENOEXEC, ENOTDIR].contains(error.code) else { throw MediaError(.decoderCrashed, "\(label): \(error)") }
                    throw remember(failure, label: label)
                }
            }
            guard let helper else { continue }
            lock.lock()
            busy[ObjectIdentifier(helper)] = helper
            lock.unlock()
            let ready: HelperReady
            do throws(HelperFailure) {
                ready = try helper.awaitReady(deadline: Monotonic.now() + configuration.startupTimeLimit)
            } catch {
                // Died or hung while starting (or killed from outside while idle).
                discard(helper)
                continue
            }
            if let failure = ready.failure {
                discard(helper)
                throw remember(
                    MediaError(
                        .decoderCrashed,
                        "the decoder helper could not sandbox itself (\(failure)); decode in-process with --isolation none if this system cannot sandbox"),
                    label: label)
            }
            if helper.isIdleAndAlive { return helper }
            discard(helper)
        }
        throw remember(
            MediaError(.decoderCrashed, "no decoder helper could be started from \(configuration.helperExecutable) (each died or hung while starting)"),
            label: label)
    }

    /// Records a failure every later checkout repeats; returns it for `label`'s item.
    private func remember(_ failure: MediaError, label: String) -> MediaError {
        lock.lock()
        startFailure = failure
        lock.unlock()
        return MediaError(failure.kind, "\(label): \(failure.message)")
    }

    /// Returns a helper that answered cleanly.
    func checkin(_ helper: HelperProcess) {
        lock.lock()
        busy[ObjectIdentifier(helper)] = nil
        idle.append(helper)
        lock.unlock()
    }

    /// Stops and forgets a helper that died, hung or misbehaved.
    func discard(_ helper: HelperProcess) {
        helper.stop()
        lock.lock()
        busy[ObjectIdentifier(helper)] = nil
        idle.removeAll { $0 === helper }
        lock.unlock()
    }

    /// The pids of the helpers alive now, idle or busy.
    var processIDs: [pid_t] {
        lock.lock()
        defer { lock.unlock() }
        return (idle + busy.values).map(\.pid).filter { $0 > 0 }.sorted()
    }

    /// Helpers started since the pool was made (respawns included).
    var startedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return started
    }

    /// Stops every idle helper (busy ones are stopped when their caller discards
    /// or returns them after shutdown: returned ones are stopped by release).
    func shutdown() {
        lock.lock()
        let stopping = idle
        idle.removeAll()
        // The template goes too when no helper it forked is still decoding (they
        // die with it); a later helper starts a new one.
        var template: HelperTemplate?
        if busy.isEmpty, case .running(let running) = self.template {
            template = running
            self.template = .notStarted
        }
        lock.unlock()
        for helper in stopping { helper.stop() }
        template?.stop()
    }

    /// The running template, started on first use; nil when it cannot be.
    private func liveTemplate(environment: [String: String]) -> HelperTemplate? {
        lock.lock()
        defer { lock.unlock() }
        switch template {
        case .running(let running): return running
        case .unavailable: return nil
        case .notStarted:
            guard
                let started = claimEarlyTemplate(environment: environment)
                    ?? (try? HelperTemplate.start(
                        executable: configuration.helperExecutable, arguments: helperArguments, environment: environment,
                        keepStandardError: keepsStandardError(environment)))
            else {
                template = .unavailable
                return nil
            }
            template = .running(started)
            return started
        }
    }

    /// The template this process forked at its start, if it has one and the
    /// helpers are this executable's own `decode-helper` (what it would have started).
    private func claimEarlyTemplate(environment: [String: String]) -> HelperTemplate? {
        guard configuration.helperArguments.first == DecoderHelper.command,
            configuration.helperExecutable == ProcessIsolatedDecoder.Configuration.thisExecutable.helperExecutable
        else { return nil }
        return HelperTemplate.claimEarly(
            arguments: Array(helperArguments.dropFirst()), environment: environment, keepStandardError: keepsStandardError(environment))
    }

    private var helperArguments: [String] { configuration.helperArguments + ["--memory-limit", String(configuration.memoryLimit)] }

    private func keepsStandardError(_ environment: [String: String]) -> Bool {
        environment[ProcessIsolatedDecoder.Configuration.standardErrorVariable] == "inherit"
    }

    private func start(sandboxOnlyLoaders: Bool) throws(SpawnError) -> HelperProcess {
        var environment = ProcessInfo.processInfo.environment
        // A crash in a helper is an item's outcome, not something to symbolicate.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.merge(configuration.environment) { $1 }
        let helper: HelperProcess
        if !sandboxOnlyLoaders, let forked = fork(environment: environment) {
            helper = forked
        } else {
            helper = try HelperProcess.start(
                executable: configuration.helperExecutable, arguments: helperArguments, environment: environment,
                keepStandardError: keepsStandardError(environment), allowsSandboxOnlyLoaders: sandboxOnlyLoaders)
        }
        lock.lock()
        started += 1
        lock.unlock()
        return helper
    }

    /// A helper forked from the template (started if need be); nil when there is
    /// none. A template that is gone is forgotten: later helpers are started on their own.
    private func fork(environment: [String: String]) -> HelperProcess? {
        guard let template = liveTemplate(environment: environment) else { return nil }
        if let helper = HelperProcess.fork(from: template) { return helper }
        lock.lock()
        if case .running(let running) = self.template, running === template { self.template = .unavailable }
        lock.unlock()
        template.stop()
        return nil
    }
}
