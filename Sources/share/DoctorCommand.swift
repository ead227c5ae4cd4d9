import DecoderIsolation
import Foundation
import ShareIngestCore
import SystemCalls

/// `share doctor`: what this machine offers the decoder sandbox (seccomp
/// filters, the Landlock ABI, the confinement a helper gets without Landlock,
/// the unprivileged account helpers switch to when `share` runs as root), and
/// what a real helper actually gets, read from its /proc/PID/status. Exits 1
/// whenever the helper gets less than the strongest sandbox (Landlock and the
/// seccomp allowlist), and lists each shortfall; `--isolation process` itself
/// refuses to decode only where the helper is weaker than the machine allows,
/// or the machine offers no confinement at all.
enum DoctorCommand {
    static func run(_ arguments: ArraySlice<String>) -> ExitStatus {
        let parsed: Arguments
        switch Command.parse(arguments, CommandTable.doctor) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        var configuration = ProcessIsolatedDecoder.Configuration.besideThisExecutable
        configuration.prestartedHelpers = 0
        if let user = ProcessEnvironment.value(DecoderOption.userVariable), !user.isEmpty {
            configuration.helperUser = user
        }
        if let group = ProcessEnvironment.value(DecoderOption.groupVariable), !group.isEmpty {
            configuration.helperGroup = group
        }
        let decoder = ProcessIsolatedDecoder(configuration)
        defer { decoder.shutdown() }
        let root = Credentials.effectiveUserID == 0
        let report: SandboxReport
        do {
            report = try decoder.checkSandbox()
        } catch {
            return Command.failure(
                "no decoder helper could be checked (\(configuration.helperExecutable)): \(error.message)", .unavailable
            )
        }
        let account =
            root
            ? "root: helpers switch to \(report.helperAccount)"
                + (report.helperAccountFallback.map { " (\($0))" }
                    ?? (report.helperUIDOfTheirOwn ? "" : " (shared: its other processes can signal them)"))
            : "uid \(report.uid), not root: helpers keep this user"
        let weaker = report.weakerThanStrongest
        let units = ShareService.systemdUnits(
            landlockABI: report.landlockABI, unprivilegedNamespaces: report.unprivilegedNamespaces)
        if parsed.flag("json") {
            printJSON(report, account: account, units: units, helperExecutable: configuration.helperExecutable)
        } else {
            printText(report, account: account, units: units, helperExecutable: configuration.helperExecutable)
        }
        return weaker.isEmpty ? .success : .partial
    }

    /// `--json`: the machine, the account, the helper's sandbox and what it falls short of, as one object.
    private static func printJSON(
        _ report: SandboxReport, account: String, units: (dropIn: String?, advice: String), helperExecutable: String
    ) {
        Terminal.shared.out(
            JSONLine.object([
                "seccomp": report.seccompAvailable, "landlockABI": report.landlockABI,
                "confinement": name(report.confinement), "runningAs": account,
                "helperAccount": [
                    "uid": Int(report.uid), "gid": report.gid.map { Int($0) } ?? NSNull(),
                    "ofTheirOwn": report.helperUIDOfTheirOwn,
                    "fallback": report.helperAccountFallback ?? NSNull(),
                ] as [String: Any],
                "helper": [
                    "pid": Int(report.helperProcessID), "uid": Int(report.helper.uid),
                    "gid": Int(report.helper.gid),
                    "capEffective": hex(report.helper.capEffective), "capBounding": hex(report.helper.capBounding),
                    "noNewPrivs": report.helper.noNewPrivs, "seccomp": report.helper.seccompMode,
                    "policy": report.helper.seccompPolicy.rawValue,
                    "landlockABI": report.helper.landlockABI, "confinement": name(report.helper.confinement),
                    "addressSpaceLimit": Int(report.helper.addressSpaceLimit),
                    "cpuLimit": Int(report.helper.cpuLimit),
                ] as [String: Any],
                "helperExecutable": helperExecutable, "shortfalls": report.shortfalls,
                "weakerThanStrongest": report.weakerThanStrongest,
                "systemdUnits": ["dropIn": units.dropIn ?? NSNull(), "advice": units.advice] as [String: Any],
            ]))
    }

    /// The machine, then the helper's sandbox and what it falls short of, for people.
    private static func printText(
        _ report: SandboxReport, account: String, units: (dropIn: String?, advice: String), helperExecutable: String
    ) {
        let weaker = report.weakerThanStrongest
        Terminal.shared.out("This machine")
        Terminal.shared.out("  seccomp filters:  \(report.seccompAvailable ? "available" : "not available")")
        Terminal.shared.out(
            "  Landlock:         \(report.landlockABI > 0 ? "ABI \(report.landlockABI)" : "not available")")
        Terminal.shared.out("  confinement:      \(report.confinement)")
        Terminal.shared.out("  running as:       \(account)")
        Terminal.shared.out("  systemd units:    \(units.advice)")
        Terminal.shared.out("  helper executable: \(helperExecutable)")
        Terminal.shared.out(
            "A decoder helper (pid \(report.helperProcessID)), from its /proc/\(report.helperProcessID)/status")
        for line in report.statusLines { Terminal.shared.out("  \(line)") }
        Terminal.shared.out("  seccomp policy:   \(report.helper.seccompPolicy.rawValue)")
        Terminal.shared.out(
            "  confinement:      \(report.helper.confinement)\(report.helper.landlockABI > 0 ? " (ABI \(report.helper.landlockABI))" : "")"
        )
        Terminal.shared.out("  address space:    \(report.helper.addressSpaceLimit >> 20) MiB")
        Terminal.shared.out("  CPU time:         \(report.helper.cpuLimit) s in all (hard limit)")
        if weaker.isEmpty {
            Terminal.shared.out("The helper has the strongest sandbox: Landlock and the seccomp allowlist.")
        } else {
            if report.shortfalls.isEmpty {
                Terminal.shared.out(
                    "The helper's sandbox is as strong as this machine allows, but weaker than the strongest:")
            } else {
                Terminal.shared.out("WEAKER than this machine allows:")
            }
            for shortfall in weaker { Terminal.shared.out("  - \(shortfall)") }
        }
    }

    /// The confinement's name in `--json`.
    private static func name(_ confinement: Confinement) -> String {
        switch confinement {
        case .none: "none"
        case .emptyRoot: "empty-root"
        case .namespace: "namespace"
        case .landlock: "landlock"
        }
    }

    private static func hex(_ mask: UInt64) -> String {
        let digits = String(mask, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }
}
