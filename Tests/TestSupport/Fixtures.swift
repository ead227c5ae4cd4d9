import Foundation

/// Paths to the committed test media and the built `share` binary.
public enum Fixtures {
    /// The package root, found from this file's path.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `testdata/media/<name>`.
    public static func media(_ name: String) -> String {
        packageRoot.appendingPathComponent("testdata/media/\(name)").path
    }

    /// `testdata/fidelity/<name>`: one file per class of issue 13 (see testdata/README.md).
    public static func fidelity(_ name: String) -> String {
        packageRoot.appendingPathComponent("testdata/fidelity/\(name)").path
    }

    /// `testdata/motion/<name>`: motion photos of every layout and Live Photo
    /// pairs, made by `testdata/make-motion.py`.
    public static func motion(_ name: String) -> String {
        packageRoot.appendingPathComponent("testdata/motion/\(name)").path
    }

    /// A real phone's motion photo by name: committed in `testdata/motion/real`
    /// (testdata/README.md gives each one's source, licence and SHA-256), or,
    /// for the optional ones of that table, in `$SHARE_MOTION_SAMPLES` when it
    /// is set; nil when it is in neither.
    public static func realSample(_ name: String) -> String? {
        var folders = [packageRoot.appendingPathComponent("testdata/motion/real").path]
        if let more = ProcessInfo.processInfo.environment["SHARE_MOTION_SAMPLES"] { folders.append(more) }
        return folders.map { $0 + "/" + name }.first { FileManager.default.fileExists(atPath: $0) }
    }
    /// `testdata/<relative>`.
    public static func testdata(_ relative: String) -> String {
        packageRoot.appendingPathComponent("testdata/\(relative)").path
    }

    /// `testdata/privacy/<name>`: location metadata as phones and tools write it (issue 24).
    public static func privacy(_ name: String) -> String { testdata("privacy/\(name)") }

    /// `testdata/sample-drop`.
    public static var sampleDrop: String { packageRoot.appendingPathComponent("testdata/sample-drop").path }

    /// What `testdata/make-testdata.sh` measured for `name` (`testdata/media/expected.json`).
    public static func expected(_ name: String) -> ExpectedMedia? { expectedMedia[name] }

    private static let expectedMedia: [String: ExpectedMedia] = {
        let url = packageRoot.appendingPathComponent("testdata/media/expected.json")
        guard let data = try? Data(contentsOf: url) else { return [:] }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return (try? decoder.decode([String: ExpectedMedia].self, from: data)) ?? [:]
    }()

    /// What `testdata/make-fidelity.sh` measured for `name` (`testdata/fidelity/expected.json`),
    /// and what a user should get for it.
    public static func fidelityExpected(_ name: String) -> FidelityExpectation? { fidelityExpectations[name] }

    /// Every fixture of `testdata/fidelity`, by name.
    public static var fidelityNames: [String] { fidelityExpectations.keys.sorted() }

    private static let fidelityExpectations: [String: FidelityExpectation] = {
        let url = packageRoot.appendingPathComponent("testdata/fidelity/expected.json")
        guard let data = try? Data(contentsOf: url) else { return [:] }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return (try? decoder.decode([String: FidelityExpectation].self, from: data)) ?? [:]
    }()

    /// The built `share` executable beside the test bundle.
    public static var shareBinary: String {
        _ = outsideServiceManager
        return builtExecutable("share")
    }

    /// The built decoder helper executable (`share-helper`, next to `share`).
    public static var helperBinary: String { builtExecutable("share-helper") }

    /// The built `InProcessIngest` (Tests/InProcessIngest): the library's
    /// ShareIngestor with its in-process decoder, in a process of its own.
    public static var inProcessIngestBinary: String { builtExecutable("InProcessIngest") }

    /// `share watch` and `share worker` exit 0 on SIGTERM under a service
    /// manager (`NOTIFY_SOCKET` or `INVOCATION_ID` set), else 143: a test suite
    /// run by systemd (a CI runner's unit) must not pass that on to every
    /// `share` it starts. A test that wants it sets it for its process.
    private static let outsideServiceManager: Void = {
        unsetenv("NOTIFY_SOCKET")
        unsetenv("INVOCATION_ID")
    }()

    /// An executable product of this package, from the build the tests run in.
    public static func builtExecutable(_ name: String) -> String {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent(name).path,
            packageRoot.appendingPathComponent(".build/debug/\(name)").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[1]
    }
}

/// A temporary folder removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init(_ label: String = "share-ingest-test") {
        let template = NSTemporaryDirectory() + "/\(label)-XXXXXX"
        var bytes = Array(template.utf8CString)
        let created = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(created != nil, "mkdtemp failed")
        path = bytes.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `<path>/<name>`.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Creates `<path>/<relative>` (and folders), copying `source` or writing `bytes`.
    @discardableResult
    public func add(_ relative: String, copying source: String? = nil, bytes: [UInt8]? = nil) throws -> String {
        let destination = file(relative)
        try FileManager.default.createDirectory(
            atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if let source {
            try FileManager.default.copyItem(atPath: source, toPath: destination)
        } else {
            try Data(bytes ?? []).write(to: URL(fileURLWithPath: destination))
        }
        return destination
    }
}

/// The measured facts of one test file.
public struct ExpectedMedia: Decodable, Sendable {
    public let kind: String?
    public let mime: String?
    public let displayWidth: Int?
    public let displayHeight: Int?
    public let durationMs: Double?
}

/// Inspects images with the `vips` command-line tool (tests may use the CLI tools
/// to look at what the pipeline made; the pipeline itself never does).
public enum ImageInspector {
    /// The mean of all bands of all pixels (`vips avg`).
    public static func mean(_ path: String) throws -> Double {
        let output = try run(["avg", path])
        return Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan
    }

    /// The pixel at (x, y) (`vips getpoint`).
    public static func pixel(_ path: String, x: Int, y: Int) throws -> [Double] {
        try run(["getpoint", path, String(x), String(y)]).split(whereSeparator: \.isWhitespace).compactMap {
            Double($0)
        }
    }

    /// Width, height and bands (`vipsheader`).
    public static func size(_ path: String) throws -> (width: Int, height: Int) {
        let w = try run(["-f", "width", path], tool: "vipsheader")
        let h = try run(["-f", "height", path], tool: "vipsheader")
        return (
            Int(w.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1,
            Int(h.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        )
    }

    /// True if the pixel is clearly red (the orientation marker at the top-left of every fixture).
    public static func isRed(_ rgb: [Double]) -> Bool { rgb.count >= 3 && rgb[0] > 150 && rgb[1] < 100 && rgb[2] < 100 }

    /// Runs `vips` with `arguments` to make an image; throws when it fails.
    public static func vips(_ arguments: [String]) throws {
        _ = try run(arguments, checked: true)
    }

    /// The mean absolute difference of two images of one size, over every band of
    /// every pixel (0–255 for 8-bit images).
    public static func meanAbsoluteDifference(_ a: String, _ b: String) throws -> Double {
        let directory = TemporaryDirectory()
        let difference = directory.file("difference.v")
        let absolute = directory.file("absolute.v")
        try vips(["subtract", a, b, difference])
        try vips(["abs", difference, absolute])
        return try mean(absolute)
    }

    /// A `vips` command that failed.
    public struct InspectorError: Error, CustomStringConvertible {
        public let command: String
        public var description: String { "failed: \(command)" }
    }

    /// `tool`'s standard output; with `checked`, throws when it fails.
    static func run(_ arguments: [String], tool: String = "vips", checked: Bool = false) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/\(tool)")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard !checked || process.terminationStatus == 0 else {
            throw InspectorError(command: ([tool] + arguments).joined(separator: " "))
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// What a user should get for one fidelity fixture (see testdata/README.md).
public struct FidelityExpectation: Decodable, Sendable {
    /// `image`, `video` or `file`.
    public let type: String
    /// The extension to deliver.
    public let `extension`: String
    public let mime: String
    public let displayWidth: Int?
    public let displayHeight: Int?
    public let durationMs: Double?
    /// Whether a thumbnail is expected.
    public let thumbnail: Bool?
    /// Mean luma (0–255) of the displayed picture, poster or cover.
    public let meanLuma: Double?
    /// The first keyframe that is not black (ms from the start): the poster to take.
    public let firstBrightKeyframeMs: Double?
    public let keyframesMs: [Double]?
    public let cover: Cover?

    /// An audio file's attached picture.
    public struct Cover: Decodable, Sendable {
        public let width: Int
        public let height: Int
    }
}
