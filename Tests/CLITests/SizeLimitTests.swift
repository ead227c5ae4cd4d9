import Foundation
import TestSupport
import Testing

/// Size limits (issue 58): a file over `--max-item-size` fails alone with
/// `tooLarge` before a byte is copied; a drop over `--max-drop-size` fails
/// whole. Off by default for `ingest`; on by default for `watch` (8 GiB a
/// file, 32 GiB a drop), where any dropper could otherwise fill the container.
@Suite(.serialized) struct SizeLimitTests {
    /// A drop of a note and a sparse file of `size` bytes (no disk used).
    static func drop(in folder: String, sparse size: off_t) throws -> String {
        let drop = folder + "/drop"
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: drop + "/note.txt", contents: Data("a note\n".utf8))
        let fd = open(drop + "/huge.bin", O_WRONLY | O_CREAT, 0o644)
        try #require(fd >= 0 && ftruncate(fd, size) == 0)
        close(fd)
        return drop
    }

    static func copies(in container: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: container)) ?? []).filter {
            !$0.hasPrefix(".") && $0 != "manifests" && $0 != "thumbnails"
        }
    }

    @Test(arguments: [false, true])
    func ingestCopiesAnySizeUnlessToldAndThenFailsOnlyTheLargeFile(database: Bool) throws {
        let work = TemporaryDirectory("size-limit")
        let drop = try Self.drop(in: work.path, sparse: 3 << 20)
        let mode = try DatabaseMode(database, worker: "limits")
        defer { mode.stop() }
        let options = mode.options

        let unlimited = try ShareProcess.run(["ingest", "--container", work.path + "/c1", drop] + options)
        #expect(unlimited.status == 0, "no limit by default: \(unlimited.stderr)")
        #expect(Self.copies(in: work.path + "/c1").count == 2)

        let limited = try ShareProcess.run(
            ["ingest", "--container", work.path + "/c2", "--max-item-size", "1M", drop] + options)
        #expect(limited.status == 1, "partly done: \(limited.stderr)")
        #expect(
            limited.stderr.contains(
                "huge.bin: 3 MiB, more than the limit of 1 MiB a file (--max-item-size); not copied"),
            "\(limited.stderr)")
        #expect(
            Self.copies(in: work.path + "/c2").count == 1,
            "only the note is copied: \(Self.copies(in: work.path + "/c2"))")

        let wholeDrop = try ShareProcess.run(
            ["ingest", "--container", work.path + "/c3", "--max-drop-size", "2M", drop] + options)
        #expect(
            wholeDrop.stderr.contains(
                "note.txt: the drop holds 3.0 MiB, more than the limit of 2 MiB (--max-drop-size)"),
            "\(wholeDrop.stderr)")
        #expect(Self.copies(in: work.path + "/c3").isEmpty, "nothing copied")
    }

    @Test func watchRefusesAFileOver8GiBByDefaultAndAnyLimitCanBeSet() throws {
        let work = TemporaryDirectory("size-limit")
        let inbox = work.path + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        _ = try Self.drop(in: inbox, sparse: (8 << 30) + 1)
        let watch = try ShareProcess.run([
            "watch", inbox, "--container", work.path + "/c", "--once", "--settle", "0", "--on-success", "delete",
        ])
        #expect(watch.stdout.contains("ingested=1 failed=1"), "\(watch.stdout) \(watch.stderr)")
        #expect(Self.copies(in: work.path + "/c").count == 1, "the sparse file is not copied")
        let failed = try #require(try FileManager.default.contentsOfDirectory(atPath: inbox + "/.failed").first)
        #expect(
            FileManager.default.fileExists(atPath: inbox + "/.failed/\(failed)/drop/huge.bin"),
            "kept under .failed, not deleted")

        // A drop over --max-drop-size goes to .failed whole, nothing copied.
        _ = try Self.drop(in: inbox, sparse: 3 << 20)
        let dropLimit = try ShareProcess.run([
            "watch", inbox, "--container", work.path + "/c-drop", "--once", "--settle", "0", "--max-drop-size", "2M",
        ])
        #expect(dropLimit.stdout.contains("ingested=0 failed=2"), "\(dropLimit.stdout) \(dropLimit.stderr)")
        #expect(Self.copies(in: work.path + "/c-drop").isEmpty)
        let batches = try FileManager.default.contentsOfDirectory(atPath: inbox + "/.failed")
        #expect(
            batches.count == 2
                && batches.allSatisfy { FileManager.default.fileExists(atPath: inbox + "/.failed/\($0)/drop/huge.bin") },
            "\(batches)")

        // 0 lifts the limit.
        _ = try Self.drop(in: inbox, sparse: (8 << 30) + 1)
        let unlimited = try ShareProcess.run([
            "watch", inbox, "--container", work.path + "/c-any", "--once", "--settle", "0", "--max-item-size", "0",
        ])
        #expect(unlimited.stdout.contains("ingested=2 failed=0"), "\(unlimited.stdout) \(unlimited.stderr)")
    }
}
