import Foundation
import Glibc
import TestSupport
import Testing

/// A decoder taken over by a hostile file, played for real: `share ingest` runs
/// with the test fault `attack`, which makes the helper that receives
/// `attack-NAME.jpg` try the forbidden action NAME once its sandbox is up (see
/// `shim_attack_run`): one action per file, since a forbidden call kills the
/// helper. Each action must fail: the helper reports an error for it, or it is
/// killed and its item fails as `decoderMisbehaved`. In every configuration:
/// `share` as root and as an ordinary user, each with Landlock and without
/// (the debug-only `SHARE_TEST_NO_LANDLOCK` hides it from the sandbox shim:
/// the helpers then get a user and mount namespace), and as root without
/// Landlock and namespaces (chroot into an empty folder). And what a helper
/// holds: its /proc/PID/status, environ and cmdline, and its whole writable
/// memory, searched for the parent's secrets.
@Suite(.serialized) struct AttackerTests {
    /// Every forbidden action the attacker tries; each must fail.
    static let forbidden = [
        "chmod", "fchmod", "fchmodat2", "fchmodat2-descriptor", "fchown", "chown", "setxattr", "fsetxattr",
        "truncate-input",
        "prlimit64-parent", "setpriority-parent", "sched_setaffinity-parent", "kill-parent", "kill-template",
        "kill-process-group",
        "ptrace-attach-parent", "process_vm_readv-parent", "pidfd_open-parent", "fcntl-setown-parent",
        "read-parent-environ",
        "read-parent-cmdline", "read-parent-mem", "read-parent-fd", "process_vm_writev-parent", "pidfd_getfd",
        "pidfd_send_signal",
        "pass-descriptor-to-parent", "kill-sibling", "read-sibling-environ", "read-sibling-mem",
        "socket-unix", "socket-inet", "socketpair", "connect-unix-path", "socket-inet6", "socket-netlink",
        "socket-packet", "socket-vsock",
        "connect-postgres", "open-for-writing", "open-input-for-writing", "read-container", "read-journal",
        "read-root-file",
        "read-other-batch-copy", "fallocate", "mmap-input-shared-writable", "memfd_create", "execveat", "execve",
        "mmap-exec",
        "mprotect-exec", "mmap-input-exec", "personality", "io_uring_setup", "unshare", "mount", "keyctl", "add_key",
        "request_key", "setns",
        "open_by_handle_at", "chroot", "pivot_root", "init_module", "finit_module", "bpf", "perf_event_open",
        "userfaultfd", "setuid-root",
        "setsid", "ioctl-tiocsti", "shmget", "prctl-set-dumpable", "prctl-get-seccomp", "prctl-set-pdeathsig",
        "prlimit64-cpu-unlimited",
        "sigaction-sigsys", "clone-without-thread", "clone3", "fork", "read-proc-self-net-tcp",
        "read-proc-self-net-unix", "read-proc-self-mountinfo",
    ]

    /// Reads the attacker aims at: with Landlock they are refused, in a
    /// namespace or an empty root the paths do not exist; either way the helper
    /// answers an error and goes on.
    static let reads = [
        "read-parent-environ", "read-parent-cmdline", "read-parent-mem", "read-parent-fd", "read-sibling-environ",
        "read-sibling-mem",
        "read-container", "read-journal", "read-root-file", "read-other-batch-copy", "read-proc-self-net-tcp",
        "read-proc-self-net-unix",
        "read-proc-self-mountinfo",
    ]

    /// The futex operations and madvise advice the policy refuses by their
    /// argument (the requeue-PI operations, and LOCK_PI2, which is newer than
    /// the policy; every advice but the seven allowed), each tried by a helper
    /// that must be killed for it, naming the call; and one allowed operation
    /// of each, which must work.
    static let refusedArguments = [
        "futex-wait-requeue-pi", "futex-cmp-requeue-pi", "futex-lock-pi2", "madvise-remove", "madvise-dontfork",
        "madvise-dofork", "madvise-mergeable",
        "madvise-unmergeable", "madvise-hugepage", "madvise-nohugepage", "madvise-dodump", "madvise-wipeonfork",
        "madvise-keeponfork", "madvise-cold",
        "madvise-pageout", "madvise-populate-read", "madvise-populate-write", "madvise-dontneed-locked",
        "madvise-collapse", "madvise-hwpoison",
        "madvise-soft-offline", "madvise-guard-install", "madvise-guard-remove",
    ]
    static let allowedArguments = ["futex-wake", "madvise-dontneed"]

    /// One attempt, as the helper reported it.
    struct Attempt {
        let result: Int
        let error: String
    }

    /// The attempts reported on `stderr` (`share-attack {…}` lines), by name.
    static func attempts(in stderr: String) throws -> [String: Attempt] {
        var attempts: [String: Attempt] = [:]
        for line in stderr.split(separator: "\n") where line.hasPrefix("share-attack ") {
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.dropFirst("share-attack ".count).utf8))
                    as? [String: Any])
            attempts[object["check"] as? String ?? "?"] = Attempt(
                result: object["result"] as? Int ?? 0, error: object["error"] as? String ?? "?")
        }
        return attempts
    }

    /// A configuration of the attacker test.
    enum Configuration: String, CaseIterable, CustomTestStringConvertible {
        case rootWithLandlock, rootWithoutLandlock, rootWithEmptyRoot, userWithLandlock, userWithoutLandlock
        var user: String? { rawValue.hasPrefix("user") ? "nobody" : nil }
        var environment: [String: String] {
            switch self {
            case .rootWithLandlock, .userWithLandlock: [:]
            case .rootWithoutLandlock, .userWithoutLandlock: ["SHARE_TEST_NO_LANDLOCK": "1"]
            case .rootWithEmptyRoot: ["SHARE_TEST_NO_LANDLOCK": "1", "SHARE_TEST_NO_NAMESPACES": "1"]
            }
        }
        /// What `share doctor --json` must say the helpers get.
        var confinement: String {
            switch self {
            case .rootWithLandlock, .userWithLandlock: "landlock"
            case .rootWithoutLandlock, .userWithoutLandlock: "namespace"
            case .rootWithEmptyRoot: "empty-root"
            }
        }
        var testDescription: String { rawValue }
    }

    /// Runs the attack through `share ingest` in `configuration`, and checks
    /// every attempt and what it would have touched.
    @Test(
        .enabled(if: geteuid() == 0, "makes a file in /root, and runs as nobody with runuser"),
        arguments: Configuration.allCases)
    func everyForbiddenActionFails(in configuration: Configuration) throws {
        let work = TemporaryDirectory("attack-work")
        let drop = TemporaryDirectory("attack-drop")
        let first = TemporaryDirectory("attack-first")
        try first.add("other.jpg", copying: Fixtures.media("exif3.jpg"))
        for name in Self.forbidden { try drop.add("attack-\(name).jpg", copying: Fixtures.media("photo.jpg")) }
        try drop.add("good.jpg", copying: Fixtures.media("portrait-exif6.jpg"))
        let container = work.file("container")
        let listener = try UnixListener(path: work.file("attack.sock"))
        // A file in /root that only root may read.
        let rootFile = "/root/share-attack-\(UUID().uuidString).txt"
        try Data("root's own".utf8).write(to: URL(fileURLWithPath: rootFile))
        defer { unlink(rootFile) }
        var command = [Fixtures.shareBinary]
        if let user = configuration.user {
            // The ordinary user needs the drops and a container it can write.
            for path in [drop.path, work.path, first.path, first.file("other.jpg")]
                + Self.forbidden.map({ drop.file("attack-\($0).jpg") })
                + [drop.file("good.jpg")]
            {
                try Self.give(path, to: user)
            }
            command = ["/usr/sbin/runuser", "-u", user, "--"] + command
        }
        // The machine gives this configuration what it should.
        let doctor = try Self.run(command + ["doctor", "--json"], environment: configuration.environment)
        let machine = try #require(
            try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any],
            "\(doctor.stdout)\(doctor.stderr)")
        #expect(
            (machine["helper"] as? [String: Any])?["confinement"] as? String == configuration.confinement,
            "\(doctor.stdout)")
        #expect((machine["shortfalls"] as? [String])?.isEmpty == true, "\(doctor.stdout)")

        // Another batch, whose copy the attacker tries to read.
        let earlier = try Self.run(
            command + ["ingest", "--container", container, "--report", work.file("first.json"), first.path],
            environment: configuration.environment)
        #expect(earlier.status == 0, "\(earlier.stderr)")
        let otherCopy = try #require(try Self.items(work.file("first.json"))["other.jpg"]?["path"] as? String)
            .replacingOccurrences(of: "file://", with: "")

        // A PostgreSQL on the machine, which no helper may connect to (stopped when the test ends).
        let postgres = try PostgresServer()
        defer { withExtendedLifetime(postgres) {} }
        let faults = (Self.forbidden.map { "attack:attack-\($0).jpg" }).joined(separator: ",")
        let targets = [
            "socket=\(listener.path)", "container=\(container)", "journal=\(container)/.share-ingest/journal.sqlite",
            "root=\(rootFile)",
            "copy=\(otherCopy)", "port=\(postgres.port)",
        ]
        let environment = configuration.environment.merging([
            "SHARE_TEST_HELPER_FAULT": faults, "SHARE_HELPER_STDERR": "inherit",
            "SHARE_TEST_ATTACK": targets.joined(separator: ";"),
        ]) { $1 }
        let result = try Self.run(
            command + ["ingest", "--container", container, "--report", work.file("report.json"), drop.path],
            environment: environment)
        let attempts = try Self.attempts(in: result.stderr)
        let items = try Self.items(work.file("report.json"))
        for name in Self.forbidden {
            let item = items["attack-\(name).jpg"] ?? [:]
            let attempt = attempts[name]
            let message = (item["error"] as? String) ?? ""
            if item["status"] as? String == "ingested" {
                // The helper lived: the call failed, it said so, and decoded on.
                #expect(
                    attempt != nil && attempt!.result < 0,
                    "\(name) succeeded inside the sandbox (\(String(describing: attempt)))")
            } else {
                // Killed for it: by the policy (naming the call), or by the parent for the protocol breach.
                #expect(item["reason"] as? String == "decoderMisbehaved", "\(name): \(item)")
                #expect(
                    message.contains("made the forbidden system call ")
                        || message.contains("killed by its seccomp policy (SIGSYS)")
                        || (name == "pass-descriptor-to-parent" && message.contains("broke the protocol")),
                    "\(name): \(message)")
                if let attempt {
                    #expect(
                        attempt.result < 0 || name == "pass-descriptor-to-parent",
                        "\(name) succeeded before the helper died")
                }
            }
        }
        // Forbidden calls are killed, naming the call: no quiet EPERM to probe with.
        for (name, call) in [
            ("add_key", "add_key"), ("bpf", "bpf"), ("unshare", "unshare"), ("fallocate", "fallocate"),
            ("prctl-set-dumpable", "prctl"),
        ] {
            let message = (items["attack-\(name).jpg"]?["error"] as? String) ?? ""
            #expect(message.contains("made the forbidden system call \(call) ("), "\(name): \(message)")
        }
        // The reads the helper lived to report failed for want of access, not of a target.
        for name in Self.reads {
            guard let attempt = attempts[name] else { continue }
            #expect(["EACCES", "ENOENT", "EPERM"].contains(attempt.error), "\(name): \(attempt.error)")
        }
        #expect(attempts["read-other-batch-copy"] != nil, "the read of another batch's copy was never tried")
        #expect(
            attempts["read-parent-cmdline"] != nil && attempts["read-parent-environ"] != nil,
            "the parent's /proc entries were never tried")

        // The batch went on: the parent was neither killed, slowed nor limited,
        // and the good file and every attack whose helper lived were delivered.
        #expect(result.status == 1, "\(result.stderr)")
        #expect(items["good.jpg"]?["status"] as? String == "ingested", "\(items["good.jpg"] ?? [:])")
        // Nothing it aimed at changed.
        // (A helper killed for its call leaves no copy: its item failed. This one lived.)
        let attacked = try #require(items["attack-open-input-for-writing.jpg"]?["path"] as? String)
            .replacingOccurrences(of: "file://", with: "")
        let good = try #require(items["good.jpg"]?["path"] as? String).replacingOccurrences(of: "file://", with: "")
        var attackedStatus = stat()
        var goodStatus = stat()
        #expect(stat(attacked, &attackedStatus) == 0 && stat(good, &goodStatus) == 0)
        #expect(
            attackedStatus.st_mode == goodStatus.st_mode,
            "the attacked copy's mode changed: \(String(attackedStatus.st_mode, radix: 8))")
        #expect(
            attackedStatus.st_uid == goodStatus.st_uid && attackedStatus.st_gid == goodStatus.st_gid,
            "the attacked copy's owner changed")
        #expect(
            FileManager.default.contentsEqual(atPath: attacked, andPath: Fixtures.media("photo.jpg")),
            "the attacked copy changed")
        #expect(
            FileManager.default.contentsEqual(atPath: otherCopy, andPath: Fixtures.media("exif3.jpg")),
            "the other batch's copy changed")
        #expect(!FileManager.default.fileExists(atPath: container + "/written-by-a-helper"))
        #expect(!listener.hasPendingConnection, "a helper connected to the test's socket")
        #expect((try? String(contentsOfFile: rootFile, encoding: .utf8)) == "root's own")
    }

    /// Finding 9 of issue 51: the argument filters of `futex` and `madvise`
    /// had no attacker test. Each refused operation or advice kills its helper
    /// (its item fails as `decoderMisbehaved`, naming the call); the allowed
    /// ones beside them work, so the filter reads the argument rather than
    /// refusing the call. The policy is the same in every configuration: this
    /// runs in one (root, Landlock).
    @Test(.enabled(if: geteuid() == 0, "the attack's targets include a file in /root"))
    func everyRefusedFutexOperationAndMadviseAdviceKillsItsHelper() throws {
        let work = TemporaryDirectory("attack-arguments")
        let drop = TemporaryDirectory("attack-arguments-drop")
        for name in Self.refusedArguments + Self.allowedArguments {
            try drop.add("attack-\(name).jpg", copying: Fixtures.media("photo.jpg"))
        }
        let listener = try UnixListener(path: work.file("attack.sock"))
        let container = work.file("container")
        let targets = [
            "socket=\(listener.path)", "container=\(container)", "journal=\(container)/.share-ingest/journal.sqlite",
            "root=/root/none", "copy=/none",
        ]
        let environment = [
            "SHARE_TEST_HELPER_FAULT": (Self.refusedArguments + Self.allowedArguments).map { "attack:attack-\($0).jpg" }
                .joined(separator: ","),
            "SHARE_HELPER_STDERR": "inherit", "SHARE_TEST_ATTACK": targets.joined(separator: ";"),
        ]
        let result = try Self.run(
            [
                Fixtures.shareBinary, "ingest", "--container", container, "--report", work.file("report.json"),
                drop.path,
            ], environment: environment)
        #expect(result.status == 1, "\(result.stderr)")
        let attempts = try Self.attempts(in: result.stderr)
        let items = try Self.items(work.file("report.json"))
        for name in Self.refusedArguments {
            let item = items["attack-\(name).jpg"] ?? [:]
            let call = name.hasPrefix("futex") ? "futex" : "madvise"
            #expect(item["reason"] as? String == "decoderMisbehaved", "\(name): \(item)")
            #expect(
                ((item["error"] as? String) ?? "").contains("made the forbidden system call \(call) ("),
                "\(name): \(item)")
            #expect(attempts[name] == nil, "\(name) returned inside the sandbox: \(String(describing: attempts[name]))")
        }
        for name in Self.allowedArguments {
            #expect(
                items["attack-\(name).jpg"]?["status"] as? String == "ingested",
                "\(name): \(items["attack-\(name).jpg"] ?? [:])")
            #expect(attempts[name]?.result == 0, "\(name): \(String(describing: attempts[name]))")
        }
    }

    // MARK: - What a helper holds

    /// The "done when" of the sandbox: a helper of `share ingest` started as
    /// root, caught while it decodes (it holds one file: the fault `stall`),
    /// runs as an unprivileged user with no capability, no-new-privs and the
    /// seccomp filter, and neither its /proc/PID/environ and cmdline nor any of
    /// its writable memory (nor its template's) holds a variable or an argument
    /// of the parent.
    @Test(.enabled(if: geteuid() == 0, "reads another user's /proc/PID/environ and memory, which needs root"))
    func helperOfIngestAsRootHoldsNoPrivilegeAndNothingOfItsParent() throws {
        let drop = TemporaryDirectory("held-drop")
        try drop.add("held.jpg", copying: Fixtures.media("photo.jpg"))
        let work = TemporaryDirectory("held-work")
        let secrets = Secrets()
        let process = try Self.start(
            Fixtures.shareBinary,
            ["ingest", "--message", secrets.message, "--container", work.file("container"), drop.path],
            environment: [
                "SECRET_TOKEN": secrets.token, "PGPASSWORD": secrets.password,
                "SHARE_TEST_HELPER_FAULT": "stall:held.jpg",
            ])
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let helper = try #require(
            ProcessTree.waitForDecodingHelper(of: process.processIdentifier, in: work.file("container")),
            "no helper was seen decoding")
        let template = try #require(ProcessTree.parent(of: helper))
        // The search works: it finds the secrets where they are, in `share` itself.
        #expect(
            ProcessTree.searchWritableMemory(of: process.processIdentifier, for: [secrets.token, secrets.message])
                == [secrets.message, secrets.token].sorted(),
            "the memory search does not find what share holds")
        try expectSandboxedAsRoot(helper)
        for pid in [helper, template] {
            secrets.expectAbsent(
                from: pid, alsoAbsent: ["SECRET_TOKEN", "PGPASSWORD", "--message", "ingest", work.path])
        }
    }

    /// A helper started on its own (the one with the sandbox-only loaders, for
    /// an SVG) shows in /proc/PID/environ exactly the environment it was given:
    /// only allowed variables, none of the parent's others; and in
    /// /proc/PID/cmdline only the helper's own arguments.
    @Test(.enabled(if: geteuid() == 0, "reads another user's /proc/PID/environ, which needs root"))
    func startedHelperGetsOnlyTheAllowedEnvironment() throws {
        let drop = TemporaryDirectory("svg-drop")
        try drop.add(
            "held.svg",
            bytes: Array(
                #"<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><rect width="20" height="10"/></svg>"#
                    .utf8))
        let work = TemporaryDirectory("svg-work")
        let secrets = Secrets()
        let process = try Self.start(
            Fixtures.shareBinary,
            ["ingest", "--message", secrets.message, "--container", work.file("container"), drop.path],
            environment: [
                "SECRET_TOKEN": secrets.token, "PGPASSWORD": secrets.password,
                "SHARE_TEST_HELPER_FAULT": "stall:held.svg", "LANG": "de_DE.UTF-8",
            ])
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let helper = try #require(
            ProcessTree.waitForDecodingHelper(of: process.processIdentifier, in: work.file("container")),
            "no helper was seen decoding")
        #expect(
            ProcessTree.parent(of: helper) == process.processIdentifier, "the SVG's helper was not started on its own")
        let names = String(decoding: ProcessTree.read("/proc/\(helper)/environ"), as: UTF8.self).split(separator: "\0")
            .map { String($0.prefix { $0 != "=" }) }
        let allowed: Set = [
            "SWIFT_BACKTRACE", "VIPS_NOVECTOR", "JSIMD_FORCENONE", "LD_LIBRARY_PATH", "SHARE_SANDBOX_RECORD",
            "SHARE_TEST_HELPER_FAULT",
            "SHARE_TEST_ATTACK", "SHARE_TEST_SANDBOX_SKIP", "SHARE_TEST_NO_LANDLOCK", "SHARE_TEST_NO_NAMESPACES",
        ]
        #expect(!names.isEmpty && Set(names).isSubset(of: allowed), "the helper's environment: \(names)")
        let arguments = String(decoding: ProcessTree.read("/proc/\(helper)/cmdline"), as: UTF8.self).split(
            separator: "\0"
        ).map(String.init)
        // As root, the account is a uid and gid of their own (issue 58): the helper's own, as /proc shows it.
        let status = String(decoding: ProcessTree.read("/proc/\(helper)/status"), as: UTF8.self)
        let uid =
            status.split(separator: "\n").first { $0.hasPrefix("Uid:") }?.split(separator: "\t").dropFirst().first.map(
                String.init) ?? "?"
        #expect(
            Array(arguments.dropFirst())
                == [
                    "decode-helper", "--memory-limit", "4294967296", "--cpu-limit", "1800", "--account",
                    "\(uid):\(uid)", "--sandbox-only-loaders", "--parent",
                    "\(process.processIdentifier)",
                ],
            "\(arguments)")
        #expect((0x7E00_0000...0x7E00_FFFF).contains(Int(uid) ?? 0), "\(status)")
        try expectSandboxedAsRoot(helper)
        secrets.expectAbsent(from: helper, alsoAbsent: ["SECRET_TOKEN", "PGPASSWORD", "LANG", "--message"])
        // Killed outright, share takes its helper with it, although the helper
        // changed user (which makes the kernel forget a parent-death signal) and
        // is stuck where it never reads its socket.
        kill(process.processIdentifier, SIGKILL)
        #expect(HelperPoolTests.eventually { HelperPoolTests.hasExited(helper) }, "the SVG's helper outlived share")
    }

    /// The same for `share worker`, whose command line carries a database URL
    /// with a password: its helpers (idle once the batch is done, with the
    /// template they came from) hold neither the URL nor the batch's message.
    @Test(.enabled(if: geteuid() == 0, "reads another user's /proc/PID/environ and memory, which needs root"))
    func helpersOfAWorkerHoldNeitherTheDatabaseURLNorTheMessage() throws {
        let server = try PostgresServer()
        #expect(try ShareProcess.run(["db", "migrate", "--db", server.url]).status == 0)
        let secrets = Secrets()
        // Trust authentication: the password is sent nowhere, but it is in the URL.
        let url = server.url.replacingOccurrences(
            of: "postgresql://postgres@", with: "postgresql://postgres:\(secrets.password)@")
        try #require(url.contains(secrets.password), "unexpected URL \(server.url)")
        let worker = try Self.start(
            Fixtures.shareBinary, ["worker", "--db", url, "--quiet"], environment: ["SECRET_TOKEN": secrets.token])
        defer {
            kill(worker.processIdentifier, SIGKILL)
            worker.waitUntilExit()
        }
        let drop = TemporaryDirectory("worker-drop")
        try drop.add("photo.jpg", copying: Fixtures.media("photo.jpg"))
        let work = TemporaryDirectory("worker-work")
        // (A bounded wait: a worker that died fails the test instead of hanging it.)
        let ingest = try ShareProcess.run([
            "ingest", "--db", url, "--timeout", "300", "--message", secrets.message, "--container",
            work.file("container"), "--quiet", drop.path,
        ])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let helpers = ProcessTree.descendants(of: worker.processIdentifier).filter {
            ProcessTree.name(of: $0) == "share-decoder"
        }
        #expect(!helpers.isEmpty, "the worker has no helper")
        for helper in helpers {
            try expectSandboxedAsRoot(helper)
            secrets.expectAbsent(from: helper, alsoAbsent: ["SECRET_TOKEN", "postgresql://", "--db", "worker"])
            if let template = ProcessTree.parent(of: helper) {
                secrets.expectAbsent(from: template, alsoAbsent: ["SECRET_TOKEN", "postgresql://", "--db"])
            }
        }
    }

    /// `/proc/PID/status` of a helper of a root parent: an unprivileged user and
    /// group, no capability in any set, no-new-privs, the seccomp filter.
    func expectSandboxedAsRoot(_ helper: pid_t, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let status = String(decoding: ProcessTree.read("/proc/\(helper)/status"), as: UTF8.self)
        func field(_ name: String) -> String {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }.map {
                String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces)
            } ?? "?"
        }
        let uids = field("Uid").split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let gids = field("Gid").split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        #expect(uids.count == 4 && !uids.contains(0), "Uid: \(field("Uid"))", sourceLocation: sourceLocation)
        #expect(gids.count == 4 && !gids.contains(0), "Gid: \(field("Gid"))", sourceLocation: sourceLocation)
        #expect(field("Groups").isEmpty, "Groups: \(field("Groups"))", sourceLocation: sourceLocation)
        for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            #expect(field(set) == "0000000000000000", "\(set): \(field(set))", sourceLocation: sourceLocation)
        }
        #expect(field("NoNewPrivs") == "1", sourceLocation: sourceLocation)
        #expect(field("Seccomp") == "2", sourceLocation: sourceLocation)
    }

    // MARK: - Helpers

    /// Values planted in the parent's environment and command line, each unique to the test.
    struct Secrets {
        let token = "token-\(UUID().uuidString)"
        let password = "Pw\(UUID().uuidString.prefix(8))"
        let message = "message-\(UUID().uuidString)"

        /// None of them, nor any of `names`, is in `pid`'s /proc/PID/environ or
        /// cmdline; none of them is anywhere in its writable memory.
        func expectAbsent(
            from pid: pid_t, alsoAbsent names: [String], sourceLocation: SourceLocation = #_sourceLocation
        ) {
            let environ = ProcessTree.read("/proc/\(pid)/environ")
            let cmdline = ProcessTree.read("/proc/\(pid)/cmdline")
            for (file, content) in [("environ", environ), ("cmdline", cmdline)] {
                let text = String(decoding: content, as: UTF8.self)
                for value in [token, password, message] + names {
                    #expect(
                        !text.contains(value),
                        "/proc/\(pid)/\(file) holds \(value): \(text.replacingOccurrences(of: "\0", with: " "))",
                        sourceLocation: sourceLocation)
                }
            }
            let found = ProcessTree.searchWritableMemory(of: pid, for: [token, password, message])
            #expect(found.isEmpty, "process \(pid) holds in its memory: \(found)", sourceLocation: sourceLocation)
        }
    }

    /// Makes `path` belong to `user` (the unprivileged run's drop and work folders).
    static func give(_ path: String, to user: String) throws {
        guard let entry = getpwnam(user) else { throw POSIXError(.ENOENT) }
        guard chown(path, entry.pointee.pw_uid, entry.pointee.pw_gid) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM)
        }
    }

    static func start(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs `command` (its first element the executable) to its end: status,
    /// stdout, stderr (pipes: a helper, whose file-size limit is 0, could not
    /// write its report to a file).
    static func run(_ command: [String], environment: [String: String]) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Both pipes are read at once, so that neither fills up and blocks the command.
        let errData = Collected()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outData, as: UTF8.self),
            String(decoding: errData.value, as: UTF8.self)
        )
    }

    /// The report's items by the last component of their source.
    static func items(_ reportPath: String) throws -> [String: [String: Any]] {
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as? [String: Any]
        )
        var items: [String: [String: Any]] = [:]
        for item in report["items"] as? [[String: Any]] ?? [] {
            items[((item["source"] as? String ?? "") as NSString).lastPathComponent] = item
        }
        return items
    }
}

/// Bytes read on another thread.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    var value: Data { lock.withLock { data } }
}

/// A listening Unix socket the attacker tries to connect to; it must never see a connection.
final class UnixListener {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard fd >= 0, bound == 0, listen(fd, 4) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        chmod(path, 0o777)
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// True when a connection waits to be accepted.
    var hasPendingConnection: Bool {
        let connection = accept(fd, nil, nil)
        if connection >= 0 { close(connection) }
        return connection >= 0
    }
}

/// The process tree and memory, as /proc shows them (reading another user's
/// needs root, or CAP_SYS_PTRACE, since helpers are not dumpable).
enum ProcessTree {
    /// The whole of a /proc file. (Foundation's readers stop after the first
    /// read, a page at most: /proc reports no size.)
    static func read(_ path: String) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return Data() }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return data }
            data.append(contentsOf: buffer.prefix(count))
        }
    }

    /// Field 4 of /proc/PID/stat.
    static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 2
        else { return nil }
        return Int32(fields[1])
    }

    static func name(of pid: pid_t) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "").trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// A helper forked from a template (`share-decoder`), or started on its own (`share decode-helper`, not a template).
    static func isHelper(_ pid: pid_t) -> Bool {
        if name(of: pid) == "share-decoder" { return true }
        let arguments = String(decoding: read("/proc/\(pid)/cmdline"), as: UTF8.self).split(separator: "\0")
        return arguments.contains("decode-helper") && !arguments.contains("--template")
    }

    /// Every process below `root`.
    static func descendants(of root: pid_t) -> [pid_t] {
        let all = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
        var parents: [pid_t: pid_t] = [:]
        for pid in all { parents[pid] = parent(of: pid) }
        return all.filter { pid in
            var current = parents[pid]
            while let ancestor = current, ancestor > 1 {
                if ancestor == root { return true }
                current = parents[ancestor]
            }
            return false
        }
    }

    /// Waits (up to two minutes, while the command runs) until a sandboxed helper
    /// below `root` holds a file of `container` open: it is decoding.
    static func waitForDecodingHelper(of root: pid_t, in container: String) -> pid_t? {
        // (The container does not exist yet; its folder does.)
        let canonical =
            canonicalPath((container as NSString).deletingLastPathComponent) + "/"
            + (container as NSString).lastPathComponent
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, kill(root, 0) == 0 {
            for pid in descendants(of: root) where isHelper(pid) {
                let directory = "/proc/\(pid)/fd"
                for fd in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                    let target =
                        (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(fd)")) ?? ""
                    if target.hasPrefix(canonical + "/"), !target.contains("/.share-ingest/") { return pid }
                }
            }
            usleep(2_000)
        }
        return nil
    }

    /// `path` as /proc spells it (`realpath`; a temporary folder's path may hold "//").
    static func canonicalPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Which of `needles` appear in the process's writable memory (heap, stacks,
    /// anonymous mappings and the libraries' data: everything it could have
    /// copied a value into), read through /proc/PID/mem.
    static func searchWritableMemory(of pid: pid_t, for needles: [String]) -> [String] {
        let maps = String(decoding: read("/proc/\(pid)/maps"), as: UTF8.self)
        let memory = open("/proc/\(pid)/mem", O_RDONLY)
        guard memory >= 0 else { return ["(cannot read /proc/\(pid)/mem: \(String(cString: strerror(errno))))"] }
        defer { close(memory) }
        var found: Set<String> = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw"), !line.contains("[vvar"), !line.contains("[vsyscall")
            else { continue }
            let range = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard range.count == 2, range[1] > range[0] else { continue }
            var buffer = [UInt8](repeating: 0, count: Int(range[1] - range[0]))
            let read = buffer.withUnsafeMutableBytes {
                pread(memory, $0.baseAddress, $0.count, off_t(Int64(bitPattern: range[0])))
            }
            guard read > 0 else { continue }
            let data = Data(buffer.prefix(read))
            for needle in needles where data.range(of: Data(needle.utf8)) != nil { found.insert(needle) }
        }
        return found.sorted()
    }
}
