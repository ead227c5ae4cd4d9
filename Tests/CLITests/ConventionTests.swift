import Foundation
import TestSupport
import Testing

/// What users of swift-argument-parser CLIs, `vipsthumbnail` and `exiftool`
/// expect of every command, checked on the built binary: `--help`, `-h` and
/// `share help CMD` describe every option, and each option they describe is
/// accepted; an unknown option (long or short) or a stray argument is one
/// line naming it and the nearest valid option, exit 64, with nothing done;
/// `--version`; a man page that groff reads without a warning.
@Suite struct ConventionTests {
    /// Every command, as typed (the decoder helper is internal).
    static let commands = [
        "ingest", "open", "watch", "status", "report", "gc", "worker", "db migrate", "doctor", "completion", "man",
        "help", "version",
    ]

    static func words(_ command: String) -> [String] { command.split(separator: " ").map(String.init) }

    /// The options a help text lists: each `--name` (with its short form and placeholder) at the start of a line of its options section.
    static func options(inHelp help: String) -> [(name: String, short: String?, placeholder: String?)] {
        guard let section = help.components(separatedBy: "\noptions:\n").dropFirst().first else { return [] }
        return section.split(separator: "\n").prefix { $0.hasPrefix("  ") }.compactMap { line in
            let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true)
                .map(String.init)
            guard let first = words.first, first.hasPrefix("-") else { return nil }
            if first.hasSuffix(","), words.count > 1 {
                let placeholder = words.count > 2 && !words[2].isEmpty && words[2].first!.isUppercase ? words[2] : nil
                return (String(words[1].dropFirst(2)), String(first.dropLast()), placeholder)
            }
            let placeholder = words.count > 1 && words[1].first!.isUppercase ? words[1] : nil
            return (String(first.dropFirst(2)), nil, placeholder)
        }
    }

    /// A value each placeholder accepts (only the parser sees it: the command never runs).
    static func sample(for placeholder: String, option: String) -> String {
        switch (option, placeholder) {
        case ("db", _): "postgresql://nobody@127.0.0.1:1/none"
        case ("older-than", _): "7d"
        case ("isolation", _): "none"
        case ("log-format", _): "json"
        case ("on-success", _): "keep"
        case ("stages", _): "copy"
        case ("metrics", _): ":0"
        case ("size", _): "360,1080"
        case ("format", _): "webp"
        case ("quality", _): "80"
        case ("include", _), ("exclude", _): "*.jpg"
        case ("taken-after", _): "2024-01-01"
        case ("taken-before", _): "2025-01-01T00:00:00+02:00"
        case (_, "N"), (_, "SECONDS"): "2"
        case (_, "SIZE"): "8G"
        default: "/tmp/x"
        }
    }

    @Test(arguments: commands)
    func helpDescribesEveryOptionAndEachIsAccepted(command: String) throws {
        let help = try ShareProcess.run(Self.words(command) + ["--help"])
        #expect(help.status == 0 && help.stderr.isEmpty, "\(command): \(help.status) \(help.stderr)")
        #expect(help.stdout.hasPrefix("share \(command): "), "\(help.stdout)")
        #expect(help.stdout.contains("\nusage: share \(command)"), "\(help.stdout)")
        #expect(help.stdout.contains("\nexit status:\n  0     "), "\(help.stdout)")
        // The same text from -h and from `share help CMD`.
        #expect(try ShareProcess.run(Self.words(command) + ["-h"]).stdout == help.stdout)
        #expect(try ShareProcess.run(["help"] + Self.words(command)).stdout == help.stdout)
        let options = Self.options(inHelp: help.stdout)
        #expect(options.contains { $0.name == "help" && $0.short == "-h" }, "\(command): \(options)")
        // The same options as the README's table and the man page say (each made from the parser's table).
        let markdown = try ShareProcess.run(["help"] + Self.words(command) + ["--markdown"]).stdout
        let tabled = markdown.split(separator: "\n").compactMap { row -> String? in
            guard let cell = row.split(separator: "`").dropFirst().first,
                let long = cell.split(separator: " ").first(where: { $0.hasPrefix("--") })
            else { return nil }
            return String(long.dropFirst(2))
        }
        #expect(
            tabled.sorted() == options.map(\.name).sorted(),
            "\(command): --markdown \(tabled) but --help \(options.map(\.name))")
        for option in options where option.name != "help" {
            // Accepted: the parser goes past it and stops at the next, unknown, option.
            let value = option.placeholder.map { [Self.sample(for: $0, option: option.name)] } ?? []
            for spelling in ["--\(option.name)"] + (option.short.map { [$0] } ?? []) {
                let run = try ShareProcess.run(Self.words(command) + [spelling] + value + ["--zz-unknown"])
                #expect(run.status == 64, "\(command) \(spelling): \(run.status) \(run.stderr)")
                #expect(
                    run.stderr.contains("unknown option --zz-unknown"),
                    "\(command) \(spelling) was not accepted: \(run.stderr)")
            }
        }
    }

    @Test(arguments: commands)
    func anUnknownOptionIsOneLineNamingItAndTheNearestExit64(command: String) throws {
        for unknown in ["--no-such-option", "-Z"] {
            let run = try ShareProcess.run(Self.words(command) + [unknown])
            #expect(run.status == 64, "\(command) \(unknown): \(run.status)")
            #expect(run.stdout.isEmpty)
            let lines = run.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(command) \(unknown): \(run.stderr)")
            #expect(
                run.stderr.hasPrefix("share \(command): unknown option \(unknown); did you mean --"), "\(run.stderr)")
        }
        // The nearest option, by spelling.
        if command == "ingest" {
            #expect(try ShareProcess.run(["ingest", "--contaner", "x"]).stderr.contains("did you mean --container?"))
            #expect(try ShareProcess.run(["ingest", "-j", "x"]).stderr.contains("did you mean --json?"))
        }
    }

    /// A command that takes no argument, or one, refuses another: nothing is done.
    @Test(arguments: [
        ("status", ["extra"]), ("doctor", ["extra"]), ("gc", ["/srv/c"]),
        ("open", ["ShareMedia://dataUrl=A#media", "two"]),
        ("watch", ["inbox", "another"]), ("report", ["Key", "two"]), ("worker", ["extra"]), ("db migrate", ["extra"]),
        ("version", ["extra"]),
        ("man", ["extra"]), ("completion", ["bash", "zsh"]),
    ])
    func aStrayArgumentIsAUsageError(command: String, arguments: [String]) throws {
        let work = TemporaryDirectory("stray")
        let run = try ShareProcess.run(
            Self.words(command) + arguments, environment: ["SHARE_CONTAINER": work.file("c"), "HOME": work.path])
        #expect(run.status == 64, "\(command) \(arguments): \(run.status) \(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(run.stderr.contains("share \(command): unexpected argument \"\(arguments.last!)\""), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("c")), "\(command) made a container")
    }

    /// Observed on 68f4c5d: `gc -n` ignored `-n` and collected; `gc /srv/c`
    /// ignored the path and collected the default container.
    @Test func gcNeverCollectsWhatItWasNotAskedTo() throws {
        let work = TemporaryDirectory("gc-slips")
        let container = work.file("c")
        let ingest = try ShareProcess.run([
            "ingest", "--container", container, "--key", "Consumed", Fixtures.media("photo.jpg"),
        ])
        let url = try #require(ingest.lastLine)
        #expect(try ShareProcess.run(["open", url, "--container", container, "--consume"]).status == 0)
        let copies = { try FileManager.default.contentsOfDirectory(atPath: container).filter { $0.hasSuffix(".jpg") } }
        #expect(try copies().count == 1)
        // -n is --dry-run.
        let dry = try ShareProcess.run(["gc", "-n", "--older-than", "0", "--container", container])
        #expect(dry.status == 0 && dry.stderr.contains("would collect 1 consumed share"), "\(dry.stderr)")
        #expect(try copies().count == 1)
        // A path where none is taken: refused, naming it and what was meant.
        let stray = try ShareProcess.run(
            ["gc", container, "--older-than", "0"], environment: ["SHARE_CONTAINER": container])
        #expect(
            stray.status == 64 && stray.stderr.contains("did you mean --container \(container)?"), "\(stray.stderr)")
        #expect(try copies().count == 1)
    }

    @Test func versionPrintsTheVersionTheMetricsReport() throws {
        let version = try ShareProcess.run(["--version"])
        #expect(version.status == 0 && version.stderr.isEmpty)
        #expect(
            version.stdout.range(of: #"^share \d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil,
            "\(version.stdout)")
        #expect(try ShareProcess.run(["version"]).stdout == version.stdout)
        let number = version.stdout.dropFirst("share ".count).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try ShareProcess.run(["--help"]).stdout.hasPrefix("share \(number): "))
        #expect(try ShareProcess.run(["man"]).stdout.contains(".TH SHARE 1 \"\" \"share \(number)\""))
    }

    @Test func plainShareIsAUsageErrorAndHelpGoesToStdout() throws {
        let bare = try ShareProcess.run([])
        #expect(bare.status == 64 && bare.stdout.isEmpty, "\(bare.status) \(bare.stdout)")
        #expect(
            bare.stderr.split(separator: "\n").count == 1 && bare.stderr.contains("no command given"), "\(bare.stderr)")
        let help = try ShareProcess.run(["--help"])
        #expect(help.status == 0 && help.stderr.isEmpty)
        #expect(try ShareProcess.run(["-h"]).stdout == help.stdout)
        #expect(try ShareProcess.run(["help"]).stdout == help.stdout)
        for command in Self.commands {
            #expect(help.stdout.contains("\n  \(command) "), "\(command) missing from share --help")
        }
        for status in ["0", "1", "64", "66", "69", "73", "75", "130", "143"] {
            #expect(help.stdout.contains("\n  \(status) "), "exit status \(status) missing")
        }
        let unknown = try ShareProcess.run(["ingset"])
        #expect(
            unknown.status == 64 && unknown.stderr.contains("unknown command \"ingset\"; did you mean ingest?"),
            "\(unknown.stderr)")
        #expect(try ShareProcess.run(["help", "nope"]).status == 64)
    }

    /// Findings of 68f4c5d, each a usage error now, in one line.
    @Test(arguments: [
        (
            ["worker", "--db", "postgresql://x@127.0.0.1:1/x", "--concurrency", "1.5"],
            "--concurrency must be a whole number from 1 to 64, not \"1.5\""
        ),
        (
            ["gc", "--older-than", "7"],
            "--older-than must be a whole number and a unit (7d, 12h, 30m, 45s), or 0, not \"7\""
        ),
        (["ingest", "--isolation", "sandbox", "x"], "--isolation must be process, process-weaker or none"),
        (
            ["worker", "--db", "postgresql://x@127.0.0.1:1/x", "--stages", "copy,thumbnial"],
            "--stages: unknown \"thumbnial\""
        ),
        (["watch", "in", "--settle", "soon"], "--settle must be a number of seconds from 0 to 86400"),
        (["ingest", "--key"], "--key needs a value (KEY)"),
        (["ingest", "--json=yes", "x"], "--json takes no value"),
    ])
    func badValuesAreOneLineUsageErrors(arguments: [String], message: String) throws {
        let run = try ShareProcess.run(arguments)
        #expect(run.status == 64, "\(arguments): \(run.status) \(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1 && run.stderr.contains(message), "\(run.stderr)")
    }

    /// A runtime failure is one line, never the usage text (observed: the whole usage after "Address already in use").
    @Test func aPortInUseIsOneLineAndExit69() throws {
        let work = TemporaryDirectory("port")
        try FileManager.default.createDirectory(atPath: work.file("inbox"), withIntermediateDirectories: true)
        let socket = try ListeningSocket()
        let run = try ShareProcess.run(
            [
                "watch", work.file("inbox"), "--container", work.file("c"), "--once", "--isolation", "none",
                "--metrics", "127.0.0.1:\(socket.port)",
            ])
        #expect(run.status == 69, "\(run.stderr)")
        #expect(
            run.stderr.contains("cannot listen") && !run.stderr.contains("usage:") && !run.stderr.contains("options:"),
            "\(run.stderr)")
    }

    /// The man page: made from the same table, and groff reads it without a warning.
    @Test func theManPageRendersWithoutWarnings() throws {
        let work = TemporaryDirectory("man")
        let page = work.file("share.1")
        let man = try ShareProcess.run(["man"])
        #expect(man.status == 0)
        try man.stdout.write(toFile: page, atomically: true, encoding: .utf8)
        let groff = try Tool.run("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", page])
        #expect(groff.status == 0 && groff.output.isEmpty, "groff: \(groff.output)")
        let text = try Tool.run("/usr/bin/groff", ["-man", "-Tutf8", "-P-c", "-P-b", "-P-u", page]).output
        for command in Self.commands {
            #expect(text.contains("share \(command)"), "\(command) missing from the man page")
        }
        for option in Self.options(inHelp: try ShareProcess.run(["ingest", "--help"]).stdout) {
            #expect(
                text.contains("--\(option.name)") || text.contains("‐‐\(option.name)"),
                "--\(option.name) missing from the man page")
        }
        #expect(text.contains("EXIT STATUS"))
    }
}

/// A TCP port held by this process (a listener nobody accepts on).
final class ListeningSocket {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 1) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}

/// Runs a tool and returns its exit status and its stdout and stderr together.
enum Tool {
    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:], input: String? = nil)
        throws -> (status: Int32, output: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let stdin = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
