import CShims
import CSystem
import DecoderIsolation
import Foundation
import MediaFormats
import MediaKit
import SystemCalls

/// The helper side: what `share-helper decode-helper` runs. A helper is the
/// helper executable (`share-helper`, which links the decoders; `share` does
/// not) started by DecoderIsolation's `ProcessIsolatedDecoder`, or a fork of a
/// template (`share-helper decode-helper --template`; never of the threaded
/// parent), talking to the parent over the Unix socket on descriptor 3.
///
/// It loads the decoding libraries and every module its kind needs (``HelperKind``), gives up its
/// privileges and enters the ``Sandbox``, says it is ready (with what its
/// sandbox holds), then decodes one request at a time, each from the read-only
/// descriptor that came with it, with `InProcessDecoder` (its sandbox-only
/// loaders enabled), until the parent closes the socket.
public enum DecoderHelper {
    /// The helper executable's command that runs a helper (its first argument).
    public static let command = ProcessIsolatedDecoder.helperCommand

    /// Runs the helper with the arguments after ``command`` and returns its exit
    /// status: `--memory-limit BYTES` (address space; 0 for none),
    /// `--cpu-limit SECONDS` (CPU time in all, a hard limit; 0 for none),
    /// `--sandbox-only-loaders` (this helper may run librsvg and ImageMagick, for
    /// SVG and PSD: it loads them before locking down; other helpers keep them
    /// blocked and start faster), `--template` (a ``HelperTemplate``: set up the
    /// libraries, then fork helpers on request), and `--account UID:GID` (the
    /// unprivileged user and group to switch to when started as root; the
    /// parent looks them up), and `--parent PID` (the process that started it,
    /// which it dies with), and `--unsandboxed` (`share --isolation none`: no
    /// sandbox is entered; never with the sandbox-only loaders).
    public static func main(_ arguments: [String]) -> Int32 {
        let settings: HelperSettings
        do {
            settings = try HelperSettings(arguments)
        } catch {
            StandardStream.write(
                Array("share-helper decode-helper: \(error) (this command is started by share itself)\n".utf8), to: 2)
            return 2
        }
        // A template is named as the one `share` used to fork from itself (ps,
        // the tests); the helpers it forks are `share-decoder` (shim_fork_helper).
        if settings.isTemplate { nameThisProcess("share-template") }
        keepFreedMemory()
        prepareLibraries(sandboxOnlyLoaders: settings.sandboxOnlyLoaders)
        // A template loads the modules when a helper first needs them. A helper
        // started on its own (for SVG and PSD, or once the template is gone) may
        // be given any format: it has them from the start.
        if !settings.isTemplate { loadModules(sandboxOnlyLoaders: settings.sandboxOnlyLoaders) }
        let control = UnixSocket(adopting: 3)
        let status = run(settings, control: MessageSocket(control))
        // The socket is never closed before the exit: a template or helper holds it all its life.
        _ = control.release()
        return status
    }

    /// Below this many bytes, what a helper frees stays in its allocator for the
    /// next item (``keepFreedMemory()``): glibc's own largest threshold for a
    /// block of its own mapping.
    static let mappedAbove = 32 << 20
    /// An arena's free pages at its top beyond this many bytes are given back (glibc's own rule: twice the above).
    static let trimmedAbove = 64 << 20

    /// Keeps what a helper frees for its next item (``FreedMemory/keepForReuse(mappedAbove:trimmedAbove:)``,
    /// before any library allocates; a template's helpers inherit it). A
    /// helper decodes one picture after another, each allocating the same
    /// buffers (a file read whole, decoder frames, libvips' regions, the
    /// thumbnail's pixels): given back to the kernel after each, every page of
    /// them faulted in and zeroed again for the next, about 380 page faults a
    /// 12 MP photo, 1,400 a 12 MP HEIC (BENCHMARKS.md, "Photos and iPhone HEIC after the split").
    static func keepFreedMemory() {
        FreedMemory.keepForReuse(mappedAbove: mappedAbove, trimmedAbove: trimmedAbove)
    }

    /// Sets this process's name (`/proc/self/comm`, as `PR_SET_NAME` does).
    private static func nameThisProcess(_ name: String) {
        let fd = open("/proc/self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        _ = name.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    /// The libvips modules a helper of kind ``HelperKind/modules`` or above
    /// loads before its sandbox: those whose loaders MediaKit's routes name
    /// (``HelperKind/moduleFormats``); `magick` (PSD) only in the helpers with the
    /// sandbox-only loaders. Never `heif` (MediaKit reads HEIF and AVIF with
    /// libheif's and libavcodec's own APIs) nor OpenSlide: no route uses them.
    /// A test checks which are mapped in running helpers.
    static var vipsModules: [String] { Array(Set(HelperKind.moduleFormats.values)).sorted() }

    /// Whether ``loadModules(sandboxOnlyLoaders:)`` has run in this process (a
    /// template's children forked since then have the modules too).
    nonisolated(unsafe) static var modulesLoaded = false

    /// Character sets libavformat converts MPEG-TS names from (`iconv`, whose
    /// modules glibc would otherwise load on first use): ISO 6937 and ISO 8859
    /// (DVB's default and its tables) and GB 2312. (It also asks for
    /// "KSC_5601", a name glibc does not know.)
    static let charsets = ["ISO6937", "GB2312"] + (2...15).map { "ISO-8859-\($0)" }

    /// Loads and sets up the decoding libraries a helper of kind
    /// ``HelperKind/base`` needs (libvips without its modules, libav, libheif,
    /// the gconv modules of ``charsets``); ``loadModules(sandboxOnlyLoaders:)``
    /// adds the rest. Once the seccomp policy is in place no code can be mapped,
    /// so a helper can load nothing on demand. libvips' vector code (liborc) is
    /// switched off: it compiles to anonymous writable and executable memory,
    /// which the policy refuses. Once per process.
    package static func prepareLibraries(sandboxOnlyLoaders: Bool) {
        // Nothing of the parent's but the socket (descriptor 3) and stdio.
        shim_close_descriptors_from(4)
        shim_install_crash_handler(HelperExit.memoryLimitStatus)
        // Read by vips_init (libvips' own switch for liborc).
        ProcessEnvironment.set("VIPS_NOVECTOR", to: "1")
        // libvips itself loads no module (it would, when started from its own
        // prefix): ``loadModules(sandboxOnlyLoaders:)`` loads the ones needed.
        try? Vips.startWithModulesOnDemand()
        let decoder = InProcessDecoder(allowsSandboxOnlyLoaders: sandboxOnlyLoaders)
        decoder.prepare()
        let names = charsets.map { UnsafePointer(strdup($0)) }
        _ = names.withUnsafeBufferPointer { shim_preload_charset_conversions($0.baseAddress, Int32(names.count)) }
        for name in names { free(UnsafeMutablePointer(mutating: name)) }
    }

    /// Loads libvips' ``vipsModules`` (and `magick`, warmed up with librsvg, for
    /// the sandbox-only loaders): what a helper of kind ``HelperKind/modules``
    /// or ``HelperKind/sandboxOnly`` needs beyond ``prepareLibraries(sandboxOnlyLoaders:)``.
    /// Once per process.
    static func loadModules(sandboxOnlyLoaders: Bool) {
        guard !modulesLoaded else { return }
        modulesLoaded = true
        for module in vipsModules + (sandboxOnlyLoaders ? ["magick"] : []) { shim_vips_load_module(module) }
        // The modules registered loaders of their own since libvips was set up:
        // block (or allow) the sandbox-only ones again, over all of them.
        shim_vips_block_sandbox_only_loaders(sandboxOnlyLoaders ? 0 : 1)
        if sandboxOnlyLoaders { Warmup.run() }
    }

    /// Goes on with the libraries prepared: as a template (forking helpers, each
    /// of which returns here as a helper), or as a helper.
    static func run(_ settings: HelperSettings, control: MessageSocket) -> Int32 {
        var parent: pid_t = 0
        let socket: MessageSocket
        if settings.isTemplate {
            switch HelperTemplateLoop.serve(control) {
            case .finished(let status): return status
            case .helper(let template): parent = template
            }
            // In the forked helper, descriptor 3 is its own socket now.
            socket = MessageSocket(UnixSocket(adopting: 3))
        } else {
            // Started on its own: its parent is the process that said so.
            parent = settings.parent ?? 0
            socket = control
        }
        let attack = TestFault.prepareAttack(template: parent)
        if settings.unsandboxed {
            // `share --isolation none`: decoded as in-process, without the sandbox.
            let ready = HelperReady(
                pid: Processes.current, sandbox: SandboxStatus.read(pid: nil) ?? SandboxStatus(), failure: nil,
                modules: modulesLoaded)
            guard let readyJSON = try? JSONEncoder().encode(ready),
                socket.send(HelperMessage.frame(.ready, Array(readyJSON)))
            else { return 1 }
            return serve(socket, decoder: InProcessDecoder(allowsSandboxOnlyLoaders: false), attack: attack)
        }
        let status: SandboxStatus
        do {
            status = try Sandbox.enter(
                addressSpaceLimit: settings.memoryLimit, cpuLimit: settings.cpuLimit, account: settings.account,
                parent: parent,
                recording: Sandbox.recordingRequested, socket: socket.socket.raw)
        } catch {
            let ready = HelperReady(
                pid: Processes.current, sandbox: SandboxStatus.read(pid: nil) ?? SandboxStatus(), failure: "\(error)",
                modules: modulesLoaded)
            _ = socket.send(HelperMessage.frame(.ready, Array((try? JSONEncoder().encode(ready)) ?? Data())))
            return HelperExit.sandboxFailedStatus
        }
        let ready = HelperReady(pid: Processes.current, sandbox: status, failure: nil, modules: modulesLoaded)
        guard let readyJSON = try? JSONEncoder().encode(ready),
            socket.send(HelperMessage.frame(.ready, Array(readyJSON)))
        else { return 1 }
        return serve(
            socket, decoder: InProcessDecoder(allowsSandboxOnlyLoaders: settings.sandboxOnlyLoaders), attack: attack)
    }

    /// The request loop: ends (status 0) when the parent closes the socket.
    private static func serve(_ socket: MessageSocket, decoder: InProcessDecoder, attack: AttackTargets?) -> Int32 {
        let requestDecoder = JSONDecoder()
        while true {
            let message: ReceivedMessage
            do {
                message = try socket.receive(maximum: HelperMessage.maximumRequest)
            } catch .closed {
                return 0
            } catch {
                return 1
            }
            guard socket.send(HelperMessage.frame(.accepted, [])) else { return 1 }
            var outcome: Result<DecodedMedia, MediaError>
            let request = try? HelperMessage.parseRequest(message.body, decoder: requestDecoder)
            if message.kind != HelperMessage.Kind.decode.rawValue {
                outcome = .failure(
                    MediaError(.decoderCrashed, "the decoder helper received a message of unknown type \(message.kind)")
                )
            } else if let request {
                if let descriptor = message.descriptor {
                    outcome = decode(request, descriptor: descriptor, with: decoder, attack: attack)
                } else {
                    outcome = .failure(MediaError(.unreadable, "\(request.label): no file came with the request"))
                }
            } else {
                outcome = .failure(MediaError(.decoderCrashed, "the decoder helper received an unreadable request"))
            }
            // The input's descriptor is closed here (released with the message).
            var jpeg = WireResult.jpeg(of: outcome)
            var result = WireResult(outcome)
            if let request, let forgery = TestFault.planned(for: request)?.forgery {
                forgery.apply(to: &result, jpeg: &jpeg)
            }
            guard let body = try? HelperMessage.resultBody(result, jpeg: jpeg),
                socket.send(HelperMessage.frame(.result, body))
            else { return 1 }
        }
    }

    private static func decode(
        _ request: DecodeRequest, descriptor: FileDescriptor, with decoder: InProcessDecoder, attack: AttackTargets?
    )
        -> Result<DecodedMedia, MediaError>
    {
        shim_set_cpu_budget(ProcessIsolatedDecoder.budget(for: request))
        TestFault.planned(for: request)?.trigger(request: request, descriptor: descriptor, attack: attack)
        do {
            return .success(try decoder.decode(request, descriptor: descriptor.raw))
        } catch {
            return .failure(error)
        }
    }
}

/// A helper's arguments (see ``DecoderHelper/main(_:)``).
struct HelperSettings {
    var memoryLimit: UInt64 = 0
    /// CPU seconds in all (the hard `RLIMIT_CPU`; 0: none).
    var cpuLimit: UInt64 = 0
    var sandboxOnlyLoaders = false
    var isTemplate = false
    /// The user and group ids to switch to when started as root.
    var account: (uid: uid_t, gid: gid_t)?
    /// The process that started a helper on its own (not forked from a
    /// template): the helper dies with it.
    var parent: pid_t?
    /// No sandbox (`share --isolation none`).
    var unsandboxed = false

    /// Parses `arguments`; throws a message naming the one it does not know.
    init(_ arguments: [String]) throws(ConfigurationError) {
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--memory-limit" where index + 1 < arguments.count:
                memoryLimit = UInt64(arguments[index + 1]) ?? 0
                index += 2
            case "--cpu-limit" where index + 1 < arguments.count:
                cpuLimit = UInt64(arguments[index + 1]) ?? 0
                index += 2
            case "--sandbox-only-loaders":
                sandboxOnlyLoaders = true
                index += 1
            case "--unsandboxed":
                unsandboxed = true
                index += 1
            case "--template":
                isTemplate = true
                index += 1
            case "--account" where index + 1 < arguments.count:
                let ids = arguments[index + 1].split(separator: ":").compactMap { UInt32($0) }
                guard ids.count == 2 else {
                    throw ConfigurationError("--account takes UID:GID, not \(arguments[index + 1])")
                }
                account = (ids[0], ids[1])
                index += 2
            case "--parent" where index + 1 < arguments.count:
                guard let pid = pid_t(arguments[index + 1]), pid > 1 else {
                    throw ConfigurationError("--parent takes a process id, not \(arguments[index + 1])")
                }
                parent = pid
                index += 2
            default:
                throw ConfigurationError("unexpected argument \(arguments[index])")
            }
        }
        // A helper with the sandbox-only loaders is never a template.
        if sandboxOnlyLoaders { isTemplate = false }
        if unsandboxed && sandboxOnlyLoaders {
            throw ConfigurationError("--unsandboxed helpers never run the sandbox-only loaders")
        }
    }
}
