import Foundation
import MediaFormats
import ShareIngest
import ShareManifest
import TestSupport
import Testing

/// The knobs host-app tests use: reproducible identifiers and clock, temporary
/// containers, plugin flavors, pipelines built in code, async entry points.
@Suite struct HostTestingTests {
    static let fixedDate = Date(timeIntervalSince1970: 1_800_000_000)

    static func reproducibleIngestor(_ container: TemporaryContainer, pipeline: PipelineDefinition = .standard)
        -> ShareIngestor
    {
        ShareIngestor(
            container: container.directory, pipeline: pipeline, identifiers: .sequential(), now: { fixedDate })
    }

    static func manifest(_ report: BatchReport) throws -> String {
        let path = try #require(report.manifestPath)
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func sameInputsGiveByteIdenticalManifestsInTwoContainers() throws {
        let inputs: [ShareInput] = [.path(Fixtures.sampleDrop), .text("Look!"), .url("https://example.org")]
        var manifests: [String] = []
        for _ in 0..<2 {
            let container = try TemporaryContainer()
            let report = try Self.reproducibleIngestor(container).ingest(inputs, message: "holiday")
            #expect(report.redirectURL != nil)
            manifests.append(try Self.manifest(report).replacingOccurrences(of: container.root, with: "<container>"))
        }
        #expect(manifests[0] == manifests[1])
        #expect(manifests[0].contains("<container>/00000000-0000-0000-0000-000000000002."))
    }

    @Test func sequentialIdentifiersNameTheBatchFirstThenItemsInInputOrder() throws {
        let container = try TemporaryContainer()
        let inputs: [ShareInput] = [
            .path(Fixtures.media("photo.jpg")), .text("hello"), .path(Fixtures.media("document.pdf")),
        ]
        let report = try Self.reproducibleIngestor(container).ingest(inputs)
        #expect(report.batchID.uuidString == "00000000-0000-0000-0000-000000000001")
        #expect(report.key.rawValue == "ShareKey-00000000-0000-0000-0000-000000000001")
        #expect(
            report.redirectURL?.description
                == "ShareMedia://dataUrl=ShareKey-00000000-0000-0000-0000-000000000001#media")
        // Text has no copy, so no id in the report; the files keep their drawn ids.
        #expect(
            report.items.map(\.id?.uuidString) == [
                "00000000-0000-0000-0000-000000000002", nil, "00000000-0000-0000-0000-000000000004",
            ])
        #expect(report.entries[0].path == "file://\(container.root)/00000000-0000-0000-0000-000000000002.jpg")
        #expect(report.entries[2].path == "file://\(container.root)/00000000-0000-0000-0000-000000000004.pdf")
    }

    @Test func seededIdentifiersRepeatPerSeedAndLookRandom() {
        func draw(_ source: IdentifierSource) -> [UUID] { (0..<4).map { _ in source.next() } }
        let first = draw(.seeded(42))
        let again = draw(.seeded(42))
        let other = draw(.seeded(43))
        #expect(first == again)
        #expect(first != other)
        #expect(Set(first).count == 4)
        for uuid in first {
            let text = uuid.uuidString
            #expect(text[text.index(text.startIndex, offsetBy: 14)] == "4", "version 4: \(text)")
        }
        #expect(draw(.sequential(startingAt: 255)).first?.uuidString == "00000000-0000-0000-0000-0000000000FF")
    }

    @Test func theClockIsTheOneGiven() throws {
        let container = try TemporaryContainer()
        let report = try Self.reproducibleIngestor(container).ingest([.text("hello")])
        // The stored report is plain JSON; what the clock controls is the journal,
        // which `share status` shows: check it through the public journal.
        let record = try #require(try BatchJournal(container: container.directory).batch(report.batchID.uuidString))
        #expect(record.createdAt == Self.fixedDate)
        #expect(record.finishedAt == Self.fixedDate)
    }

    @Test func temporaryContainerIsRemovedOnRequestAndOnRelease() throws {
        var container: TemporaryContainer? = try TemporaryContainer()
        let first = try #require(container?.root)
        #expect(FileManager.default.fileExists(atPath: first + "/manifests"))
        container = nil
        #expect(!FileManager.default.fileExists(atPath: first))

        let second = try TemporaryContainer()
        _ = try ShareIngestor(container: second.directory).ingest([.path(Fixtures.media("photo.jpg"))])
        second.remove()
        #expect(!FileManager.default.fileExists(atPath: second.root))
        second.remove()
    }

    @Test(arguments: PluginFlavor.allCases)
    func eachPluginFlavorIsWrittenItsWayAndReadBack(_ flavor: PluginFlavor) throws {
        // A space and a non-ASCII letter in the container path make the spellings differ.
        let container = try TemporaryContainer(label: "host app ü")
        let ingestor = Self.reproducibleIngestor(container, pipeline: PipelineDefinition.standard.simulating(flavor))
        let report = try ingestor.ingest([.path(Fixtures.media("photo.jpg")), .path(Fixtures.media("clip-h264.mp4"))])
        #expect(report.isComplete)
        #expect(report.schema == flavor.schema)
        let json = try Self.manifest(report)
        let photo = container.root + "/00000000-0000-0000-0000-000000000002.jpg"
        switch flavor {
        case .seedExtension:
            #expect(json.contains(#""type": 0"#) && json.contains(#""type": 1"#))
            #expect(json.contains(URL(fileURLWithPath: photo).absoluteString))
        case .receiveSharingIntentV2:
            #expect(json.contains(#""type": "image""#) && json.contains(#""type": "video""#))
            #expect(json.contains(URL(fileURLWithPath: photo).absoluteString))
        case .unencodedPaths:
            #expect(json.contains(#""type": 0"#))
            #expect(json.contains("\"file://\(photo)\""))
        }
        // The host side reads every flavor to the same checked entries.
        let share = try RedirectHandler(container: container.directory).open(
            try #require(report.redirectURL).description)
        #expect(share.schema == flavor.schema)
        #expect(share.entries.map(\.type) == [.image, .video])
        #expect(
            share.entries.map(\.path) == [
                URL(fileURLWithPath: photo).absoluteString,
                URL(fileURLWithPath: container.root + "/00000000-0000-0000-0000-000000000003.mp4").absoluteString,
            ])
    }

    @Test(arguments: PluginFlavor.allCases)
    func aHandWrittenManifestOutsideTheContainerIsRefused(_ flavor: PluginFlavor) throws {
        let container = try TemporaryContainer()
        let key = try ShareKey("evil")
        try ManifestStore(container: container.directory).write(
            [SharedMediaFile(path: "file:///etc/passwd", type: .file)], as: flavor, key: key)
        #expect(throws: RedirectError.badEntry(index: 0, .outsideContainer("/etc/passwd"))) {
            try RedirectHandler(container: container.directory).open(key: key, consume: true)
        }
        // Refused shares are not consumed.
        #expect(ManifestStore(container: container.directory).exists(key))
    }

    @Test func aPipelineBuiltInCodeIsUsedAndChecked() throws {
        var pipeline = PipelineDefinition.standard
        pipeline.thumbnail?.size = 200
        let container = try TemporaryContainer()
        let report = try ShareIngestor(container: container.directory, pipeline: pipeline).ingest([
            .path(Fixtures.media("photo.jpg"))
        ])
        let thumbnail = try #require(report.entries.first?.thumbnail.flatMap(URL.init(string:))?.path)
        let size = try ImageInspector.size(thumbnail)
        #expect(max(size.width, size.height) == 200)

        pipeline.thumbnail?.size = 10_000
        #expect(throws: ShareIngestError.self) {
            try ShareIngestor(container: container.directory, pipeline: pipeline).ingest([.text("x")])
        }
        do {
            _ = try ShareIngestor(container: container.directory, pipeline: pipeline).ingest([.text("x")])
        } catch {
            guard case .pipeline(let problem) = error else {
                Issue.record("\(error)")
                return
            }
            // `size` is the older spelling of one size: the check names `sizes`.
            #expect(problem.field == "stages[3].sizes")
        }

        let bare = PipelineDefinition(name: "no-thumbnails", probe: nil, thumbnail: nil)
        let plain = try ShareIngestor(container: container.directory, pipeline: bare).ingest([
            .path(Fixtures.media("photo.jpg"))
        ])
        #expect(plain.entries.first?.thumbnail == nil)
        #expect(plain.pipeline == "no-thumbnails")
    }

    @Test func asyncIngestAndResume() async throws {
        let container = try TemporaryContainer()
        let ingestor = Self.reproducibleIngestor(container)
        let cancelled = CancellationFlag()
        cancelled.cancel()
        let interrupted = try await ingestor.ingest([.path(Fixtures.media("photo.jpg"))], cancellation: cancelled)
        #expect(interrupted.interrupted)
        #expect(interrupted.redirectURL == nil)
        let finished = try await ingestor.resume(interrupted.key.rawValue)
        #expect(finished.batchID == interrupted.batchID)
        #expect(finished.isComplete)
        #expect(finished.entries.first?.path == "file://\(container.root)/00000000-0000-0000-0000-000000000002.jpg")
        // Resuming a finished batch is a harmless retry: the same report, nothing redone.
        let again = try await ingestor.resume(interrupted.batchID.uuidString)
        #expect(again.batchID == finished.batchID)
        #expect(again.redirectURL == finished.redirectURL)
        #expect(again.entries == finished.entries)
        #expect(!again.interrupted)
        // Even when the stored report was lost: rebuilt from the journal.
        try FileManager.default.removeItem(atPath: container.directory.reportPath(key: finished.key))
        let rebuilt = try await ingestor.resume(finished.key.rawValue)
        #expect(rebuilt.redirectURL == finished.redirectURL)
        #expect(rebuilt.entries == finished.entries)
        #expect(rebuilt.items.map(\.status) == [.ingested])
    }

    /// Cancelling the Task that awaits an ingest stops the batch like SIGINT does:
    /// items in flight finish their stage, the report says interrupted, and the
    /// batch can be resumed.
    @Test func cancellingTheAwaitingTaskInterruptsTheBatch() async throws {
        let container = try TemporaryContainer()
        let drop = TemporaryDirectory("cancel")
        for i in 0..<400 { try drop.add("note-\(i).txt", bytes: Array("note \(i)\n".utf8)) }
        let ingestor = ShareIngestor(container: container.directory)
        let started = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        let task = Task {
            try await ingestor.ingest(
                [.path(drop.path)],
                events: { event in
                    // The first copy's worker waits here until the Task was cancelled,
                    // so the batch is certainly under way when it is.
                    if case .stageFinished(.copy, 0, _) = event {
                        started.signal()
                        released.wait()
                    }
                })
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        task.cancel()
        released.signal()
        let report = try await task.value
        #expect(report.interrupted)
        #expect(report.redirectURL == nil)
        #expect(report.items.count == 400)
        let finished = try await ingestor.resume(report.batchID.uuidString)
        #expect(finished.isComplete && finished.items.count == 400)
    }
}
