import Foundation
import TestSupport
import Testing

/// The doc comments' symbol links (issue 60): each ``symbol`` names what the
/// package declares, so a rename or a new argument label that leaves a link
/// behind fails here (`scripts/check-doc-links.sh` names the file and line).
/// The same script checks the links between the README and its pages in
/// docs/: each file exists and each #anchor is one of its headings.
@Suite struct DocLinkTests {
    @Test func everyDocCommentSymbolLinkNamesADeclaration() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Fixtures.packageRoot.appendingPathComponent("scripts/check-doc-links.sh").path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let found = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(
            process.terminationStatus == 0 && found.isEmpty,
            "stale symbol links in doc comments, or broken links between the README and docs/:\n\(found)")
    }
}
