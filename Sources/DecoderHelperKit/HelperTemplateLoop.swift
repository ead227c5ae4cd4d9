import DecoderIsolation
import Glibc
import SystemCalls

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
                    if let status = Processes.waitForExit(of: pid) {
                        withUnsafeBytes(of: status.littleEndian) { answer.append(contentsOf: $0) }
                    }
                }
                guard control.send(HelperMessage.frame(.reaped, answer)) else { return .finished(1) }
            default:
                return .finished(1)
            }
        }
    }
}
