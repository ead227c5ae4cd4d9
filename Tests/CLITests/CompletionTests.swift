import Foundation
import TestSupport
import Testing

/// `share completion bash|zsh|fish`: each script is loaded in its own shell
/// (scripts/setup.sh installs bash-completion, zsh and fish), which is asked
/// to complete a command, an option and a value (words, and a folder), as a
/// person pressing Tab would.
@Suite struct CompletionTests {
    /// What each shell completes, from a folder holding `drop/`.
    typealias Completer = (_ line: String) throws -> [String]

    /// The cases every shell must pass: the line typed, and words it must offer (and must not).
    static let cases: [(line: String, offers: [String], not: [String])] = [
        ("share ing", ["ingest"], ["open"]),
        ("share ingest --conta", ["--container"], ["--json"]),
        ("share ingest --isolation p", ["process", "process-weaker"], ["none"]),
        ("share ingest --container dr", ["drop"], []),
        ("share db m", ["migrate"], []),
        ("share db migrate --d", ["--db", "--db-file"], ["--container"]),
        ("share watch --on-success ", ["move", "delete", "keep"], []),
        ("share completion ", ["bash", "zsh", "fish"], []),
    ]

    /// A folder with `drop/` in it and the script of `shell` written there.
    static func workspace(_ shell: String) throws -> (TemporaryDirectory, String) {
        let work = TemporaryDirectory("completion-\(shell)")
        try FileManager.default.createDirectory(atPath: work.file("drop"), withIntermediateDirectories: true)
        let script = try ShareProcess.run(["completion", shell])
        #expect(script.status == 0 && !script.stdout.isEmpty, "\(script.stderr)")
        let name = shell == "zsh" ? "functions/_share" : "share.\(shell)"
        try FileManager.default.createDirectory(atPath: work.file("functions"), withIntermediateDirectories: true)
        try script.stdout.write(toFile: work.file(name), atomically: true, encoding: .utf8)
        return (work, work.file(name))
    }

    static func check(_ shell: String, _ complete: Completer) throws {
        for (line, offers, not) in cases {
            let offered = try complete(line)
            for word in offers {
                #expect(offered.contains(word), "\(shell): \(line)<TAB> offers \(offered), not \(word)")
            }
            for word in not { #expect(!offered.contains(word), "\(shell): \(line)<TAB> offers \(word)") }
        }
    }

    @Test func bashCompletesCommandsOptionsAndValues() throws {
        let (work, script) = try Self.workspace("bash")
        // Loaded as bash-completion loads it (its library first, when installed), then registered for `share`.
        let preamble =
            "cd \(work.path); [ -r /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion; . \(script)"
        let registered = try Tool.run("/bin/bash", ["--norc", "--noprofile", "-c", preamble + "; complete -p share"])
        #expect(
            registered.output.contains("-F _share") && registered.output.hasSuffix("share\n"), "\(registered.output)")
        try Self.check("bash") { line in
            var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            if line.hasSuffix(" ") { words.append("") }
            let array = words.map { "'\($0)'" }.joined(separator: " ")
            let run = try Tool.run(
                "/bin/bash",
                [
                    "--norc", "--noprofile", "-c",
                    preamble
                        + "; COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; _share; printf '%s\\n' \"${COMPREPLY[@]}\"",
                ])
            return run.output.split(separator: "\n").map { $0.hasSuffix("/") ? String($0.dropLast()) : String($0) }
        }
    }

    @Test func zshCompletesCommandsOptionsAndValues() throws {
        let (work, _) = try Self.workspace("zsh")
        let driver = work.file("complete.zsh")
        try Self.zshDriver.write(toFile: driver, atomically: true, encoding: .utf8)
        try Self.check("zsh") { line in
            let run = try Tool.run("/usr/bin/zsh", ["-f", driver, work.file("functions"), work.path, line])
            #expect(run.status == 0, "zsh never finished completing \(line): \(run.output)")
            return run.output.split(separator: "\n").map { $0.hasSuffix("/") ? String($0.dropLast()) : String($0) }
        }
    }

    @Test func fishCompletesCommandsOptionsAndValues() throws {
        let (work, script) = try Self.workspace("fish")
        try Self.check("fish") { line in
            let run = try Tool.run(
                "/usr/bin/fish", ["--no-config", "-c", "cd \(work.path); source \(script); complete -C '\(line)'"])
            #expect(!run.output.contains("Invalid") && !run.output.contains("error"), "\(run.output)")
            return run.output.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }.map {
                $0.hasSuffix("/") ? String($0.dropLast()) : $0
            }
        }
    }

    /// Drives an interactive zsh in a pseudo-terminal (zsh/zpty): types the
    /// line and Tab, and prints every candidate the completion system adds
    /// (`compadd` wrapped to print them, between markers the echo of the
    /// typed commands cannot contain).
    static let zshDriver = #"""
        # complete.zsh FPATH_DIR WORKING_DIR LINE
        zmodload zsh/zpty || exit 3
        local dir=$1 cwd=$2 line=$3 out all=""
        zpty z zsh -f -i
        zpty -w z "PS1=''; PS2=''; cd ${(q)cwd}; fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
        zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a __hits; builtin compadd -A __hits "$@"; local h; for h in $__hits; do print -r -- "<<HI""T:$h>>"; done; builtin compadd "$@"; }'
        zpty -w z 'comppostfuncs=(__done); __done() { print -r -- "<<DO""NE>>"; }; bindkey "^I" complete-word'
        zpty -w z "$line"$'\t'
        local -i tries=0
        while (( tries++ < 600 )); do
          if zpty -r -t z out; then all+=$out; [[ $all == *'<<DONE>>'* ]] && break; else sleep 0.05; fi
        done
        zpty -d z
        print -r -- ${(F)${(M)${(f)all}:#*<<HIT:*}} | sed -n 's/.*<<HIT:\(.*\)>>.*/\1/p' | sort -u
        [[ $all == *'<<DONE>>'* ]]
        """#
}
