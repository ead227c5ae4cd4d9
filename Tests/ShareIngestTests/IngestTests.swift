import Foundation
import MediaFormats
import ShareIngest
import ShareManifest
import TestSupport
import Testing

/// End-to-end batches through the library on the real libraries.
@Suite struct IngestTests {
    static func ingest(_ inputs: [ShareInput], pipeline: String = "default", in container: TemporaryDirectory) throws
        -> BatchReport
    {
        let directory = try ContainerDirectory(container.path)
        return try ShareIngestor(container: directory, pipeline: try PipelineDefinition.load(pipeline)).ingest(inputs)
    }

    /// Regular files directly in the container (copies), and in thumbnails/.
    static func containerFiles(_ container: TemporaryDirectory) -> (
        copies: Set<String>, thumbnails: Set<String>, partial: [String]
    ) {
        let files = FileManager.default
        let copies = Set((try? files.contentsOfDirectory(atPath: container.path)) ?? []).filter {
            !$0.hasPrefix(".") && $0 != "thumbnails" && $0 != "manifests"
        }
        let thumbnails = Set((try? files.contentsOfDirectory(atPath: container.path + "/thumbnails")) ?? [])
        let all = (files.enumerator(atPath: container.path)?.allObjects as? [String]) ?? []
        return (copies, thumbnails, all.filter { $0.hasSuffix(".partial") })
    }

    @Test func wholeMediaFolderDeliversEveryGoodItemOnceAndReportsTheRest() throws {
        let container = TemporaryDirectory()
        let report = try Self.ingest(
            [.path(Fixtures.packageRoot.appendingPathComponent("testdata/media").path)], in: container)
        let failed = Dictionary(
            uniqueKeysWithValues: report.items.filter { $0.status == .failed }.map {
                (($0.source as NSString).lastPathComponent, $0.failure!)
            })
        #expect(Set(failed.keys) == ["random.jpg", "truncated.jpg", "truncated.mp4"])
        #expect(failed["random.jpg"]?.reason == .contentMismatch)
        #expect(failed["truncated.jpg"]?.message.contains("Premature end") == true)
        #expect(failed["truncated.mp4"]?.reason == .undecodable)

        let entries = try #require(report.redirectURL.map { _ in report.entries })
        let byName = Dictionary(uniqueKeysWithValues: entries.map { ($0.fileName!, $0) })
        #expect(byName.count == report.items.count - 3)
        // A zero-byte file is what was shared: delivered as a file of size 0, with a warning.
        #expect(byName["empty.jpg"]?.type == .file && byName["empty.jpg"]?.size == 0)
        #expect(
            report.items.first { $0.source.hasSuffix("/empty.jpg") }?.warnings == [
                "is empty (0 bytes): delivered as a file"
            ])
        for (name, entry) in byName {
            guard let expected = Fixtures.expected(name), let kind = expected.kind else { continue }
            switch kind {
            case "image":
                #expect(entry.type == .image, "\(name)")
                #expect(entry.width == expected.displayWidth && entry.height == expected.displayHeight, "\(name)")
                #expect(entry.thumbnail != nil, "\(name) has no thumbnail")
            case "video":
                #expect(entry.type == .video, "\(name)")
                #expect(entry.width == expected.displayWidth && entry.height == expected.displayHeight, "\(name)")
                #expect(abs((entry.duration ?? -1) - (expected.durationMs ?? -2)) <= 1, "\(name)")
                #expect(entry.thumbnail != nil, "\(name) has no poster")
            case "audio":
                #expect(entry.type == .file, "\(name)")
                #expect(abs((entry.duration ?? -1) - (expected.durationMs ?? -2)) <= 1, "\(name)")
            default:
                #expect(entry.type == .file, "\(name)")
            }
        }
        // The container holds exactly the manifest's files: no orphans, no temporaries.
        let files = Self.containerFiles(container)
        let listed = Set(entries.compactMap { $0.fileURL?.lastPathComponent })
        #expect(files.copies == listed)
        #expect(
            files.thumbnails == Set(entries.compactMap { $0.thumbnail.flatMap(URL.init(string:))?.lastPathComponent }))
        #expect(files.partial.isEmpty)
    }

    @Test func copiesAreByteForByteAndNamedByUUIDAndContent() throws {
        let container = TemporaryDirectory()
        let report = try Self.ingest(
            [.path(Fixtures.media("jpeg-named.png")), .path(Fixtures.media("no-extension-jpeg"))], in: container)
        #expect(report.isComplete)
        for entry in report.entries {
            let url = try #require(entry.fileURL)
            #expect(url.pathExtension == "jpg")
            #expect(UUID(uuidString: url.deletingPathExtension().lastPathComponent) != nil)
            let source = Fixtures.media(entry.fileName!)
            #expect(FileManager.default.contentsEqual(atPath: url.path, andPath: source))
        }
        #expect(report.items[0].warnings.contains { $0.contains("named .png but the content is JPEG") })
    }

    @Test func sameNamesFromDifferentFoldersAreBothKept() throws {
        let container = TemporaryDirectory()
        let report = try Self.ingest([.path(Fixtures.sampleDrop)], in: container)
        let photos = report.entries.filter { $0.fileName == "IMG_0001.JPG" }
        #expect(photos.count == 2)
        #expect(Set(photos.map(\.path)).count == 2)
        #expect(!report.items.contains { $0.source.hasSuffix(".DS_Store") })
        #expect(report.redirectURL?.kind == .media)
    }

    @Test func oddEntriesInADropAreSkippedWithAReason() throws {
        let drop = TemporaryDirectory()
        try drop.add("good.jpg", copying: Fixtures.media("photo.jpg"))
        try drop.add(".hidden.jpg", copying: Fixtures.media("photo.jpg"))
        try FileManager.default.createSymbolicLink(
            atPath: drop.file("outside.jpg"), withDestinationPath: Fixtures.media("photo.jpg"))
        try FileManager.default.createSymbolicLink(
            atPath: drop.file("inside.jpg"), withDestinationPath: drop.file("good.jpg"))
        try FileManager.default.createSymbolicLink(atPath: drop.file("loop"), withDestinationPath: drop.file("loop"))
        #expect(mkfifo(drop.file("pipe.jpg"), 0o644) == 0)
        let container = TemporaryDirectory()
        let report = try Self.ingest([.path(drop.path)], in: container)
        let byName = Dictionary(
            uniqueKeysWithValues: report.items.map { (($0.source as NSString).lastPathComponent, $0) })
        #expect(byName["good.jpg"]?.status == .ingested)
        #expect(byName[".hidden.jpg"] == nil)
        #expect(byName["outside.jpg"]?.status == .skipped)
        #expect(byName["outside.jpg"]?.failure?.message.contains("outside the drop") == true)
        #expect(byName["pipe.jpg"]?.status == .skipped)
        #expect(byName["pipe.jpg"]?.failure?.message.contains("FIFO") == true)
        #expect(byName["loop"]?.status == .skipped)
        // A link to a file inside the drop is followed; it delivers that file's content.
        #expect(report.items.filter { $0.status == .ingested }.count == 2)
    }

    @Test func textAndLinksBecomeEntriesAndTheRedirectSaysText() throws {
        let container = TemporaryDirectory()
        let report = try Self.ingest(
            [.text("Hello from the share sheet"), .url("https://example.org/a?b=c")], in: container)
        #expect(report.redirectURL?.kind == .text)
        #expect(report.entries.map(\.type) == [.text, .url])
        #expect(report.entries[0].path == "Hello from the share sheet")
    }

    @Test func notAURLIsReported() throws {
        let container = TemporaryDirectory()
        let report = try Self.ingest([.url("not a url"), .text("ok")], in: container)
        #expect(report.items[0].failure?.reason == .notAURL)
        #expect(report.ingestedCount == 1)
    }

    @Test func onlyFilesRedirectAsFile() throws {
        let container = TemporaryDirectory()
        let report = try Self.ingest(
            [.path(Fixtures.media("document.pdf")), .path(Fixtures.media("notes.txt"))], in: container)
        #expect(report.redirectURL?.kind == .file)
        let pdf = try #require(report.entries.first)
        #expect(pdf.thumbnail != nil)
    }

    @Test func inMemoryDataIsSniffedLikeAFile() throws {
        let container = TemporaryDirectory()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Fixtures.media("photo.jpg")))
        let report = try Self.ingest([.data(bytes, name: "pasted")], in: container)
        let entry = try #require(report.entries.first)
        #expect(entry.type == .image)
        #expect(entry.fileURL?.pathExtension == "jpg")
        #expect(entry.size == Int64(bytes.count))
    }

    /// Every v2 entry with a thumbnail carries its ThumbHash (base64 of 5 to 40
    /// bytes, with the alpha flag where the picture has alpha); entries
    /// without a thumbnail have no `thumbhash` key.
    @Test func everyThumbnailHasAThumbHashInTheV2Manifest() throws {
        let container = TemporaryDirectory()
        let names = ["photo.jpg", "alpha.png", "image.heic", "clip-h264.mp4", "notes.txt"]
        let report = try Self.ingest(names.map { .path(Fixtures.media($0)) } + [.text("caption")], in: container)
        let json =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: try #require(report.manifestPath)))) as! [[String: Any]]
        try #require(json.count == 6)
        for (i, entry) in json.enumerated() {
            let hasThumbnail = entry["thumbnail"] is String
            #expect(hasThumbnail == (i < 4), "\(i)")
            guard hasThumbnail else {
                #expect(entry["thumbhash"] == nil, "\(i)")
                continue
            }
            let text = try #require(entry["thumbhash"] as? String, "\(names[i]) has no thumbhash")
            let bytes = try #require(Data(base64Encoded: text), "\(text)")
            #expect((5...40).contains(bytes.count))
            #expect((bytes[2] & 0x80 != 0) == (names[i] == "alpha.png"), "\(names[i]): alpha flag")
            #expect(report.entries[i].thumbhash == text)
        }
    }

    @Test func legacyPipelineWritesSeedManifestWithoutImageThumbnails() throws {
        let container = TemporaryDirectory()
        let report = try Self.ingest(
            [.path(Fixtures.media("photo.jpg")), .path(Fixtures.media("clip-h264.mp4")), .text("caption")],
            pipeline: "share-extension", in: container)
        let json =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: try #require(report.manifestPath)))) as! [[String: Any]]
        #expect(json.count == 2)
        #expect(json[0]["type"] as? Int == 0)
        #expect(json[0]["thumbnail"] is NSNull)
        #expect(json[1]["type"] as? Int == 1)
        #expect(json[1]["duration"] as? Double == 2000)
        #expect(json[1]["thumbnail"] is String)
        #expect(Set(json[0].keys) == ["path", "thumbnail", "duration", "type"])
        #expect(Set(json[1].keys) == ["path", "thumbnail", "duration", "type"])
        // Text cannot sit beside files in a legacy manifest: reported, not silently lost.
        #expect(report.items[2].status == .skipped)
        #expect(report.items[2].failure?.reason == .unsupportedBySchema)
    }

    @Test func aBatchWhereEverythingFailsWritesNoManifest() throws {
        let container = TemporaryDirectory()
        let report = try Self.ingest(
            [.path(Fixtures.media("truncated.jpg")), .path(Fixtures.media("random.jpg"))], in: container)
        #expect(report.manifestPath == nil)
        #expect(report.redirectURL == nil)
        #expect(report.failedCount == 2)
        #expect(Self.containerFiles(container).copies.isEmpty)
    }

    @Test func manifestKeyIsNeverOverwritten() throws {
        let container = TemporaryDirectory()
        let directory = try ContainerDirectory(container.path)
        let key = try ShareKey("Fixed")
        _ = try ShareIngestor(container: directory).ingest([.text("one")], key: key)
        #expect(throws: ShareIngestError.self) {
            try ShareIngestor(container: directory).ingest([.text("two")], key: key)
        }
    }

    @Test func everyBatchGetsItsOwnKey() throws {
        let container = TemporaryDirectory()
        let a = try Self.ingest([.text("one")], in: container)
        let b = try Self.ingest([.text("two")], in: container)
        #expect(a.key != b.key)
        #expect(a.redirectURL?.description != b.redirectURL?.description)
    }

    @Test func goldenManifestForTheSampleDrop() throws {
        let container = TemporaryDirectory()
        let report = try Self.ingest([.path(Fixtures.sampleDrop), .text("Shared from the gallery")], in: container)
        let manifest = try String(contentsOfFile: try #require(report.manifestPath), encoding: .utf8)
        let normalised = Golden.normalise(
            manifest, container: URL(fileURLWithPath: container.path).standardizedFileURL.path)
        if let problem = Golden.check(normalised, named: "sample-drop.v2.json", suite: "ShareIngestTests") {
            Issue.record(Comment(rawValue: problem))
        }
    }
}

/// Phone photos through the whole pipeline (issue 13 items 1–3, issue 16): what
/// the manifest says and what the thumbnail shows.
extension IngestTests {
    @Test func heifStillsAndSequencesAreUprightImagesOfTheirDisplayedSize() throws {
        let container = TemporaryDirectory()
        let fidelity = Fixtures.packageRoot.appendingPathComponent("testdata/fidelity").path
        let names = [
            "heic-exif6-noirot.heic", "grid-irot-exif6.heic", "grid-clap.heic", "avif-clap.avif", "sequence.avifs",
            "sequence-msf1.heics",
        ]
        let report = try Self.ingest(names.map { .path(fidelity + "/" + $0) }, in: container)
        #expect(report.items.allSatisfy { $0.status == .ingested })
        let byName = Dictionary(uniqueKeysWithValues: report.entries.map { ($0.fileName!, $0) })
        let expected: [String: (width: Int, height: Int, ext: String)] = [
            "heic-exif6-noirot.heic": (480, 640, "heic"), "grid-irot-exif6.heic": (480, 720, "heic"),
            "grid-clap.heic": (696, 464, "heic"),
            "avif-clap.avif": (720, 480, "avif"), "sequence.avifs": (360, 240, "avifs"),
            "sequence-msf1.heics": (360, 240, "heics"),
        ]
        for (name, want) in expected {
            let entry = try #require(byName[name])
            #expect(entry.type == .image, "\(name)")
            #expect(
                entry.width == want.width && entry.height == want.height,
                "\(name): \(String(describing: entry.width))×\(String(describing: entry.height))")
            #expect(entry.path.hasSuffix("." + want.ext), "\(name): \(entry.path)")
            let thumbnail = try #require(entry.thumbnail.flatMap { ManifestCoder.filePath(fromURLString: $0) })
            let size = try ImageInspector.size(thumbnail)
            #expect((size.width > size.height) == (want.width > want.height), "\(name): thumbnail \(size)")
            #expect(
                ImageInspector.isRed(
                    try ImageInspector.pixel(thumbnail, x: size.width * 3 / 100, y: size.height * 3 / 100)),
                "\(name): not upright")
        }
        #expect(byName["sequence-msf1.heics"]?.mimeType == "image/heic-sequence")
    }
}
