import CSystem
import Foundation
import SystemCalls

/// The decoder helper's sandbox, entered once its libraries and every library
/// module are loaded and before it receives any input, in this order:
///
/// - confinement without Landlock: where the kernel has no Landlock, a new
///   mount namespace (and user namespace, when not root) whose root holds only
///   ``readablePaths``, read-only; failing that, for root, chroot into an
///   empty, removed folder (``Confinement``);
/// - no privileges: started as root, it becomes an unprivileged user and group
///   (a uid and gid of their own unless configured: ``HelperAccount``), with no supplementary groups and
///   empty capability sets, bounding set included; started unprivileged, it
///   keeps its user and drops any capability;
/// - resource limits: CPU seconds in all (hard), address space (the memory
///   limit), open files, no file growth, no core dumps, not dumpable;
/// - no-new-privs;
/// - Landlock: no file-system writes at all, and reads only beneath
///   ``readablePaths`` (libraries, their data and configuration); TCP bind and
///   connect refused; signals and abstract Unix sockets scoped to the helper;
/// - seccomp-bpf: an allowlist of the calls the decoders make (see
///   `shim_sandbox.h` and the table in docs/security.md); anything else kills the helper,
///   which first tells its parent the call's name.
///
/// The input arrives as an open read-only descriptor, which none of this affects.
///
/// Where the kernel lacks seccomp (or under valgrind, which knows neither it
/// nor Landlock) that step is skipped, and the helper's report
/// (``SandboxStatus``) says so; the parent then accepts it only if this
/// machine cannot do better either (``SandboxRequirement``).
package enum Sandbox {
    /// What the decoding libraries may still read once locked down: shared
    /// libraries and their data (`/usr`: codecs, poppler's data, fonts), font and
    /// ImageMagick configuration, the dynamic linker's cache, the time zone, of
    /// this process's own `/proc` entry only ``procSelfFiles``, the CPU count,
    /// glibc malloc's overcommit setting, and the null and random devices.
    /// Nothing of the user's, nor the host's network and mount tables (which
    /// `/proc/self/net` and `/proc/self/mountinfo` show). (liborc also tries to
    /// create executable scratch files in $HOME or /tmp; refused, its code is
    /// not run: see docs/security.md.)
    package static let readablePaths =
        [
            "/usr", "/etc/fonts", "/etc/ImageMagick-6", "/etc/ImageMagick-7", "/var/cache/fontconfig",
            "/etc/ld.so.cache",
            "/etc/localtime", "/proc/sys/vm/overcommit_memory", "/sys/devices/system/cpu", "/dev/null", "/dev/urandom",
        ] + procSelfFiles

    /// The files of its own `/proc` entry a sandboxed helper reads, as
    /// scripts/record-helper-syscalls.sh lists them over every fixture: its
    /// `status`, which it reads to report its sandbox (``SandboxStatus``). (The
    /// libraries' `readlink` of `/proc/self/exe` needs no grant: Landlock does
    /// not govern `readlink`.) Granted file by file, never the folder.
    package static let procSelfFiles = ["/proc/self/status"]

    /// Open files a helper may hold (libraries keep a few; one input at a time).
    package static let openFileLimit: UInt64 = 128

    /// What a helper confined by a namespace or an empty root can read: the
    /// same, but no `/proc` (its own entry would bring every other process's).
    package static var namespacePaths: [String] { readablePaths.filter { !$0.hasPrefix("/proc/") } }

    /// The environment variable that puts the seccomp policy in recording mode
    /// (every refusal allows instead) for scripts/record-helper-syscalls.sh,
    /// which runs `share` under strace. Set for the parent; it reaches the
    /// helpers, and the parent then accepts their recording policy (and only
    /// then). Debug builds only: a release build ignores it.
    package static let recordingVariable = "SHARE_SANDBOX_RECORD"

    /// Whether this process was asked for the recording policy (never in a release build).
    package static var recordingRequested: Bool {
        #if DEBUG
            ProcessEnvironment.value(recordingVariable) == "1"
        #else
            false
        #endif
    }

    /// Debug builds only: `SHARE_TEST_NO_LANDLOCK=1` makes the sandbox shim
    /// see a kernel without Landlock (in the parent and its helpers), and
    /// `SHARE_TEST_NO_NAMESPACES=1` one where no namespace can be made, so that
    /// the fallbacks are tested on a machine that has both.
    package static let noLandlockVariable = "SHARE_TEST_NO_LANDLOCK"
    package static let noNamespacesVariable = "SHARE_TEST_NO_NAMESPACES"

    /// Whether namespaces are hidden for a test (never in a release build).
    package static var namespacesHidden: Bool {
        #if DEBUG
            ProcessEnvironment.value(noNamespacesVariable) == "1"
        #else
            false
        #endif
    }

    /// The strongest confinement this machine offers a helper of this process.
    package static func confinementAvailable() -> Confinement {
        let found = Confinement(rawValue: Int(shim_confinement_available())) ?? .none
        if found == .namespace, namespacesHidden { return Credentials.effectiveUserID == 0 ? .emptyRoot : .none }
        return found
    }

    /// Enters the sandbox. `account` holds the user and group ids to switch to
    /// when started as root (ignored otherwise: the helper keeps its user);
    /// `parent`, when > 0, is the process whose death must kill this one (see
    /// `shim_drop_privileges`); `cpuLimit` the CPU seconds it may use in all
    /// (0: none); `socket` the descriptor a forbidden call is reported on.
    package static func enter(
        addressSpaceLimit: UInt64, cpuLimit: UInt64, account: (uid: uid_t, gid: gid_t)?, parent: pid_t, recording: Bool,
        socket: Int32
    ) throws(SandboxError) -> SandboxStatus {
        let skipped = TestFault.skippedSandboxSteps
        let root = Credentials.effectiveUserID == 0
        guard !root || account != nil else {
            throw SandboxError("dropping privileges (started as root without an account to switch to)", EINVAL)
        }
        let uid = root ? account!.uid : Credentials.effectiveUserID
        let gid = root ? account!.gid : Credentials.effectiveGroupID
        // Where Landlock is missing, the next confinement the machine offers
        // (while this process may still mount and chroot: before the privileges go).
        let landlock = !skipped.contains("landlock") && shim_landlock_abi() > 0
        var confinement = Confinement.none
        if !landlock, !skipped.contains("confinement") {
            let paths = namespacePaths
            if !namespacesHidden, withCStrings(paths, { shim_confine_in_namespace($0, Int32(paths.count)) }) == 0 {
                confinement = .namespace
            } else if root, shim_confine_in_empty_folder() == 0 {
                confinement = .emptyRoot
            }
        }
        if !skipped.contains("privileges") {
            guard shim_drop_privileges(uid, gid, parent) == 0 else { throw SandboxError("dropping privileges", errno) }
        }
        guard shim_sandbox_limits(addressSpaceLimit, openFileLimit, skipped.contains("cpu") ? 0 : cpuLimit) == 0 else {
            throw SandboxError("resource limits", errno)
        }
        // With a file-size limit of 0, a write to a file (a kept stderr that is
        // one) fails with EFBIG instead of killing the helper.
        SignalSet.ignore(SIGXFSZ)
        guard shim_sandbox_no_new_privs() == 0 else { throw SandboxError("no-new-privs", errno) }
        var abi: Int32 = 0
        if landlock {
            abi = withCStrings(readablePaths) { shim_landlock_restrict_to_reading($0, Int32(readablePaths.count)) }
            guard abi >= 0 else { throw SandboxError("Landlock", errno) }
            if abi > 0 { confinement = .landlock }
        }
        // A kernel without seccomp (or valgrind, which does not know the call)
        // answers ENOSYS or EINVAL: the helper runs with what the kernel offers,
        // and its report says so.
        var policy = SandboxStatus.Policy.allowlist
        if skipped.contains("seccomp") {
            policy = .none
        } else if shim_sandbox_seccomp(recording ? 1 : 0, socket) != 0 {
            guard errno == ENOSYS || errno == EINVAL else { throw SandboxError("seccomp", errno) }
            policy = .none
        } else if recording {
            policy = .recording
        }
        // (No /proc in a namespace or an empty root: the parent reads the kernel's fields itself.)
        var status = SandboxStatus.read(pid: nil) ?? SandboxStatus()
        status.seccompPolicy = policy
        status.landlockABI = Int(abi)
        status.confinement = confinement
        status.addressSpaceLimit = addressSpaceLimit
        status.cpuLimit = cpuLimit
        return status
    }

    private static func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
        let copies = strings.map { UnsafePointer(strdup($0)) }
        defer { for copy in copies { free(UnsafeMutablePointer(mutating: copy)) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// The unprivileged account a helper started as root switches to.
///
/// By default a uid (and a gid of the same number) of their own: one that no
/// account, no subordinate range and no running process uses, taken from
/// ``reservedRange`` and held by this process for its life (an abstract Unix
/// socket name per uid, which the kernel lets go when the process ends), so
/// that no other process runs as the helpers' user and none can signal, trace
/// or read them (`nobody`'s processes could: issue 58). A named account
/// (`SHARE_HELPER_USER`, e.g. `nobody`) is used as it is; where every uid of
/// the range is taken, the helpers fall back to `nobody` and `nogroup`, and
/// ``fallback`` says why (`share doctor` prints it).
package struct HelperAccount: Sendable, Equatable, CustomStringConvertible {
    package var userName: String
    package var groupName: String
    package var uid: uid_t
    package var gid: gid_t
    /// True for a uid of their own from ``reservedRange``.
    package var ownUID = false
    /// Why the helpers run as a shared account though none was named.
    package var fallback: String?

    /// Where helpers' own uids come from: 65536 ids above systemd's container
    /// range (524288–1879048191) and below its foreign range (2147352576–)
    /// in the part of the 32-bit space that systemd's "Users, Groups, UIDs and
    /// GIDs" leaves unused, and that Debian's adduser never allocates from.
    package static let reservedRange: ClosedRange<UInt32> = 0x7E00_0000...0x7E00_FFFF

    /// Looks `user` and `group` up in the system's databases (here, in the
    /// parent: a sandboxed helper cannot read them); an empty `user` asks for
    /// a uid of their own (``ofTheirOwn()``). A missing group named `nogroup`
    /// falls back to the user's own group (distributions without it name it
    /// `nobody`). Throws a message naming what is missing.
    package static func resolve(user: String, group: String) throws(ConfigurationError) -> HelperAccount {
        if user.isEmpty {
            if let own = ofTheirOwn() { return own }
            var shared = try resolve(
                user: ProcessIsolatedDecoder.Configuration.sharedHelperUser,
                group: ProcessIsolatedDecoder.Configuration.defaultHelperGroup)
            shared.fallback =
                "every uid of \(reservedRange.lowerBound)–\(reservedRange.upperBound) is taken (an account, a subordinate range or a process has it): "
                + "the helpers run as \(shared.userName), whose other processes could signal them"
            return shared
        }
        guard let account = Credentials.user(named: user) else {
            throw ConfigurationError(
                "the decoder helpers' user \"\(user)\" does not exist on this system; name another one with SHARE_HELPER_USER"
            )
        }
        let gid: gid_t
        if let found = Credentials.group(named: group) {
            gid = found
        } else if group == ProcessIsolatedDecoder.Configuration.defaultHelperGroup {
            gid = account.gid
        } else {
            throw ConfigurationError(
                "the decoder helpers' group \"\(group)\" does not exist on this system; name another one with SHARE_HELPER_GROUP"
            )
        }
        guard account.uid != 0, gid != 0 else {
            throw ConfigurationError(
                "the decoder helpers' user and group must not be root (\(user) is uid \(account.uid), \(group) is gid \(gid))"
            )
        }
        return HelperAccount(userName: user, groupName: group, uid: account.uid, gid: gid)
    }

    /// The first uid of ``reservedRange``, from a place that depends on this
    /// process's id, that is no user's or group's in the databases, in no
    /// subordinate range, held by no running process and not claimed by
    /// another `share` (``AbstractNameLock``); claimed for this process's
    /// life. Nil when there is none.
    package static func ofTheirOwn() -> HelperAccount? {
        let busy = AccountIDs.inUseByProcesses()
        let subordinate = AccountIDs.subordinateRanges()
        let count = UInt32(reservedRange.count)
        let start = UInt32(truncatingIfNeeded: Processes.current) % count
        for step in 0..<count {
            let id = reservedRange.lowerBound + (start + step) % count
            guard !busy.contains(id), !subordinate.contains(where: { $0.contains(UInt64(id)) }),
                !AccountIDs.userExists(id), !AccountIDs.groupExists(id)
            else { continue }
            guard AbstractNameLock.hold("share-ingest/helper-uid/\(id)") else { continue }
            return HelperAccount(userName: "", groupName: "", uid: id, gid: id, ownUID: true)
        }
        return nil
    }

    package var description: String {
        if ownUID { return "uid \(uid) and gid \(gid) of their own (no account, no other process)" }
        return "\(userName) (uid \(uid)), group \(groupName) (gid \(gid))"
    }
}

/// A configuration that cannot work (a missing user), with the message people read.
package struct ConfigurationError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// What the sandbox of a process holds: its credentials and kernel
/// restrictions as /proc/PID/status shows them, plus what only the helper
/// itself knows (the Landlock ABI it restricted itself with, the seccomp policy
/// it installed, its address-space limit).
public struct SandboxStatus: Codable, Sendable, Equatable {
    /// Nothing known (every field at its default).
    package init() {}

    /// Which seccomp program the helper installed.
    public enum Policy: String, Codable, Sendable {
        /// The allowlist: what is not listed fails.
        case allowlist
        /// The allowlist in recording mode: everything is allowed (strace records it).
        case recording
        /// None (the kernel has no seccomp, or valgrind).
        case none
    }

    /// What confines the helper's view of the file system.
    public internal(set) var confinement = Confinement.none
    /// Its CPU seconds in all (the hard `RLIMIT_CPU`; 0: none).
    public internal(set) var cpuLimit: UInt64 = 0

    /// Real, effective, saved and file-system user ids (`Uid:`).
    public internal(set) var uids: [UInt32] = []
    /// The same for groups (`Gid:`).
    public internal(set) var gids: [UInt32] = []
    /// Supplementary groups (`Groups:`).
    public internal(set) var groups: [UInt32] = []
    /// The inheritable capability set (`CapInh`), as a mask.
    public internal(set) var capInheritable: UInt64 = 0
    /// The permitted capability set (`CapPrm`).
    public internal(set) var capPermitted: UInt64 = 0
    /// The effective capability set (`CapEff`).
    public internal(set) var capEffective: UInt64 = 0
    /// The capability bounding set (`CapBnd`).
    public internal(set) var capBounding: UInt64 = 0
    /// The ambient capability set (`CapAmb`).
    public internal(set) var capAmbient: UInt64 = 0
    /// `NoNewPrivs: 1`.
    public internal(set) var noNewPrivs = false
    /// `Seccomp:` 0 (none), 1 (strict) or 2 (filter).
    public internal(set) var seccompMode = 0
    /// The seccomp program (reported by the helper).
    public internal(set) var seccompPolicy = Policy.none
    /// The Landlock ABI the helper restricted itself with (0: none).
    public internal(set) var landlockABI = 0
    /// The address-space limit in bytes (0: none).
    public internal(set) var addressSpaceLimit: UInt64 = 0

    /// The effective user id.
    public var uid: UInt32 { uids.count > 1 ? uids[1] : UInt32.max }
    /// The effective group id.
    public var gid: UInt32 { gids.count > 1 ? gids[1] : UInt32.max }

    /// The lines of /proc/PID/status this is read from, as the kernel names them.
    package static let statusFields = [
        "Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp",
    ]

    /// The /proc/PID/status lines it was read from, in the kernel's order.
    package var statusLines: [String] = []

    /// Reads /proc/PID/status (`pid` nil: this process's); nil when it cannot
    /// be read (the process is gone). The helper-only fields stay at their defaults.
    package static func read(pid: pid_t?) -> SandboxStatus? {
        guard let (lines, ordered) = readStatusFields(pid: pid) else { return nil }
        var status = SandboxStatus()
        status.statusLines = ordered
        func numbers(_ name: String) -> [UInt32] {
            (lines[name] ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) }
        }
        func mask(_ name: String) -> UInt64 { UInt64(lines[name] ?? "", radix: 16) ?? UInt64.max }
        status.uids = numbers("Uid")
        status.gids = numbers("Gid")
        status.groups = numbers("Groups")
        status.capInheritable = mask("CapInh")
        status.capPermitted = mask("CapPrm")
        status.capEffective = mask("CapEff")
        status.capBounding = mask("CapBnd")
        status.capAmbient = mask("CapAmb")
        status.noNewPrivs = lines["NoNewPrivs"] == "1"
        status.seccompMode = Int(lines["Seccomp"] ?? "") ?? 0
        return status
    }

    /// The fields of /proc/PID/status named in ``statusFields``: by name (values
    /// trimmed), and the whole lines in order.
    package static func readStatusFields(pid: pid_t?) -> ([String: String], [String])? {
        let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
        guard let bytes = try? FileSystem.readWholeFile(path) else { return nil }
        var lines: [String: String] = [:]
        var ordered: [String] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            guard statusFields.contains(name) else { continue }
            lines[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            ordered.append(String(line))
        }
        return (lines, ordered)
    }

    /// `CapEff` and friends as /proc prints them (16 hex digits).
    package static func hex(_ mask: UInt64) -> String {
        let digits = String(mask, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }
}

/// What confines a helper's view of the file system, weakest first.
public enum Confinement: Int, Codable, Sendable, Comparable, CustomStringConvertible {
    /// Nothing: it sees what its user may see.
    case none = 0
    /// chroot into an empty, removed folder (root without Landlock or
    /// namespaces): nothing to read, not even the libraries' configuration.
    case emptyRoot = 1
    /// A mount (and user) namespace whose root holds only the libraries'
    /// paths, read-only.
    case namespace = 2
    /// Landlock: reads only beneath the libraries' paths, no writes.
    case landlock = 3

    /// The confinement in words (what `share doctor` prints).
    public var description: String {
        switch self {
        case .none: "none"
        case .emptyRoot: "chroot into an empty folder"
        case .namespace: "a user and mount namespace with a read-only root of its own"
        case .landlock: "Landlock"
        }
    }

    /// Weaker first.
    public static func < (lhs: Confinement, rhs: Confinement) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The sandbox this machine lets a helper have, which every helper's must
/// match: the parent refuses to decode in a weaker one (``shortfalls(of:)``).
package struct SandboxRequirement: Sendable, Equatable {
    /// Seccomp filters are available: the helper must run the allowlist (mode 2).
    package var seccomp: Bool
    /// The Landlock ABI the kernel offers (0: none); the helper must use it.
    package var landlockABI: Int
    /// The account a helper must run as: the unprivileged one when the parent
    /// is root, else the parent's own user.
    package var uid: uid_t
    package var gid: gid_t?
    /// Whether the bounding set must be empty (the parent could empty it:
    /// it is root, or holds CAP_SETPCAP).
    package var emptyBoundingSet: Bool
    /// The recording policy is accepted (the parent itself runs with ``Sandbox/recordingVariable``).
    package var recording: Bool
    /// The address-space limit the helper was asked for.
    package var addressSpaceLimit: UInt64
    /// The strongest confinement this machine offers (the helper must have it).
    package var confinement = Confinement.landlock
    /// The CPU limit the helper was asked for.
    package var cpuLimit: UInt64 = 0
    /// Decoding goes on without any confinement (`--isolation process-weaker`):
    /// only where the machine offers none.
    package var acceptsNoConfinement = false

    /// What this machine allows, for helpers of `account` (nil when this
    /// process is not root) with `addressSpaceLimit`.
    package static func thisMachine(
        account: HelperAccount?, addressSpaceLimit: UInt64, cpuLimit: UInt64 = 0, acceptsNoConfinement: Bool = false
    ) -> SandboxRequirement {
        let root = Credentials.effectiveUserID == 0
        let setpcap: UInt64 = 1 << 8  // CAP_SETPCAP
        return SandboxRequirement(
            seccomp: shim_seccomp_filter_available() == 1, landlockABI: Int(shim_landlock_abi()),
            uid: account?.uid ?? Credentials.effectiveUserID, gid: account?.gid,
            emptyBoundingSet: root || Credentials.effectiveCapabilities & setpcap != 0,
            recording: Sandbox.recordingRequested, addressSpaceLimit: addressSpaceLimit,
            confinement: Sandbox.confinementAvailable(), cpuLimit: cpuLimit,
            acceptsNoConfinement: acceptsNoConfinement)
    }

    /// Why this machine offers no confinement, and how to go on knowingly.
    package static let noConfinementMessage =
        "this machine offers a helper no file-system confinement: the kernel has no Landlock (or refuses its calls), "
        + "no user and mount namespace can be made (unprivileged user namespaces are off, or the container runtime refuses them), "
        + "and share does not run as root (which could chroot its helpers); a taken-over helper could read every file its user can. "
        + "Run share as root, allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0), "
        + "or accept the weaker sandbox knowingly with --isolation process-weaker"

    /// Each way `status` is weaker than this requirement, as a phrase naming
    /// what was found and what was expected; empty when it is not weaker.
    package func shortfalls(of status: SandboxStatus) -> [String] {
        var found: [String] = []
        if status.uids.count < 4 || !status.uids.allSatisfy({ $0 == uid }) {
            found.append("user ids \(status.uids.map(String.init).joined(separator: " ")) (expected \(uid))")
        }
        if status.uids.contains(0) && uid != 0 { found.append("it runs as root") }
        if let gid, status.gids.count < 4 || !status.gids.allSatisfy({ $0 == gid }) {
            found.append("group ids \(status.gids.map(String.init).joined(separator: " ")) (expected \(gid))")
        }
        if gid != nil, !status.groups.isEmpty {
            found.append(
                "supplementary groups \(status.groups.map(String.init).joined(separator: " ")) (expected none)")
        }
        let capabilities = [
            ("CapEff", status.capEffective), ("CapPrm", status.capPermitted), ("CapInh", status.capInheritable),
            ("CapAmb", status.capAmbient),
        ]
        for (name, mask) in capabilities where mask != 0 {
            found.append("\(name) \(SandboxStatus.hex(mask)) (expected 0)")
        }
        if emptyBoundingSet, status.capBounding != 0 {
            found.append("CapBnd \(SandboxStatus.hex(status.capBounding)) (expected 0)")
        }
        if !status.noNewPrivs { found.append("NoNewPrivs 0 (expected 1)") }
        if seccomp {
            let acceptable: [SandboxStatus.Policy] = recording ? [.allowlist, .recording] : [.allowlist]
            if status.seccompMode != 2 || !acceptable.contains(status.seccompPolicy) {
                found.append(
                    "seccomp mode \(status.seccompMode) with the \(status.seccompPolicy.rawValue) policy (expected 2 with the allowlist)"
                )
            }
        }
        if status.landlockABI < landlockABI {
            found.append("Landlock ABI \(status.landlockABI) (this machine offers \(landlockABI))")
        }
        if confinement == .none, !acceptsNoConfinement {
            found.append(Self.noConfinementMessage)
        } else if status.confinement < confinement {
            found.append("confinement: \(status.confinement) (this machine offers \(confinement))")
        }
        if status.cpuLimit != cpuLimit { found.append("a CPU limit of \(status.cpuLimit) s (expected \(cpuLimit))") }
        if status.addressSpaceLimit != addressSpaceLimit {
            found.append("an address-space limit of \(status.addressSpaceLimit) bytes (expected \(addressSpaceLimit))")
        }
        return found
    }
}

/// A step of the sandbox that failed.
package struct SandboxError: Error, CustomStringConvertible {
    package let step: String
    package let code: Int32
    package init(_ step: String, _ code: Int32) {
        self.step = step
        self.code = code
    }
    package var description: String { "\(step): \(SystemError.message(for: code))" }
}
