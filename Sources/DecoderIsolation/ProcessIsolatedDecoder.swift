import CSystem
import Foundation
import MediaFormats
import SystemCalls

/// Decodes media in a small pool of sandboxed helper processes, so that a bug
/// in a decoding library (libvips, libav, libheif, poppler, librsvg,
/// ImageMagick) exploited or triggered by a shared file cannot touch the
/// process that holds the journal, the container and the user's data.
///
/// A helper is the helper executable, `share-helper` (the package's product that
/// links libvips, libav, libheif and libtiff: this module links none
/// of them), started as `share-helper decode-helper` (which calls the helper
/// side's `DecoderHelper.main`), never a fork of this threaded process: one
/// helper template (`share-helper decode-helper --template`, started once per
/// decoder) sets up the libraries once and forks the helpers (see `HelperTemplate`). A helper loads the libraries, gives up its privileges and locks
/// itself down (see docs/security.md: an unprivileged user, no capabilities,
/// no-new-privs, a seccomp-bpf allowlist, Landlock, resource limits), and then
/// decodes one request at a time: the parent opens the file read-only and
/// passes the descriptor with the request over a Unix socket; the helper sends
/// back the facts and the thumbnail's JPEG bytes, which the parent checks
/// before using them. This process never decodes.
///
/// There is one helper per concurrent caller (per decoding worker), reused
/// across the items of one batch (``DecodeRequest/batch``) and never for
/// another batch. When a helper crashes, hits its memory or CPU limit, or
/// overruns the request's time, only its item fails (reasons `decoderCrashed`
/// naming the signal, `memoryLimit`, `timeLimit`) and a new helper takes its
/// place. An item whose helper died is decoded once more in a fresh helper, so
/// a helper killed from outside costs nothing and a file that crashes the
/// decoder fails alone. A timed-out decode is never run again. A reply that
/// fails the parent's checks (facts outside the limits, an unknown MIME type, a
/// thumbnail that is no JPEG of the size asked for) fails its item as
/// `decoderMisbehaved`, and its helper is killed; so is a helper whose sandbox
/// is weaker than this machine allows, and then nothing is decoded at all.
///
/// ```swift
/// let decoder = ProcessIsolatedDecoder(helperExecutable: "/usr/local/bin/share-helper")
/// let ingestor = ShareIngestor(container: container, decoder: decoder)
/// ```
public final class ProcessIsolatedDecoder: MediaDecoder, @unchecked Sendable {
    /// How helpers are started and limited.
    public struct Configuration: Sendable {
        /// The helper executable (`share-helper`) to start helpers from.
        public var helperExecutable: String
        /// The arguments that select its helper mode.
        public var helperArguments: [String]
        /// Helpers ``ProcessIsolatedDecoder/prepare()`` starts ahead of the first
        /// item (more are started when more callers decode at once).
        public var prestartedHelpers: Int
        /// Each helper's address-space limit in bytes (`RLIMIT_AS`); a decode that
        /// needs more fails with `memoryLimit`.
        public var memoryLimit: UInt64
        /// Seconds a helper may take to start and sandbox itself.
        public var startupTimeLimit: Double
        /// Seconds added to a request's own limits (facts plus thumbnail) before
        /// the parent stops a helper that has not answered.
        public var gracePeriod: Double
        /// Extra environment for the helpers. They inherit only a short list of
        /// this process's variables (see the sandbox section of docs/security.md), then these.
        public var environment: [String: String]
        /// The user a helper switches to when this process runs as root (looked up
        /// by name here). Empty (the default): a uid and gid of their own, which
        /// no account and no other process has (see docs/security.md's "No
        /// privileges"). A helper of an unprivileged process keeps its user.
        public var helperUser: String
        /// The group a helper of a named ``helperUser`` switches to (default
        /// `nogroup`, or the user's own group where there is no `nogroup`).
        public var helperGroup: String

        /// A helper's CPU seconds in all (its hard `RLIMIT_CPU`, which it cannot
        /// raise): a helper that would not have a request's CPU budget left
        /// under it is retired before that request, and a fresh one takes it.
        public var cpuLimit: UInt64

        /// Decode even where this machine offers helpers no file-system
        /// confinement (no Landlock, no namespaces, not root): they still have
        /// no privileges, the seccomp allowlist and their limits, but a
        /// taken-over helper could read whatever its user can. Off by default:
        /// such a machine refuses to decode in helpers (`--isolation process-weaker`).
        public var acceptsNoConfinement: Bool

        /// Called once, by the first thread that finds a helper's sandbox weaker
        /// than this machine allows, with the one message to show (nothing is
        /// decoded in such a helper either way: without a handler, each item fails
        /// with that message). The `share` CLI prints it and exits at once.
        public var onWeakerSandbox: (@Sendable (String) -> Void)?

        /// Helpers that do not sandbox themselves (`share --isolation none`: the
        /// decoders run without the sandbox, as they would in-process, but in the
        /// helper executable, as `share` links no decoder). They never get
        /// the sandbox-only loaders (SVG and PSD get no thumbnail, as in-process),
        /// and their sandbox is not checked. Off by default.
        public var unsandboxed: Bool = false

        /// Start helpers (and their template, the helper executable with its
        /// libraries) only when an item is to be decoded: ``ProcessIsolatedDecoder/prepare()``
        /// starts none, the batch's first ``ProcessIsolatedDecoder/willDecode()``
        /// (or its first decode) starts them, so a batch that decodes nothing
        /// costs no helper. What `share ingest` uses; check
        /// ``ProcessIsolatedDecoder/checkWithoutStarting()`` before a batch is
        /// recorded. Off by default: helpers start ahead of the first item.
        public var startsHelpersOnDemand: Bool = false

        /// Empty: a uid of their own.
        public static let defaultHelperUser = ""
        /// `nobody`: the account helpers fall back to when no uid of their own is free.
        public static let sharedHelperUser = "nobody"
        /// `nogroup`.
        public static let defaultHelperGroup = "nogroup"

        /// Helpers write nothing to the terminal (their standard error is /dev/null)
        /// unless this environment variable is `inherit`: for valgrind and debugging.
        public static let standardErrorVariable = "SHARE_HELPER_STDERR"

        /// Helpers from `helperExecutable` (a `share` binary), with the defaults:
        /// one helper started ahead per CPU, 4 GiB of address space each, and
        /// 2 s of grace after a request's own time limits.
        public init(
            helperExecutable: String, helperArguments: [String] = [ProcessIsolatedDecoder.helperCommand],
            prestartedHelpers: Int = ProcessInfo.processInfo.activeProcessorCount, memoryLimit: UInt64 = 4 << 30,
            startupTimeLimit: Double = 30, gracePeriod: Double = 2, environment: [String: String] = [:],
            helperUser: String = Configuration.defaultHelperUser, helperGroup: String = Configuration.defaultHelperGroup
        ) {
            self.helperExecutable = helperExecutable
            self.helperArguments = helperArguments
            self.prestartedHelpers = prestartedHelpers
            self.memoryLimit = memoryLimit
            self.startupTimeLimit = startupTimeLimit
            self.gracePeriod = gracePeriod
            self.environment = environment
            self.helperUser = helperUser
            self.helperGroup = helperGroup
            self.cpuLimit = 1800
            self.acceptsNoConfinement = false
            self.onWeakerSandbox = nil
        }

        /// Helpers from ``ProcessIsolatedDecoder/helperName`` next to this
        /// executable (`share-helper` beside `share`; for a library's tests, in
        /// the package's build products beside the test bundle), or from the
        /// path in ``ProcessIsolatedDecoder/helperPathVariable`` when it is set:
        /// what the `share` CLI uses. A host app that ships the helper elsewhere
        /// names it, or decodes in-process (MediaKit's `InProcessDecoder`).
        public static var besideThisExecutable: Configuration {
            Configuration(helperExecutable: ProcessIsolatedDecoder.helperPath)
        }

        /// The message for a helper that cannot be started from `path`: a missing
        /// helper says where it was looked for and how to name another.
        public static func startFailure(_ path: String, _ error: SystemError) -> String {
            if error.code == ENOENT || error.code == ENOTDIR {
                return
                    "the decoder helper \(path) is missing: install \(ProcessIsolatedDecoder.helperName) next to share (make install does), "
                    + "or set \(ProcessIsolatedDecoder.helperPathVariable) to its path"
            }
            return "cannot start the decoder helper \(path): \(error.message)"
        }
    }

    /// The helper executable's name: a product of this package, installed next to `share`.
    public static let helperName = "share-helper"
    /// The environment variable that names the helper executable's path (instead of the one next to this executable).
    public static let helperPathVariable = "SHARE_HELPER_PATH"
    /// The helper executable's first argument: its helper mode.
    public static let helperCommand = "decode-helper"

    /// The helper executable helpers are started from by default: `$SHARE_HELPER_PATH`
    /// when set and not empty, else ``helperName`` in this executable's folder
    /// (symbolic links resolved). It may not exist: starting a helper then fails
    /// with a message naming this path.
    public static var helperPath: String {
        if let path = ProcessEnvironment.value(helperPathVariable), !path.isEmpty { return path }
        let executable = FileSystem.resolved("/proc/self/exe") ?? CommandLine.arguments[0]
        let folder = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(
            separator: "/")
        return (folder.isEmpty ? "." : folder) + "/" + helperName
    }

    /// The configuration helpers are started with.
    public let configuration: Configuration
    private let pool: HelperPool

    /// A decoder whose helpers run `configuration.helperExecutable`.
    ///
    /// This process becomes non-dumpable (`PR_SET_DUMPABLE 0`): a helper that
    /// runs as its user (when it is not root) can then read neither its
    /// `/proc/PID/environ`, `mem` nor `fd`, nor trace it. (Its template,
    /// forked before, and helpers started on their own are not affected.)
    public init(_ configuration: Configuration) {
        self.configuration = configuration
        self.pool = HelperPool(configuration: configuration)
        shim_make_undumpable()
    }

    /// A decoder whose helpers run `helperExecutable` (a `share` binary) with the default limits.
    public convenience init(helperExecutable: String) {
        self.init(Configuration(helperExecutable: helperExecutable))
    }

    /// True: a crash in a decoding library ends a helper, never the caller
    /// (the pipeline needs no poison-item bookkeeping of its own).
    public var containsCrashes: Bool { true }

    /// Called at the start of each batch: stops the idle helpers that served an
    /// earlier batch, and starts helpers ahead of the first item
    /// (``Configuration/prestartedHelpers``), without waiting for them: they load
    /// and sandbox themselves meanwhile. Helpers started on demand
    /// (``Configuration/startsHelpersOnDemand``) are started by ``willDecode()`` instead.
    public func prepare() {
        pool.prepare(configuration.prestartedHelpers)
    }

    /// Starts the helpers ``prepare()`` was asked for when they start on demand
    /// (``Configuration/startsHelpersOnDemand``), once per batch, without
    /// waiting for them; does nothing otherwise (they were started by ``prepare()``).
    public func willDecode() {
        pool.startPrepared()
    }

    /// Starts the helper template (``HelperPool/startTemplate()``) when the
    /// batch's inputs are named like media: it loads the decoding libraries
    /// while the journal is written and the first item copied, and the first
    /// helper is forked from it ready. No helper is started here.
    public func mayDecode() {
        pool.startTemplate()
    }

    /// What can be checked of the helpers without starting one, for a caller
    /// whose helpers start on demand: before it records a batch, so that a
    /// refusal never leaves an unfinished one behind. The helper executable must
    /// be there and executable, a named helper account must exist (when this
    /// process is root), and this machine must offer helpers a file-system
    /// confinement unless ``Configuration/acceptsNoConfinement`` (or they are
    /// ``Configuration/unsandboxed``). Throws the error the first helper would
    /// fail with. A helper that comes up weaker than this machine allows all the
    /// same is only found when it starts, and refused then (``Configuration/onWeakerSandbox``).
    package func checkWithoutStarting() throws(MediaError) {
        let path = configuration.helperExecutable
        if access(path, X_OK) != 0 {
            throw MediaError(.decoderCrashed, Configuration.startFailure(path, SystemError("access", path: path)))
        }
        if Credentials.effectiveUserID == 0, !configuration.helperUser.isEmpty { try pool.checkAccount() }
        guard !configuration.unsandboxed, !configuration.acceptsNoConfinement, Sandbox.confinementAvailable() == .none
        else { return }
        throw MediaError(
            .decoderMisbehaved,
            "decoder helpers would run in a weaker sandbox than this machine allows: \(SandboxRequirement.noConfinementMessage); "
                + "nothing is decoded in them (`share doctor` shows what this machine supports)")
    }

    /// Starts a helper (or takes an idle one that has served no batch yet),
    /// waits until it is ready, and reports what its sandbox holds against what
    /// this machine allows. A helper whose sandbox is weaker is stopped, and
    /// then nothing is decoded (each item fails with the report's message); the
    /// report lists its ``SandboxReport/shortfalls``. Throws when no helper can
    /// be started at all. A helper that passes stays, for the first item.
    public func checkSandbox() throws(MediaError) -> SandboxReport {
        let requirement = pool.requirement
        // Probed only where it matters: without Landlock.
        let namespaces =
            requirement.landlockABI == 0 && !Sandbox.namespacesHidden
            && shim_unprivileged_namespaces_available(requirement.uid, requirement.gid ?? Credentials.effectiveGroupID)
                == 1
        func report(_ observed: (pid: pid_t, status: SandboxStatus, shortfalls: [String])) -> SandboxReport {
            var made = SandboxReport(
                helperProcessID: observed.pid, helper: observed.status, statusLines: observed.status.statusLines,
                seccompAvailable: requirement.seccomp,
                landlockABI: requirement.landlockABI, confinement: requirement.confinement, uid: requirement.uid,
                gid: requirement.gid,
                shortfalls: observed.shortfalls)
            made.unprivilegedNamespaces = namespaces
            if let account = pool.account {
                made.helperAccount = account.description
                made.helperUIDOfTheirOwn = account.ownUID
                made.helperAccountFallback = account.fallback
            }
            return made
        }
        let helper: HelperProcess
        do {
            helper = try pool.checkout(for: "", batch: BatchBinding(batch: nil), kind: .base)
        } catch {
            if error.kind == .decoderMisbehaved, let refused = pool.lastObserved, !refused.shortfalls.isEmpty {
                return report(refused)
            }
            throw error
        }
        // Checked out for no batch: it goes back fresh, to serve the first one.
        defer { pool.checkin(helper, unbinding: true) }
        let observed = helper.ready.flatMap(HelperPool.observe) ?? SandboxStatus()
        return report((helper.pid, observed, requirement.shortfalls(of: observed)))
    }

    /// The error a helper whose sandbox is weaker than this machine allows gives
    /// (what each item fails with, and what `share` prints before it stops).
    public static func weakerSandboxMessage(_ report: SandboxReport) -> String {
        HelperPool.weakerSandboxMessage(pid: report.helperProcessID, shortfalls: report.shortfalls)
    }

    /// Decodes `request` in a helper of its batch. The file is opened here,
    /// read-only, and only its descriptor is passed on; the reply is checked
    /// (``ReplyCheck``) before anything in it is used.
    public func decode(_ request: DecodeRequest) throws(MediaError) -> DecodedMedia {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(request.path, O_RDONLY | O_NOCTTY)
        } catch {
            throw MediaError(.unreadable, "\(request.label): cannot open the copy: \(error.message)")
        }
        // The parent's own reading of the file's size: an embedded video's byte
        // range in the reply must lie inside it.
        let fileSize = (try? descriptor.status(path: request.path)).map { Int($0.size) }
        var request = request
        // Unsandboxed helpers never get the sandbox-only loaders (as in-process).
        let kind =
            configuration.unsandboxed
            ? min(HelperKind.needed(for: request.format), .modules) : HelperKind.needed(for: request.format)
        var attempts = DecodeAttempts()
        // A location scan and a compatible copy each get a helper that has seen
        // no other item (and serves none after): a helper taken over by an
        // earlier file cannot answer "no location here" for this one, nor put
        // that file's bytes into this one's copy.
        let privacy = Self.needsFreshHelper(request)
        defer { if privacy { pool.replenish(max(configuration.prestartedHelpers, 1)) } }
        while true {
            let limit = Self.budget(for: request)
            let helper = try pool.checkout(
                for: request.label, batch: BatchBinding(batch: request.batch), kind: kind, fresh: privacy,
                cpuSeconds: Self.cpuBudget(for: request))
            let reply: HelperReply
            do throws(HelperFailure) {
                reply = try helper.decode(
                    request, descriptor: descriptor, deadline: MonotonicClock.now() + limit + configuration.gracePeriod)
            } catch {
                pool.discard(helper)
                try retryOrThrow(after: error, attempts: &attempts, request: &request, limit: limit)
                continue
            }
            let outcome: Result<DecodedMedia, MediaError>
            do throws(ReplyViolation) {
                outcome = try ReplyCheck.validate(reply, for: request, fileSize: fileSize)
            } catch {
                let pid = helper.pid
                pool.discard(helper)
                throw MediaError(
                    .decoderMisbehaved,
                    "\(request.label): the decoder helper (pid \(pid)) answered with \(error), which the parent's checks refuse; it was stopped"
                )
            }
            if privacy {
                pool.discard(helper)
            } else {
                pool.checkin(helper)
            }
            return attempts.told(in: try outcome.get())
        }
    }

    /// After a helper failed `request`: returns when it is to be tried again
    /// (in a new helper, perhaps asking for less: the facts alone, or without
    /// its Takeout JSONs), throws what the item fails with otherwise.
    private func retryOrThrow(
        after error: HelperFailure, attempts: inout DecodeAttempts, request: inout DecodeRequest, limit: Double
    ) throws(MediaError) {
        switch error {
        case .notDelivered:
            // The helper had gone before it got the request: nothing was decoded.
            attempts.undelivered += 1
            if attempts.undelivered <= 2 { return }
            throw MediaError(
                .decoderCrashed,
                "\(request.label): the decoder helpers kept dying before they could take the request")
        case .died(let exit):
            attempts.crashes.append(exit)
            if exit.isRetryable, attempts.crashes.count == 1 { return }
            if !request.takeoutJSONs.isEmpty, exit != .signaled(SIGXCPU) {
                attempts.takeoutsDropped = (
                    request.takeoutJSONs.count,
                    "the decoder helper died (\(exit)) reading it with its photo or video"
                )
                request.takeoutJSONs = []
                return
            }
            let failure =
                attempts.thumbnailFailure
                ?? exit.failure(
                    label: request.label, attempts: attempts.crashes.count, memoryLimit: configuration.memoryLimit,
                    cpuSeconds: Self.cpuBudget(for: request))
            // A video or document whose poster kills the decoder is still
            // delivered without one: its facts are read alone (never after a
            // CPU-time stop, which is a timed-out decode).
            if request.task == .media, request.thumbnail != nil, attempts.thumbnailFailure == nil,
                exit != .signaled(SIGXCPU), exit != .signaled(SIGSYS)
            {
                attempts.thumbnailFailure = failure
                request.thumbnail = nil
                return
            }
            throw failure
        case .stopped(let pid):
            attempts.stopped.append(pid)
            pool.recordStopped(pid)
            if attempts.stopped.count <= 2 { return }
            throw MediaError(
                .decoderCrashed,
                "\(request.label): the decoder helpers (pids \(attempts.stopped.map(String.init).joined(separator: ", "))) kept being stopped by a signal from outside; each was killed"
            )
        case .timedOut:
            throw MediaError(
                .timeLimit,
                "\(request.label): decoding took longer than \(Self.seconds(limit + configuration.gracePeriod)) s; the decoder helper was stopped"
            )
        case .malformed(let problem):
            throw MediaError(
                .decoderMisbehaved,
                "\(request.label): the decoder helper broke the protocol (\(problem)); it was stopped")
        case .forbiddenCall(let number, let pid):
            throw MediaError(
                .decoderMisbehaved,
                "\(request.label): the decoder helper (pid \(pid)) made the forbidden system call \(Self.callName(number)), which its sandbox does not allow; it was killed"
            )
        }
    }

    /// The pids of the helpers running now (for monitoring, and for tests that
    /// kill one from outside).
    public var helperProcessIDs: [Int32] { pool.processIDs }

    /// The helpers found stopped by a signal (SIGSTOP from outside) since the
    /// last call, by pid: each is killed and replaced (an idle one here and
    /// now, a busy one by the decode waiting on it, whose item is read again
    /// in a fresh helper). What `/readyz`'s `helpers` check reports.
    public func replaceStoppedHelpers() -> [Int32] {
        pool.replaceStopped(keeping: max(configuration.prestartedHelpers, 1))
    }

    /// How many helpers were started so far, replacements included.
    public var startedHelperCount: Int { pool.startedCount }

    /// How many helpers were killed and reaped because they died, hung or
    /// misbehaved (not those stopped at the end of their batch).
    public var killedHelperCount: Int { pool.discardedCount }

    /// The batch each running helper serves, by pid (helpers that have served
    /// none are left out; a request without a batch is bound to nil).
    package var helperBatches: [Int32: String?] { pool.batches.mapValues(\.batch) }

    /// Stops the idle helpers now (they also stop by themselves when this process
    /// exits, or when the decoder is released).
    public func shutdown() { pool.shutdown() }

    /// Whether `request` is a privacy request (a location scan, a compatible
    /// copy), which a helper that has decoded nothing else must answer.
    package static func needsFreshHelper(_ request: DecodeRequest) -> Bool {
        request.task == .locationMetadata || request.compatibleCopy != nil
    }

    /// `add_key (248)`: a system call's name and number on this architecture.
    package static func callName(_ number: Int32) -> String {
        guard let name = shim_syscall_name(Int(number)) else { return "number \(number)" }
        return "\(String(cString: name)) (\(number))"
    }

    /// Seconds a request may take in all: its facts' limit plus its thumbnail's
    /// and its compatible copy's.
    package static func budget(for request: DecodeRequest) -> Double {
        request.timeLimit + (request.thumbnail.map { $0.timeLimit ?? request.timeLimit } ?? 0)
            + (request.compatibleCopy.map { $0.timeLimit ?? request.timeLimit } ?? 0)
    }

    /// CPU seconds a helper may burn on one request before SIGXCPU (`RLIMIT_CPU`,
    /// rounded up and plus one second; see `shim_set_cpu_budget`).
    package static func cpuBudget(for request: DecodeRequest) -> Double {
        (budget(for: request)).rounded(.up) + 1
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}

/// What this machine lets a decoder helper have, and what one actually got
/// (``ProcessIsolatedDecoder/checkSandbox()``; `share doctor` prints it).
public struct SandboxReport: Sendable {
    /// The helper's process id.
    public let helperProcessID: Int32
    /// Its sandbox: credentials, capabilities, no-new-privs and seccomp mode as
    /// its /proc/PID/status shows them, the Landlock ABI, seccomp policy and
    /// address-space limit as it reported them.
    public let helper: SandboxStatus
    /// The lines of its /proc/PID/status that show the sandbox (`Uid:`, `CapEff:`,
    /// `NoNewPrivs:`, `Seccomp:` …), as the kernel printed them.
    public let statusLines: [String]
    /// Whether this machine's kernel can install seccomp filters.
    public let seccompAvailable: Bool
    /// The Landlock ABI this machine's kernel offers (0: none).
    public let landlockABI: Int
    /// The strongest confinement this machine offers a helper (``Confinement/landlock``
    /// where the kernel has Landlock; else a namespace, an empty root, or none).
    public let confinement: Confinement
    /// The user id helpers must run as (the unprivileged account when this
    /// process is root, else this process's own).
    public let uid: UInt32
    /// The group id helpers must run as when this process is root; nil when it is not.
    public let gid: UInt32?
    /// Each way the helper's sandbox is weaker than this machine allows; empty when it is not.
    public let shortfalls: [String]
    /// Whether an unprivileged user here (the helpers' account, or this
    /// process's own) may make a user and mount namespace: how a helper of an
    /// unprivileged `share` is confined where there is no Landlock (the
    /// systemd units run `share` unprivileged; without Landlock they need
    /// these, else root). Probed only on a machine without Landlock (false elsewhere).
    public internal(set) var unprivilegedNamespaces: Bool = false
    /// The account helpers switch to when this process is root, in words
    /// (`uid 2113929216 and gid 2113929216 of their own …`, or `nobody (uid
    /// 65534), group nogroup (gid 65534)`); empty when it is not root.
    public internal(set) var helperAccount = ""
    /// Whether that is a uid of their own, which no account and no other
    /// process has (the default), rather than a shared account.
    public internal(set) var helperUIDOfTheirOwn = false
    /// Why the helpers run as a shared account though none was named (every
    /// uid of the reserved range was taken); nil otherwise.
    public internal(set) var helperAccountFallback: String?

    /// Each way the helper's sandbox is weaker than the strongest there is
    /// (Landlock with seccomp): this machine's shortfalls first, then what the
    /// machine itself lacks. Empty only for the strongest sandbox.
    public var weakerThanStrongest: [String] {
        var found = shortfalls
        if confinement < .landlock, confinement > .none {
            found.append(
                "Landlock is not available (the kernel lacks it or refuses its calls): the helper is confined by \(helper.confinement), "
                    + "not Landlock")
        }
        if !seccompAvailable {
            found.append("seccomp filters are not available: the helper has no system-call allowlist")
        }
        return found
    }
}

/// What the helpers that failed a request came to, for
/// ``ProcessIsolatedDecoder/decode(_:)``: what to try next and what the reply
/// says of them.
private struct DecodeAttempts {
    /// How the helpers that died with it ended.
    var crashes: [HelperExit] = []
    /// Helpers gone before they got it.
    var undelivered = 0
    /// Helpers stopped by a signal from outside while they had this request
    /// (killed and replaced): not the file's doing, so the file is read again.
    var stopped: [pid_t] = []
    /// Set once a helper died making the thumbnail too: the facts are then asked
    /// for alone, and the thumbnail reported as failed for this reason.
    var thumbnailFailure: MediaError?
    /// Set once a helper died reading the file with the Takeout JSONs sent
    /// with it: the file is read again without them, and each is refused
    /// for this reason (a JSON that kills a helper never costs its photo).
    var takeoutsDropped: (count: Int, reason: String)?

    /// `decoded` with what the failed attempts leave on it: the refused
    /// Takeout JSONs, the thumbnail's failure, a warning for a helper that died
    /// or was stopped while reading the file.
    func told(in decoded: DecodedMedia) -> DecodedMedia {
        var decoded = decoded
        if let takeoutsDropped {
            decoded.takeouts = Array(repeating: .refused(takeoutsDropped.reason), count: takeoutsDropped.count)
        }
        if let thumbnailFailure {
            decoded.thumbnail = .failed(thumbnailFailure)
        } else if let crash = crashes.first {
            decoded.facts.warnings.append(
                "the decoder helper died (\(crash)) while reading this file; it was read again in a fresh helper")
        }
        if let pid = stopped.first {
            decoded.facts.warnings.append(
                "the decoder helper (pid \(pid)) was stopped by a signal from outside while reading this file; it was killed, and the file read again in a fresh helper"
            )
        }
        return decoded
    }
}
