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

    /// libpq and what it needs (Kerberos, LDAP, GnuTLS …) are loaded by the
    /// commands that name a database, not linked (issue 59).
    static let postgresClientLibraries = ["libpq", "libkrb5", "libldap", "libgssapi_krb5", "libsasl2"]

    @Test func shareLinksNoPostgreSQLClient() throws {
        let linked = try Self.linked(Fixtures.shareBinary).filter { library in
            Self.postgresClientLibraries.contains { library.hasPrefix($0 + ".") }
        }
        #expect(linked.isEmpty, "share links \(linked)")
    }

    /// A `--db` command without its client library says which package gives
    /// it, exits 69 (unavailable), and records nothing in the container.
    @Test func aDatabaseCommandWithoutLibpqNamesIt() throws {
        let work = TemporaryDirectory("no-libpq")
        let environment = ["SHARE_TEST_LIBPQ": "libpq-missing.so.5"]
        let url = "postgresql://share@127.0.0.1:1/share"
        for arguments in [
            ["ingest", "--db", url, "--container", work.file("container"), Fixtures.testdata("media/photo.jpg")],
            ["worker", "--db", url], ["status", "--db", url],
        ] {
            let run = try ShareProcess.run(arguments, environment: environment)
            #expect(run.status == 69, "share \(arguments[0]): \(run.status) \(run.stderr)")
            #expect(
                run.stderr.contains("libpq, cannot be loaded (install the libpq5 package)")
                    && run.stderr.contains("libpq-missing.so.5"), "share \(arguments[0]): \(run.stderr)")
        }
        let files = (FileManager.default.enumerator(atPath: work.file("container"))?.allObjects as? [String] ?? [])
            .filter { name in
                var isFolder: ObjCBool = false
                return FileManager.default.fileExists(atPath: work.file("container/" + name), isDirectory: &isFolder)
                    && !isFolder.boolValue
            }
        #expect(files.isEmpty, "the container holds \(files)")
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
        let postgres = mapped.filter { library in Self.postgresClientLibraries.contains { library.hasPrefix($0 + ".") }
        }
        #expect(postgres.isEmpty, "share watch without --db maps \(postgres.sorted())")
    }
}
