import Foundation
import Glibc
import ShareIngest
import SystemCalls

/// A small command-line parser: `--name value`, `--name=value`, repeatable
/// options, boolean flags, `--` to end options, positionals in order.
struct Arguments {
    private(set) var values: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []
    /// Each positional's raw bytes, as the process received them (file names on
    /// Linux need not be UTF-8; `CommandLine.arguments` repairs what is not).
    private(set) var rawPositionals: [[UInt8]] = []

    /// Parses `arguments` (a slice of `CommandLine.arguments`, whose indices find
    /// each argument's raw bytes) against the allowed option and flag names.
    ///
    /// Where `--db URL` is allowed, so is `--db-file FILE` (the URL read from a
    /// file, so it is on no command line): ``value(_:)`` of `db` gives either.
    /// A `--db` URL that holds a password gets a warning.
    init(_ arguments: ArraySlice<String>, options allowedOptions: Set<String>, flags allowedFlags: Set<String>) throws(UsageError) {
        let options = allowedOptions.contains("db") ? allowedOptions.union(["db-file"]) : allowedOptions
        var iterator = zip(arguments.indices, arguments).makeIterator()
        var onlyPositionals = false
        while let (index, argument) = iterator.next() {
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                positionals.append(argument)
                rawPositionals.append(RawArguments.bytes(at: index) ?? Array(argument.utf8))
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if allowedFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
                flags.insert(name)
            } else if options.contains(name) {
                guard let value = inlineValue ?? iterator.next()?.1 else { throw UsageError("--\(name) needs a value") }
                values[name, default: []].append(value)
            } else {
                let known = (options.union(allowedFlags)).sorted().map { "--\($0)" }.joined(separator: ", ")
                throw UsageError("unknown option --\(name); options here: \(known)")
            }
        }
        if options.contains("db") { try resolveDatabase() }
    }

    /// `--db` or `--db-file` into `values["db"]`; the warning for a password on the command line.
    private mutating func resolveDatabase() throws(UsageError) {
        let url = value("db"), file = value("db-file")
        if url != nil, file != nil { throw UsageError("--db and --db-file name the same thing: give one of them") }
        if let url, DatabaseSecrets.password(in: url) != nil {
            Terminal.shared.err(
                "share: warning: the --db URL holds a password, which every local user can read in /proc/PID/cmdline (ps); "
                    + "give it in PGPASSWORD, a PGPASSFILE or a PGSERVICE entry instead, or put the URL in a file only you can read and pass --db-file FILE")
        }
        guard let file else { return }
        let bytes: [UInt8]
        do { bytes = try FileSystem.readWholeFile(file) } catch { throw UsageError("--db-file \(file): \(error.message)") }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: { !$0.isEmpty && !$0.hasPrefix("#") })
        else { throw UsageError("--db-file \(file): holds no database URL") }
        values["db"] = [line]
    }

    /// The positionals as paths, byte for byte.
    var positionalPaths: [SourcePath] { rawPositionals.map(SourcePath.init(bytes:)) }

    /// The last value given for an option.
    func value(_ name: String) -> String? { values[name]?.last }
    /// Every value given for a repeatable option, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    func number(_ name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), range.contains(number) else {
            throw UsageError("--\(name) must be a number in \(range.lowerBound)...\(range.upperBound), not \"\(text)\"")
        }
        return number
    }
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

/// A mistake in how the command was called (exit status 2).
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
