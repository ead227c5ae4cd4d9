/// A small command-line parser: `--name value`, `--name=value`, repeatable
/// options, boolean flags, `--` to end options, positionals in order.
struct Arguments {
    private(set) var values: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    /// Parses `arguments` against the allowed option and flag names (without dashes).
    init(_ arguments: some Sequence<String>, options: Set<String>, flags allowedFlags: Set<String>) throws(UsageError) {
        var iterator = arguments.makeIterator()
        var onlyPositionals = false
        while let argument = iterator.next() {
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                positionals.append(argument)
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
                guard let value = inlineValue ?? iterator.next() else { throw UsageError("--\(name) needs a value") }
                values[name, default: []].append(value)
            } else {
                let known = (options.union(allowedFlags)).sorted().map { "--\($0)" }.joined(separator: ", ")
                throw UsageError("unknown option --\(name); options here: \(known)")
            }
        }
    }

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

/// A mistake in how the command was called (exit status 2).
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
