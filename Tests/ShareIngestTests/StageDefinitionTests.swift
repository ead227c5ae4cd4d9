import ContentHash
import Foundation
import ShareIngest
import ShareManifest
import Synchronization
import SystemCalls
import TestSupport
import Testing

@testable import ShareIngestCore

/// A stage the package does not have, defined entirely here: it writes
/// `<UUID>.sha256` beside each copy (the `sha256sum` line of the copy) and
/// records the digest and the file with the item. Nothing under Sources/ knows
/// it; its definition is all the runners, the pipeline document and the stores
/// need.
struct ChecksumStage: PipelineStage {
    static let name = StageName("checksum")

    struct Settings: StageSettings {
        var workers = 1
        /// Write the copy's name after the digest, as `sha256sum` does.
        var withName = true
        init() {}
    }

    static let definition = StageDefinition(
        name, after: .copy, settings: Settings.self,
        document: [.integer("workers", \.workers, in: 1...8), .boolean("withName", \.withName)],
        workers: \.workers, records: [.stageRecords],
        make: { settings, _ in ChecksumStage(settings: settings) })

    let settings: Settings
    var name: StageName { Self.name }

    func process(_ item: inout InFlightItem, in batch: BatchContext) throws(ItemFailure) {
        guard let copy = item.copyPath else { return }
        let digest: String
        do {
            digest = SHA256.hex(of: try FileSystem.readWholeFile(copy))
        } catch {
            throw ItemFailure(Self.name, .io, "\(item.label): cannot read its copy: \(error)")
        }
        let path = batch.container.root + "/" + item.id.uuidString + ".sha256"
        let line = settings.withName ? "\(digest)  \((copy as NSString).lastPathComponent)\n" : digest + "\n"
        FileSystem.remove(path)
        do {
            try AtomicFile.create(path, bytes: Array(line.utf8), syncDirectory: false)
        } catch {
            throw ItemFailure(Self.name, .io, "\(item.label): cannot write its checksum: \(error)")
        }
        item.stageRecords[Self.name] = StageRecord(values: ["sha256": digest], files: [path])
    }
}

/// What a run told its events: each item's stages in the order they finished
/// (the progress line's counts), fed on to a service's metrics.
final class StageLog: Sendable {
    private let finished = Mutex<[Int: [StageName]]>([:])
    let service: ShareService

    init(role: ServiceMetrics.Role, catalog: StageCatalog) throws {
        service = try ShareService(role: role, address: nil, checks: [], stages: catalog.names)
    }

    var events: IngestEventSink {
        { [self] event in
            if case .stageFinished(let stage, let index, _) = event {
                finished.withLock { $0[index, default: []].append(stage) }
            }
            service.events(event)
        }
    }

    /// Each item's stages, in the order they finished.
    var stages: [Int: [StageName]] { finished.withLock { $0 } }
    /// How many items each stage finished (what the progress line counts).
    var counts: [StageName: Int] {
        stages.values.reduce(into: [:]) { counts, stages in for stage in stages { counts[stage, default: 0] += 1 } }
    }
    /// What `/metrics` serves now.
    var metrics: String { service.monitor.route("/metrics")?.body ?? "" }
}

@Suite struct StageDefinitionTests {
    static let catalog = try! StageCatalog.builtin.adding(ChecksumStage.definition)

    /// The pipeline a user would write for it: the new stage right after the copy.
    static func pipeline() throws -> PipelineDefinition {
        let document = """
            {"name": "checksums", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "checksum", "workers": 2, "withName": true},
             {"stage": "probe"}, {"stage": "thumbnail"}, {"stage": "manifest"}]}
            """
        return try PipelineDefinition.decode(Data(document.utf8), file: "checksums.json", catalog: catalog)
    }

    /// A drop with a photo, a video, a text file and a JPEG whose header is
    /// followed by garbage (copied and checksummed, then refused by the probe).
    static func drop() throws -> TemporaryDirectory {
        let folder = TemporaryDirectory("checksum-drop")
        for name in ["photo.jpg", "clip-h264.mp4"] {
            try FileManager.default.copyItem(atPath: Fixtures.media(name), toPath: folder.path + "/" + name)
        }
        try Data("a note\n".utf8).write(to: URL(fileURLWithPath: folder.path + "/note.txt"))
        let header = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg"))).prefix(2))
        try Data(header + [0xFF, 0xC0] + Array(repeating: 0x5A, count: 4000)).write(
            to: URL(fileURLWithPath: folder.path + "/broken.jpg"))
        return folder
    }

    /// What the report and the container must show after the batch, in either mode.
    static func check(_ report: BatchReport, container: ContainerDirectory) throws {
        #expect(report.items.count == 4)
        let byName = Dictionary(
            uniqueKeysWithValues: report.items.map { (($0.source as NSString).lastPathComponent, $0) })
        for name in ["photo.jpg", "clip-h264.mp4", "note.txt"] {
            let item = try #require(byName[name])
            #expect(item.status == .ingested, "\(name): \(item.failure?.message ?? "")")
            let id = try #require(item.id)
            let copy = try #require(item.entry?.fileURL?.path)
            let expected = SHA256.hex(of: try FileSystem.readWholeFile(copy))
            let written = String(
                decoding: try FileSystem.readWholeFile(container.root + "/\(id.uuidString).sha256"), as: UTF8.self)
            #expect(written == "\(expected)  \((copy as NSString).lastPathComponent)\n", "\(name)")
            #expect(item.entry?.sha256 == expected)
            #expect(item.stageSeconds[ChecksumStage.name] != nil, "\(name): no time recorded for the checksum stage")
        }
        // The broken photo was checksummed, then failed: what its stages made is gone with it.
        let broken = try #require(byName["broken.jpg"])
        #expect(broken.status == .failed && broken.failure?.stage == .probe, "\(broken.failure?.message ?? "ingested")")
        #expect(broken.stageSeconds[ChecksumStage.name] != nil)
        let left = try FileManager.default.contentsOfDirectory(atPath: container.root).filter {
            $0.hasSuffix(".sha256")
        }
        #expect(left.count == 3, "\(left)")
    }

    /// The stage runs right after the copy, on every item, and shows where the
    /// built-in stages do: the metrics `/metrics` serves (counted and timed), the
    /// progress line and the report page.
    static func checkShown(_ log: StageLog, report: BatchReport, container: ContainerDirectory) {
        for (index, stages) in log.stages {
            let copy = stages.firstIndex(of: .copy)
            #expect(
                copy.map { stages.indices.contains($0 + 1) && stages[$0 + 1] == ChecksumStage.name } == true,
                "item \(index): \(stages)")
        }
        #expect(
            StageName.progress(log.counts, order: Self.catalog.names).hasPrefix(
                "sniff 4 · copy 4 · checksum 4 · probe 4"),
            "\(StageName.progress(log.counts, order: Self.catalog.names))")
        let metrics = log.metrics
        #expect(metrics.contains(#"share_stage_items_total{stage="checksum",outcome="ran"} 4"#), "\(metrics)")
        #expect(metrics.contains(#"share_stage_duration_seconds_count{stage="checksum"} 4"#), "\(metrics)")
        let page = ReportPage(report, container: container).html
        #expect(page.contains(#"<tr><th scope="row">checksum</th>"#))
    }

    @Test func aStageDefinedOutsideTheLibraryRunsLocally() throws {
        let container = try TemporaryContainer()
        let folder = try Self.drop()
        let log = try StageLog(role: .watch, catalog: Self.catalog)
        let report = try ShareIngestor(container: container.directory, pipeline: try Self.pipeline()).ingest(
            [.path(SourcePath(folder.path))], events: log.events)
        try Self.check(report, container: container.directory)
        Self.checkShown(log, report: report, container: container.directory)
        // Its settings went into the pipeline stored with the batch, and read back.
        let journal = try BatchJournal(container: container.directory)
        let stored = try #require(try journal.batch(report.batchID.uuidString)).pipeline(catalog: Self.catalog)
        #expect(stored.itemStages == [.sniff, .copy, ChecksumStage.name, .probe, .thumbnail])
        #expect(stored.settings(ChecksumStage.Settings.self, of: ChecksumStage.name)?.workers == 2)
        // share gc, once the share is consumed, collects its files with the copies.
        _ = try RedirectHandler(container: container.directory).open(
            try #require(report.redirectURL).description, consume: true)
        _ = try ConsumedShareCollector(container: container.directory).collect(
            retention: 0, now: Date().addingTimeInterval(60))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: container.directory.root).filter {
                $0.hasSuffix(".sha256")
            }.isEmpty)
    }

    @Test func aStageDefinedOutsideTheLibraryRunsOnAWorker() throws {
        let server = try PostgresServer()
        try StageWorker.migrate(url: server.url)
        let container = try TemporaryContainer()
        let folder = try Self.drop()
        var settings = StageWorker.Settings()
        settings.catalog = Self.catalog
        settings.concurrency = 2
        // By default a worker serves every stage of its catalog.
        #expect(settings.stages == Self.catalog.names)
        let log = try StageLog(role: .worker, catalog: Self.catalog)
        let worker = StageWorker(url: server.url, settings: settings, events: log.events)
        let stop = CancellationFlag()
        let stopped = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? worker.run(cancellation: stop)
            stopped.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        defer {
            stop.cancel()
            stopped.wait()
        }
        let client = DistributedIngestor(url: server.url, container: container.directory, pipeline: try Self.pipeline())
        let batch = try client.enqueue([.path(SourcePath(folder.path))])
        let done = try #require(try client.wait(for: batch.id, timeout: 300))
        let report = try client.report(of: done)
        try Self.check(report, container: container.directory)
        Self.checkShown(log, report: report, container: container.directory)
        #expect(log.metrics.contains(#"share_jobs_ready{stage="checksum"} 0"#), "\(log.metrics)")
    }

    /// A stage's place comes from its definition (`after:`), whatever the order
    /// the definitions are registered in: the checksum, declared after the
    /// copy, runs right after it, before the location stage that also follows
    /// the copy. A stage that runs after one the catalog lacks, after the
    /// fan-in, or (through others) after itself is refused when registered.
    @Test func aStagesPlaceComesFromItsDefinitionWhateverTheRegistrationOrder() throws {
        let builtin = StageCatalog.builtin.definitions
        let expected: [StageName] = [
            .sniff, .copy, ChecksumStage.name, .location, .probe, .thumbnail, .motion, .compatible, .manifest,
        ]
        for definitions in [
            builtin + [ChecksumStage.definition], [ChecksumStage.definition] + builtin.reversed(),
            Array(builtin[3...]) + [ChecksumStage.definition] + Array(builtin[..<3]),
        ] {
            #expect(try StageCatalog(definitions).names == expected, "\(definitions.map(\.name.rawValue))")
        }
        #expect(
            StageCatalog.builtin.names == [
                .sniff, .copy, .location, .probe, .thumbnail, .motion, .compatible, .manifest,
            ])
        #expect(Self.catalog.names == expected)
        func stage(_ name: String, after: String?) -> StageDefinition {
            StageDefinition(
                StageName(name), after: after.map(StageName.init), settings: ChecksumStage.Settings.self, document: [],
                workers: nil, records: [],
                make: { settings, _ in ChecksumStage(settings: settings) })
        }
        func refusal(_ definitions: StageDefinition...) -> String? {
            do throws(StageCatalog.Conflict) {
                var catalog = StageCatalog.builtin
                for definition in definitions { catalog = try catalog.adding(definition) }
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refusal(stage("a", after: "b")) == "stage a runs after b, which is not an item stage of this catalog")
        do throws(StageCatalog.Conflict) {
            _ = try StageCatalog(builtin + [stage("a", after: "b"), stage("b", after: "a")])
            Issue.record("a circle was registered")
        } catch {
            #expect(error.description == "stages that run after one another in a circle: a after b, b after a")
        }
        #expect(
            refusal(stage("late", after: "manifest"))
                == "stage late runs after manifest, which is not an item stage of this catalog")
        #expect(refusal(stage("copy", after: "sniff")) == "a stage named copy exists already")
        #expect(
            refusal(stage("zero", after: nil))
                == "one item stage runs first (names no stage to run after), not [\"sniff\", \"zero\"]")
    }

    /// The pipeline document knows the new stage from its definition alone:
    /// its settings are checked, its place in the order is enforced, and a
    /// catalog without it refuses it by name.
    @Test func theDocumentTakesTheStageFromItsDefinition() throws {
        func decode(_ stages: String, catalog: StageCatalog = Self.catalog) -> PipelineError? {
            let document = #"{"name": "p", "stages": [\#(stages)]}"#
            do throws(PipelineError) {
                _ = try PipelineDefinition.decode(Data(document.utf8), file: "p.json", catalog: catalog)
                return nil
            } catch {
                return error
            }
        }
        let sniffCopy = #"{"stage": "sniff"}, {"stage": "copy"}"#
        #expect(
            decode(sniffCopy + #", {"stage": "checksum", "workers": 9}, {"stage": "manifest"}"#)?.description
                == "p.json: stages[2].workers: 9 is out of range; allowed: 1...8")
        #expect(
            decode(#"{"stage": "sniff"}, {"stage": "checksum"}, {"stage": "copy"}, {"stage": "manifest"}"#)?.description
                == #"p.json: stages[2].stage: "copy" cannot come after "checksum"; the order is \#(Self.catalog.names.map(\.rawValue).joined(separator: ", "))"#
        )
        #expect(
            decode(sniffCopy + #", {"stage": "location"}, {"stage": "checksum"}, {"stage": "manifest"}"#)?.description
                == #"p.json: stages[3].stage: "checksum" cannot come after "location"; the order is \#(Self.catalog.names.map(\.rawValue).joined(separator: ", "))"#
        )
        #expect(
            decode(sniffCopy + #", {"stage": "checksum", "colour": 1}, {"stage": "manifest"}"#)?.description
                == "p.json: stages[2].colour: unknown field; allowed here: stage, workers, withName")
        #expect(
            decode(sniffCopy + #", {"stage": "checksum"}, {"stage": "manifest"}"#, catalog: .builtin)?.description
                .hasPrefix(
                    #"p.json: stages[2].stage: unknown stage "checksum""#) == true)
        #expect(decode(sniffCopy + #", {"stage": "checksum"}, {"stage": "manifest"}"#) == nil)
        // Written back as it was read: what a batch stores.
        let pipeline = try Self.pipeline()
        let again = try PipelineDefinition.decode(
            Data(pipeline.encodedJSON().utf8), file: "again", catalog: Self.catalog)
        #expect(again == pipeline && again.encodedJSON().contains(#""stage":"checksum","withName":true,"workers":2"#))
    }

    /// Every field of the item's record is written by a stage's definition or
    /// by the lifecycle: no field without an owner.
    @Test func everyRecordedFieldHasAnOwner() {
        let lifecycle: Set<ItemState.CodingKeys> = [
            .index, .id, .source, .label, .completed, .warnings, .failure, .stageSeconds, .lostAttempts,
            .decodingInFlight, .suspect, .stageRecords,
            .waitingForSpace,
        ]
        let owned = Set(StageCatalog.builtin.definitions.flatMap(\.records)).union(lifecycle)
        #expect(
            owned == Set(ItemState.CodingKeys.allCases),
            "no owner: \(Set(ItemState.CodingKeys.allCases).subtracting(owned))")
    }
}
