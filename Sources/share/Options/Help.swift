import ShareIngestCore

/// `share --help`, `share CMD --help`, `share help CMD` and docs/using-share.md's
/// Markdown tables, all from ``CommandTable``.
enum Help {
    /// The version `share --version` prints (the one `/metrics` reports).
    static let version = ServiceMetrics.version

    static let description =
        "ingest shared photos, videos, files, text and links into a container and write the SharedMediaFile manifest a host app reads after its redirect URL"

    /// `share --help`: the commands and the exit statuses.
    static var general: String {
        var lines = [
            "share \(version): \(description).", "", "usage: share <command> [options] [arguments]",
            "       share --version | --help", "", "commands:",
        ]
        let width = CommandTable.all.map(\.name.count).max()! + 2
        for command in CommandTable.all { lines.append("  " + pad(command.name, width) + command.summary) }
        lines += [
            "", "Run `share help <command>` or `share <command> --help` for a command's options.", "", "exit status:",
        ]
        lines += exitLines(ExitStatus.allCases)
        return lines.joined(separator: "\n")
    }

    /// `share CMD --help`: what it does, its usage, every argument and option, its exit statuses.
    static func text(of command: CommandSpec) -> String {
        var lines = ["share \(command.name): \(command.summary).", ""]
        for (number, usage) in command.usageLines.enumerated() {
            lines.append((number == 0 ? "usage: " : "       ") + usage)
        }
        let rows =
            command.positionals.map { ($0.usage, $0.help) } + command.options.map { ($0.signature, line(of: $0)) }
        let width = min(30, rows.map(\.0.count).max() ?? 0) + 2
        func render(_ row: (String, String)) -> String {
            row.0.count + 2 > width
                ? "  \(row.0)\n  \(String(repeating: " ", count: width))\(row.1)" : "  " + pad(row.0, width) + row.1
        }
        if !command.positionals.isEmpty {
            lines += ["", "arguments:"] + command.positionals.map { render(($0.usage, $0.help)) }
        }
        lines += ["", "options:"] + command.options.map { render(($0.signature, line(of: $0))) }
        if let discussion = command.discussion { lines += [""] + discussion.split(separator: "\n").map(String.init) }
        lines += ["", "exit status:"] + exitLines(command.exits)
        return lines.joined(separator: "\n")
    }

    /// An option's help line with its default.
    static func line(of option: OptionSpec) -> String {
        option.defaultValue.map { "\(option.help) (default: \($0))" } ?? option.help
    }

    /// The Markdown table of a command's arguments and options (docs/using-share.md).
    static func markdown(of command: CommandSpec) -> String {
        var lines = ["| option | default | meaning |", "|---|---|---|"]
        for positional in command.positionals {
            lines.append("| `\(cell(positional.usage))` | | \(cell(positional.help)) |")
        }
        for option in command.options {
            lines.append(
                "| `\(cell(option.signature))` | \(option.defaultValue.map { "`\(cell($0))`" } ?? "") | \(cell(option.help)) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// The Markdown table of exit statuses (docs/using-share.md).
    static var exitMarkdown: String {
        (["| status | meaning |", "|---|---|"]
            + ExitStatus.allCases.map { "| `\($0.rawValue)` | \(cell($0.meaning)) |" }).joined(separator: "\n")
    }

    private static func exitLines(_ statuses: [ExitStatus]) -> [String] {
        statuses.map { "  " + pad(String($0.rawValue), 6) + $0.meaning }
    }

    private static func cell(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
