import Glibc
import ShareIngest

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
    init(_ arguments: ArraySlice<String>, options: Set<String>, flags allowedFlags: Set<String>) throws(UsageError) {
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
