import DecoderIsolation
import Foundation
import MediaFormats
import SystemCalls

/// `--isolation process|none`: where `ingest`, `watch` and `worker` decode the
/// shared media. The CLI only builds the decoder and passes it in.
enum DecoderOption {
    /// `--isolation process-weaker`: helpers as for `process`, accepted even on
    /// a machine that offers them no file-system confinement (no Landlock, no
    /// namespaces, not root), which `process` refuses.
    static let weaker = "process-weaker"

    /// An account for the helpers of `share` started as root (by default they
    /// run under a uid and gid of their own, which no other process has).
    static let userVariable = "SHARE_HELPER_USER"
    static let groupVariable = "SHARE_HELPER_GROUP"

    /// Whether this process's command line (`argc` and `argv`, read in place: no
    /// argument is copied, so a template forked now holds none) runs a command
    /// that decodes in sandboxed helpers: `ingest` (not a `--db` client, which
    /// only enqueues), `watch` or `worker`, without `--isolation none` or
    /// `--help` (and `doctor`, which checks such a helper). Such a command, but
    /// `ingest` (whose helpers start on demand), checks its first helper's
    /// sandbox at once, on another thread.
    static func decodesInHelpers(argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Bool {
        guard argc > 1, let command = argv[1],
            argument(command, is: "ingest") || argument(command, is: "watch") || argument(command, is: "worker")
                || argument(command, is: "doctor")
        else { return false }
        var index = 2
        while index < Int(argc), let option = argv[index] {
            let next = index + 1 < Int(argc) ? argv[index + 1] : nil
            if argument(option, is: "--") { return true }
            if argument(option, is: "--help") || argument(option, is: "-h") || argument(option, is: "--isolation=none")
                || argument(option, is: "--dry-run")
                || argument(option, is: "-n")
            {
                return false
            }
            if argument(option, is: "--isolation"), let next, argument(next, is: "none") { return false }
            if argument(command, is: "ingest"),
                argument(option, is: "--db") || argument(option, hasPrefix: "--db=")
                    || argument(option, is: "--db-file")
                    || argument(option, hasPrefix: "--db-file=")
            {
                return false
            }
            index += 1
        }
        return true
    }

    /// True when the C string `argument` is `text` (compared in place).
    private static func argument(_ argument: UnsafeMutablePointer<CChar>, is text: StaticString) -> Bool {
        strlen(argument) == text.utf8CodeUnitCount && memcmp(argument, text.utf8Start, text.utf8CodeUnitCount) == 0
    }

    /// True when the C string `argument` starts with `text` (compared in place).
    private static func argument(_ argument: UnsafeMutablePointer<CChar>, hasPrefix text: StaticString) -> Bool {
        strncmp(argument, UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self), text.utf8CodeUnitCount)
            == 0
    }

    /// The decoder `--isolation` asks for (default: sandboxed helpers started
    /// from `share-helper` next to this executable or `$SHARE_HELPER_PATH`,
    /// under a uid of their own or as `SHARE_HELPER_USER`/`SHARE_HELPER_GROUP` when
    /// `share` runs as root; `none`: the same helpers, unsandboxed).
    ///
    /// `onDemand` (`share ingest`): helpers start only when an item is to be
    /// decoded, so a batch of text starts no `share-helper` (issue 59); the
    /// command checks what it can without a helper (``refusal(of:)``) before it
    /// records its batch. Otherwise (`watch`, `worker`: long-running) a command
    /// that decodes in helpers starts its first helper now and checks its
    /// sandbox on another thread: when it is weaker than this machine allows,
    /// or no helper can start, `share` prints one error and exits 69 at once;
    /// nothing has been decoded (the pool refuses such a helper anyway, whoever
    /// meets it first, and then stops `share` the same way).
    static func decoder(_ parsed: Arguments, onDemand: Bool = false) throws(UsageError) -> any MediaDecoder {
        let value = parsed.value("isolation") ?? Isolation.process.rawValue
        guard let isolation = value == weaker ? .process : Isolation(rawValue: value) else {
            throw UsageError("--isolation must be process, process-weaker or none, not \"\(value)\"")
        }
        // `share` links no decoder (issue 59): `none` decodes in the helper executable
        // without its sandbox (as in-process decoding would: no sandbox-only loaders).
        guard isolation == .process else { return helpers(unsandboxed: true, onDemand: onDemand) }
        let decoder = helpers(acceptsNoConfinement: value == weaker, onDemand: onDemand)
        if !onDemand, decodesInHelpers(argc: CommandLine.argc, argv: CommandLine.unsafeArgv) {
            Thread.detachNewThread {
                do throws(MediaError) {
                    _ = try decoder.checkSandbox()
                } catch {
                    stop(error.message)
                }
            }
        }
        return decoder
    }

    /// Why `decoder`'s helpers would be refused, as far as that is known without
    /// starting one (``ProcessIsolatedDecoder/checkWithoutStarting()``: the
    /// helper executable, a named account, a machine that offers no
    /// confinement to `--isolation process`); nil when nothing is known against
    /// them, or they are unsandboxed. `share ingest` asks before it records its
    /// batch: a refused command leaves no unfinished batch behind, though its
    /// helpers start only at the first item to decode.
    static func refusal(of decoder: any MediaDecoder) -> String? {
        guard let isolated = decoder as? ProcessIsolatedDecoder, !isolated.configuration.unsandboxed else { return nil }
        do throws(MediaError) {
            try isolated.checkWithoutStarting()
        } catch {
            return error.message
        }
        return nil
    }

    /// Sandboxed helpers started from `share-helper` (next to this executable, or `$SHARE_HELPER_PATH`), under a uid of their own
    /// or as `SHARE_HELPER_USER` and `SHARE_HELPER_GROUP` when `share` runs as root; a helper weaker than
    /// this machine allows stops `share` (also what `share report` decodes a
    /// contact sheet's tiles with: it has no `--isolation`).
    static func helpers(acceptsNoConfinement: Bool = false, unsandboxed: Bool = false, onDemand: Bool = false)
        -> ProcessIsolatedDecoder
    {
        var configuration = ProcessIsolatedDecoder.Configuration.besideThisExecutable
        configuration.acceptsNoConfinement = acceptsNoConfinement
        configuration.unsandboxed = unsandboxed
        configuration.startsHelpersOnDemand = onDemand
        if let user = ProcessEnvironment.value(userVariable), !user.isEmpty { configuration.helperUser = user }
        if let group = ProcessEnvironment.value(groupVariable), !group.isEmpty { configuration.helperGroup = group }
        configuration.onWeakerSandbox = { message in stop(message) }
        return ProcessIsolatedDecoder(configuration)
    }

    /// Prints `message` as the command's one error and exits 2 at once (other
    /// threads may be copying or journaling: exit handlers must not race them,
    /// and what they leave is what a crash would, which the journal recovers).
    private static func stop(_ message: String) -> Never {
        Terminal.shared.err("share: --isolation process: \(message)")
        Processes.exitImmediately(ExitStatus.unavailable.rawValue)
    }
}
