import Foundation
import Glibc
import MediaFormats
import TestSupport
import Testing

@testable import DecoderIsolation

/// The helper's sandbox looked at from the outside (/proc), what it loaded
/// before locking down, and the parent's refusal of a weaker one.
@Suite struct SandboxTests {
    static func decoder() -> ProcessIsolatedDecoder {
        var configuration = ProcessIsolatedDecoder.Configuration(helperExecutable: Fixtures.helperBinary)
        configuration.prestartedHelpers = 1
        return ProcessIsolatedDecoder(configuration)
    }

    /// A helper that has decoded a photo shows its sandbox in /proc/PID/status:
    /// no-new-privs and the seccomp filter; under root an unprivileged user and
    /// no capability at all, else this process's user. The parent's own check
    /// finds nothing weaker than this machine allows.
    @Test func runningHelperShowsItsSandbox() throws {
        let decoder = Self.decoder()
        defer { decoder.shutdown() }
        decoder.prepare()
        let report = try decoder.checkSandbox()
        #expect(report.shortfalls.isEmpty, "\(report.shortfalls)")
        let decoded = try decoder.decode(
            DecodeRequest(
                path: Fixtures.media("photo.jpg"), label: "photo.jpg", format: .jpeg, thumbnail: ThumbnailSpec()))
        guard case .made(let thumbnail) = decoded.thumbnail else {
            Issue.record("no thumbnail: \(String(describing: decoded.thumbnail))")
            return
        }
        #expect(thumbnail.width == 360 && thumbnail.height == 270)
        let helpers = decoder.helperProcessIDs
        #expect(helpers.count == 1)
        for pid in helpers {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            #expect(status.contains("NoNewPrivs:\t1"), "\(status)")
            #expect(status.contains("Seccomp:\t2"), "\(status)")
            // As root, a uid of their own (issue 58): of the reserved range, and the same four times.
            let line = status.split(separator: "\n").first { $0.hasPrefix("Uid:") } ?? ""
            let uid =
                geteuid() == 0
                ? (line.split(separator: "\t").dropFirst().first.flatMap { Int($0) } ?? 0) : Int(geteuid())
            if geteuid() == 0 { #expect((0x7E00_0000...0x7E00_FFFF).contains(uid), "\(status)") }
            #expect(status.contains("Uid:\t\(uid)\t\(uid)\t\(uid)\t\(uid)"), "\(status)")
            #expect(
                status.contains("CapEff:\t0000000000000000") && status.contains("CapPrm:\t0000000000000000"),
                "\(status)")
            if geteuid() == 0 { #expect(status.contains("CapBnd:\t0000000000000000"), "\(status)") }
        }
    }

    /// Every library module a helper may need is loaded before its policy
    /// forbids mapping code: an ordinary helper has glibc's character-set
    /// converters for MPEG-TS names and no libvips module; the helper that
    /// decodes a PDF has poppler's and libjxl's; ImageMagick, and the modules no
    /// route uses, are in neither.
    @Test(.enabled(if: geteuid() == 0, "reads another user's /proc/PID/maps, which needs root"))
    func helpersLoadTheirModulesBeforeTheirSandbox() throws {
        let decoder = Self.decoder()
        defer { decoder.shutdown() }
        decoder.prepare()
        _ = try decoder.checkSandbox()
        let helper = try #require(decoder.helperProcessIDs.first)
        let maps = String(decoding: ProcessTree.read("/proc/\(helper)/maps"), as: UTF8.self)
        for module in ["gconv/ISO_6937.so", "gconv/ISO8859-2.so", "gconv/EUC-CN.so"] {
            #expect(maps.contains(module), "\(module) is not loaded in helper \(helper)")
        }
        for module in ["vips-poppler.so", "vips-jxl.so", "vips-magick.so", "vips-heif.so", "vips-openslide.so"] {
            #expect(!maps.contains(module), "\(module) is loaded in an ordinary helper")
        }
        let pdf = DecodeRequest(
            path: Fixtures.media("document.pdf"), label: "document.pdf", format: .pdf, thumbnail: ThumbnailSpec(),
            batch: "pdf")
        guard case .made = try decoder.decode(pdf).thumbnail else {
            Issue.record("the PDF got no thumbnail")
            return
        }
        let documents = try #require(decoder.helperBatches.first { $0.value == "pdf" }?.key)
        let documentMaps = String(decoding: ProcessTree.read("/proc/\(documents)/maps"), as: UTF8.self)
        for module in ["vips-poppler.so", "vips-jxl.so"] {
            #expect(documentMaps.contains(module), "\(module) is not loaded in helper \(documents)")
        }
        for module in ["vips-magick.so", "vips-heif.so", "vips-openslide.so"] {
            #expect(!documentMaps.contains(module), "\(module) is loaded")
        }
    }

    /// What the parent requires of a helper, on the statuses a helper could
    /// report: each shortfall is named with what was found and what was expected.
    @Test func requirementNamesEachShortfall() {
        let requirement = SandboxRequirement(
            seccomp: true, landlockABI: 7, uid: 65534, gid: 65534, emptyBoundingSet: true, recording: false,
            addressSpaceLimit: 4 << 30)
        var good = SandboxStatus()
        good.uids = [65534, 65534, 65534, 65534]
        good.gids = [65534, 65534, 65534, 65534]
        good.noNewPrivs = true
        good.seccompMode = 2
        good.seccompPolicy = .allowlist
        good.landlockABI = 7
        good.addressSpaceLimit = 4 << 30
        good.confinement = .landlock
        #expect(requirement.shortfalls(of: good).isEmpty)

        let cases: [(String, (inout SandboxStatus) -> Void, String)] = [
            ("root", { $0.uids = [0, 0, 0, 0] }, "it runs as root"),
            ("saved uid", { $0.uids = [65534, 65534, 0, 65534] }, "user ids 65534 65534 0 65534 (expected 65534)"),
            ("group", { $0.gids = [0, 0, 0, 0] }, "group ids 0 0 0 0 (expected 65534)"),
            ("supplementary groups", { $0.groups = [27] }, "supplementary groups 27 (expected none)"),
            ("effective capabilities", { $0.capEffective = 0x1ff_feff_ffff }, "CapEff 000001fffeffffff (expected 0)"),
            ("bounding set", { $0.capBounding = 1 << 21 }, "CapBnd 0000000000200000 (expected 0)"),
            ("ambient set", { $0.capAmbient = 1 }, "CapAmb 0000000000000001 (expected 0)"),
            ("no-new-privs", { $0.noNewPrivs = false }, "NoNewPrivs 0 (expected 1)"),
            (
                "no seccomp",
                {
                    $0.seccompMode = 0
                    $0.seccompPolicy = .none
                }, "seccomp mode 0 with the none policy (expected 2 with the allowlist)"
            ),
            (
                "recording policy", { $0.seccompPolicy = .recording },
                "seccomp mode 2 with the recording policy (expected 2 with the allowlist)"
            ),
            ("older Landlock", { $0.landlockABI = 3 }, "Landlock ABI 3 (this machine offers 7)"),
            (
                "no memory limit", { $0.addressSpaceLimit = 0 },
                "an address-space limit of 0 bytes (expected 4294967296)"
            ),
            ("no confinement", { $0.confinement = .none }, "confinement: none (this machine offers Landlock)"),
            ("no CPU limit", { $0.cpuLimit = 7 }, "a CPU limit of 7 s (expected 0)"),
        ]
        for (name, weaken, expected) in cases {
            var status = good
            weaken(&status)
            #expect(
                requirement.shortfalls(of: status).contains(expected), "\(name): \(requirement.shortfalls(of: status))")
        }
        // An unprivileged parent: its helpers keep its user, and its bounding set
        // (which it cannot empty) is not held against them.
        let unprivileged = SandboxRequirement(
            seccomp: true, landlockABI: 7, uid: 1000, gid: nil, emptyBoundingSet: false, recording: false,
            addressSpaceLimit: 4 << 30)
        var ownUser = good
        ownUser.uids = [1000, 1000, 1000, 1000]
        ownUser.gids = [1000, 1000, 1000, 1000]
        ownUser.groups = [1000, 27]
        ownUser.capBounding = 0x1ff_feff_ffff
        #expect(unprivileged.shortfalls(of: ownUser).isEmpty, "\(unprivileged.shortfalls(of: ownUser))")

        // A machine without Landlock: a namespace is what it offers, and a helper
        // without it falls short; a machine that offers nothing refuses every
        // helper, unless that was accepted knowingly.
        var namespaced = requirement
        namespaced.landlockABI = 0
        namespaced.confinement = .namespace
        var inNamespace = good
        inNamespace.landlockABI = 0
        inNamespace.confinement = .namespace
        #expect(namespaced.shortfalls(of: inNamespace).isEmpty, "\(namespaced.shortfalls(of: inNamespace))")
        inNamespace.confinement = .emptyRoot
        #expect(
            namespaced.shortfalls(of: inNamespace) == [
                "confinement: chroot into an empty folder (this machine offers a user and mount namespace with a read-only root of its own)"
            ])
        var nothing = namespaced
        nothing.confinement = .none
        inNamespace.confinement = .none
        #expect(nothing.shortfalls(of: inNamespace) == [SandboxRequirement.noConfinementMessage])
        nothing.acceptsNoConfinement = true
        #expect(nothing.shortfalls(of: inNamespace).isEmpty)
    }

    /// A helper that leaves out a step of its sandbox (a test-only switch) is
    /// refused: the library decodes nothing, every item fails with the one
    /// message that names what is missing, and the helper is stopped.
    @Test func helperWithAWeakerSandboxIsRefused() throws {
        var configuration = ProcessIsolatedDecoder.Configuration(helperExecutable: Fixtures.helperBinary)
        configuration.prestartedHelpers = 0
        configuration.environment["SHARE_TEST_SANDBOX_SKIP"] = "seccomp"
        let decoder = ProcessIsolatedDecoder(configuration)
        defer { decoder.shutdown() }
        let report = try decoder.checkSandbox()
        #expect(
            report.shortfalls == ["seccomp mode 0 with the none policy (expected 2 with the allowlist)"],
            "\(report.shortfalls)")
        #expect(!report.statusLines.isEmpty && report.statusLines.contains("Seccomp:\t0"), "\(report.statusLines)")
        for name in ["first.jpg", "second.jpg"] {
            do {
                _ = try decoder.decode(DecodeRequest(path: Fixtures.media("photo.jpg"), label: name, format: .jpeg))
                Issue.record("\(name) was decoded in a weaker sandbox")
            } catch {
                #expect(error.kind == .decoderMisbehaved, "\(error)")
                #expect(error.message.hasPrefix("\(name): the decoder helper (pid "), "\(error)")
                #expect(error.message.contains("weaker sandbox than this machine allows: seccomp mode 0"), "\(error)")
            }
        }
        #expect(decoder.helperProcessIDs.isEmpty)
        #expect(decoder.startedHelperCount == 1, "helpers were started in vain: \(decoder.startedHelperCount)")
    }
}
