import DecoderIsolation
import Foundation
import Glibc
import MediaFormats
import TestSupport
import Testing

/// The helper's sandbox, tried from the inside and looked at from the outside.
@Suite struct SandboxTests {
    /// The helper, set up exactly as for decoding (libraries loaded, sandbox
    /// entered), tries what it must never do: write a file, read the user's
    /// files, open sockets, fork, exec, signal its parent. Each is refused.
    @Test func sandboxedHelperCannotWriteConnectOrExec() throws {
        let scratch = TemporaryDirectory("sandbox")
        let secret = try scratch.add("secret.txt", bytes: Array("not for the decoder".utf8))
        let target = scratch.file("written-by-helper")
        // A helper with librsvg and ImageMagick loaded: the most that ever runs.
        let result = try ShareProcess.run(["decode-helper", "--sandbox-only-loaders", "--self-check", target, secret])
        #expect(result.status == 0, "\(result.stderr)")
        var checks: [String: (refused: Bool, error: String)] = [:]
        for line in result.stdout.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            checks[object["check"] as! String] = (object["refused"] as! Bool, object["error"] as! String)
        }
        let attempts = [
            "open-for-writing", "open-existing-for-writing", "create-directory", "read-outside-allowed-paths", "socket-inet", "socket-unix",
            "fork", "exec", "signal-parent",
        ]
        for attempt in attempts {
            #expect(checks[attempt]?.refused == true, "\(attempt): \(String(describing: checks[attempt]))")
        }
        #expect(checks["open-for-writing"]?.error == "Permission denied")
        #expect(checks["read-outside-allowed-paths"]?.error == "Permission denied")
        #expect(checks["socket-inet"]?.error == "Operation not permitted")
        #expect(checks["exec"]?.error == "Operation not permitted")
        #expect(!FileManager.default.fileExists(atPath: target))
        let status = checks["status"]?.error ?? ""
        #expect(status.contains("NoNewPrivs:\t1") && status.contains("Seccomp:\t2"), "\(status)")
    }

    /// A helper that has decoded a photo shows the sandbox in its /proc/PID/status.
    @Test func runningHelperShowsNoNewPrivsAndSeccompFilter() throws {
        var configuration = ProcessIsolatedDecoder.Configuration(helperExecutable: Fixtures.shareBinary)
        configuration.prestartedHelpers = 1
        let decoder = ProcessIsolatedDecoder(configuration)
        defer { decoder.shutdown() }
        decoder.prepare()
        let decoded = try decoder.decode(DecodeRequest(path: Fixtures.media("photo.jpg"), label: "photo.jpg", format: .jpeg, thumbnail: ThumbnailSpec()))
        guard case .made(let thumbnail) = decoded.thumbnail else {
            Issue.record("no thumbnail: \(String(describing: decoded.thumbnail))")
            return
        }
        #expect(thumbnail.width == 360 && thumbnail.height == 270)
        let helpers = decoder.helperProcessIDs
        #expect(helpers.count == 1)
        for pid in helpers {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            #expect(status.contains("NoNewPrivs:\t1"), "\(status)")
            #expect(status.contains("Seccomp:\t2"), "\(status)")
            let command = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)
            #expect(command.contains("decode-helper"))
        }
    }
}
