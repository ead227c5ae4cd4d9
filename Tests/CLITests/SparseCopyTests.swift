import Foundation
import TestSupport
import Testing

/// A sparse file costs the container what it costs the source (its holes are
/// kept: SEEK_DATA/SEEK_HOLE), and a stop (SIGTERM) in the middle of its copy
/// is prompt: the partial file is removed and the resume delivers it whole
/// (issue 58, finding 3: a 20 GB sparse file was written out as data, and
/// SIGTERM waited for the copy).
@Suite(.serialized) struct SparseCopyTests {
    @Test func aSparseFileKeepsItsHolesAndAStopMidCopyIsPromptAndResumable() throws {
        let work = TemporaryDirectory("sparse")
        let root = (work.path as NSString).standardizingPath
        let drop = root + "/drop", container = root + "/c"
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        // 16 GiB, of which two small regions hold data: a few KiB on disk. Its
        // holes take seconds to hash, so a stop not looked at while they are is seen.
        let source = drop + "/huge.bin"
        let size: off_t = 16 << 30
        let fd = open(source, O_WRONLY | O_CREAT, 0o644)
        try #require(fd >= 0)
        for (offset, text) in [(off_t(0), "start"), (size / 2 + 12345, "middle")] {
            _ = text.withCString { pwrite(fd, $0, strlen($0), offset) }
        }
        try #require(ftruncate(fd, size) == 0)
        close(fd)

        // A stop while the copy runs: prompt, its partial file removed.
        let run = try DropBoundaryTests.Run(["ingest", "--container", container, drop], environment: [:])
        let copying = eventually(timeout: 60) { Self.partialFiles(in: container).count == 1 || !run.process.isRunning }
        #expect(copying && run.process.isRunning, "the copy was not seen running: \(run.stderr)")
        let asked = Date()
        kill(run.process.processIdentifier, SIGTERM)
        let status = run.finish()
        let waited = Date().timeIntervalSince(asked)
        #expect(status == 143, "stopped by SIGTERM: \(String(describing: status)) \(run.stderr)")
        // Generous against a loaded machine; before, the copy ran on for 11 s and more.
        #expect(waited < 5, "the stop took \(waited) s")
        #expect(Self.partialFiles(in: container).isEmpty, "the partial copy is removed")
        let batch = try #require(DiskFullTests.batchToResume(in: run.stderr), "\(run.stderr)")

        let resumed = try ShareProcess.run(["ingest", "--resume", batch, "--container", container])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let manifests = try FileManager.default.contentsOfDirectory(atPath: container + "/manifests").filter { $0.hasSuffix(".json") }
        let data = try Data(contentsOf: URL(fileURLWithPath: container + "/manifests/" + (try #require(manifests.first))))
        let entry = try #require((try JSONSerialization.jsonObject(with: data) as? [[String: Any]])?.first)
        let copy = try #require((entry["path"] as? String).flatMap(URL.init(string:))?.path)
        var copied = stat()
        try #require(stat(copy, &copied) == 0)
        #expect(copied.st_size == size, "the copy has the source's length")
        #expect(Int64(copied.st_blocks) * 512 < 1 << 20, "the copy keeps the holes: \(copied.st_blocks * 512) bytes on disk")
        // The content is the source's: its data where the source has it, zeros elsewhere.
        let copyHandle = try FileHandle(forReadingFrom: URL(fileURLWithPath: copy))
        defer { try? copyHandle.close() }
        for (offset, text) in [(UInt64(0), "start"), (UInt64(size / 2 + 12345), "middle"), (UInt64(size / 4), "\0\0\0\0")] {
            try copyHandle.seek(toOffset: offset)
            let read = String(decoding: copyHandle.readData(ofLength: text.utf8.count), as: UTF8.self)
            #expect(read == text, "at \(offset): \(read.debugDescription)")
        }
        #expect((entry["sha256"] as? String)?.count == 64)
    }

    /// The copies being written (`.<UUID>.<ext>.<…>.partial`).
    static func partialFiles(in container: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: container)) ?? []).filter { $0.hasSuffix(".partial") }
    }
}
