import Foundation
import TestSupport
import Testing

/// The sizes of the code (issue 60, size and form): no function, initializer or
/// deinitializer in Sources over 80 lines, no file of ShareIngestCore over 500
/// (`scripts/code-sizes.sh` names each one, with its file, line and length).
@Suite struct CodeSizeTests {
    @Test func noFunctionOver80LinesAndNoCoreFileOver500() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Fixtures.packageRoot.appendingPathComponent("scripts/code-sizes.sh").path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let found = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(
            process.terminationStatus == 0 && found.isEmpty,
            "functions over 80 lines, or files of ShareIngestCore over 500:\n\(found)")
    }
}
