import Foundation
import TestSupport
import Testing

/// The folders of Sources/ShareIngestCore reference each other without a
/// cycle (issue 60): a folder names types of the folders below it only
/// (docs/design.md, "Layers"), so a lower folder that names a higher one's
/// type fails here (`scripts/folder-references.sh --strict` names the folders
/// and the types).
@Suite struct FolderReferenceTests {
    @Test func theFoldersReferenceEachOtherWithoutACycle() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            Fixtures.packageRoot.appendingPathComponent("scripts/folder-references.sh").path, "--strict",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let found = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let cycles = found.components(separatedBy: "cycles (folders").dropFirst().joined()
        #expect(
            process.terminationStatus == 0 && cycles.contains("\n  none\n"),
            "folders of Sources/ShareIngestCore reference each other in a cycle:\n\(cycles)")
    }
}
