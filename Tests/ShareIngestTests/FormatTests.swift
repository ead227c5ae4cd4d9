import Foundation
import TestSupport
import Testing

/// The tree is as the toolchain's formatter leaves it (issue 60): `swift format
/// lint --strict` with the repository's `.swift-format` (four-space indent,
/// lines of at most 120 characters) finds nothing in any Swift file of the
/// package, its tests, its example and its fuzz targets. A line the formatter
/// would break, or a lint rule broken, fails here with its file and line.
@Suite struct FormatTests {
    @Test func everySwiftFileIsAsTheFormatterLeavesIt() throws {
        let root = Fixtures.packageRoot
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.currentDirectoryURL = root
        process.arguments = [
            "swift", "format", "lint", "--strict", "--parallel", "--recursive",
            "--configuration", root.appendingPathComponent(".swift-format").path,
            "Sources", "Tests", "Examples", "Plugins", "Fuzz", "Package.swift",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let found = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(
            process.terminationStatus == 0 && found.isEmpty,
            "not as `swift format` leaves it (run `swift format --in-place --recursive` on the file):\n\(found)")
    }
}
