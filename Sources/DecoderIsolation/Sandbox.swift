import CShims
import CSystem
import Foundation
import Glibc

/// The decoder helper's sandbox, entered once its libraries and their modules
/// are loaded and before it receives any input:
///
/// - resource limits: address space (the memory limit), open files, no file
///   growth, no core dumps, not dumpable (no ptrace by others);
/// - no-new-privs;
/// - Landlock: no file-system writes at all, and reads only beneath
///   ``readablePaths`` (libraries, their data and configuration); TCP bind and
///   connect refused; signals and abstract Unix sockets scoped to the helper;
/// - seccomp-bpf: no sockets, exec, new processes, ptrace, process_vm_*, mounts,
///   namespaces, kernel modules, BPF, io_uring, keyrings, signals to others, and
///   no opening files for writing (see `shim_sandbox.h`).
///
/// The input arrives as an open read-only descriptor, which none of this affects.
///
/// What the kernel lacks is skipped (Landlock before Linux 5.13, seccomp where
/// not built in; valgrind knows neither): the helper then runs with process
/// separation and its limits, and reports what it has (``SandboxStatus``).
enum Sandbox {
    /// What the decoding libraries may still read once locked down: shared
    /// libraries and their data (`/usr`: codecs, libvips modules, ImageMagick's
    /// coders, poppler's data, fonts), font and ImageMagick configuration, the
    /// dynamic linker's cache, the time zone, this process's own `/proc` entry, the
    /// CPU count, glibc malloc's overcommit setting, and the null and random
    /// devices. Nothing of the user's. (liborc also tries to create executable
    /// scratch files in $HOME or /tmp; refused, it maps anonymous memory instead.)
    static let readablePaths = [
        "/usr", "/etc/fonts", "/etc/ImageMagick-6", "/etc/ImageMagick-7", "/var/cache/fontconfig", "/etc/ld.so.cache",
        "/etc/localtime", "/proc/self", "/proc/sys/vm/overcommit_memory", "/sys/devices/system/cpu", "/dev/null", "/dev/urandom",
    ]

    /// Open files a helper may hold (libraries keep a few; one input at a time).
    static let openFileLimit: UInt64 = 128

    /// Enters the sandbox with `addressSpaceLimit` bytes of address space (0: none).
    static func enter(addressSpaceLimit: UInt64) throws(SandboxError) -> SandboxStatus {
        guard shim_sandbox_limits(addressSpaceLimit, openFileLimit) == 0 else { throw SandboxError("resource limits", errno) }
        guard shim_sandbox_no_new_privs() == 0 else { throw SandboxError("no-new-privs", errno) }
        let abi = withCStrings(readablePaths) { shim_landlock_restrict_to_reading($0, Int32(readablePaths.count)) }
        guard abi >= 0 else { throw SandboxError("Landlock", errno) }
        // A kernel without seccomp (or valgrind, which does not know the call)
        // answers ENOSYS: the helper runs with what the kernel offers, as without
        // Landlock, and its ready message says so.
        guard shim_sandbox_seccomp() == 0 || errno == ENOSYS else { throw SandboxError("seccomp", errno) }
        return SandboxStatus.current(landlockABI: Int(abi), addressSpaceLimit: addressSpaceLimit)
    }

    private static func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
        let copies = strings.map { UnsafePointer(strdup($0)) }
        defer { copies.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// What the sandbox of a helper holds, as the helper reads it back.
struct SandboxStatus: Codable, Sendable, Equatable {
    /// `NoNewPrivs: 1` in /proc/self/status.
    var noNewPrivs: Bool
    /// `Seccomp: 2` (filter mode) in /proc/self/status.
    var seccompFilter: Bool
    /// The Landlock ABI the helper restricted itself with (0: none, the kernel has no Landlock).
    var landlockABI: Int
    /// The address-space limit in bytes (0: none).
    var addressSpaceLimit: UInt64

    /// Reads /proc/self/status.
    static func current(landlockABI: Int, addressSpaceLimit: UInt64) -> SandboxStatus {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> String? {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }.map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
        }
        return SandboxStatus(
            noNewPrivs: field("NoNewPrivs") == "1", seccompFilter: field("Seccomp") == "2", landlockABI: landlockABI,
            addressSpaceLimit: addressSpaceLimit)
    }
}

/// A step of the sandbox that failed.
struct SandboxError: Error, CustomStringConvertible {
    let step: String
    let code: Int32
    init(_ step: String, _ code: Int32) {
        self.step = step
        self.code = code
    }
    var description: String { "\(step): \(String(cString: strerror(code)))" }
}
