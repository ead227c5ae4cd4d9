/// One declaration per option, from which the parser, `--help`, `share help
/// CMD`, the completion scripts, the man page and the option tables of docs/using-share.md
/// are all made (`CommandTable` holds every command's).

/// What an option's value is: how the parser checks it and how a shell completes it.
enum ValueKind: Sendable, Equatable {
    /// Any text (a key, a name, a message).
    case text
    /// A file or folder path.
    case path
    /// A whole number in a range.
    case integer(ClosedRange<Int>)
    /// A number of seconds (fractions allowed) in a range.
    case seconds(ClosedRange<Double>)
    /// One of these words.
    case choice([String])
    /// A comma-separated list of these words.
    case list([String])
    /// A retention: a whole number and a unit (`7d`, `12h`, `30m`, `45s`), or `0`.
    case duration
    /// A size: a whole number of bytes, or with a binary unit (`500M`, `8G`, `1T`; `K`, `M`, `G`, `T`), or `0` (no limit).
    case size
    /// A PostgreSQL database: a `postgres://`/`postgresql://` URL or `key=value` settings.
    case database
    /// Whole numbers in a range, comma-separated, at most `count`, none twice (`360,1080`).
    case integers(ClosedRange<Int>, count: Int)
    /// A glob matched against paths inside a drop (``PathPattern``).
    case glob
    /// A date or an ISO 8601 date and time (``CaptureBound``).
    case date
}

/// How a shell completes an option's value or a positional argument.
enum CompletionKind: Sendable, Equatable {
    case none
    case file
    case directory
    case choices([String])
    /// These words, or a file (`--pipeline NAME|FILE`).
    case choicesOrFile([String])
    /// The names of `share`'s commands (`share help CMD`).
    case commands
}

/// One option of one command.
struct OptionSpec: Sendable {
    /// The long name, without dashes (`container` for `--container`).
    let name: String
    /// The short form, if one is expected (`h` for `-h`).
    let short: Character?
    /// The value's placeholder in usage and help (`DIR`); nil for a flag.
    let placeholder: String?
    let kind: ValueKind?
    /// The default, as people read it (nil: none, or not applicable).
    let defaultValue: String?
    /// One line of help.
    let help: String
    let completion: CompletionKind
    /// True when the option may be given several times (each value kept).
    let repeatable: Bool

    /// A flag: no value.
    static func flag(_ name: String, short: Character? = nil, _ help: String) -> OptionSpec {
        OptionSpec(
            name: name, short: short, placeholder: nil, kind: nil, defaultValue: nil, help: help, completion: .none,
            repeatable: false)
    }

    /// An option with a value.
    static func value(
        _ name: String, _ placeholder: String, _ kind: ValueKind, default defaultValue: String? = nil,
        repeatable: Bool = false,
        completion: CompletionKind? = nil, _ help: String
    ) -> OptionSpec {
        let completes: CompletionKind
        switch (completion, kind) {
        case (let given?, _): completes = given
        case (nil, .choice(let words)), (nil, .list(let words)): completes = .choices(words)
        case (nil, .path): completes = .file
        default: completes = .none
        }
        return OptionSpec(
            name: name, short: nil, placeholder: placeholder, kind: kind, defaultValue: defaultValue, help: help,
            completion: completes, repeatable: repeatable)
    }

    /// The same option with another help line (a command that says more about it).
    func help(_ line: String) -> OptionSpec {
        OptionSpec(
            name: name, short: short, placeholder: placeholder, kind: kind, defaultValue: defaultValue, help: line,
            completion: completion, repeatable: repeatable)
    }

    /// The same option with another default.
    func defaulting(_ value: String?) -> OptionSpec {
        OptionSpec(
            name: name, short: short, placeholder: placeholder, kind: kind, defaultValue: value, help: help,
            completion: completion, repeatable: repeatable)
    }

    var isFlag: Bool { placeholder == nil }

    /// `-h, --help` or `--container DIR`, as usage and help write it.
    var signature: String {
        let long = "--\(name)" + (placeholder.map { " \($0)" } ?? "")
        return short.map { "-\($0), " + long } ?? long
    }
}

/// A command's positional arguments.
struct PositionalSpec: Sendable {
    enum Count: Sendable { case one, optional, any }
    /// As usage writes it: `PATH`, `URL|KEY`.
    let name: String
    let count: Count
    let help: String
    let completion: CompletionKind

    /// `PATH...`, `[COMMAND]` or `URL`, as usage writes it.
    var usage: String {
        switch count {
        case .one: name
        case .optional: "[\(name)]"
        case .any: "\(name)..."
        }
    }
}

/// One command: its name (`ingest`, or `db migrate`), what it does, its
/// arguments and options, and the exit statuses it can end with.
struct CommandSpec: Sendable {
    let name: String
    /// One line: what the command does.
    let summary: String
    /// Usage lines after `share <name> ` (default: `[options]` and the positionals).
    let usages: [String]
    let positionals: [PositionalSpec]
    /// Every option but `-h, --help`, which every command has.
    let ownOptions: [OptionSpec]
    /// More about the command: a few lines of help after the options.
    let discussion: String?
    /// The exit statuses this command can end with, in order.
    let exits: [ExitStatus]

    init(
        _ name: String, _ summary: String, usages: [String] = [], positionals: [PositionalSpec] = [],
        options: [OptionSpec], discussion: String? = nil,
        exits: [ExitStatus]
    ) {
        (self.name, self.summary, self.usages, self.positionals, self.ownOptions, self.discussion, self.exits) =
            (name, summary, usages, positionals, options, discussion, exits)
    }

    /// Every option the parser accepts, `-h, --help` last.
    var options: [OptionSpec] { ownOptions + [CommandTable.help] }

    func option(named name: String) -> OptionSpec? { options.first { $0.name == name } }
    func option(short: Character) -> OptionSpec? { options.first { $0.short == short } }

    /// The usage lines, each starting with `share <name>`.
    var usageLines: [String] {
        if !usages.isEmpty { return usages.map { "share \(name) \($0)" } }
        let tail = (["[options]"] + positionals.map(\.usage)).joined(separator: " ")
        return ["share \(name) \(tail)"]
    }
}
