import Foundation
import TestSupport
import Testing

/// The option lists and exit-status table (in docs/using-share.md and
/// docs/operating.md since issue 60; read in whichever page of README.md and
/// docs/ holds them) say what the option table says (observed on 68f4c5d:
/// help and README had drifted: `--isolation process|none`, no `--db-file`,
/// 5 of 8 stages): each table is the one
/// `share help CMD --markdown` makes, and each `share CMD […]` synopsis in
/// the README or a page of docs/ names only options that command takes. The
/// README's first example runs as written.
@Suite struct ReadmeTests {
    static var readme: String {
        get throws { try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("README.md"), encoding: .utf8) }
    }

    /// Every `<!-- NAME … -->` block of every page, with the page it is in.
    static func blocksInEveryPage(_ name: String) throws -> [(label: String, table: String, page: String)] {
        try ProjectDocs.pages().flatMap { page in
            blocks(name, in: page.text).map { (label: $0.key, table: $0.value, page: page.path) }
        }
    }

    /// A page's blocks between `<!-- NAME… -->` and `<!-- /NAME -->`, by the words after NAME up to `(`.
    static func blocks(_ name: String, in text: String) -> [String: String] {
        var found: [String: String] = [:]
        var rest = text[...]
        while let open = rest.range(of: "<!-- \(name)") {
            guard let endOfLine = rest[open.upperBound...].firstIndex(of: "\n"),
                let close = rest[endOfLine...].range(of: "<!-- /\(name) -->")
            else { break }
            let label = rest[open.upperBound..<endOfLine].prefix { $0 != "(" }.trimmingCharacters(
                in: CharacterSet(charactersIn: ": ").union(.whitespaces))
            found[label] = String(rest[rest.index(after: endOfLine)..<close.lowerBound]).trimmingCharacters(
                in: .newlines)
            rest = rest[close.upperBound...]
        }
        return found
    }

    @Test func everyCommandsOptionTableIsTheOneTheParserUses() throws {
        let tables = try Self.blocksInEveryPage("options")
        for command in ["ingest", "open", "watch", "status", "report", "gc", "worker", "db migrate", "doctor"] {
            let made = try ShareProcess.run(["help"] + command.split(separator: " ").map(String.init) + ["--markdown"])
            #expect(made.status == 0)
            let found = tables.filter { $0.label == command }
            #expect(!found.isEmpty, "neither the README nor a page of docs/ has an option table for share \(command)")
            for table in found {
                #expect(
                    table.table == made.stdout.trimmingCharacters(in: .newlines),
                    "\(table.page)'s table of share \(command) differs from `share help \(command) --markdown`")
            }
        }
    }

    @Test func theExitStatusTableIsTheOneTheHelpPrints() throws {
        let tables = try Self.blocksInEveryPage("exit-status").filter { $0.label.isEmpty }
        #expect(!tables.isEmpty, "neither the README nor a page of docs/ has the exit-status table")
        let made = try ShareProcess.run(["help", "--markdown"]).stdout.trimmingCharacters(in: .newlines)
        for found in tables {
            let table = found.table
            #expect(table == made, "\(found.page)'s exit-status table differs from `share help --markdown`")
            for status in ["0", "1", "64", "66", "69", "73", "75", "130", "143"] {
                #expect(table.contains("| `\(status)` |"))
            }
        }
    }

    /// Every `share CMD …` written in backquotes, in the README and every page
    /// of docs/, names only options CMD takes.
    @Test func everySynopsisNamesOnlyOptionsItsCommandTakes() throws {
        let pages = try ProjectDocs.pages()
        #expect(pages.count > 1, "no page in docs/")
        var options: [String: Set<String>] = [:]
        for command in ConventionTests.commands {
            let help = try ShareProcess.run(command.split(separator: " ").map(String.init) + ["--help"]).stdout
            options[command] = Set(ConventionTests.options(inHelp: help).map(\.name))
        }
        let spans = pages.flatMap {
            $0.text.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        }.filter { $0.hasPrefix("share ") }
        var checked = 0
        for span in spans {
            let words = span.split(separator: " ").map(String.init)
            let command = words.count > 2 && words[1] == "db" ? "db \(words[2])" : words[1]
            guard let allowed = options[command] else { continue }
            for word in words where word.hasPrefix("--") || word.hasPrefix("[--") {
                let name = String(word.drop { $0 == "[" }.dropFirst(2).prefix { $0.isLetter || $0 == "-" })
                #expect(allowed.contains(name), "README or docs/: `\(span)`: share \(command) takes no --\(name)")
            }
            checked += 1
        }
        #expect(checked > 20, "only \(checked) synopses found")
    }

    /// The first example, as written (observed: an unquoted path with a space), planned with `-n`.
    @Test func theFirstExampleRunsAsWritten() throws {
        let text = try Self.readme
        let usage = try #require(text.components(separatedBy: "## Using `share`\n").dropFirst().first)
        let block = try #require(
            usage.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        let line = try #require(block.split(separator: "\n").first { $0.hasPrefix("share ingest ") })
        let home = TemporaryDirectory("readme-home")
        try home.add(
            "Downloads/holiday photo.heic",
            copying: Fixtures.packageRoot.appendingPathComponent("testdata/heif/odd-size.heic").path)
        let script = "share() { \"\(Fixtures.shareBinary)\" \"$1\" -n \"${@:2}\"; }; " + line
        let run = try Tool.run("/bin/bash", ["--norc", "-c", script], environment: ["HOME": home.path])
        #expect(run.status == 0, "\(line): \(run.output)")
        #expect(
            run.output.contains("holiday photo.heic") && run.output.contains("text:Look at this")
                && run.output.contains("url:https://example.org"), "\(run.output)")
        #expect(run.output.contains("would ingest 3 items"), "\(run.output)")
    }
}
