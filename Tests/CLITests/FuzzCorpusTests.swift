import Foundation
import TestSupport
import Testing

/// Every input in the fuzzers' seed corpora (and every crash ever found, once
/// added there) runs through the fuzz targets' checks in the ordinary build:
/// a regression in the parsers they guard fails here, without libFuzzer.
@Suite struct FuzzCorpusTests {
    @Test(arguments: [
        ("FuzzRedirectURL", "redirect"), ("FuzzManifest", "manifest"), ("FuzzSniffer", "sniffer"), ("FuzzHEIF", "heif"),
        ("FuzzRAW", "raw"), ("FuzzMoments", "moments"), ("FuzzPipeline", "pipeline"),
        ("FuzzTakeout", "takeout"), ("FuzzXMP", "xmp"), ("FuzzEXIF", "exif"), ("FuzzISOBMFF", "isobmff"),
        ("FuzzPNG", "png"), ("FuzzBurst", "burst"),
        ("FuzzSidecar", "sidecar"),
    ])
    func seedCorpusPassesTheTargetsChecks(target: String, corpus: String) throws {
        let folder = Fixtures.packageRoot.appendingPathComponent("Fuzz/corpus/\(corpus)").path
        let expected = try FileManager.default.contentsOfDirectory(atPath: folder).count
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.builtExecutable(target))
        process.arguments = [folder]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(
            process.terminationReason == .exit && process.terminationStatus == 0,
            "\(target) failed on its corpus:\n\(text)")
        #expect(text.contains("replayed \(expected) inputs"), "\(text)")
    }
}
