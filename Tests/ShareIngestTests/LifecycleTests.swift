import Foundation
import MediaFormats
import ShareIngest
import ShareManifest
import TestSupport
import Testing

@testable import ShareIngestCore

/// The one item lifecycle (``ItemLifecycle``): every next step decided from an
/// outcome, the same for the local runner and the workers; and what the stores
/// do with an item they cannot read or a schema they do not know.
@Suite struct LifecycleTests {
    static let stages: [StageName] = [.sniff, .copy, .probe, .thumbnail]

    static func item(completed: StageName? = nil, lost: Int = 0) -> ItemState {
        var item = ItemState(index: 0, id: UUID(), source: .text("hello"), label: "text:hello")
        item.completed = completed
        item.lostAttempts = lost
        return item
    }

    @Test func aCompletedStageLeadsToTheNextAndTheLastOneFinishes() {
        let lifecycle = ItemLifecycle(stages: Self.stages)
        var item = Self.item()
        #expect(lifecycle.start(item, stopping: false) == .run(.sniff))
        #expect(lifecycle.advance(&item, after: .completed(.sniff), stopping: false) == .run(.copy))
        #expect(item.completed == .sniff)
        #expect(lifecycle.advance(&item, after: .completed(.copy), stopping: false) == .run(.probe))
        #expect(lifecycle.advance(&item, after: .completed(.probe), stopping: false) == .run(.thumbnail))
        #expect(lifecycle.advance(&item, after: .completed(.thumbnail), stopping: false) == .finished)
        #expect(lifecycle.isFinished(item))
    }

    /// A step is recorded before its holder goes on unless the holder keeps the
    /// item and the record would be a round trip, or the stage is cheap to redo
    /// (it decoded nothing, or changed nothing but its own completion and time:
    /// a probe of a text file): then the next record carries it. A step that
    /// finishes the item, or hands it to another holder, is always recorded.
    @Test func aStepCheapToRedoIsCarriedByTheNextRecord() {
        let before = Self.item(completed: .copy)
        var after = before
        after.completed = .probe
        after.stageSeconds[.probe] = 0.002
        #expect(after.isUnchanged(since: before, by: .probe))
        var probed = after
        probed.width = 640
        #expect(!probed.isUnchanged(since: before, by: .probe))
        var warned = after
        warned.warnings.append("named .jpg but the content is text")
        #expect(!warned.isUnchanged(since: before, by: .probe))
        var timedElsewhere = after
        timedElsewhere.stageSeconds[.copy] = 1
        #expect(!timedElsewhere.isUnchanged(since: before, by: .probe))

        #expect(
            !ItemLifecycle.recordsBeforeGoingOn(
                .run(.thumbnail), holderKeeps: true, roundTrips: false, cheapToRedo: true))
        #expect(
            ItemLifecycle.recordsBeforeGoingOn(
                .run(.thumbnail), holderKeeps: true, roundTrips: false, cheapToRedo: false))
        #expect(
            ItemLifecycle.recordsBeforeGoingOn(
                .run(.thumbnail), holderKeeps: false, roundTrips: false, cheapToRedo: true))
        #expect(ItemLifecycle.recordsBeforeGoingOn(.finished, holderKeeps: true, roundTrips: false, cheapToRedo: true))
        #expect(
            !ItemLifecycle.recordsBeforeGoingOn(
                .run(.thumbnail), holderKeeps: true, roundTrips: true, cheapToRedo: false))
    }

    @Test func aPipelineWithoutAStageSkipsIt() {
        let lifecycle = ItemLifecycle(stages: [.sniff, .copy, .thumbnail])
        var item = Self.item(completed: .sniff)
        #expect(lifecycle.advance(&item, after: .completed(.copy), stopping: false) == .run(.thumbnail))
    }

    @Test func aStopParksTheItemBeforeItsNextStage() {
        let lifecycle = ItemLifecycle(stages: Self.stages)
        var item = Self.item()
        #expect(lifecycle.advance(&item, after: .completed(.copy), stopping: true) == .park(.probe))
        #expect(lifecycle.start(item, stopping: true) == .park(.probe))
        #expect(!lifecycle.isFinished(item))
    }

    @Test func anItemsOwnFailureIsFinal() {
        let lifecycle = ItemLifecycle(stages: Self.stages)
        var item = Self.item(completed: .copy)
        let failure = ItemFailure(.probe, .undecodable, "text:hello: broken")
        #expect(lifecycle.advance(&item, after: .failed(failure), stopping: false) == .finished)
        #expect(item.failure == failure)
        #expect(lifecycle.start(item, stopping: false) == .finished)
    }

    /// A lost attempt (its worker died) is retried after a growing backoff; the
    /// last allowed one gives up with `attemptsExhausted`; a completed stage
    /// starts the count again.
    @Test func lostAttemptsAreRetriedWithBackoffThenGivenUp() {
        let lifecycle = ItemLifecycle(stages: Self.stages, maxAttempts: 3)
        var item = Self.item(completed: .copy)
        let lost = StageOutcome.lost(at: .probe, reason: "worker a is gone", .died(alone: true, decoding: false))
        #expect(
            lifecycle.advance(&item, after: lost, stopping: false)
                == .retry(.probe, after: 0.5, reason: "worker a is gone"))
        #expect(
            lifecycle.advance(&item, after: lost, stopping: false)
                == .retry(.probe, after: 1, reason: "worker a is gone"))
        #expect(
            lifecycle.advance(&item, after: lost, stopping: false)
                == .gaveUp(reason: "text:hello: gave up after 3 attempts at probe: worker a is gone"))
        #expect(item.failure?.reason == .attemptsExhausted)
        #expect(item.failure?.stage == .probe)
        #expect(item.failure?.message == "text:hello: gave up after 3 attempts at probe: worker a is gone")

        var recovered = Self.item(completed: .copy, lost: 2)
        #expect(lifecycle.advance(&recovered, after: .completed(.probe), stopping: false) == .run(.thumbnail))
        #expect(recovered.lostAttempts == 0)
    }

    /// A process death while decoding the item alone is its fault (poison); one
    /// while others were decoding too is not counted, and the item runs again.
    @Test func deathsWhileDecodingAloneMakeAPoisonItem() {
        let lifecycle = ItemLifecycle(stages: Self.stages, maxAttempts: 3)
        var item = Self.item(completed: .copy, lost: 2)
        let notAlone = StageOutcome.lost(at: .probe, reason: "died", .died(alone: false, decoding: true))
        #expect(lifecycle.advance(&item, after: notAlone, stopping: false) == .retry(.probe, after: 0, reason: "died"))
        #expect(item.lostAttempts == 2)
        #expect(item.suspect, "one of several that died while decoding runs alone next")
        let alone = StageOutcome.lost(at: .probe, reason: "died", .died(alone: true, decoding: true))
        #expect(lifecycle.advance(&item, after: alone, stopping: false).isFinished)
        #expect(!item.suspect)
        #expect(item.failure?.reason == .crashedRepeatedly)
        #expect(
            item.failure?.message
                == "text:hello: the process died 3 times while decoding this file alone; not tried again (the last time: died)"
        )
    }

    @Test func aLostFanInIsRetriedUntilItsLastAttempt() {
        let lifecycle = ItemLifecycle(stages: Self.stages, maxAttempts: 2)
        #expect(
            lifecycle.afterLosingFanIn(lostBefore: 0, reason: "gone") == (
                .retry(.manifest, after: 0.5, reason: "gone"), 1
            ))
        #expect(
            lifecycle.afterLosingFanIn(lostBefore: 1, reason: "gone") == (
                .gaveUp(reason: "the manifest job gave up after 2 attempts: gone"), 2
            ))
    }

    /// The items a holder held when it was lost: only those in flight (their
    /// record says they were being decoded in its process) can have caused its
    /// death; the death is blamed only when one was, in both modes; with
    /// several, no attempt is counted and each runs alone next; an item held
    /// but not in flight is handed back as it was, ready at once, not counted.
    @Test func aDeathIsBlamedOnlyWhenOneItemCanBe() {
        let lifecycle = ItemLifecycle(stages: Self.stages, maxAttempts: 3)
        var decoding = Self.item(completed: .copy)
        decoding.decodingInFlight = true
        var alsoDecoding = Self.item(completed: .sniff)
        alsoDecoding.decodingInFlight = true
        let claimed = Self.item(completed: .sniff)
        let two = lifecycle.lose(held: [decoding, alsoDecoding], reason: "died", stopping: false)
        #expect(two.map(\.item.lostAttempts) == [0, 0])
        #expect(two.map(\.item.suspect) == [true, true])
        #expect(two.map(\.next) == [.retry(.probe, after: 0, reason: "died"), .retry(.copy, after: 0, reason: "died")])
        #expect(two.allSatisfy { !$0.item.decodingInFlight })
        let one = lifecycle.lose(held: [decoding, claimed], reason: "died", stopping: false)
        #expect(
            one[0].item.lostAttempts == 1 && one[0].next == .retry(.probe, after: 0.5, reason: "died")
                && one[0].item.suspect)
        #expect(
            one[1].item.lostAttempts == 0 && one[1].next == .retry(.copy, after: 0, reason: "died")
                && !one[1].item.suspect)
        // A worker that had a job of another batch in flight too blames neither.
        #expect(
            lifecycle.lose(held: [decoding], inFlightBeside: 1, reason: "worker b is gone", stopping: false)[0].item
                .lostAttempts == 0)
        #expect(
            lifecycle.lose(held: [decoding], inFlightBeside: 0, reason: "worker b is gone", stopping: false)[0].item
                .lostAttempts == 1)
        // Stopping: each waits where it was.
        #expect(lifecycle.lose(held: [claimed], reason: "died", stopping: true)[0].next == .park(.copy))
    }

    /// A record the store cannot take because it is away or cannot write costs
    /// the item nothing and stops its holder (after the lifecycle's patience);
    /// one it refuses costs an attempt, and a second refusal stops the holder.
    @Test func aFailedRecordCostsWhatTheLifecycleSays() {
        let lifecycle = ItemLifecycle(stages: Self.stages, maxAttempts: 2)
        var item = Self.item(completed: .copy)
        #expect(ItemLifecycle.recordPatience(for: .unreachable) == .infinity)
        #expect(
            ItemLifecycle.recordPatience(for: .unavailable) == 0.5 && ItemLifecycle.recordPatience(for: .refused) == 0)
        // A store whose disk is full is given the patience of one that is away for a moment: then the batch stops for space.
        #expect(ItemLifecycle.recordPatience(for: .full) == 0.5)
        #expect((1...6).map(ItemLifecycle.recordPause(attempt:)) == [0.05, 0.1, 0.2, 0.4, 0.8, 1])
        for failure in [StoreFailure.unavailable, .unreachable, .full] {
            #expect(
                lifecycle.afterFailedRecord(
                    &item, next: .run(.probe), ran: nil, error: "disk full", failure: failure, refusedBefore: false)
                    == .init(next: .park(.probe), stopsRun: true))
        }
        #expect(item.lostAttempts == 0)
        #expect(
            lifecycle.afterFailedRecord(
                &item, next: .run(.probe), ran: nil, error: "too big", failure: .refused, refusedBefore: false)
                == .init(next: .retry(.probe, after: 0.5, reason: "too big"), stopsRun: false))
        #expect(
            lifecycle.afterFailedRecord(
                &item, next: .run(.probe), ran: nil, error: "too big", failure: .refused, refusedBefore: true)
                == .init(next: .park(.probe), stopsRun: true))
        #expect(
            lifecycle.afterFailedRecord(
                &item, next: .run(.probe), ran: nil, error: "too big", failure: .refused, refusedBefore: false
            ).next.isFinished)
        #expect(item.failure?.reason == .attemptsExhausted)
        // The record of a stage's results refused: they are dropped with it, and the stage runs again.
        let before = Self.item(completed: .copy)
        var probed = before
        probed.completed = .probe
        probed.width = 640
        #expect(
            lifecycle.afterFailedRecord(
                &probed, next: .run(.thumbnail), ran: RanStage(stage: .probe, before: before), error: "too big",
                failure: .refused, refusedBefore: false)
                == .init(next: .retry(.probe, after: 0.5, reason: "too big"), stopsRun: false))
        #expect(probed.completed == .copy && probed.width == nil && probed.lostAttempts == 1)
        var parked = before
        parked.completed = .probe
        #expect(
            lifecycle.afterFailedRecord(
                &parked, next: .finished, ran: RanStage(stage: .probe, before: before), error: "full",
                failure: .unavailable, refusedBefore: false)
                == .init(next: .park(.probe), stopsRun: true))
    }

    /// Before a stage: a stop parks the item there; a stage the pipeline
    /// cannot make fails it.
    @Test func admissionToAStage() {
        let lifecycle = ItemLifecycle(stages: Self.stages)
        var item = Self.item(completed: .copy)
        #expect(lifecycle.admit(&item, to: .probe, available: true, stopping: false) == nil)
        #expect(lifecycle.admit(&item, to: .probe, available: true, stopping: true) == .park(.probe))
        #expect(lifecycle.admit(&item, to: .probe, available: false, stopping: false) == .finished)
        #expect(item.failure?.message == "text:hello: stage probe is not in the batch's pipeline")
    }

    /// The recorded form keeps every field, and reads what versions before
    /// labels and lost attempts recorded.
    @Test func theRecordedStateRoundTripsAndOlderRecordsStillRead() throws {
        var item = ItemState(
            index: 3, id: UUID(), source: .file(SourceFile(path: SourcePath(bytes: [0x2F, 0x61, 0xFF]), name: "a")),
            label: "/inbox/a")
        item.completed = .copy
        item.size = 12
        item.warnings = ["named .png but the content is JPEG: stored as .jpg"]
        item.stageSeconds = [.sniff: 0.25]
        item.lostAttempts = 1
        let decoded = ItemState.decode(item.encoded(), index: 3, id: item.id)
        #expect(decoded.encoded() == item.encoded())
        #expect(decoded.label == "/inbox/a")
        if case .file(let file) = decoded.source {
            #expect(file.path.bytes == [0x2F, 0x61, 0xFF])
        } else {
            Issue.record("not a file: \(decoded.source)")
        }

        let older =
            #"{"index":1,"id":"\#(UUID().uuidString)","source":{"kind":"file","path":"L3Byb2Nlc3NpbmcvYQ==","shownAs":"L2luYm94L2E=","name":"a"},"type":"file","warnings":[],"strikes":2}"#
        let read = ItemState.decode(older, index: 1, id: nil)
        #expect(read.failure == nil)
        #expect(read.label == "/inbox/a")
        #expect(read.lostAttempts == 2)
    }

    /// Every stored property of an item is recorded and read back as it was:
    /// the fixture sets each one (every key of the record is written), the
    /// record has a key for each stored property, and the state read back is
    /// equal to the one recorded. A field left out of the record's keys fails this.
    @Test func everyRecordedFieldSurvivesARoundTrip() throws {
        let jpeg = try #require(MediaFormat.known(id: "jpeg"))
        var item = ItemState(
            index: 7, id: UUID(),
            source: .file(SourceFile(path: SourcePath(bytes: [0x2F, 0x61, 0xFF]), name: "a.png")), label: "/inbox/a.png"
        )
        item.completed = .thumbnail
        item.sniffed = SniffedContent(
            format: jpeg, fileExtension: "jpg", mimeType: "image/jpeg", recognised: true, declaredExtension: "png",
            contradictedFormat: MediaFormat.known(id: "png"))
        item.sourceVersion = FileVersion(
            device: 2049, inode: 123_456, size: 4_096, modifiedSeconds: 1_700_000_000, modifiedNanoseconds: 123)
        item.headerPixels = 12_192_768
        item.copyPath = "/container/A.jpg"
        item.size = 4_096
        item.sha256 = String(repeating: "ab", count: 32)
        item.duplicateOf = "/container/B.jpg"
        item.similarTo = SimilarRecord(path: "/container/E.jpg", distance: 3)
        item.type = .image
        item.mimeType = "image/jpeg"
        item.width = 4032
        item.height = 3024
        item.durationMilliseconds = 1500
        item.thumbnailPath = "/container/thumbnails/A.jpg"
        item.thumbHash = "1QcSHQRnh493V4dIh4eXh1h4kJUI"
        item.perceptualHash = "9696056bd8a2657b"
        var hdrPreview = PreviewRecord(
            path: "/container/thumbnails/A.2048.jpg", width: 2048, height: 1536, format: .jpeg, size: 160_000)
        hdrPreview.gainMap = true
        item.previews = [
            PreviewRecord(
                path: "/container/thumbnails/A.1440.webp", width: 1440, height: 1080, format: .webp, size: 81_000),
            hdrPreview,
        ]
        item.moments = MomentFacts(
            embeddedVideo: EmbeddedVideo(layout: .microVideo, offset: 100, length: 2000, truncated: false),
            declaresMotionPhoto: true,
            contentIdentifier: "ABC-1",
            captureTime: CaptureTime(local: 1_700_000_000.5, utc: 1_699_996_400.5, gps: 1_699_996_401, source: .exif),
            stillImageTime: 1.25,
            burstIdentifier: "BURST-1")
        item.motionVideo = MotionVideo(
            path: "/container/C.mp4", thumbnailPath: "/container/thumbnails/C.jpg", size: 2000, mimeType: "video/mp4",
            durationMilliseconds: 1200,
            width: 1920, height: 1080, layout: .microVideo)
        item.livePhoto = LivePhotoLink(
            photo: "/container/A.jpg", video: "/container/D.mov", contentIdentifier: "ABC-1",
            pairedBy: .contentIdentifier)
        item.sidecarKind = .takeout
        var carried = CarriedSidecar(index: 8, name: "a.png.json", ownPath: nil, ownLabel: nil, size: 420)
        carried.locationRemoved = ["Takeout JSON geoData, geoDataExif"]
        var released = CarriedSidecar(
            index: 9, name: "a.png.xmp", ownPath: SourcePath("/elsewhere/a.png.xmp"), ownLabel: "elsewhere/a.png.xmp",
            size: 12)
        released.release(warning: "released")
        released.borrowed = true
        released.isFile = true
        released.sniffed = item.sniffed
        released.copyPath = "/container/A.2.xml"
        released.sha256 = String(repeating: "cd", count: 32)
        released.failure = ItemFailure(.copy, .unreadable, "gone")
        item.carriedSidecars = [carried, released]
        item.attachedTo = "/inbox/b.jpg"
        item.capturedAt = "2019-07-01T16:53:20Z"
        item.capturedAtSource = "takeout"
        item.capturePlace = CapturePlace(zone: "Europe/Paris", source: .takeout)
        item.thumbnailGainMap = true
        item.video = VideoFacts(
            codec: "hevc", frameRate: 29.97, variableFrameRate: false, captureFrameRate: 240, slowMotion: true,
            hdr: "dolbyVision", dolbyVisionProfile: 8, rotation: 90, audio: "aac")
        item.projection = Projection(
            type: .cylindrical, fullWidth: 8000, fullHeight: 2000, cropLeft: 10, cropTop: 20, croppedWidth: 7000,
            croppedHeight: 1500)
        (item.stereo, item.gainMap) = (true, true)
        item.exportDescription = "dusk"
        item.exportLocation = TakeoutLocation(latitude: 48.8, longitude: 2.3, altitude: nil)
        item.group = SharedMediaFile.Group(id: "A", kind: .rawJpeg, role: .raw)
        item.locationRemoved = ["EXIF GPS"]
        item.compatible = CompatibleCopyRecord(
            path: "/container/A.compatible.jpg", width: 4032, height: 3024, size: 900_000)
        item.stageRecords = [
            StageName("checksum"): StageRecord(values: ["sha256": "ab"], files: ["/container/A.sha256"])
        ]
        item.warnings = ["named .png but the content is JPEG: stored as .jpg"]
        item.failure = ItemFailure(.thumbnail, .undecodable, "/inbox/a.png: damaged")
        item.stageSeconds = [.sniff: 0.25, .copy: 0.5]
        item.lostAttempts = 2
        item.decodingInFlight = true
        item.suspect = true
        item.waitingForSpace = ItemFailure(.copy, .diskFull, "/container/A.jpg: container disk full (12 KiB free)")

        let json = item.encoded()
        let keys = Set(try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]).keys)
        #expect(
            keys == Set(ItemState.CodingKeys.allCases.map(\.rawValue)),
            "keys not written: \(Set(ItemState.CodingKeys.allCases.map(\.rawValue)).subtracting(keys).sorted())")
        #expect(
            Mirror(reflecting: item).children.count == ItemState.CodingKeys.allCases.count,
            "a stored property has no key in the record")
        let decoded = ItemState.decode(json, index: 7, id: item.id)
        #expect(decoded == item)
        #expect(decoded.sniffed?.declaredExtension == "png" && decoded.sniffed?.contradictedFormat?.id == "png")
    }

    /// An item whose record cannot be read fails, with why, instead of vanishing
    /// from its batch; the rest of the batch is delivered.
    @Test func anUnreadableItemRecordFailsItsItemLoudly() throws {
        let container = try TemporaryContainer()
        let stopped = CancellationFlag()
        stopped.cancel()
        let ingestor = ShareIngestor(container: container.directory)
        let interrupted = try ingestor.ingest(
            [.text("first"), .text("second"), .url("https://example.org")], cancellation: stopped)
        #expect(interrupted.interrupted)
        let journal = try BatchJournal(container: container.directory)
        try journal.database.query("UPDATE items SET snapshot = '{\"index\": \"garbled' WHERE idx = 1")

        let report = try ShareIngestor(container: container.directory).resume(interrupted.batchID.uuidString)
        #expect(report.items.count == 3)
        #expect(report.items[0].status == .ingested && report.items[2].status == .ingested)
        let failed = report.items[1]
        #expect(failed.status == .failed)
        #expect(failed.failure?.reason == .unreadableState)
        #expect(
            failed.failure?.message.hasPrefix("item 1: its recorded state cannot be read") == true,
            "\(failed.failure?.message ?? "")")
        #expect(report.entries.map(\.path) == ["first", "https://example.org"])
    }

    /// No retry count or limit, backoff or state of an item or a job is chosen
    /// outside ItemLifecycle, and no batch's state is assigned, nor a set of
    /// batch states spelled, outside BatchLifecycle (in Swift or in SQL):
    /// `scripts/lifecycle-decisions.sh` greps the library for them and finds none.
    @Test func noDecisionIsTakenOutsideTheLifecycle() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Fixtures.packageRoot.appendingPathComponent("scripts/lifecycle-decisions.sh").path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let found = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && found.isEmpty, "decisions outside the lifecycles:\n\(found)")
    }

    /// The journal's item table has the declared item columns (``ItemColumn``),
    /// each with its index, beside its own (the row's key, the next stage, the
    /// record): none made by hand beside the declaration.
    @Test func theJournalsItemColumnsAreTheDeclaredOnes() throws {
        let container = try TemporaryContainer()
        let journal = try BatchJournal(container: container.directory)
        let columns = Set(try journal.database.query("PRAGMA table_info(items)").compactMap { $0.text("name") })
        #expect(
            columns.subtracting(["batch_id", "idx", "uuid", "next", "not_before", "snapshot"])
                == Set(ItemColumn.all.map(\.name)))
        let indexes = Set(
            try journal.database.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'items'")
                .compactMap { $0.text("name") })
        #expect(
            Set(ItemColumn.all.filter { $0.index != nil }.map { "items_\($0.name)" }).isSubset(of: indexes),
            "\(indexes)")
    }

    /// A journal that a newer share changed is refused with a clear error, not
    /// used half-understood.
    @Test func aJournalFromANewerShareIsRefused() throws {
        let container = try TemporaryContainer()
        let journal = try BatchJournal(container: container.directory)
        try journal.database.query("INSERT INTO migrations (name, applied_at) VALUES ('99-from-the-future', 0)")
        #expect {
            _ = try BatchJournal(container: container.directory)
        } throws: { error in
            "\(error)".contains("was changed by a newer share (its migration 99-from-the-future is unknown to this one")
                && "\(error)".contains("upgrade share")
        }
        let status = try ShareProcess.run(["status", "--container", container.directory.root])
        #expect(status.status == 73)
        #expect(status.stderr.contains("99-from-the-future"), "\(status.stderr)")
    }

    /// A journal from before migrations had names (`user_version` 2) is taken
    /// over: its batches stay, its migrations are recorded by name.
    @Test func aJournalFromBeforeNamedMigrationsIsTakenOver() throws {
        let container = try TemporaryContainer()
        let done = try ShareIngestor(container: container.directory).ingest([.text("kept")])
        let journal = try BatchJournal(container: container.directory)
        try journal.database.execute(
            """
            DROP TABLE migrations; DROP INDEX items_unfinished; ALTER TABLE items DROP COLUMN next;
            DROP INDEX items_sha256; ALTER TABLE items DROP COLUMN sha256;
            DROP INDEX items_content_identifier; DROP INDEX items_live_photo_name;
            ALTER TABLE items DROP COLUMN content_identifier; ALTER TABLE items DROP COLUMN live_photo_name;
            ALTER TABLE items DROP COLUMN suspect; ALTER TABLE batches DROP COLUMN max_attempts;
            DROP INDEX items_sidecar_kind; DROP INDEX items_export_stem;
            ALTER TABLE items DROP COLUMN sidecar_kind; ALTER TABLE items DROP COLUMN export_stem;
            DROP INDEX items_burst_id; ALTER TABLE items DROP COLUMN burst_id;
            ALTER TABLE items DROP COLUMN not_before; ALTER TABLE batches DROP COLUMN lost_fan_ins; ALTER TABLE batches DROP COLUMN fan_in_not_before;
            ALTER TABLE batches DROP COLUMN failure; ALTER TABLE items DROP COLUMN phash; PRAGMA user_version = 2
            """)
        let reopened = try BatchJournal(container: container.directory)
        #expect(try reopened.batch(done.batchID.uuidString)?.state == .done)
        let names = try reopened.database.query("SELECT name FROM migrations ORDER BY name").compactMap {
            $0.text("name")
        }
        #expect(
            names == [
                "1-batches-and-items", "2-item-next-stage", "3-item-content-hash", "4-item-live-photo-keys",
                "5-suspects-and-attempts", "6-export-sidecar-keys",
                "7-burst-identifier", "8-retry-delays-and-fan-in", "9-perceptual-hash",
            ])
    }
}
