import CShims
import CSystem
import Foundation
import Glibc
import MediaFormats
import MediaKit

/// The helper side: what `share decode-helper` runs. A helper is the `share`
/// binary started again by ``ProcessIsolatedDecoder``, or a fork of a
/// ``HelperTemplate`` (never of the threaded parent), talking to the parent over
/// the Unix socket on descriptor 3.
///
/// It loads the decoding libraries and their modules, enters the ``Sandbox``,
/// says it is ready, then decodes one request at a time, each from the
/// read-only descriptor that came with it, with `InProcessDecoder` (its
/// sandbox-only loaders enabled), until the parent closes the socket.
public enum DecoderHelper {
    /// The hidden `share` command that runs a helper.
    public static let command = "decode-helper"

    /// Runs the helper with the arguments after ``command`` and returns its exit
    /// status: `--memory-limit BYTES` (address space; 0 for none),
    /// `--sandbox-only-loaders` (this helper may run librsvg and ImageMagick, for
    /// SVG and PSD: it loads them before locking down; other helpers keep them
    /// blocked and start faster), `--template` (a ``HelperTemplate``: set up the
    /// libraries, then fork helpers on request), and `--self-check WRITE_PATH
    /// READ_PATH` (test-only: sandbox, then try what it must not do; see the tests).
    public static func main(_ arguments: [String]) -> Int32 {
        var memoryLimit: UInt64 = 0
        var selfCheck: (write: String, read: String)?
        var sandboxOnlyLoaders = false
        var template = false
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--memory-limit" where index + 1 < arguments.count:
                memoryLimit = UInt64(arguments[index + 1]) ?? 0
                index += 2
            case "--sandbox-only-loaders":
                sandboxOnlyLoaders = true
                index += 1
            case "--template":
                template = true
                index += 1
            case "--self-check" where index + 2 < arguments.count:
                selfCheck = (arguments[index + 1], arguments[index + 2])
                index += 3
            default:
                FileHandle.standardError.write(Data("share decode-helper: unexpected argument \(arguments[index]) (this command is started by share itself)\n".utf8))
                return 2
            }
        }
        // Nothing of the parent's but the socket (descriptor 3) and stdio.
        shim_close_descriptors_from(selfCheck == nil ? 4 : 3)
        shim_install_crash_handler(HelperExit.memoryLimitStatus)
        let decoder = InProcessDecoder(allowsSandboxOnlyLoaders: sandboxOnlyLoaders)
        // (A helper with the sandbox-only loaders, or a self-check, is never a template.)
        let isTemplate = template && !sandboxOnlyLoaders && selfCheck == nil
        // A template's start is on the way to every command's first thumbnail: its
        // helpers load libvips' modules (poppler for a PDF, ...) when they need one.
        if isTemplate { try? Vips.startWithModulesOnDemand() }
        decoder.prepare()
        if sandboxOnlyLoaders { Warmup.run() }
        if isTemplate {
            // Returns only in a forked child, whose descriptor 3 is its own socket.
            if case .finished(let status) = HelperTemplateLoop.serve(MessageSocket(descriptor: 3)) { return status }
        }

        let socket = MessageSocket(descriptor: 3)
        let status: SandboxStatus
        do {
            status = try Sandbox.enter(addressSpaceLimit: memoryLimit)
        } catch {
            if selfCheck != nil {
                FileHandle.standardError.write(Data("share decode-helper: sandbox: \(error)\n".utf8))
            } else {
                let ready = HelperReady(pid: getpid(), sandbox: SandboxStatus.current(landlockABI: 0, addressSpaceLimit: memoryLimit), failure: "\(error)")
                _ = socket.send(HelperMessage.frame(.ready, Array((try? JSONEncoder().encode(ready)) ?? Data())))
            }
            return HelperExit.sandboxFailedStatus
        }
        if let selfCheck {
            return SandboxSelfCheck.run(writePath: selfCheck.write, readPath: selfCheck.read, status: status)
        }
        let ready = HelperReady(pid: getpid(), sandbox: status, failure: nil)
        guard let readyJSON = try? JSONEncoder().encode(ready), socket.send(HelperMessage.frame(.ready, Array(readyJSON))) else { return 1 }
        return serve(socket, decoder: decoder)
    }

    /// The request loop: ends (status 0) when the parent closes the socket.
    private static func serve(_ socket: MessageSocket, decoder: InProcessDecoder) -> Int32 {
        let requestDecoder = JSONDecoder()
        while true {
            let message: (kind: UInt8, body: [UInt8], descriptor: Int32)
            do {
                message = try socket.receive(maximum: HelperMessage.maximumRequest)
            } catch .closed {
                return 0
            } catch {
                return 1
            }
            guard socket.send(HelperMessage.frame(.accepted, [])) else { return 1 }
            let outcome: Result<DecodedMedia, MediaError>
            if message.kind != HelperMessage.Kind.decode.rawValue {
                outcome = .failure(MediaError(.decoderCrashed, "the decoder helper received a message of unknown type \(message.kind)"))
            } else if let request = try? requestDecoder.decode(DecodeRequest.self, from: Data(message.body)) {
                if message.descriptor < 0 {
                    outcome = .failure(MediaError(.unreadable, "\(request.label): no file came with the request"))
                } else {
                    outcome = decode(request, descriptor: message.descriptor, with: decoder)
                }
            } else {
                outcome = .failure(MediaError(.decoderCrashed, "the decoder helper received an unreadable request"))
            }
            if message.descriptor >= 0 { close(message.descriptor) }
            guard let body = try? HelperMessage.resultBody(WireResult(outcome), jpeg: WireResult.jpeg(of: outcome)),
                socket.send(HelperMessage.frame(.result, body))
            else { return 1 }
        }
    }

    private static func decode(_ request: DecodeRequest, descriptor: Int32, with decoder: InProcessDecoder) -> Result<DecodedMedia, MediaError> {
        shim_set_cpu_budget(ProcessIsolatedDecoder.budget(for: request))
        TestFault.planned(for: request)?.trigger()
        do {
            return .success(try decoder.decode(request, descriptor: descriptor))
        } catch {
            return .failure(error)
        }
    }
}
