import CShims
import CSystem
import Foundation
import Glibc
import MediaFormats

/// A test-only hook: `SHARE_TEST_HELPER_FAULT=segv:NAME,abort:NAME,loop:NAME,alloc:NAME`
/// makes a helper misbehave on the item whose file name is NAME, after it is
/// sandboxed and before it decodes: a write through a null pointer (SIGSEGV),
/// `abort()`, an endless busy loop, or a 10 GB allocation. It proves that each
/// fails that one item with the right reason while the batch goes on.
/// `segv-thumbnail:NAME` crashes only while a thumbnail is asked for (a poster
/// that kills the decoder). Unset, it costs one dictionary lookup per item.
enum TestFault: String {
    case segv, abort, loop, alloc
    case segvThumbnail = "segv-thumbnail"

    /// The environment variable.
    static let variable = "SHARE_TEST_HELPER_FAULT"

    /// Faults by file name, from the environment.
    static let planned: [String: TestFault] = {
        guard let text = ProcessInfo.processInfo.environment[variable], !text.isEmpty else { return [:] }
        var faults: [String: TestFault] = [:]
        for entry in text.split(separator: ",") {
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let fault = TestFault(rawValue: String(parts[0])) else { continue }
            faults[String(parts[1])] = fault
        }
        return faults
    }()

    /// The fault planned for `request` (matched on the last path component of its label).
    static func planned(for request: DecodeRequest) -> TestFault? {
        guard !planned.isEmpty, let fault = planned[String(request.label.split(separator: "/").last ?? Substring(request.label))] else { return nil }
        return fault == .segvThumbnail && request.thumbnail == nil ? nil : fault
    }

    /// Misbehaves. Only `alloc` can return (when the allocation is allowed, i.e. there is no limit).
    func trigger() {
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
        }
    }

    /// Opaque to the optimiser, so the loop is not removed.
    @inline(never) static func step() -> UInt64 { UInt64(getpid() & 1) | 0 }
}
