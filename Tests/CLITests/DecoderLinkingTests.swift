import Foundation
import TestSupport
import Testing

/// Issue 59: `share` maps no decoding library (libvips, libav, libheif,
/// libtiff); only `share-helper` does (`share` links ShareIngestCore, which
/// has no MediaKit, and its contact sheet is drawn in a helper).
@Suite struct DecoderLinkingTests {
    static let decoderLibraries = ["libvips", "libavcodec", "libavformat", "libheif", "libtiff"]

    /// The shared libraries `ldd` lists for `binary`.
    static func linked(_ binary: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        process.arguments = [binary]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").map {
            String($0.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
    }

    static func decoders(in libraries: [String]) -> [String] {
        libraries.filter { library in decoderLibraries.contains { library.hasPrefix($0) } }
    }

    @Test func theHelperLinksTheDecoders() throws {
        let found = Self.decoders(in: try Self.linked(Fixtures.helperBinary))
        #expect(
            Set(found.map { $0.split(separator: ".").first.map(String.init) ?? $0 }).isSuperset(of: [
                "libvips", "libavcodec", "libheif", "libtiff",
            ]), "\(found)")
    }

    @Test func shareLinksNoDecoder() throws {
        let linked = Self.decoders(in: try Self.linked(Fixtures.shareBinary))
        #expect(linked.isEmpty, "share links \(linked)")
    }

    /// The same, from a running `share watch`'s /proc/PID/maps.
    @Test func aRunningWatcherMapsNoDecoder() throws {
        let work = TemporaryDirectory("linking")
        try FileManager.default.createDirectory(atPath: work.file("inbox"), withIntermediateDirectories: true)
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
        watcher.arguments = ["watch", work.file("inbox"), "--container", work.file("container"), "--settle", "0"]
        watcher.standardOutput = FileHandle.nullDevice
        watcher.standardError = FileHandle.nullDevice
        try watcher.run()
        defer {
            watcher.terminate()
            watcher.waitUntilExit()
        }
        // Every library share needs is mapped before its main runs: libc is among them.
        var maps = ""
        for _ in 0..<200 where !maps.contains("libc.so") {
            // (Read to its end: a /proc file has no size to read up to.)
            maps =
                FileHandle(forReadingAtPath: "/proc/\(watcher.processIdentifier)/maps").map {
                    String(decoding: $0.readDataToEndOfFile(), as: UTF8.self)
                } ?? ""
            usleep(10_000)
        }
        try #require(maps.contains("libc.so"), "the watcher's maps were not read")
        let mapped = Set(maps.split(separator: "\n").compactMap { $0.split(separator: "/").last.map(String.init) })
        let decoders = Self.decoders(in: Array(mapped))
        #expect(decoders.isEmpty, "share watch maps \(decoders.sorted())")
    }
}
