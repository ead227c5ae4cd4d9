import Foundation
import TestSupport
import Testing

/// Real processes killed with real signals at many moments; after restarting
/// until done, every source is in the manifest exactly once, byte for byte,
/// with nothing left over in the container.
@Suite(.serialized) struct CrashSafetyTests {
    /// A drop of `count` small files with distinct contents: text files, and
    /// JPEGs and a video made unique by bytes after their end (still valid media).
    static func makeDrop(count: Int) throws -> TemporaryDirectory {
        let drop = TemporaryDirectory("drop")
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg")))
        let clip = try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("clip-h264.mp4")))
        for i in 0..<count {
            let folder = "part\(i % 4)"
            switch i % 10 {
            case 0: try drop.add("\(folder)/photo-\(i).jpg", bytes: Array(photo) + Array("unique \(i)".utf8))
            case 5 where i % 50 == 5: try drop.add("\(folder)/clip-\(i).mp4", bytes: Array(clip) + Array("unique \(i)".utf8))
            default: try drop.add("\(folder)/note-\(i).txt", bytes: Array("note \(i)\n".utf8) + Array(repeating: UInt8(97 + i % 26), count: 2000 + i))
            }
        }
        return drop
    }

    /// Checks the finished container against the drop.
    static func verify(container: String, drop: TemporaryDirectory, count: Int, localJournal: Bool = true) throws {
        let manifests = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter { $0.hasSuffix(".json") }
        #expect(manifests.count == 1, "manifests: \(manifests)")
        let data = try Data(contentsOf: URL(fileURLWithPath: container + "/manifests/" + (try #require(manifests.first))))
        let entries = try JSONSerialization.jsonObject(with: data) as! [[String: Any]]
        let names = entries.compactMap { $0["fileName"] as? String }
        #expect(names.count == count)
        #expect(Set(names).count == count, "an item appears twice")
        var listed = Set<String>()
        var thumbnails = Set<String>()
        let sources = Dictionary(uniqueKeysWithValues: (FileManager.default.enumerator(atPath: drop.path)!.allObjects as! [String]).map { (($0 as NSString).lastPathComponent, drop.path + "/" + $0) })
        for entry in entries {
            let path = URL(string: entry["path"] as! String)!.path
            listed.insert((path as NSString).lastPathComponent)
            if let thumbnail = entry["thumbnail"] as? String { thumbnails.insert(URL(string: thumbnail)!.lastPathComponent) }
            let source = try #require(sources[entry["fileName"] as! String])
            #expect(FileManager.default.contentsEqual(atPath: path, andPath: source), "\(path) differs from \(source)")
        }
        let inContainer = Set(try FileManager.default.contentsOfDirectory(atPath: container)).filter { !$0.hasPrefix(".") && $0 != "thumbnails" && $0 != "manifests" }
        #expect(inContainer == listed, "orphans: \(inContainer.subtracting(listed))")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: container + "/thumbnails")).filter { !$0.hasPrefix(".") } == thumbnails)
        let partial = (FileManager.default.enumerator(atPath: container)!.allObjects as! [String]).filter { $0.hasSuffix(".partial") }
        #expect(partial.isEmpty, "temporary files left: \(partial)")
        guard localJournal else { return }
        let status = try ShareProcess.run(["status", "--json", "--container", container])
        #expect(status.stdout.contains(#""state":"done""#))
        #expect(!status.stdout.contains(#""state":"running""#))
    }

    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test func sigkillAtManyMomentsLosesAndDuplicatesNothing() throws {
        let count = 300
        let drop = try Self.makeDrop(count: count)
        let work = TemporaryDirectory("crash")
        let container = work.path + "/container"
        var generator = SeededGenerator(seed: 42)
        var kills = 0
        var journaled = false
        var finished = false
        func arguments() -> [String] {
            journaled
                ? ["ingest", "--quiet", "--container", container, "--resume", "CrashTest"]
                : ["ingest", "--quiet", "--container", container, "--key", "CrashTest", drop.path]
        }
        while kills < 20 && !finished {
            let process = try Self.start(arguments())
            // Kill somewhere in the next 40–400 ms: start-up, planning, copies,
            // thumbnails and the manifest all get hit over the run.
            let deadline = Date().addingTimeInterval(Double.random(in: 0.04...0.4, using: &generator))
            while process.isRunning && Date() < deadline { usleep(2000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                kills += 1
            } else {
                process.waitUntilExit()
                finished = process.terminationStatus == 0
            }
            // A run killed before it journaled the batch left nothing to resume.
            if !journaled { journaled = try ShareProcess.run(["status", "--json", "--container", container]).stdout.contains("CrashTest") }
        }
        if !finished {
            let last = try ShareProcess.run(arguments())
            finished = last.status == 0
            #expect(finished, "\(last.stderr)")
        }
        #expect(kills >= 20, "only \(kills) kills landed")
        #expect(finished)
        try Self.verify(container: container, drop: drop, count: count)
    }

    @Test(arguments: ["after-plan", "before-manifest", "manifest-temporary-written", "after-manifest"])
    func crashAtNamedPointsAroundTheManifest(point: String) throws {
        let count = 30
        let drop = try Self.makeDrop(count: count)
        let work = TemporaryDirectory("crashpoint")
        let container = work.path + "/container"
        let crashed = try ShareProcess.run(["ingest", "--quiet", "--container", container, "--key", "Point", drop.path], environment: ["SHARE_CRASH_POINT": point])
        #expect(crashed.status != 0, "the crash point \(point) was not reached")
        // Never a half-written manifest: either none or the complete one.
        let manifest = container + "/manifests/Point.json"
        if FileManager.default.fileExists(atPath: manifest) {
            let entries = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifest))) as? [Any]
            #expect(entries?.count == count)
        }
        let resumed = try ShareProcess.run(["ingest", "--quiet", "--container", container, "--resume", "Point"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        try Self.verify(container: container, drop: drop, count: count)
    }

    @Test func sigtermStopsCleanlyAndResumeFinishes() throws {
        let count = 200
        let drop = try Self.makeDrop(count: count)
        let work = TemporaryDirectory("term")
        let container = work.path + "/container"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
        process.arguments = ["ingest", "--quiet", "--container", container, "--key", "Term", drop.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        usleep(300_000)
        kill(process.processIdentifier, SIGTERM)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        if stderr.contains("interrupted") {
            #expect(stderr.contains("share ingest --resume"))
            #expect(!FileManager.default.fileExists(atPath: container + "/manifests/Term.json"))
            let resumed = try ShareProcess.run(["ingest", "--quiet", "--container", container, "--resume", "Term"])
            #expect(resumed.status == 0)
        }
        try Self.verify(container: container, drop: drop, count: count)
    }
}

/// A small deterministic random generator (SplitMix64) so kill times repeat.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
