import CShims
import DecoderIsolation
import Glibc
import MediaFormats
import SystemCalls

extension TestFault {
    /// Misbehaves (the forgeries act later, on the reply: ``forgery``). Only
    /// `alloc` (when there is no limit), `attack` and the forgeries return.
    func trigger(request: DecodeRequest, descriptor: FileDescriptor, attack: AttackTargets?) {
        switch self {
        case .segv, .segvThumbnail:
            shim_test_crash_segv()
        case .abort:
            Glibc.abort()
        case .loop:
            var counter: UInt64 = 0
            while counter != UInt64.max { counter = counter &+ TestFault.step() }
        case .alloc:
            // What a decoder asking for a 10 GB frame buffer does; never touched, so
            // without a limit it costs no real memory.
            let bytes = UnsafeMutableRawPointer.allocate(byteCount: 10 << 30, alignment: 64)
            bytes.deallocate()
        case .stall:
            while true { MonotonicClock.sleep(3600) }
        case .attack:
            let name = String(request.label.split(separator: "/").last ?? "")
            let only = name.hasPrefix("attack-") ? String(name.dropFirst("attack-".count).prefix { $0 != "." }) : nil
            attack?.run(input: descriptor, inputPath: request.path, only: only)
        case .forgeFacts, .forgeDuration, .forgeMIME, .forgeJPEG, .forgeSize, .forgeAspect, .forgeVideoRange,
            .forgeIdentifier, .forgeCompatible, .forgeLocation:
            break
        }
    }

}
