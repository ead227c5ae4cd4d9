import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 61: every example output in the README and its pages is produced by
/// a test. An example is a code block line `$ share …` and the lines after it
/// up to the block's end; each is run here as written (by `/bin/sh`, its `~`
/// a home folder of the test's, stdout and stderr in the order a terminal
/// shows them) in the situation it describes, and what it prints must be what
/// the page shows, but for what differs on every run: the home folder is
/// shown as `/home/me`, a batch id as `0B1C2D3E-…`, a batch's seconds as
/// `0.61 s`. An example no situation here makes fails too.
@Suite struct DocExampleTests {
    /// One example: where it is, the command, the lines it shows.
    struct Example: Sendable, CustomStringConvertible {
        let page: String
        let command: String
        let output: [String]
        var description: String { "\(page): $ \(command)" }
    }

    /// Every example of README.md and docs/*.md.
    static func examples() throws -> [Example] {
        var found: [Example] = []
        for page in try ProjectDocs.pages() {
            var inBlock = false
            var current: (command: String, output: [String])?
            var indent = 0  // the `$ share` line's: the block's own, taken off each line after it
            func close() {
                if let current {
                    found.append(Example(page: page.path, command: current.command, output: current.output))
                }
                current = nil
            }
            for line in page.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("```") {
                    close()
                    inBlock.toggle()
                    continue
                }
                guard inBlock else { continue }
                if trimmed.hasPrefix("$ share ") {
                    close()
                    indent = line.prefix { $0 == " " }.count
                    current = (String(trimmed.dropFirst(2)), [])
                } else if current != nil {
                    current?.output.append(String(line.dropFirst(min(indent, line.prefix { $0 == " " }.count))))
                }
            }
        }
        return found
    }

    /// The folders a situation is made in: a home folder (`~`) and a container.
    struct Work {
        let directory = TemporaryDirectory("doc-example")
        var home: String { directory.file("home") }
        var container: String { directory.file("container") }

        /// `share ARGUMENTS` run to set the situation up; it must end with one of `statuses`.
        func share(_ arguments: [String], endingWith statuses: Set<Int32> = [0]) throws {
            let run = try ShareProcess.run(arguments + ["--container", container])
            try #require(statuses.contains(run.status), "\(arguments): \(run.stderr)")
        }
    }

    /// How each example's situation is made, by its command.
    static let situations: [String: @Sendable (Work) throws -> Void] = [
        // A camera card: a RAW and its JPEG, a HEIC with its XMP sidecar, a FIFO, a link out of the drop.
        "share ingest -n ~/Downloads/card": { work in
            let card = work.home + "/Downloads/card"
            try FileManager.default.createDirectory(atPath: card, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                atPath: work.directory.file("elsewhere"), withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: card + "/IMG_0001.CR2", contents: Data("II*\0".utf8))
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: card + "/IMG_0001.JPG")
            try FileManager.default.copyItem(atPath: Fixtures.media("image.heic"), toPath: card + "/IMG_0002.HEIC")
            _ = FileManager.default.createFile(
                atPath: card + "/IMG_0002.HEIC.xmp",
                contents: Data(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"></x:xmpmeta>"#.utf8))
            try #require(mkfifo(card + "/pipe", 0o600) == 0)
            try FileManager.default.createSymbolicLink(
                atPath: card + "/up", withDestinationPath: work.directory.file("elsewhere"))
        },
        // A drop of a photo, the same photo again, and a FIFO, delivered under the key Words.
        "share report Words": { work in
            let drop = work.home + "/drop"
            try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: drop + "/a.jpg")
            try FileManager.default.copyItem(atPath: Fixtures.media("photo.jpg"), toPath: drop + "/b.jpg")
            try #require(mkfifo(drop + "/pipe", 0o600) == 0)
            // the FIFO skipped
            try work.share(["ingest", "--key", "Words", "--quiet", "--isolation", "none", drop], endingWith: [1])
        },
        // A batch larger than the page and the sheet show: 2,100 one-line notes.
        "share report Ops2100 --html page.html --contact-sheet sheet.jpg": { work in
            let drop = work.directory.file("ops")
            try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
            for n in 1...2100 {
                _ = FileManager.default.createFile(atPath: drop + "/op\(n).txt", contents: Data("op \(n)\n".utf8))
            }
            try work.share(["ingest", "--key", "Ops2100", "--quiet", "--isolation", "none", drop])
        },
    ]

    /// What an example prints, as its page shows it: the run's own folders and numbers replaced.
    static func normalized(_ text: String, home: String) -> [String] {
        var text = text.replacingOccurrences(of: home, with: "/home/me")
        text = text.replacingOccurrences(
            of: #"batch [0-9A-F]{8}-[0-9A-F-]{27}"#, with: "batch 0B1C2D3E-…", options: .regularExpression)
        text = text.replacingOccurrences(
            of: #"items in [0-9]+\.[0-9]+ s"#, with: "items in 0.61 s", options: .regularExpression)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).reversed().drop {
            $0.isEmpty
        }.reversed()
    }

    @Test func everyExampleHasASituation() throws {
        let examples = try Self.examples()
        #expect(examples.count >= 3, "\(examples)")
        for example in examples {
            #expect(Self.situations[example.command] != nil, "\(example): no test makes it (add its situation here)")
        }
    }

    @Test(arguments: try examples()) func eachExamplePrintsWhatItsPageShows(_ example: Example) throws {
        let make = try #require(Self.situations[example.command], "\(example): no situation")
        let work = Work()
        try FileManager.default.createDirectory(atPath: work.home, withIntermediateDirectories: true)
        try make(work)
        // As a user's shell runs it: `share` on PATH, `~` the home folder, stderr beside stdout.
        let binary = (Fixtures.shareBinary as NSString).deletingLastPathComponent
        let run = try ShareProcess.run(
            ["-c", "exec 2>&1; " + example.command],
            environment: ["HOME": work.home, "PATH": binary + ":/usr/bin:/bin", "SHARE_CONTAINER": work.container],
            directory: work.directory.path, executable: "/bin/sh")
        #expect(run.status == 0, "\(example): \(run.stdout)")
        #expect(Self.normalized(run.stdout, home: work.home) == example.output, "\(example) prints:\n\(run.stdout)")
    }
}
