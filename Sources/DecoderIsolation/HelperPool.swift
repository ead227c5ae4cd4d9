import Foundation
import MediaFormats
import SystemCalls

/// The parent's helpers: idle ones waiting for a request, busy ones decoding.
/// A caller takes an idle helper (or a new one is started: one per concurrent
/// caller, i.e. per decoding worker), gives it back after a clean answer, and
/// discards it (killed and reaped) after anything else. A helper is of the
/// ``HelperKind`` its format needs, or above: most load no libvips module, a
/// PDF or JPEG XL gets one with the modules, an SVG or PSD one started with
/// librsvg and ImageMagick (which serves every format).
///
/// Helpers never outlive their batch: a helper is bound to the batch of its
/// first request (``DecodeRequest/batch``) and is never given a request of
/// another batch. A caller of another batch gets a fresh helper; when the pool
/// already has as many helpers as callers, the one idle the longest among those
/// that have served a batch (another, or this one when it cannot serve the
/// request: another kind, or too little CPU left) is stopped to make room. ``prepare()`` (called at the start of each
/// batch) stops every idle helper that has served a batch. So in `share watch`
/// each drop gets fresh helpers, and in `share worker`, whose jobs of several
/// batches interleave, a helper taken over by one user's file never sees
/// another's.
///
/// Every helper is checked before its first request: its ready message says
/// what its sandbox holds, the parent reads the same from /proc/PID/status,
/// and a helper whose sandbox is weaker than this machine allows
/// (``SandboxRequirement``) is stopped; no helper is started after that.
///
/// New helpers are forked from a ``HelperTemplate`` (started with the first
/// helper); those with the sandbox-only loaders, and all of them if the
/// template cannot be started or has gone, are started on their own. Helpers
/// started on demand (``ProcessIsolatedDecoder/Configuration/startsHelpersOnDemand``)
/// are not started by ``prepare(_:)``, but by the batch's first
/// ``startPrepared()`` or its first checkout: a batch that decodes nothing
/// never starts the template.
package final class HelperPool: @unchecked Sendable {
    private let configuration: ProcessIsolatedDecoder.Configuration
    private let lock = NSLock()
    private var idle: [HelperProcess] = []
    private var busy: [ObjectIdentifier: HelperProcess] = [:]
    private var started = 0
    /// Helpers stopped because they died, hung or misbehaved (``discard(_:)``).
    private var discarded = 0
    private var template: TemplateState = .notStarted
    /// The helpers ``prepare(_:)`` asked for, not yet started (helpers started
    /// on demand): ``startPrepared()`` starts them.
    private var prepared = 0
    private enum TemplateState {
        case notStarted
        case running(HelperTemplate)
        case unavailable
    }
    /// Set when a helper could not sandbox itself or came up weaker than this
    /// machine allows, or when helpers kept failing to start (the executable is
    /// not `share`, or cannot run): every later item fails at once with this
    /// error instead of starting helpers in vain.
    private var startFailure: MediaError?
    /// The account helpers switch to (when this process is root) and what every
    /// helper's sandbox must hold; looked up once, on first use.
    private var setUp: Result<(account: HelperAccount?, requirement: SandboxRequirement), MediaError>?
    /// Held while ``ProcessIsolatedDecoder/Configuration/onWeakerSandbox`` runs; set once it has.
    private let refusalLock = NSLock()
    private var refusalReported = false
    /// The last helper checked: its pid, its sandbox and how it fell short.
    private var lastChecked: (pid: pid_t, status: SandboxStatus, shortfalls: [String])?
    /// Helpers found stopped by a signal since ``replaceStopped(keeping:)`` last
    /// looked (by pid), for `/readyz`.
    private var stoppedFound: [pid_t] = []
    /// Guards ``setUp`` alone (it is read while `lock` is held).
    private let setUpLock = NSLock()

    package init(configuration: ProcessIsolatedDecoder.Configuration) {
        self.configuration = configuration
    }

    deinit { shutdown() }

    /// Stops the idle helpers that have served a batch (a new batch starts),
    /// then starts helpers until `count` are alive (idle or busy); they load
    /// their libraries and sandbox themselves while the parent goes on. Helpers
    /// started on demand are only noted here, for ``startPrepared()``.
    package func prepare(_ count: Int) {
        lock.lock()
        let retired = idle.filter { $0.batch != nil }
        idle.removeAll { $0.batch != nil }
        if configuration.startsHelpersOnDemand { prepared = count }
        lock.unlock()
        for helper in retired { helper.stop() }
        if configuration.startsHelpersOnDemand { return }
        prepareReplacements(count)
    }

    /// Starts the helpers the last ``prepare(_:)`` asked for, once (helpers
    /// started on demand: an item to decode is coming), without waiting for
    /// them; the first also starts the template. Later calls start nothing.
    package func startPrepared() {
        lock.lock()
        let count = prepared
        prepared = 0
        lock.unlock()
        if count > 0 { prepareReplacements(count) }
    }

    /// Starts the template, if it is not running and helpers are forked from it,
    /// without waiting for it (it loads its libraries meanwhile) and without a
    /// helper. A template that cannot start is noted, as on first use.
    package func startTemplate() {
        // Not before the helpers' account is known: the template runs as it.
        guard case .success = resolvedSetUp() else { return }
        _ = liveTemplate(environment: HelperEnvironment.forHelpers(adding: configuration.environment))
    }

    /// Throws what looking up the helpers' account fails with (a named user
    /// or group that does not exist), without starting a helper.
    package func checkAccount() throws(MediaError) {
        if case .failure(let failure) = resolvedSetUp() { throw failure }
    }

    /// An idle, ready and checked helper for `batch` that serves `kind`,
    /// started if none is idle. Throws when a helper cannot be started, is not
    /// ready in time, or is sandboxed weaker than this machine allows (`label`
    /// names the item for the message).
    ///
    /// `fresh`: a helper that has decoded nothing yet (a privacy request's:
    /// a helper taken over by an earlier item cannot lie about this one).
    /// `cpuSeconds`: the request's CPU budget; an idle helper with less than
    /// that left under its hard CPU limit is retired instead.
    package func checkout(
        for label: String, batch: BatchBinding, kind: HelperKind, fresh: Bool = false, cpuSeconds: Double = 0
    ) throws(MediaError) -> HelperProcess {
        for _ in 0..<3 {
            let (idleHelper, failure) = takeIdle(for: batch, kind: kind, fresh: fresh, cpuSeconds: cpuSeconds)
            if let failure { throw MediaError(failure.kind, Self.prefixed(label, failure.message)) }
            let helper: HelperProcess
            if let idleHelper { helper = idleHelper } else { helper = try startHelper(kind, for: label) }
            lock.lock()
            busy[ObjectIdentifier(helper)] = helper
            lock.unlock()
            // A helper's first checkout waits for its ready message and checks it
            // (one that fails is stopped at once, so a helper with a ready message passed).
            if helper.ready == nil, try !checkFirstReady(helper, label: label) { continue }
            if helper.isIdleAndAlive {
                lock.lock()
                helper.batch = batch
                lock.unlock()
                return helper
            }
            // Died, spoke out of turn, or was stopped by a signal while idle.
            if helper.isStopped { recordStopped(helper.pid) }
            discard(helper)
        }
        throw remember(
            MediaError(
                .decoderCrashed,
                "no decoder helper could be started from \(configuration.helperExecutable) (each died or hung while starting)"
            ),
            label: label)
    }

    /// ``checkout(for:batch:kind:fresh:cpuSeconds:)``'s first step: an idle
    /// helper for `batch` that serves `kind` and has `cpuSeconds` left (nil
    /// when there is none), and the pool's start failure if it has one. When
    /// there is none and the pool already has a helper per caller, the longest
    /// idle helper that has served a batch is stopped to make room (of any
    /// batch, this one included, except this batch's for a privacy request).
    private func takeIdle(
        for batch: BatchBinding, kind: HelperKind, fresh: Bool, cpuSeconds: Double
    ) -> (helper: HelperProcess?, failure: MediaError?) {
        lock.lock()
        let failure = startFailure
        var helper = take(for: batch, kind: kind, fresh: fresh)
        if let worn = helper, !Self.hasRoom(worn, for: cpuSeconds, limit: configuration.cpuLimit) {
            // It could not finish this request under its hard CPU limit.
            helper = nil
            lock.unlock()
            worn.stop()
            lock.lock()
        }
        // No helper of this batch idle: make room by stopping the longest idle
        // of another batch, if the pool already has a helper per caller (a
        // privacy request's fresh helper never costs its own batch's helper).
        var retired: HelperProcess?
        if helper == nil, idle.count + busy.count >= max(configuration.prestartedHelpers, 1),
            let oldest = idle.indices.filter({ idle[$0].batch != nil && !(fresh && idle[$0].batch == batch) }).min(
                by: { idle[$0].idleSince < idle[$1].idleSince })
        {
            retired = idle.remove(at: oldest)
        }
        lock.unlock()
        retired?.stop()
        return (helper, failure)
    }

    /// A new helper serving `kind` (`label` names the item in the message
    /// when it cannot be started).
    private func startHelper(_ kind: HelperKind, for label: String) throws(MediaError) -> HelperProcess {
        do throws(StartFailure) {
            return try start(kind)
        } catch {
            // A missing or unrunnable executable stays so, as does a missing
            // account; a fork refused for lack of memory or processes may not.
            if error.permanent { throw remember(error.error, label: label) }
            throw MediaError(error.error.kind, Self.prefixed(label, error.error.message))
        }
    }

    /// Waits for a new helper's ready message and checks it: false when the
    /// helper died or hung while starting, or its message could not be read
    /// (it is discarded: try another); throws when it could not sandbox
    /// itself or is sandboxed weaker than this machine allows.
    private func checkFirstReady(_ helper: HelperProcess, label: String) throws(MediaError) -> Bool {
        let ready: HelperReady
        do throws(HelperFailure) {
            ready = try helper.awaitReady(deadline: MonotonicClock.now() + configuration.startupTimeLimit)
        } catch {
            // Died or hung while starting (or killed from outside while idle).
            discard(helper)
            return false
        }
        if ready.modules {
            lock.lock()
            helper.kind = max(helper.kind, .modules)
            lock.unlock()
        }
        if let failure = ready.failure {
            discard(helper)
            throw remember(
                MediaError(
                    .decoderCrashed,
                    "the decoder helper could not sandbox itself (\(failure)); decode in-process with --isolation none if this system cannot sandbox"
                ),
                label: label)
        }
        guard let observed = Self.observe(ready) else {
            discard(helper)
            return false
        }
        try checkSandbox(helper, ready: ready, observed: observed, label: label)
        return true
    }

    /// Refuses (discards, and throws) a helper sandboxed weaker than this
    /// machine allows, after telling ``ProcessIsolatedDecoder/Configuration/onWeakerSandbox`` once.
    private func checkSandbox(
        _ helper: HelperProcess, ready: HelperReady, observed: SandboxStatus, label: String
    ) throws(MediaError) {
        // An unsandboxed helper (`--isolation none`) has no sandbox to check.
        let shortfalls = configuration.unsandboxed ? [] : requirement.shortfalls(of: observed)
        lock.lock()
        lastChecked = (ready.pid, observed, shortfalls)
        lock.unlock()
        guard !shortfalls.isEmpty else { return }
        discard(helper)
        let message = Self.weakerSandboxMessage(pid: ready.pid, shortfalls: shortfalls)
        if let handler = configuration.onWeakerSandbox {
            // Once, before any item can fail with it (the CLI's handler exits):
            // other threads that find it too wait here.
            refusalLock.lock()
            if !refusalReported {
                refusalReported = true
                handler(message)
            }
            refusalLock.unlock()
        }
        throw remember(MediaError(.decoderMisbehaved, message), label: label)
    }

    /// Under the lock: removes and returns an idle helper bound to `batch`,
    /// else a fresh one (bound to none yet), that serves `kind`.
    private func take(for batch: BatchBinding, kind: HelperKind, fresh: Bool) -> HelperProcess? {
        let usable = { (helper: HelperProcess) in helper.kind.serves(kind) }
        if !fresh, let index = idle.lastIndex(where: { $0.batch == batch && usable($0) }) {
            return idle.remove(at: index)
        }
        // Of the fresh ones, the oldest: the most likely to be ready already.
        if let index = idle.firstIndex(where: { $0.batch == nil && usable($0) }) { return idle.remove(at: index) }
        return nil
    }

    /// Whether `helper` (idle, and ready if it has said so) has `cpuSeconds`
    /// left under its hard CPU limit (read from /proc/PID/stat: user and system time).
    private static func hasRoom(_ helper: HelperProcess, for cpuSeconds: Double, limit: UInt64) -> Bool {
        guard limit > 0, cpuSeconds > 0, helper.ready != nil, helper.pid > 0 else { return true }
        guard let used = Processes.cpuSeconds(of: helper.pid) else { return true }
        return used + cpuSeconds + 1 <= Double(limit)
    }

    /// Starts helpers until `count` are alive, without waiting for them (a
    /// fresh helper replacing one that served a privacy request).
    package func replenish(_ count: Int) {
        lock.lock()
        let alive = idle.count + busy.count
        let fresh = idle.contains { $0.batch == nil }
        lock.unlock()
        guard alive < count || !fresh, let helper = try? start(.base) else { return }
        lock.lock()
        idle.append(helper)
        lock.unlock()
    }

    /// The last helper checked (for ``ProcessIsolatedDecoder/checkSandbox()``).
    package var lastObserved: (pid: pid_t, status: SandboxStatus, shortfalls: [String])? {
        lock.lock()
        defer { lock.unlock() }
        return lastChecked
    }

    /// The sandbox a helper's ready message reports, with the fields the kernel
    /// shows (user, groups, capabilities, no-new-privs, seccomp mode) read by
    /// the parent itself from /proc/PID/status; nil when the helper is gone.
    package static func observe(_ ready: HelperReady) -> SandboxStatus? {
        guard ready.pid > 0, var observed = SandboxStatus.read(pid: ready.pid) else { return nil }
        observed.seccompPolicy = ready.sandbox.seccompPolicy
        observed.landlockABI = ready.sandbox.landlockABI
        observed.addressSpaceLimit = ready.sandbox.addressSpaceLimit
        observed.confinement = ready.sandbox.confinement
        observed.cpuLimit = ready.sandbox.cpuLimit
        return observed
    }

    /// The one error a helper whose sandbox is weaker than the machine allows gives.
    package static func weakerSandboxMessage(pid: Int32, shortfalls: [String]) -> String {
        "the decoder helper (pid \(pid)) runs in a weaker sandbox than this machine allows: \(shortfalls.joined(separator: "; ")); "
            + "nothing is decoded in it (`share doctor` shows what this machine supports)"
    }

    /// The account helpers switch to (this process is root); nil when it is not
    /// root or none could be had.
    var account: HelperAccount? {
        (try? resolvedSetUp().get())?.account
    }

    /// What this machine lets a helper have (looked up on first use).
    package var requirement: SandboxRequirement {
        (try? resolvedSetUp().get().requirement)
            ?? machine(account: nil)
    }

    /// The account and requirement, looked up once.
    private func resolvedSetUp() -> Result<(account: HelperAccount?, requirement: SandboxRequirement), MediaError> {
        setUpLock.lock()
        defer { setUpLock.unlock() }
        if let setUp { return setUp }
        let result: Result<(account: HelperAccount?, requirement: SandboxRequirement), MediaError>
        if Credentials.effectiveUserID == 0 {
            do throws(ConfigurationError) {
                let account = try HelperAccount.resolve(
                    user: configuration.helperUser, group: configuration.helperGroup)
                result = .success((account, machine(account: account)))
            } catch {
                result = .failure(MediaError(.decoderCrashed, "\(error)"))
            }
        } else {
            result = .success((nil, machine(account: nil)))
        }
        setUp = result
        return result
    }

    private func machine(account: HelperAccount?) -> SandboxRequirement {
        SandboxRequirement.thisMachine(
            account: account, addressSpaceLimit: configuration.memoryLimit, cpuLimit: configuration.cpuLimit,
            acceptsNoConfinement: configuration.acceptsNoConfinement)
    }

    /// Records a failure every later checkout repeats; returns it for `label`'s item.
    private func remember(_ failure: MediaError, label: String) -> MediaError {
        lock.lock()
        startFailure = failure
        lock.unlock()
        return MediaError(failure.kind, Self.prefixed(label, failure.message))
    }

    /// `label: message` (the item's name first), or the message alone for no label.
    private static func prefixed(_ label: String, _ message: String) -> String {
        label.isEmpty ? message : "\(label): \(message)"
    }

    /// Returns a helper that answered cleanly; `unbinding` returns it as fresh
    /// (it was checked out for no batch, only to be checked).
    package func checkin(_ helper: HelperProcess, unbinding: Bool = false) {
        let now = MonotonicClock.now()
        lock.lock()
        helper.idleSince = now
        if unbinding { helper.batch = nil }
        busy[ObjectIdentifier(helper)] = nil
        idle.append(helper)
        lock.unlock()
    }

    /// Stops and forgets a helper that died, hung or misbehaved.
    package func discard(_ helper: HelperProcess) {
        helper.stop()
        lock.lock()
        busy[ObjectIdentifier(helper)] = nil
        idle.removeAll { $0 === helper }
        discarded += 1
        lock.unlock()
    }

    /// Notes a helper found stopped by a signal (and killed) by the decode that had it.
    func recordStopped(_ pid: pid_t) {
        lock.lock()
        if !stoppedFound.contains(pid) { stoppedFound.append(pid) }
        lock.unlock()
    }

    /// Finds the helpers stopped by a signal now: idle ones are killed and
    /// replaced (helpers are started until `count` are alive), busy ones are
    /// left to the decode that has them (it kills them within
    /// ``MessageSocket/abandonCheckInterval``). Returns these and those found
    /// since the last call, by pid, and forgets them.
    func replaceStopped(keeping count: Int) -> [pid_t] {
        lock.lock()
        // Out of the idle list at once: no caller can take one of them meanwhile.
        let stoppedIdle = idle.filter { $0.ready != nil && $0.isStopped }
        idle.removeAll { helper in stoppedIdle.contains { $0 === helper } }
        let stoppedBusy = busy.values.filter { $0.pid > 0 && Processes.isStopped($0.pid) }
        for helper in stoppedIdle + stoppedBusy where !stoppedFound.contains(helper.pid) {
            stoppedFound.append(helper.pid)
        }
        let found = stoppedFound
        stoppedFound = []
        lock.unlock()
        for helper in stoppedIdle { discard(helper) }
        if !stoppedIdle.isEmpty { prepareReplacements(count) }
        return found
    }

    /// Starts helpers until `count` are alive (idle or busy), without waiting for them.
    private func prepareReplacements(_ count: Int) {
        while true {
            lock.lock()
            let alive = idle.count + busy.count
            lock.unlock()
            guard alive < count, let helper = try? start(.base) else { return }
            lock.lock()
            idle.append(helper)
            lock.unlock()
        }
    }

    /// Helpers discarded so far (killed and reaped after dying, hanging or misbehaving).
    package var discardedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return discarded
    }

    /// The pids of the helpers alive now, idle or busy.
    package var processIDs: [pid_t] {
        lock.lock()
        defer { lock.unlock() }
        return (idle + busy.values).map(\.pid).filter { $0 > 0 }.sorted()
    }

    /// The batch each live helper is bound to (by pid; helpers bound to none are left out).
    package var batches: [pid_t: BatchBinding] {
        lock.lock()
        defer { lock.unlock() }
        var bound: [pid_t: BatchBinding] = [:]
        for helper in idle + busy.values where helper.pid > 0 {
            if let batch = helper.batch { bound[helper.pid] = batch }
        }
        return bound
    }

    /// Helpers started since the pool was made (respawns included).
    package var startedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return started
    }

    /// Stops every idle helper (busy ones are stopped when their caller discards
    /// or returns them after shutdown: returned ones are stopped by release).
    package func shutdown() {
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
                let started = try? HelperTemplate.start(
                    executable: configuration.helperExecutable, arguments: helperArguments, environment: environment,
                    keepStandardError: keepsStandardError)
            else {
                template = .unavailable
                return nil
            }
            template = .running(started)
            return started
        }
    }

    /// `decode-helper`, its limit, and, when this process is root, the account
    /// to switch to (looked up here: a sandboxed helper cannot read the user database).
    private var helperArguments: [String] {
        var arguments =
            configuration.helperArguments + [
                "--memory-limit", String(configuration.memoryLimit), "--cpu-limit", String(configuration.cpuLimit),
            ]
        if case .success(let setUp) = resolvedSetUp(), let account = setUp.account {
            arguments += ["--account", "\(account.uid):\(account.gid)"]
        }
        if configuration.unsandboxed { arguments.append("--unsandboxed") }
        return arguments
    }

    private var keepsStandardError: Bool {
        ProcessEnvironment.value(ProcessIsolatedDecoder.Configuration.standardErrorVariable) == "inherit"
            || configuration.environment[ProcessIsolatedDecoder.Configuration.standardErrorVariable] == "inherit"
    }

    /// Why no helper could be started, and whether that will last (no account;
    /// an executable that cannot run) or may pass (no memory for a fork).
    private struct StartFailure: Error {
        package let error: MediaError
        package let permanent: Bool
    }

    /// A new helper of `kind` (not yet ready).
    private func start(_ kind: HelperKind) throws(StartFailure) -> HelperProcess {
        if case .failure(let failure) = resolvedSetUp() { throw StartFailure(error: failure, permanent: true) }
        let environment = HelperEnvironment.forHelpers(adding: configuration.environment)
        let helper: HelperProcess
        if kind < .sandboxOnly, let forked = fork(environment: environment, kind: kind) {
            helper = forked
        } else {
            do throws(SystemError) {
                helper = try HelperProcess.start(
                    executable: configuration.helperExecutable, arguments: helperArguments, environment: environment,
                    keepStandardError: keepsStandardError, sandboxOnlyLoaders: kind == .sandboxOnly)
            } catch {
                throw StartFailure(
                    error: MediaError(
                        .decoderCrashed,
                        ProcessIsolatedDecoder.Configuration.startFailure(configuration.helperExecutable, error)),
                    permanent: [ENOENT, EACCES, ENOEXEC, ENOTDIR].contains(error.code))
            }
        }
        lock.lock()
        started += 1
        lock.unlock()
        return helper
    }

    /// A helper forked from the template (started if need be); nil when there is
    /// none. A template that is gone is forgotten: later helpers are started on their own.
    private func fork(environment: [String: String], kind: HelperKind) -> HelperProcess? {
        guard let template = liveTemplate(environment: environment) else { return nil }
        if let helper = HelperProcess.fork(from: template, kind: kind) { return helper }
        lock.lock()
        if case .running(let running) = self.template, running === template { self.template = .unavailable }
        lock.unlock()
        template.stop()
        return nil
    }
}
