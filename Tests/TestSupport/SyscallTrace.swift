import Foundation

/// The file-system calls a process made, in the order the kernel saw them,
/// from `strace -f -y` (every thread and child; each descriptor printed with
/// the path it refers to). Durability is a matter of order (a file is fsynced
/// before it gets its final name, its folder after), which no check of the
/// finished files can see: this is how a test sees it.
public struct SyscallTrace: Sendable {
    /// One system call, possibly interrupted by another thread's in the trace.
    public struct Call: Sendable, CustomStringConvertible {
        /// The thread that made it.
        public let thread: Int
        /// `openat`, `fsync`, `linkat`, …
        public let name: String
        /// The arguments as strace printed them.
        public let arguments: String
        /// The result as strace printed them: `0`, `5</path>`, `-1 ENOENT (…)`.
        public let result: String
        /// Position in the trace where the call started and where it returned:
        /// a call that returned before another started has `ended < other.started`.
        public let started: Int
        public let ended: Int

        /// The quoted strings among the arguments (paths), unescaped.
        public let strings: [String]
        /// The paths of the descriptors among the arguments (`-y`), in order.
        public let descriptorPaths: [String]
        /// The path of the descriptor this call returned (`openat`), if any.
        public let resultPath: String?

        init(thread: Int, name: String, arguments: String, result: String, started: Int, ended: Int) {
            (self.thread, self.name, self.arguments, self.result, self.started, self.ended) = (
                thread, name, arguments, result, started, ended
            )
            // Scanned once: the questions below filter every call many times.
            (strings, descriptorPaths) = SyscallTrace.scan(arguments)
            resultPath = SyscallTrace.scan(result).descriptors.first
        }
        /// True unless the call returned -1.
        public var succeeded: Bool { !result.hasPrefix("-1") && !result.hasPrefix("?") }

        /// The path a naming call (`link`, `rename` and their `…at` forms) gave a file, and the one it had.
        public var naming: (from: String, to: String)? {
            guard SyscallTrace.namingCalls.contains(name) else { return nil }
            let paths = strings
            return paths.count >= 2 ? (paths[0], paths[1]) : nil
        }

        /// True for `fsync` and `fdatasync`.
        public var isSync: Bool { name == "fsync" || name == "fdatasync" }

        /// True for an open that may write the file (write access, create or truncate).
        public var opensForWriting: Bool {
            guard name == "open" || name == "openat" || name == "creat" else { return false }
            return name == "creat" || ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"].contains { arguments.contains($0) }
        }

        /// The path an open call named.
        public var openedPath: String? {
            guard name == "open" || name == "openat" || name == "creat" else { return nil }
            return strings.first
        }

        /// The call as strace printed it, long strings (written data) cut short.
        public var description: String {
            var shown = ""
            var inString = false
            var escaped = false
            var length = 0
            for character in arguments {
                if inString {
                    if escaped {
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        inString = false
                    }
                    length += 1
                    if inString && length > 120 {
                        if length == 121 { shown += "…" }
                        continue
                    }
                } else if character == "\"" {
                    inString = true
                    length = 0
                }
                shown.append(character)
            }
            return "#\(started) [\(thread)] \(name)(\(shown)) = \(result)"
        }
    }

    /// The calls, in the order they started.
    public let calls: [Call]

    /// The calls that give a file its name (kept apart from `rename` alone: a
    /// no-replace naming is a `link` then an `unlink`, or `renameat2` with `RENAME_NOREPLACE`).
    public static let namingCalls: Set<String> = ["rename", "renameat", "renameat2", "link", "linkat"]

    /// What a durability test traces: opens, syncs, namings, removals, and the
    /// positioned writes (SQLite writes its journal with `pwrite64`).
    public static let fileCalls = [
        "open", "openat", "creat", "fsync", "fdatasync", "rename", "renameat", "renameat2", "link", "linkat", "unlink",
        "unlinkat",
        "pwrite64", "ftruncate",
    ]

    /// Parses the output of `strace -f -y -qq -e signal=none -o FILE`.
    public init(parsing text: String) {
        var calls: [Call] = []
        // Calls another thread interrupted: thread → (index in `calls`, name, arguments so far).
        var pending: [Int: (position: Int, name: String, arguments: String)] = [:]
        var position = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            position += 1
            var rest = Substring(line)
            var thread = 0
            if let space = rest.firstIndex(of: " "), let pid = Int(rest[..<space]) {
                thread = pid
                rest = rest[space...].drop { $0 == " " }
            }
            if rest.hasPrefix("+++") || rest.hasPrefix("---") { continue }
            if rest.hasPrefix("<... ") {
                // `<... fsync resumed>) = 0` or `<... openat resumed>, O_RDONLY) = 5</x>`
                guard let started = pending.removeValue(forKey: thread), let close = rest.range(of: " resumed>") else {
                    continue
                }
                let tail = rest[close.upperBound...]
                let (arguments, result) = Self.splitResult(started.arguments + tail)
                calls.append(
                    Call(
                        thread: thread, name: started.name, arguments: arguments, result: result,
                        started: started.position, ended: position))
                continue
            }
            guard let open = rest.firstIndex(of: "(") else { continue }
            let name = String(rest[..<open])
            let body = rest[rest.index(after: open)...]
            if body.hasSuffix("<unfinished ...>") {
                pending[thread] = (
                    position, name, String(body.dropLast("<unfinished ...>".count)).trimmingCharacters(in: .whitespaces)
                )
                continue
            }
            let (arguments, result) = Self.splitResult(Substring(body))
            calls.append(
                Call(
                    thread: thread, name: name, arguments: arguments, result: result, started: position, ended: position
                ))
        }
        self.calls = calls.sorted { $0.started < $1.started }
    }

    /// `args) = result` → (`args`, `result`): the last `)` outside quotes that is
    /// followed by `=` (strace pads resumed calls: `<... fsync resumed>)      = 0`).
    static func splitResult(_ text: Substring) -> (String, String) {
        var inString = false
        var escaped = false
        var split: (close: String.Index, result: String.Index)?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if inString {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
            } else if character == "\"" {
                inString = true
            } else if character == ")" {
                let after = text[text.index(after: index)...].drop { $0 == " " }
                if after.hasPrefix("= ") { split = (index, text.index(after.startIndex, offsetBy: 2)) }
            }
            index = text.index(after: index)
        }
        guard let split else { return (String(text), "?") }
        return (String(text[..<split.close]), String(text[split.result...]))
    }

    /// The quoted strings and the `N<path>` descriptor paths of some printed
    /// arguments. A relative name right after a descriptor (the `…at` calls:
    /// `linkat(5</c/manifests>, ".k.partial", 5</c/manifests>, "k.json", 0)`)
    /// is given as the path it names beneath that folder.
    static func scan(_ text: String) -> (strings: [String], descriptors: [String]) {
        var strings: [String] = []
        var descriptors: [String] = []
        var characters = Array(text)[...]
        var folder: String?  // the descriptor argument just before, if nothing else came since
        while let first = characters.first {
            if first == "\"" {
                characters = characters.dropFirst()
                var value = ""
                while let c = characters.first, c != "\"" {
                    characters = characters.dropFirst()
                    if c == "\\", let next = characters.first {
                        characters = characters.dropFirst()
                        switch next {
                        case "n": value.append("\n")
                        case "t": value.append("\t")
                        default: value.append(next)  // \" \\ (and \x.. kept as x..: our paths are ASCII)
                        }
                    } else {
                        value.append(c)
                    }
                }
                characters = characters.dropFirst()
                if let folder, !value.hasPrefix("/") { value = value.isEmpty ? folder : folder + "/" + value }
                strings.append(value)
                folder = nil
            } else if first.isNumber || first.isLetter || first == "_" {
                // `5</path>` (a descriptor and its path) or `AT_FDCWD</dir>` (not one).
                let token = characters.prefix { $0.isNumber || $0.isLetter || $0 == "_" }
                characters = characters.dropFirst(token.count)
                if characters.first == "<" {
                    characters = characters.dropFirst()
                    let path = characters.prefix { $0 != ">" }
                    characters = characters.dropFirst(path.count + 1)
                    if token.allSatisfy(\.isNumber) { descriptors.append(String(path)) }
                    folder = token.allSatisfy(\.isNumber) ? String(path) : nil
                } else {
                    folder = nil
                }
            } else {
                if first != ",", first != " " { folder = nil }
                characters = characters.dropFirst()
            }
        }
        return (strings, descriptors)
    }

    // MARK: - Questions a durability test asks

    /// The successful calls that gave `path` its name.
    public func namings(to path: String) -> [Call] { calls.filter { $0.succeeded && $0.naming?.to == path } }

    /// The successful fsyncs and fdatasyncs of a descriptor open on `path`.
    public func syncs(of path: String) -> [Call] {
        calls.filter { $0.isSync && $0.succeeded && $0.descriptorPaths.first == path }
    }

    /// The successful positioned writes (`pwrite64`) to `path`.
    public func writes(to path: String) -> [Call] {
        calls.filter { $0.name == "pwrite64" && $0.succeeded && $0.descriptorPaths.first == path }
    }

    /// The opens of `path` that could write it.
    public func writableOpens(of path: String) -> [Call] {
        calls.filter { $0.opensForWriting && $0.openedPath == path }
    }

    /// Checks that `path` got its name exactly once, from a temporary file
    /// beside it that was fsynced (and not written since) before the naming
    /// call started, and was never opened for writing under its own name; with
    /// `folderSyncedAfter`, that its folder was fsynced after the naming
    /// returned. Returns what is wrong (empty: nothing) and the naming call.
    public func checkAtomicDurableCreation(of path: String, folderSyncedAfter: Bool) -> (
        problems: [String], naming: Call?
    ) {
        var problems: [String] = []
        for open in writableOpens(of: path) {
            problems.append("\(path) was opened for writing under its final name (written in place): \(open)")
        }
        let namings = namings(to: path)
        guard namings.count == 1, let naming = namings.first, let from = naming.naming?.from else {
            problems.append(
                "\(path) was given its name \(namings.count) times by link/rename (expected once, from a temporary file): \(namings)"
            )
            return (problems, nil)
        }
        let folder = (path as NSString).deletingLastPathComponent
        if (from as NSString).deletingLastPathComponent != folder {
            problems.append("\(path) was named from \(from), not from a temporary file beside it")
        }
        let syncsBefore = syncs(of: from).filter { $0.ended < naming.started }
        if let last = syncsBefore.last {
            let later = writes(to: from).filter { $0.started > last.ended && $0.started < naming.started }
            if !later.isEmpty {
                problems.append("\(from) was written after its fsync and before it was named \(path): \(later)")
            }
        } else {
            problems.append(
                "\(from) was not fsynced before it was named \(path) (\(naming)); syncs of it: \(syncs(of: from))")
        }
        if folderSyncedAfter && !syncs(of: folder).contains(where: { $0.started > naming.ended }) {
            problems.append("the folder \(folder) was not fsynced after \(path) was named (\(naming))")
        }
        return (problems, naming)
    }

    // MARK: - Running a command under strace

    /// Runs the built `share` with `arguments` under `strace -f -y` tracing
    /// `calls`; returns its outcome and the trace. Throws if strace is missing
    /// (`scripts/setup.sh` installs it) or cannot trace here.
    public static func share(_ arguments: [String], environment: [String: String] = [:], calls: [String] = fileCalls)
        throws -> (process: ShareProcess, trace: SyscallTrace)
    {
        let strace = "/usr/bin/strace"
        guard FileManager.default.isExecutableFile(atPath: strace) else {
            throw TraceError(description: "strace is not installed (bash scripts/setup.sh installs it)")
        }
        let directory = TemporaryDirectory("strace")
        let output = directory.file("trace")
        // -s: whole paths (written data is long but bounded by it); -qq and
        // signal=none: no exit or signal lines; -y: descriptors with their paths.
        let process = try ShareProcess.run(
            arguments, environment: environment,
            under: [
                strace, "-f", "-y", "-qq", "-s", "4096", "-e", "signal=none", "-e",
                "trace=" + calls.joined(separator: ","), "-o", output,
            ])
        guard let text = try? String(contentsOfFile: output, encoding: .utf8), !text.isEmpty else {
            throw TraceError(description: "strace wrote no trace (is ptrace allowed here?): \(process.stderr)")
        }
        return (process, SyscallTrace(parsing: text))
    }

    /// strace could not be run.
    public struct TraceError: Error, CustomStringConvertible {
        public let description: String
    }
}
