import ContentHash
import Foundation
import ShareIngest
import ShareManifest
import TestSupport
import Testing

@testable import ShareIngestCore

/// Content identity: every copy's SHA-256 (computed while copying), and the same
/// photo shared twice (in one share, or again while an earlier share is not yet
/// consumed) reported as a duplicate, kept, linked or skipped as the pipeline says.
@Suite struct DuplicateTests {
    static let photo = try! Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg")))

    /// A drop with the photo under two names and another picture.
    static func drop() throws -> TemporaryDirectory {
        let drop = TemporaryDirectory("duplicates")
        _ = try drop.add("a-photo.jpg", bytes: Array(photo))
        _ = try drop.add("b-same-photo.jpg", bytes: Array(photo))
        _ = try drop.add("c-other.png", copying: Fixtures.media("screenshot.png"))
        return drop
    }

    static func pipeline(_ policy: PipelineDefinition.DuplicatePolicy) -> PipelineDefinition {
        var pipeline = PipelineDefinition.standard
        pipeline.manifest.duplicates = policy
        return pipeline
    }

    @Test func everyCopyCarriesTheSHA256OfItsBytes() throws {
        let container = try TemporaryContainer()
        let drop = try Self.drop()
        let report = try ShareIngestor(container: container.directory).ingest([.path(drop.path)])
        let expected = SHA256.hex(of: Self.photo)
        #expect(expected == "\(try Self.sha256sum(Fixtures.media("photo.jpg")))")
        #expect(report.entries[0].sha256 == expected)
        let manifest = try Data(contentsOf: URL(fileURLWithPath: try #require(report.manifestPath)))
        #expect(String(decoding: manifest, as: UTF8.self).contains("\"sha256\": \"\(expected)\""))
        // The stored report has it too.
        let stored = try BatchReport.stored(key: report.key, in: container.directory)
        #expect(stored.entries[0].sha256 == expected)
    }

    /// Empty files all hash alike; none is a duplicate of another.
    @Test func emptyFilesAreNoOnesDuplicates() throws {
        let container = try TemporaryContainer()
        let drop = TemporaryDirectory("empties")
        _ = try drop.add("one.txt", bytes: [])
        _ = try drop.add("two.txt", bytes: [])
        let report = try ShareIngestor(container: container.directory, pipeline: Self.pipeline(.skip)).ingest([
            .path(drop.path)
        ])
        #expect(report.entries.count == 2 && report.entries.allSatisfy { $0.duplicateOf == nil })
    }

    @Test func aDuplicateInTheSameShareIsKeptAndMarked() throws {
        let container = try TemporaryContainer()
        let drop = try Self.drop()
        let report = try ShareIngestor(container: container.directory).ingest([.path(drop.path)])
        #expect(report.isComplete)
        let (first, second, other) = (report.entries[0], report.entries[1], report.entries[2])
        #expect(first.duplicateOf == nil && other.duplicateOf == nil)
        #expect(second.duplicateOf == first.path)
        let secondCopy = try #require(second.fileURL).path
        #expect(second.path != first.path && FileManager.default.fileExists(atPath: secondCopy))
        #expect(
            report.items[1].warnings.isEmpty,
            "a duplicate kept is a fact of its entry, not a warning: \(report.items[1].warnings)")
        let decoded = try ManifestCoder.decode(
            Data(contentsOf: URL(fileURLWithPath: try #require(report.manifestPath))))
        #expect(decoded.entries[1].duplicateOf == first.path)
    }

    @Test func aDuplicateCanPointAtTheEarlierCopyOrBeSkipped() throws {
        let drop = try Self.drop()
        let linked = try TemporaryContainer()
        let link = try ShareIngestor(container: linked.directory, pipeline: Self.pipeline(.link)).ingest([
            .path(drop.path)
        ])
        #expect(link.isComplete)
        #expect(link.entries[1].path == link.entries[0].path && link.entries[1].duplicateOf == link.entries[0].path)
        // Its own copy is gone: one copy of the photo in the container.
        let copies = try FileManager.default.contentsOfDirectory(atPath: linked.directory.root).filter {
            $0.hasSuffix(".jpg")
        }
        #expect(copies.count == 1, "\(copies)")

        let skipping = try TemporaryContainer()
        let skip = try ShareIngestor(container: skipping.directory, pipeline: Self.pipeline(.skip)).ingest([
            .path(drop.path)
        ])
        #expect(skip.entries.count == 2)
        #expect(skip.items[1].status == .skipped && skip.items[1].failure?.reason == .duplicate)
        #expect(
            skip.items[1].failure?.message
                == "\(drop.path)/b-same-photo.jpg: the same content as \(drop.path)/a-photo.jpg was already delivered (in this share); skipped"
        )
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: skipping.directory.root).filter { $0.hasSuffix(".jpg") }
                .count == 1)
    }

    /// A second share of the same photo while the first is not consumed is a
    /// duplicate of the first share's copy; once the first is consumed, it is not.
    @Test func aDuplicateOfAnUnconsumedShareAcrossBatches() throws {
        let container = try TemporaryContainer()
        let ingestor = ShareIngestor(container: container.directory)
        let first = try ingestor.ingest([.data(Self.photo, name: "from-chat.jpg")])
        let second = try ingestor.ingest([.data(Self.photo, name: "again.jpg"), .text("hello")])
        #expect(second.isComplete)
        #expect(second.entries[0].duplicateOf == first.entries[0].path)

        // Skipping across batches leaves the second share without the photo.
        let skipped = try ShareIngestor(container: container.directory, pipeline: Self.pipeline(.skip)).ingest([
            .data(Self.photo, name: "third.jpg"), .text("x"),
        ])
        #expect(skipped.items[0].failure?.reason == .duplicate && skipped.entries.count == 1)
        #expect(
            skipped.items[0].failure?.message
                == "data:third.jpg: the same content as data:from-chat.jpg was already delivered (in share \(first.key)); skipped"
        )

        // The host consumed the first share: its copy is the app's now, and a new
        // share of the photo is no duplicate of it.
        _ = try RedirectHandler(container: container.directory).open(
            try #require(first.redirectURL).description, consume: true)
        _ = try RedirectHandler(container: container.directory).open(
            try #require(second.redirectURL).description, consume: true)
        let fourth = try ingestor.ingest([.data(Self.photo, name: "later.jpg")])
        #expect(fourth.entries[0].duplicateOf == nil)
    }

    static func sha256sum(_ path: String) throws -> Substring {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: " ").first ?? ""
    }
}
