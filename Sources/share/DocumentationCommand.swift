import ShareManifest

/// `share help [COMMAND]`, `share version`, `share completion SHELL`, `share
/// man`: what the option table says, for people and for shells.
enum DocumentationCommand {
    static func run(_ word: String, _ arguments: ArraySlice<String>) -> ExitStatus {
        let spec = CommandTable.command(word)!
        var arguments = arguments
        // `help db migrate`: one command of two words.
        if word == "help", let first = arguments.first, let second = arguments.dropFirst().first,
            CommandTable.command("\(first) \(second)") != nil
        {
            arguments = ArraySlice(["\(first) \(second)"] + arguments.dropFirst(2))
        }
        let parsed: Arguments
        switch Command.parse(arguments, spec) {
        case .success(let arguments): parsed = arguments
        case .failure(let exit): return exit.status
        }
        switch word {
        case "version":
            Terminal.shared.out("share \(Help.version)")
        case "man":
            Terminal.shared.out(ManPage.text, newline: false)
        case "completion":
            let shell = parsed.positionals[0]
            guard let script = CompletionScript.script(for: shell) else {
                return Command.usageFailure(
                    "no completion for the shell \(JSONText.quoted(shell)); give bash, zsh or fish", spec)
            }
            Terminal.shared.out(script, newline: false)
        default:
            return help(parsed, spec)
        }
        return .success
    }

    /// `share help`, `share help CMD`, `share help db migrate`, `--markdown`.
    private static func help(_ parsed: Arguments, _ spec: CommandSpec) -> ExitStatus {
        guard let name = parsed.positionals.first else {
            Terminal.shared.out(parsed.flag("markdown") ? Help.exitMarkdown : Help.general)
            return .success
        }
        guard let command = CommandTable.command(name) else {
            let subcommands = CommandTable.all.filter { $0.name.hasPrefix(name + " ") }
            if !subcommands.isEmpty {
                Terminal.shared.out(subcommands.map { Help.text(of: $0) }.joined(separator: "\n\n"))
                return .success
            }
            return Command.usageFailure(
                "no command \(JSONText.quoted(name))\(suggestion(for: name)) (see share --help)", spec)
        }
        Terminal.shared.out(parsed.flag("markdown") ? Help.markdown(of: command) : Help.text(of: command))
        return .success
    }

    /// `share WORD` for a word that is no command: one line naming the nearest.
    static func unknownCommand(_ word: String) -> ExitStatus {
        if word.hasPrefix("-") {
            Terminal.shared.err("share: unknown option \(word); did you mean --help or --version? (see share --help)")
        } else {
            Terminal.shared.err(
                "share: unknown command \(JSONText.quoted(word))\(suggestion(for: word)) (see share --help)")
        }
        return .usage
    }

    private static func suggestion(for word: String) -> String {
        // Only a near miss is suggested (a typo: at most a third of the word
        // wrong); `nosuch` is near no command.
        let nearest = CommandTable.commandWords.map { ($0, Arguments.editDistance(word.lowercased(), $0)) }.min {
            $0.1 < $1.1
        }
        guard let nearest, nearest.1 <= max(1, word.count / 3) else { return "" }
        return "; did you mean \(nearest.0)?"
    }
}
