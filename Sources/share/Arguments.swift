import Foundation
import Glibc
import ShareIngestCore
import ShareManifest
import SystemCalls

/// A command's arguments, parsed strictly against its ``CommandSpec``:
/// `--name value`, `--name=value`, the short forms the table declares (`-h`),
/// repeatable options, flags, `--` to end options, positionals in order.
/// Anything else (an unknown option, long or short; a value a flag does not
/// take; an argument the command does not take; a value of the wrong kind) is
/// a ``UsageError`` naming it and the nearest valid option.
struct Arguments {
    let spec: CommandSpec
    private(set) var values: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []
    /// Each positional's raw bytes, as the process received them (file names on
    /// Linux need not be UTF-8; `CommandLine.arguments` repairs what is not).
    private(set) var rawPositionals: [[UInt8]] = []

    /// True when `arguments` ask for help (`-h` or `--help` before any `--`).
    static func asksForHelp(_ arguments: ArraySlice<String>) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--help" || argument == "-h" { return true }
        }
        return false
    }

    /// Parses `arguments` (a slice of `CommandLine.arguments`, whose indices find
    /// each argument's raw bytes) against `spec`.
    ///
    /// `--db-file FILE` puts the URL it holds in `db` (``value(_:)`` of `db`
    /// gives either); a `--db` value that holds a password gets a warning.
    init(_ arguments: ArraySlice<String>, spec: CommandSpec) throws(UsageError) {
        self.spec = spec
        var iterator = zip(arguments.indices, arguments).makeIterator()
        var onlyPositionals = false
        while let (index, argument) = iterator.next() {
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                rawPositionals.append(RawArguments.bytes(at: index) ?? Array(argument.utf8))
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var inlineValue: String?
            let option: OptionSpec
            if argument.hasPrefix("--") {
                var name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard let found = spec.option(named: name) else { throw Self.unknown("--\(name)", spec: spec) }
                option = found
            } else {
                let letters = argument.dropFirst()
                guard letters.count == 1, let found = spec.option(short: letters.first!) else {
                    throw Self.unknown(argument, spec: spec)
                }
                option = found
            }
            if option.isFlag {
                guard inlineValue == nil else { throw UsageError("--\(option.name) takes no value (\(argument))") }
                flags.insert(option.name)
                continue
            }
            guard let value = inlineValue ?? iterator.next()?.1 else {
                throw UsageError("--\(option.name) needs a value (\(option.placeholder ?? "VALUE"))")
            }
            try Self.check(value, of: option, in: spec)
            values[option.name, default: []].append(value)
        }
        try checkPositionals()
        if spec.option(named: "db") != nil { try resolveDatabase() }
    }

    /// Refuses an argument the command does not take, or a missing one.
    private func checkPositionals() throws(UsageError) {
        let expected = spec.positionals.first
        let extra: String?
        switch expected?.count {
        case nil: extra = positionals.first
        case .one?, .optional?: extra = positionals.count > 1 ? positionals[1] : nil
        case .any?: extra = nil
        }
        if let extra {
            var line = "unexpected argument \(JSONText.quoted(extra))"
            line += expected.map { " (it takes one \($0.name))" } ?? " (it takes no arguments)"
            if spec.option(named: "container") != nil, (try? FileStatus.of(extra))?.type == .directory {
                line += "; did you mean --container \(extra)?"
            } else if extra.contains("="), let option = Self.nearest(to: String(extra.prefix { $0 != "=" }), in: spec) {
                line += "; did you mean --\(option.name)?"
            }
            throw UsageError(line)
        }
        if let expected, expected.count == .one, positionals.isEmpty {
            throw UsageError("expected \(expected.name) (see share \(spec.name) --help)")
        }
    }

    /// `--db` or `--db-file` into `values["db"]`; the warning for a password on the command line.
    private mutating func resolveDatabase() throws(UsageError) {
        let url = value("db")
        let file = value("db-file")
        if url != nil, file != nil { throw UsageError("--db and --db-file name the same thing: give one of them") }
        if let url, DatabaseSecrets.password(in: url) != nil {
            Terminal.shared.err(
                "share: warning: the --db URL holds a password, which every local user can read in /proc/PID/cmdline (ps); "
                    + "give it in PGPASSWORD, a PGPASSFILE or a PGSERVICE entry instead, or put the URL in a file only you can read and pass --db-file FILE"
            )
        }
        guard let file else { return }
        let bytes: [UInt8]
        do { bytes = try FileSystem.readWholeFile(file) } catch {
            throw UsageError("--db-file \(file): \(error.message)")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard
            let line = text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }).first(
                where: { !$0.isEmpty && !$0.hasPrefix("#") })
        else { throw UsageError("--db-file \(file): holds no database URL") }
        do { try DatabaseURL.check(line) } catch { throw UsageError("--db-file \(file): \(error.description)") }
        values["db"] = [line]
    }

    /// Refuses a value `option` cannot take, saying what it can.
    private static func check(_ value: String, of option: OptionSpec, in spec: CommandSpec) throws(UsageError) {
        let name = "--\(option.name)"
        switch option.kind {
        case .integer(let range)?:
            guard let number = Int(value), range.contains(number) else {
                throw UsageError(
                    "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(JSONText.quoted(value))"
                )
            }
        case .seconds(let range)?:
            guard let number = Double(value), number.isFinite, range.contains(number) else {
                throw UsageError(
                    "\(name) must be a number of seconds from \(Self.plain(range.lowerBound)) to \(Self.plain(range.upperBound)), not \(JSONText.quoted(value))"
                )
            }
        case .choice(let words)?:
            guard words.contains(value) else {
                // A near miss (jpg for jpeg) is named.
                let near = words.map { ($0, editDistance(value.lowercased(), $0)) }.min { $0.1 < $1.1 }
                let suggestion = near.flatMap { $0.1 <= max(1, $0.0.count / 3) ? "; did you mean \($0.0)?" : nil } ?? ""
                throw UsageError(
                    "\(name) must be \(Self.alternatives(words)), not \(JSONText.quoted(value))\(suggestion)")
            }
        case .list(let words)?:
            for word in value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            where !words.contains(word) {
                throw UsageError(
                    "\(name): unknown \(JSONText.quoted(word)); allowed, comma-separated: \(words.joined(separator: ", "))"
                )
            }
        case .duration?:
            let units: Set<Character> = ["s", "m", "h", "d"]
            let valid =
                value == "0"
                || (value.count >= 2 && units.contains(value.last!)
                    && value.dropLast().allSatisfy { ("0"..."9").contains($0) })
            guard valid else {
                throw UsageError(
                    "\(name) must be a whole number and a unit (7d, 12h, 30m, 45s), or 0, not \(JSONText.quoted(value))"
                )
            }
        case .size?:
            guard ByteSize.parse(value) != nil else {
                throw UsageError(
                    "\(name) must be a whole number of bytes, or with a unit (500M, 8G, 1T), or 0, not \(JSONText.quoted(value))"
                )
            }
        case .database?:
            do { try DatabaseURL.check(value) } catch { throw UsageError("\(name) \(error.description)") }
        case .integers(let range, let count)?:
            let allowed =
                "a whole number from \(range.lowerBound) to \(range.upperBound), or up to \(count) of them comma-separated (none twice)"
            let numbers = value.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard !numbers.isEmpty, numbers.count <= count, numbers.allSatisfy({ $0.map(range.contains) ?? false }),
                Set(numbers).count == numbers.count
            else {
                throw UsageError("\(name) must be \(allowed), not \(JSONText.quoted(value))")
            }
        case .glob?:
            do { _ = try PathPattern(value) } catch { throw UsageError("\(name): \(error.description)") }
        case .date?:
            do { _ = try CaptureBound(value) } catch { throw UsageError("\(name) \(error.description)") }
        case .text?, .path?, nil:
            break
        }
    }

    private static func plain(_ number: Double) -> String {
        number == number.rounded() ? String(Int(number)) : String(number)
    }

    /// `a, b or c`.
    static func alternatives(_ words: [String]) -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words.last!
    }

    /// The usage error for an unknown option: one line, naming it and the nearest valid one.
    private static func unknown(_ given: String, spec: CommandSpec) -> UsageError {
        let bare = String(given.drop { $0 == "-" }.prefix { $0 != "=" })
        let nearest =
            nearest(to: bare, in: spec).map { "; did you mean --\($0.name)\($0.short.map { " (-\($0))" } ?? "")?" }
            ?? ""
        return UsageError("unknown option \(given)\(nearest) (see share \(spec.name) --help)")
    }

    /// The valid option nearest to `given` (a name without dashes): for one
    /// letter, the first whose long name starts with it; else the fewest edits.
    static func nearest(to given: String, in spec: CommandSpec) -> OptionSpec? {
        let options = spec.options
        if given.count == 1, let letter = given.first {
            // A short option suggests short options: the same letter in the
            // other case, one whose name starts with it, else the command's first.
            let shorts = options.filter { $0.short != nil && $0.short != "h" }
            if let short = options.first(where: { $0.short == letter }) { return short }
            if let other = shorts.first(where: {
                $0.short.map { String($0).lowercased() == String(letter).lowercased() } ?? false
            }) {
                return other
            }
            if let first = shorts.first(where: { $0.name.first == letter }) { return first }
            if let first = options.first(where: { $0.name.first == letter }) { return first }
            if let first = shorts.first { return first }
        }
        let scored = options.map { option -> (OptionSpec, Int) in
            let distance = editDistance(given.lowercased(), option.name)
            // A prefix of the name (--cont for --container) is as near as it gets.
            return (option, option.name.hasPrefix(given.lowercased()) && !given.isEmpty ? 0 : distance)
        }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance (insertions, deletions, substitutions).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The positionals as paths, byte for byte.
    var positionalPaths: [SourcePath] { rawPositionals.map(SourcePath.init(bytes:)) }

    /// The last value given for an option.
    func value(_ name: String) -> String? {
        precondition(spec.option(named: name) != nil, "share \(spec.name) has no option --\(name)")
        return values[name]?.last
    }
    /// Every value given for a repeatable option, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func flag(_ name: String) -> Bool {
        precondition(spec.option(named: name) != nil, "share \(spec.name) has no option --\(name)")
        return flags.contains(name)
    }

    /// A whole-number option's value (checked by the parser against its range).
    func integer(_ name: String) -> Int? { value(name).flatMap { Int($0) } }
    /// A number-of-seconds option's value (checked by the parser against its range).
    func seconds(_ name: String) -> Double? { value(name).flatMap { Double($0) } }

    /// A comma-separated whole-numbers option's values (checked by the parser).
    func integers(_ name: String) -> [Int]? { value(name).map { $0.split(separator: ",").compactMap { Int($0) } } }

    /// A size option's bytes (nil when not given; 0 means no limit).
    func size(_ name: String) -> Int64? { value(name).flatMap(ByteSize.parse) }
}

/// The process's arguments as bytes (`argv`), by their index in `CommandLine.arguments`.
enum RawArguments {
    private static let all: [[UInt8]] = (0..<Int(CommandLine.argc)).map { index in
        guard let argument = CommandLine.unsafeArgv[index] else { return [] }
        return Array(UnsafeRawBufferPointer(start: argument, count: strlen(argument)))
    }

    /// The bytes of argument `index`, if it is one of the process's own (a slice
    /// made up in a test has none).
    static func bytes(at index: Int) -> [UInt8]? {
        guard all.indices.contains(index), index < CommandLine.arguments.count else { return nil }
        let bytes = all[index]
        return String(decoding: bytes, as: UTF8.self) == CommandLine.arguments[index] ? bytes : nil
    }
}

/// A mistake in how the command was called (exit status 64, `EX_USAGE`): one line.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension JSONText {
    /// `text` in double quotes, escaped as JSON (control characters shown, not sent).
    static func quoted(_ text: String) -> String { string(text) }
}
