import Foundation
import Glibc
import MediaFormats
import MediaKit

/// Decodes media in a small pool of sandboxed helper processes, so that a bug
/// in a decoding library (libvips, libav, libheif, poppler, librsvg,
/// ImageMagick) exploited or triggered by a shared file cannot touch the
/// process that holds the journal, the container and the user's data.
///
/// A helper is the `share` executable started again in its hidden helper mode
/// (`share decode-helper`, which calls ``DecoderHelper/main(_:)``), never a fork
/// of this threaded process: one helper template (started the same way) sets up
/// the libraries once and forks the helpers, see `HelperTemplate`. It loads the libraries, locks itself down (see
/// the README: no-new-privs, seccomp-bpf, Landlock, resource limits), and then
/// decodes one request at a time: the parent opens the file read-only and
/// passes the descriptor with the request over a Unix socket; the helper sends
/// back the facts and the thumbnail's JPEG bytes. This process never decodes.
///
/// There is one helper per concurrent caller (per decoding worker), reused
/// across items and batches. When a helper crashes, hits its memory or CPU
/// limit, or overruns the request's time, only its item fails (reasons
/// `decoderCrashed` naming the signal, `memoryLimit`, `timeLimit`) and a new
/// helper takes its place. An item whose helper died is decoded once more in a
/// fresh helper, so a helper killed from outside costs nothing and a file that
/// crashes the decoder fails alone. A timed-out decode is never run again.
///
/// ```swift
/// let decoder = ProcessIsolatedDecoder(helperExecutable: "/usr/local/bin/share")
/// let ingestor = ShareIngestor(container: container, decoder: decoder)
/// ```
public final class ProcessIsolatedDecoder: MediaDecoder, @unchecked Sendable {
    /// How helpers are started and limited.
    public struct Configuration: Sendable {
        /// The `share` executable to start helpers from.
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
        /// Extra environment for the helpers (they inherit this process's).
        public var environment: [String: String]

        /// Helpers write nothing to the terminal (their standard error is /dev/null)
        /// unless this environment variable is `inherit`: for valgrind and debugging.
        public static let standardErrorVariable = "SHARE_HELPER_STDERR"

        /// Helpers from `helperExecutable` (a `share` binary), with the defaults:
        /// one helper started ahead per CPU, 4 GiB of address space each, and
        /// 2 s of grace after a request's own time limits.
        public init(
            helperExecutable: String, helperArguments: [String] = [DecoderHelper.command],
            prestartedHelpers: Int = ProcessInfo.processInfo.activeProcessorCount, memoryLimit: UInt64 = 4 << 30,
            startupTimeLimit: Double = 30, gracePeriod: Double = 2, environment: [String: String] = [:]
        ) {
            self.helperExecutable = helperExecutable
            self.helperArguments = helperArguments
            self.prestartedHelpers = prestartedHelpers
            self.memoryLimit = memoryLimit
            self.startupTimeLimit = startupTimeLimit
            self.gracePeriod = gracePeriod
            self.environment = environment
        }

        /// Helpers from this very executable (`/proc/self/exe`): what the `share`
        /// CLI uses. A host app that does not ship `share` names it, or decodes
        /// in-process (MediaKit's `InProcessDecoder`).
        public static var thisExecutable: Configuration {
            Configuration(helperExecutable: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        }
    }

    /// Forks this process into the helper template that a later
    /// `ProcessIsolatedDecoder` of ``Configuration/thisExecutable`` takes instead
    /// of starting `decode-helper --template`: the template then skips the
    /// dynamic loader's work (about 55 ms of CPU for `share`). Call it first
    /// thing in `main`, in an executable that also runs ``DecoderHelper``, and
    /// only where the command will decode; it does nothing once the process has
    /// a second thread. An unused template exits with this process.
    public static func forkHelperTemplate() {
        HelperTemplate.forkEarly()
    }

    /// The configuration helpers are started with.
    public let configuration: Configuration
    private let pool: HelperPool

    /// A decoder whose helpers run `configuration.helperExecutable`.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
        self.pool = HelperPool(configuration: configuration)
    }

    /// A decoder whose helpers run `helperExecutable` (a `share` binary) with the default limits.
    public convenience init(helperExecutable: String) {
        self.init(Configuration(helperExecutable: helperExecutable))
    }

    /// True: a crash in a decoding library ends a helper, never the caller
    /// (the pipeline needs no poison-item bookkeeping of its own).
    public var containsCrashes: Bool { true }

    /// Starts the helpers ahead of the first item (``Configuration/prestartedHelpers``),
    /// without waiting for them: they load and sandbox themselves meanwhile.
    public func prepare() {
        pool.prestart(configuration.prestartedHelpers)
    }

    /// Decodes `request` in a helper. The file is opened here, read-only, and only
    /// its descriptor is passed on.
    public func decode(_ request: DecodeRequest) throws(MediaError) -> DecodedMedia {
        let descriptor = open(request.path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else {
            throw MediaError(.unreadable, "\(request.label): cannot open the copy: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var request = request
        let sandboxOnlyLoaders = InProcessDecoder.needsSandboxOnlyLoaders(request.format)
        var crashes: [HelperExit] = []
        var undelivered = 0
        // Set once a helper died making the thumbnail too: the facts are then asked
        // for alone, and the thumbnail reported as failed for this reason.
        var thumbnailFailure: MediaError?
        while true {
            let limit = Self.budget(for: request)
            let helper = try pool.checkout(for: request.label, sandboxOnlyLoaders: sandboxOnlyLoaders)
            let outcome: Result<DecodedMedia, MediaError>
            do throws(HelperFailure) {
                outcome = try helper.decode(request, descriptor: descriptor, deadline: Monotonic.now() + limit + configuration.gracePeriod)
            } catch {
                pool.discard(helper)
                switch error {
                case .notDelivered:
                    // The helper had gone before it got the request: nothing was decoded.
                    undelivered += 1
                    if undelivered <= 2 { continue }
                    throw MediaError(.decoderCrashed, "\(request.label): the decoder helpers kept dying before they could take the request")
                case .died(let exit):
                    crashes.append(exit)
                    if exit.isRetryable, crashes.count == 1 { continue }
                    let failure = thumbnailFailure ?? exit.failure(
                        label: request.label, attempts: crashes.count, memoryLimit: configuration.memoryLimit, cpuSeconds: Self.cpuBudget(for: request))
                    // A video or document whose poster kills the decoder is still
                    // delivered without one: its facts are read alone (never after a
                    // CPU-time stop, which is a timed-out decode).
                    if request.thumbnail != nil, thumbnailFailure == nil, exit != .signaled(SIGXCPU) {
                        thumbnailFailure = failure
                        request.thumbnail = nil
                        continue
                    }
                    throw failure
                case .timedOut:
                    throw MediaError(
                        .timeLimit,
                        "\(request.label): decoding took longer than \(Self.seconds(limit + configuration.gracePeriod)) s; the decoder helper was stopped")
                case .malformed(let problem):
                    throw MediaError(.decoderCrashed, "\(request.label): the decoder helper answered with \(problem); it was stopped")
                }
            }
            pool.checkin(helper)
            var decoded = try outcome.get()
            if let thumbnailFailure {
                decoded.thumbnail = .failed(thumbnailFailure)
            } else if let crash = crashes.first {
                decoded.facts.warnings.append("the decoder helper died (\(crash)) while reading this file; it was read again in a fresh helper")
            }
            return decoded
        }
    }

    /// The pids of the helpers running now (for monitoring, and for tests that
    /// kill one from outside).
    public var helperProcessIDs: [Int32] { pool.processIDs }

    /// How many helpers were started so far, replacements included.
    public var startedHelperCount: Int { pool.startedCount }

    /// Stops the idle helpers now (they also stop by themselves when this process
    /// exits, or when the decoder is released).
    public func shutdown() { pool.shutdown() }

    /// Seconds a request may take in all: its facts' limit plus its thumbnail's.
    static func budget(for request: DecodeRequest) -> Double {
        request.timeLimit + (request.thumbnail.map { $0.timeLimit ?? request.timeLimit } ?? 0)
    }

    /// CPU seconds a helper may burn on one request before SIGXCPU (`RLIMIT_CPU`,
    /// rounded up and plus one second; see `shim_set_cpu_budget`).
    static func cpuBudget(for request: DecodeRequest) -> Double {
        (budget(for: request)).rounded(.up) + 1
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
