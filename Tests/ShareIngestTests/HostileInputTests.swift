import Foundation
import Glibc
import MediaFormats
import MediaKit
import ShareIngest
import ShareManifest
import Synchronization
import TestSupport
import Testing

/// A hostile corpus, generated at run time from the committed media (cut,
/// corrupted, header-patched) and with the vips/ffmpeg command-line tools:
/// every bad item gets a precise per-item outcome, the ordinary photos in the
/// same drop are always delivered, and the container holds nothing else.
@Suite struct HostileInputTests {
    // MARK: - Helpers

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.media(name))))
    }

    /// A drop folder with two ordinary photos in it.
    static func drop() throws -> TemporaryDirectory {
        let drop = TemporaryDirectory("hostile-drop")
        try drop.add("ordinary-1.jpg", copying: Fixtures.media("photo.jpg"))
        try drop.add("ordinary-2.jpg", copying: Fixtures.media("portrait-exif6.jpg"))
        return drop
    }

    /// The journal is kept off the container's disk here, so that a test can fill
    /// that disk to the byte for the copy, the thumbnail or the manifest.
    static func ingest(
        _ inputs: [ShareInput], pipeline: PipelineDefinition = .standard, container: String,
        events: IngestEventSink? = nil
    ) throws -> BatchReport {
        let state = TemporaryDirectory("state")
        return try withExtendedLifetime(state) {
            try ShareIngestor(
                container: try ContainerDirectory(container, stateDirectory: state.path), pipeline: pipeline
            ).ingest(inputs, events: events)
        }
    }

    /// Items by the last component of their source.
    static func byName(_ report: BatchReport) -> [String: ItemReport] {
        var result: [String: ItemReport] = [:]
        for item in report.items { result[(item.source as NSString).lastPathComponent] = item }
        return result
    }

    /// The ordinary photos were delivered as images with thumbnails, and the
    /// container holds exactly the manifest's copies and thumbnails (no
    /// `.partial`, no orphan of a failed item).
    static func expectOrdinaryPhotosAndCleanContainer(
        _ report: BatchReport, _ container: String, photos: [String] = ["ordinary-1.jpg", "ordinary-2.jpg"],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let items = byName(report)
        for photo in photos {
            #expect(
                items[photo]?.status == .ingested, "\(photo): \(String(describing: items[photo]?.failure))",
                sourceLocation: sourceLocation)
            #expect(items[photo]?.entry?.type == .image, sourceLocation: sourceLocation)
            #expect(items[photo]?.entry?.thumbnail != nil, sourceLocation: sourceLocation)
        }
        expectCleanContainer(report, container, sourceLocation: sourceLocation)
    }

    static func expectCleanContainer(
        _ report: BatchReport, _ container: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let files = FileManager.default
        // Hidden entries are the container's own (journal, the spool of in-memory inputs).
        let copies = Set((try? files.contentsOfDirectory(atPath: container)) ?? []).subtracting([
            "thumbnails", "manifests",
        ]).filter { !$0.hasPrefix(".") }
        let thumbnails = Set((try? files.contentsOfDirectory(atPath: container + "/thumbnails")) ?? [])
        let all = (files.enumerator(atPath: container)?.allObjects as? [String]) ?? []
        let entries = report.entries
        #expect(
            copies == Set(entries.compactMap { $0.fileURL?.lastPathComponent }), "stray copies",
            sourceLocation: sourceLocation)
        #expect(
            thumbnails == Set(entries.compactMap { $0.thumbnail.flatMap(URL.init(string:))?.lastPathComponent }),
            "stray thumbnails", sourceLocation: sourceLocation)
        #expect(all.filter { $0.hasSuffix(".partial") }.isEmpty, "temporary files left", sourceLocation: sourceLocation)
        let manifests = ((try? files.contentsOfDirectory(atPath: container + "/manifests")) ?? []).filter {
            $0.hasSuffix(".json")
        }
        #expect(manifests.count == (report.manifestPath == nil ? 0 : 1), sourceLocation: sourceLocation)
    }

    /// Expects `name` to have failed (or been skipped) for `reason`, with a message naming it.
    static func expectFailure(
        _ items: [String: ItemReport], _ name: String, _ reason: ItemFailure.Reason, status: ItemStatus = .failed,
        stage: StageName? = nil, containing text: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let item = items[name] else {
            Issue.record("\(name) is not in the report", sourceLocation: sourceLocation)
            return
        }
        #expect(
            item.status == status, "\(name): \(item.status) \(String(describing: item.failure))",
            sourceLocation: sourceLocation)
        #expect(
            item.failure?.reason == reason, "\(name): \(String(describing: item.failure))",
            sourceLocation: sourceLocation)
        if let stage {
            #expect(
                item.failure?.stage == stage, "\(name): \(String(describing: item.failure))",
                sourceLocation: sourceLocation)
        }
        let message = item.failure?.message ?? ""
        #expect(
            message.contains(name), "the message does not name the file: \(message)", sourceLocation: sourceLocation)
        if let text { #expect(message.contains(text), "\(name): \(message)", sourceLocation: sourceLocation) }
        #expect(item.entry == nil, sourceLocation: sourceLocation)
    }

    static func expectIngested(
        _ items: [String: ItemReport], _ name: String, type: SharedMediaType, fileExtension: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            items[name]?.status == .ingested, "\(name): \(String(describing: items[name]?.failure))",
            sourceLocation: sourceLocation)
        #expect(items[name]?.entry?.type == type, "\(name)", sourceLocation: sourceLocation)
        #expect(items[name]?.entry?.fileURL?.pathExtension == fileExtension, "\(name)", sourceLocation: sourceLocation)
    }

    /// Runs a tool the tests use to make media (the product never shells out).
    @discardableResult
    static func tool(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (
        status: Int32, output: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func make(_ path: String, _ arguments: [String]) throws {
        let result = try tool(path, arguments)
        try #require(result.status == 0, "\(path) \(arguments): \(result.output)")
    }

    static func pipeline(_ json: String) throws -> PipelineDefinition {
        try PipelineDefinition.decode(Data(json.utf8), file: "test.json")
    }

    /// One worker per stage: disk-full cases need a predictable order of writes.
    static let sequential = """
        {"name": "sequential", "stages": [
          {"stage": "sniff"}, {"stage": "copy", "workers": 1}, {"stage": "probe", "workers": 1},
          {"stage": "thumbnail", "workers": 1}, {"stage": "manifest"}]}
        """

    // MARK: - Damaged and mislabelled files

    @Test func damagedAndMislabelledFilesEachGetAPreciseOutcome() throws {
        let drop = try Self.drop()
        let cuts: [(source: String, ext: String)] = [
            ("photo.jpg", "jpg"), ("alpha.png", "png"), ("image.heic", "heic"), ("clip-h264.mp4", "mp4"),
            ("clip.mov", "mov"), ("clip-vp9.webm", "webm"),
        ]
        for (source, ext) in cuts {
            let bytes = try Self.bytes(source)
            try drop.add("cut16-\(source).\(ext)", bytes: Array(bytes.prefix(16)))
            for percent in [10, 50, 90] {
                try drop.add("cut\(percent)-\(source).\(ext)", bytes: Array(bytes.prefix(bytes.count * percent / 100)))
            }
        }
        try drop.add("zero.jpg", bytes: [])
        try drop.add("zero.mp4", bytes: [])
        var generator = SystemRandomNumberGenerator()
        for ext in ["jpg", "png", "heic", "mp4", "mov", "webm", "gif"] {
            var noise = (0..<5000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Noise starting 0xFF 0xF0-0xF9 is an MPEG audio frame sync, which the
            // sniffer rightly takes for MP3 or ADTS AAC (about 1 run in 1,200 of
            // these seven files failed so): the noise must not start with one.
            if noise[0] == 0xFF { noise[0] = 0 }
            try drop.add("random.\(ext)", bytes: noise)
        }
        try drop.add("jpeg-named.mp4", copying: Fixtures.media("photo.jpg"))
        try drop.add("video-named.jpg", copying: Fixtures.media("clip-h264.mp4"))

        let container = TemporaryDirectory()
        let report = try Self.ingest([.path(drop.path)], container: container.path)
        let items = Self.byName(report)
        #expect(items.count == 2 + 6 * 4 + 2 + 7 + 2)

        for (source, ext) in cuts where ext != "webm" {
            for cut in ["cut16", "cut10", "cut50", "cut90"] {
                Self.expectFailure(items, "\(cut)-\(source).\(ext)", .undecodable)
            }
        }
        #expect(items["cut10-photo.jpg.jpg"]?.failure?.message.contains("Premature end") == true)
        #expect(items["cut90-image.heic.heic"]?.failure?.message.contains("Unexpected end of file") == true)
        // A Matroska/WebM cut short still has its header and whole clusters: the
        // part that is there is delivered (16 bytes are not enough to be anything).
        Self.expectFailure(items, "cut16-clip-vp9.webm.webm", .undecodable, stage: .probe)
        for cut in ["cut10", "cut50", "cut90"] {
            Self.expectIngested(items, "\(cut)-clip-vp9.webm.webm", type: .video, fileExtension: "webm")
        }
        #expect(items["cut10-clip-vp9.webm.webm"]?.warnings.contains { $0.contains("no poster frame") } == true)

        // Zero-byte files are what was shared (issue 13): files of size 0, named as they were.
        for (name, ext) in [("zero.jpg", "jpg"), ("zero.mp4", "mp4")] {
            Self.expectIngested(items, name, type: .file, fileExtension: ext)
            #expect(
                items[name]?.entry?.size == 0 && items[name]?.entry?.thumbnail == nil
                    && items[name]?.entry?.mimeType == "application/octet-stream")
            #expect(items[name]?.warnings == ["is empty (0 bytes): delivered as a file"])
        }
        for ext in ["jpg", "png", "heic", "mp4", "mov", "webm", "gif"] {
            Self.expectFailure(
                items, "random.\(ext)", .contentMismatch, stage: .sniff,
                containing: "named .\(ext) but the content is not")
        }
        Self.expectIngested(items, "jpeg-named.mp4", type: .image, fileExtension: "jpg")
        #expect(
            items["jpeg-named.mp4"]?.warnings.contains { $0.contains("named .mp4 but the content is JPEG") } == true)
        Self.expectIngested(items, "video-named.jpg", type: .video, fileExtension: "mp4")
        #expect(items["video-named.jpg"]?.entry?.duration == 2000)
        Self.expectOrdinaryPhotosAndCleanContainer(report, container.path)
    }

    /// Issue 13: a zero-byte file is delivered (type `file`, size 0, a warning) in
    /// the manifest and the report, from a path or from memory; empty text is not.
    @Test func zeroByteFilesAreDeliveredButEmptyTextIsRefused() throws {
        let drop = TemporaryDirectory("zero")
        let file = try drop.add("empty note.png", bytes: [])
        let container = TemporaryDirectory()
        let report = try Self.ingest(
            [.path(file), .data(Data(), name: "blank.mov"), .text(""), .text("hello")], container: container.path)
        let items = report.items
        #expect(items.map(\.status) == [.ingested, .ingested, .failed, .ingested])
        #expect(items[2].failure?.reason == .empty && items[2].failure?.stage == .sniff)
        for (item, ext) in zip(items[0...1], ["png", "mov"]) {
            let entry = try #require(item.entry)
            #expect(entry.type == .file && entry.size == 0 && entry.thumbnail == nil && entry.duration == nil)
            let copy = try #require(entry.fileURL)
            #expect(copy.pathExtension == ext)
            #expect(try FileManager.default.attributesOfItem(atPath: copy.path)[.size] as? Int == 0)
            #expect(item.warnings == ["is empty (0 bytes): delivered as a file"])
        }
        // The manifest on disk says the same.
        let manifest =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: try #require(report.manifestPath)))) as? [[String: Any]]
        let first = try #require(manifest?.first)
        #expect(
            first["type"] as? String == "file" && first["size"] as? Int == 0
                && first["fileName"] as? String == "empty note.png")
        // The report page shows it delivered, with its warning.
        let page = ReportPage(report, container: try ContainerDirectory(container.path))
        #expect(page.html.contains("is empty (0 bytes): delivered as a file"))
        Self.expectCleanContainer(report, container.path)
    }

    // MARK: - Decompression bombs

    /// A CRC-32 (PNG chunks carry one).
    static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    /// A real PNG whose IHDR (CRC fixed) now claims `width`×`height`.
    static func pngClaiming(width: UInt32, height: UInt32) throws -> [UInt8] {
        var png = try bytes("alpha.png")
        png.replaceSubrange(16..<24, with: bigEndian(width) + bigEndian(height))
        png.replaceSubrange(29..<33, with: bigEndian(crc32(png[12..<29])))
        return png
    }

    /// Patches every baseline/progressive SOF marker to claim `width`×`height`.
    static func patchSOF(_ data: inout [UInt8], width: UInt16, height: UInt16) -> Int {
        var patched = 0
        var i = 0
        while i + 9 < data.count {
            if data[i] == 0xFF, data[i + 1] == 0xC0 || data[i + 1] == 0xC2 {
                data.replaceSubrange(
                    (i + 5)..<(i + 9),
                    with: [UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF)])
                patched += 1
            }
            i += 1
        }
        return patched
    }

    /// A QuickTime MJPEG clip whose sample entry, track header and every frame
    /// claim 15360×8640 (132.7 MP): made tiny with ffmpeg, then patched.
    static func videoClaiming16K(in directory: TemporaryDirectory) throws -> [UInt8] {
        let small = directory.file("small-mjpeg.mov")
        try make(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=64x48:d=0.2:r=10", "-c:v", "mjpeg", "-q:v", "5",
                small,
            ])
        var data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: small)))
        let (width, height): (UInt16, UInt16) = (15360, 8640)
        #expect(patchSOF(&data, width: width, height: height) >= 2)
        func find(_ ascii: String, from start: Int = 0) -> Int? {
            let needle = Array(ascii.utf8)
            return (start...(data.count - needle.count)).first { data[$0..<($0 + needle.count)].elementsEqual(needle) }
        }
        // stsd sample entry 'jpeg': after the type, 6 reserved, 2 data-ref, 2+2 version,
        // 4 vendor, 4+4 quality, then width and height (16 bits each).
        let stsd = try #require(find("stsd"))
        let entry = try #require(find("jpeg", from: stsd))
        let size = entry + 4 + 6 + 2 + 4 + 4 + 8
        data.replaceSubrange(
            size..<(size + 4), with: [UInt8(width >> 8), UInt8(width & 0xFF), UInt8(height >> 8), UInt8(height & 0xFF)])
        // tkhd: width and height are its last 8 bytes, 16.16 fixed point.
        let tkhd = try #require(find("tkhd"))
        let end =
            tkhd - 4
            + Int(
                UInt32(data[tkhd - 4]) << 24 | UInt32(data[tkhd - 3]) << 16 | UInt32(data[tkhd - 2]) << 8
                    | UInt32(data[tkhd - 1]))
        data.replaceSubrange((end - 8)..<end, with: bigEndian(UInt32(width) << 16) + bigEndian(UInt32(height) << 16))
        return data
    }

    @Test func decompressionBombsAreRefusedBeforeDecoding() throws {
        let drop = try Self.drop()
        try drop.add("bomb-30000x30000.png", bytes: try Self.pngClaiming(width: 30000, height: 30000))
        var jpeg = try Self.bytes("photo.jpg")
        #expect(Self.patchSOF(&jpeg, width: 65500, height: 65500) == 1)
        try drop.add("bomb-65500x65500.jpg", bytes: jpeg)
        let scratch = TemporaryDirectory()
        try drop.add("bomb-16k.mov", bytes: try Self.videoClaiming16K(in: scratch))
        // Just under the limit: a 10000×10000 header is decoded (and is damaged).
        try drop.add("under-limit-10000x10000.png", bytes: try Self.pngClaiming(width: 10000, height: 10000))

        let container = TemporaryDirectory()
        let report = try Self.ingest([.path(drop.path)], container: container.path)
        let items = Self.byName(report)
        Self.expectFailure(
            items, "bomb-30000x30000.png", .tooManyPixels, stage: .probe,
            containing: "30000×30000 is 900.0 MP, over the limit of 100.0 MP")
        Self.expectFailure(items, "bomb-65500x65500.jpg", .tooManyPixels, stage: .probe, containing: "65500×65500")
        Self.expectFailure(items, "bomb-16k.mov", .tooManyPixels, stage: .probe, containing: "15360×8640 is 132.7 MP")
        Self.expectFailure(items, "under-limit-10000x10000.png", .undecodable, stage: .thumbnail)
        Self.expectOrdinaryPhotosAndCleanContainer(report, container.path)

        // The limit is the pipeline's: 0.2 MP refuses the 640×480 photo too.
        let strict = try Self.pipeline(
            #"{"name": "strict", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "probe", "pixelLimit": 200000}, {"stage": "manifest"}]}"#
        )
        let second = TemporaryDirectory()
        let limited = try Self.ingest(
            [.path(Fixtures.media("photo.jpg")), .path(Fixtures.media("tiny-1x1.png"))], pipeline: strict,
            container: second.path)
        Self.expectFailure(
            Self.byName(limited), "photo.jpg", .tooManyPixels, containing: "640×480 is 0.3 MP, over the limit of 0.2 MP"
        )
        #expect(Self.byName(limited)["tiny-1x1.png"]?.status == .ingested)
    }

    // MARK: - Odd but valid images

    @Test func oddValidImagesGetSRGBThumbnailsThatFit() throws {
        let drop = TemporaryDirectory("hostile-drop")
        for name in [
            "cmyk.jpg", "png16.png", "gray.jpg", "animated.gif", "progressive.jpg", "tiny-1x1.png", "alpha.png",
        ] {
            try drop.add(name, copying: Fixtures.media(name))
        }
        try Self.make(
            "/usr/bin/vips", ["copy", Fixtures.media("alpha.png"), drop.file("palette-alpha.png") + "[palette]"])
        try Self.make("/usr/bin/vips", ["copy", Fixtures.media("animated.gif") + "[n=-1]", drop.file("animated.webp")])
        try Self.make("/usr/bin/vips", ["black", drop.file("wide-10000x10.png"), "10000", "10", "--bands", "3"])
        try Self.make("/usr/bin/vips", ["black", drop.file("tall-10x10000.png"), "10", "10000"])
        #expect(try ImageInspector.size(drop.file("animated.webp")) == (200, 100))

        let container = TemporaryDirectory()
        let report = try Self.ingest([.path(drop.path)], container: container.path)
        let items = Self.byName(report)
        let expected: [String: (width: Int, height: Int)] = [
            "cmyk.jpg": (320, 240), "png16.png": (128, 128), "gray.jpg": (640, 480), "animated.gif": (200, 100),
            "progressive.jpg": (640, 480), "tiny-1x1.png": (1, 1), "alpha.png": (256, 256),
            "palette-alpha.png": (256, 256),
            "animated.webp": (200, 100), "wide-10000x10.png": (10000, 10), "tall-10x10000.png": (10, 10000),
        ]
        #expect(Set(items.keys) == Set(expected.keys))
        for (name, size) in expected {
            let entry = try #require(items[name]?.entry, "\(name): \(String(describing: items[name]?.failure))")
            #expect(entry.type == .image, "\(name)")
            #expect(
                entry.width == size.width && entry.height == size.height,
                "\(name): \(String(describing: entry.width))×\(String(describing: entry.height))")
            let thumbnail = try #require(entry.thumbnail.flatMap(URL.init(string:))?.path, "\(name) has no thumbnail")
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: thumbnail)))
            #expect(bytes.starts(with: [0xFF, 0xD8, 0xFF]), "\(name): the thumbnail is not a JPEG")
            let (width, height) = try ImageInspector.size(thumbnail)
            #expect(max(width, height) == min(360, max(size.width, size.height)), "\(name): \(width)×\(height)")
            #expect(width >= 1 && height >= 1, "\(name): \(width)×\(height)")
            // An 8-bit JPEG in sRGB (or plain grey for grey sources): never CMYK, 16-bit or alpha.
            let header = try Self.tool("/usr/bin/vipsheader", ["-a", thumbnail]).output
            #expect(header.contains("uchar"), "\(name): \(header)")
            let colour =
                header.contains("uchar, 3 bands, srgb")
                || (header.contains("uchar, 1 band, b-w") && ["gray.jpg", "tall-10x10000.png"].contains(name))
            #expect(colour, "\(name): \(header)")
        }
        Self.expectCleanContainer(report, container.path)
    }

    // MARK: - Odd videos

    @Test func oddVideosAreDeliveredOrReportedPrecisely() throws {
        let drop = try Self.drop()
        let ffmpeg = "/usr/bin/ffmpeg"
        try Self.make(
            ffmpeg,
            ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac", drop.file("no-video-stream.mp4")])
        try Self.make(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=64x48:d=1", "-frames:v", "0", "-c:v", "libx264",
                drop.file("zero-frames.mp4"),
            ])
        try Self.make(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=64x48:d=1", "-f", "lavfi", "-i", "sine=d=1", "-f",
                "lavfi", "-i", "testsrc=s=32x24:d=1",
                "-map", "0", "-map", "1", "-map", "2", "-map", "1", "-map", "1", "-map", "1", "-map", "1", "-map", "1",
                "-c:v", "libx264", "-c:a", "aac", drop.file("many-streams.mkv"),
            ])
        var moov = try Self.bytes("clip-h264.mp4")
        let atom = try #require((0..<(moov.count - 4)).first { moov[$0..<($0 + 4)].elementsEqual(Array("moov".utf8)) })
        moov.replaceSubrange(atom..<(atom + 4), with: Array("moxv".utf8))
        try drop.add("broken-moov.mp4", bytes: moov)
        // mvhd, mdhd and tkhd all claim 0xFFFFFFF0 time units (about 49 days).
        var absurd = try Self.bytes("clip-h264.mp4")
        for (box, offset) in [("mvhd", 16), ("mdhd", 16), ("tkhd", 20)] {
            let at = try #require(
                (0..<(absurd.count - 4)).first { absurd[$0..<($0 + 4)].elementsEqual(Array(box.utf8)) })
            absurd.replaceSubrange((at + 4 + offset)..<(at + 8 + offset), with: [0xFF, 0xFF, 0xFF, 0xF0])
        }
        try drop.add("absurd-duration.mp4", bytes: absurd)

        let container = TemporaryDirectory()
        let report = try Self.ingest([.path(drop.path)], container: container.path)
        let items = Self.byName(report)
        Self.expectIngested(items, "no-video-stream.mp4", type: .file, fileExtension: "mp4")
        #expect(items["no-video-stream.mp4"]?.entry?.mimeType == "audio/mp4")
        #expect(abs((items["no-video-stream.mp4"]?.entry?.duration ?? 0) - 1000) <= 30)
        Self.expectFailure(
            items, "zero-frames.mp4", .undecodable, stage: .probe, containing: "no decodable video or audio stream")
        Self.expectFailure(items, "broken-moov.mp4", .undecodable, stage: .probe)
        Self.expectIngested(items, "many-streams.mkv", type: .video, fileExtension: "mkv")
        #expect(items["many-streams.mkv"]?.entry?.width == 64)
        #expect(items["many-streams.mkv"]?.entry?.thumbnail != nil)
        // The header's duration is reported as it is (the clip itself plays 2 s).
        Self.expectIngested(items, "absurd-duration.mp4", type: .video, fileExtension: "mp4")
        #expect((items["absurd-duration.mp4"]?.entry?.duration ?? 0) > 1e9)
        #expect(items["absurd-duration.mp4"]?.entry?.thumbnail != nil)
        Self.expectOrdinaryPhotosAndCleanContainer(report, container.path)
    }

    // MARK: - File-system oddities

    /// Creates a file whose name is raw bytes (not necessarily UTF-8).
    static func create(_ directory: String, rawName: [UInt8], bytes: [UInt8]) throws {
        let path = Array(directory.utf8) + [UInt8(ascii: "/")] + rawName + [0]
        let fd = path.withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { Glibc.open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        try #require(fd >= 0, "open: \(String(cString: strerror(errno)))")
        defer { close(fd) }
        #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
    }

    @Test func fileSystemOdditiesAreSkippedOrDeliveredAndNeverBlock() throws {
        let drop = try Self.drop()
        let files = FileManager.default
        let photo = try Self.bytes("photo.jpg")
        try files.createSymbolicLink(atPath: drop.file("loop-a"), withDestinationPath: "loop-b")
        try files.createSymbolicLink(atPath: drop.file("loop-b"), withDestinationPath: "loop-a")
        try files.createSymbolicLink(atPath: drop.file("self-dir"), withDestinationPath: ".")
        try files.createSymbolicLink(atPath: drop.file("outside.jpg"), withDestinationPath: Fixtures.media("photo.jpg"))
        try files.createSymbolicLink(atPath: drop.file("inside.jpg"), withDestinationPath: "ordinary-1.jpg")
        #expect(mkfifo(drop.file("fifo.jpg"), 0o644) == 0)
        // A bound Unix socket.
        let socketFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socketFD >= 0)
        defer { close(socketFD) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let socketPath = drop.file("socket.jpg")
        try #require(socketPath.utf8.count < MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in socketPath.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0, "bind: \(String(cString: strerror(errno)))")
        // A character device like /dev/null, where mknod is allowed (root, no user namespace).
        let haveDevice = mknod(drop.file("device.jpg"), S_IFCHR | 0o644, dev_t(0x103)) == 0
        if !haveDevice {
            print(
                "HostileInputTests: mknod not permitted here (\(String(cString: strerror(errno)))); the device case is not exercised"
            )
        }
        #expect(link(drop.file("ordinary-1.jpg"), drop.file("hard-link.jpg")) == 0)
        let deep = (0..<100).map { _ in "d" }.joined(separator: "/")
        try drop.add(deep + "/too-deep.jpg", bytes: photo)
        let fine = (0..<20).map { _ in "e" }.joined(separator: "/")
        try drop.add(fine + "/twenty-deep.jpg", bytes: photo)
        try drop.add("new\nline.jpg", bytes: photo)
        try drop.add("-leading-dash.jpg", bytes: photo)
        try Self.create(drop.path, rawName: Array("bad-".utf8) + [0xFF, 0xFE] + Array("-utf8.jpg".utf8), bytes: photo)
        let longName = String(repeating: "x", count: 251) + ".jpg"
        #expect(longName.utf8.count == 255)
        try drop.add(longName, bytes: photo)

        let container = TemporaryDirectory()
        let report = try Self.ingest([.path(drop.path)], container: container.path)
        let items = Self.byName(report)
        Self.expectFailure(
            items, "loop-a", .symbolicLink, status: .skipped, containing: "broken symbolic link (or a loop)")
        Self.expectFailure(items, "loop-b", .symbolicLink, status: .skipped)
        Self.expectFailure(items, "self-dir", .symbolicLink, status: .skipped, containing: "not a regular file")
        Self.expectFailure(items, "outside.jpg", .symbolicLink, status: .skipped, containing: "outside the drop")
        Self.expectFailure(items, "fifo.jpg", .notRegularFile, status: .skipped, containing: "is a FIFO")
        Self.expectFailure(items, "socket.jpg", .notRegularFile, status: .skipped, containing: "is a socket")
        if haveDevice {
            Self.expectFailure(
                items, "device.jpg", .notRegularFile, status: .skipped, containing: "is a character device")
        }
        // The 64th level is reported; nothing below it is read.
        let tooDeep = report.items.filter { $0.failure?.reason == .tooDeep }
        #expect(tooDeep.count == 1)
        #expect(tooDeep.first?.status == .skipped)
        #expect(tooDeep.first?.failure?.message.contains("deeper than 64 levels") == true)
        #expect(items["too-deep.jpg"] == nil)

        for name in ["inside.jpg", "hard-link.jpg", "twenty-deep.jpg", "-leading-dash.jpg", longName] {
            Self.expectIngested(items, name, type: .image, fileExtension: "jpg")
            #expect(items[name]?.entry?.fileName == name)
        }
        // Control characters and invalid UTF-8 are shown escaped / replaced, never lost.
        Self.expectIngested(items, "new\\nline.jpg", type: .image, fileExtension: "jpg")
        #expect(items["new\\nline.jpg"]?.entry?.fileName == "new\\nline.jpg")
        Self.expectIngested(items, "bad-\u{FFFD}\u{FFFD}-utf8.jpg", type: .image, fileExtension: "jpg")
        // Each ingested copy is the source's bytes.
        for name in ["inside.jpg", "-leading-dash.jpg", "bad-\u{FFFD}\u{FFFD}-utf8.jpg", longName] {
            let copy = try #require(items[name]?.entry?.fileURL?.path)
            #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: copy))) == photo, "\(name)")
        }
        let expectedCount = 2 + 5 + 2 + 7 + (haveDevice ? 1 : 0)
        #expect(report.items.count == expectedCount)
        Self.expectOrdinaryPhotosAndCleanContainer(report, container.path)
    }

    // MARK: - Files that change or vanish

    /// Sets a flag the event sink and a background thread share.
    final class Signal: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set(_ v: Bool) {
            lock.lock()
            value = v
            lock.unlock()
        }
        var isSet: Bool {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
    }

    static func append(_ path: String, _ bytes: [UInt8]) {
        let fd = open(path, O_WRONLY | O_APPEND)
        guard fd >= 0 else { return }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    @Test func filesThatChangeOrVanishWhileIngestedAreReportedNotHalfDelivered() throws {
        let drop = TemporaryDirectory("hostile-drop")
        let first = try drop.add("ordinary-1.jpg", copying: Fixtures.media("photo.jpg"))
        let grows = try drop.add("grows.jpg", copying: Fixtures.media("photo.jpg"))
        let vanishes = try drop.add("vanishes.jpg", copying: Fixtures.media("photo.jpg"))
        // A 64 MB file appended to continuously from the moment it was sniffed until its copy finished.
        let streaming = try drop.add("streaming.bin", bytes: [])
        #expect(truncate(streaming, 64 << 20) == 0)
        let last = try drop.add("ordinary-2.jpg", copying: Fixtures.media("exif3.jpg"))

        let appending = Signal()
        let done = Signal()
        let appender = Thread {
            while !done.isSet {
                if appending.isSet { Self.append(streaming, [1]) } else { usleep(200) }
            }
        }
        appender.start()
        defer { done.set(true) }
        let sink: IngestEventSink = { event in
            guard case .stageFinished(let stage, let index, _) = event else { return }
            switch (stage, index) {
            case (.sniff, 1): Self.append(grows, [0xFF, 0xD9])  // after inspection, before the copy
            case (.sniff, 2): unlink(vanishes)
            case (.sniff, 3): appending.set(true)
            case (.copy, 3): appending.set(false)
            default: break
            }
        }
        let container = TemporaryDirectory()
        let report = try Self.ingest(
            [.path(first), .path(grows), .path(vanishes), .path(streaming), .path(last)],
            pipeline: try Self.pipeline(Self.sequential), container: container.path, events: sink)
        done.set(true)
        let items = Self.byName(report)
        Self.expectFailure(items, "grows.jpg", .changedWhileCopying, stage: .copy, containing: "changed")
        Self.expectFailure(items, "vanishes.jpg", .unreadable, stage: .copy, containing: "vanished")
        Self.expectFailure(items, "streaming.bin", .changedWhileCopying, stage: .copy, containing: "not delivered")
        Self.expectOrdinaryPhotosAndCleanContainer(report, container.path)
    }

    // MARK: - Disk full

    static func pages(_ bytes: Int) -> Int { (bytes + 4095) / 4096 * 4096 }

    /// One worker per stage and no space kept free: each case fills the disk at one stage.
    static let sequentialWithoutReserve = """
        {"name": "sequential", "stages": [
          {"stage": "sniff"}, {"stage": "copy", "workers": 1, "reserveMiB": 0}, {"stage": "probe", "workers": 1},
          {"stage": "thumbnail", "workers": 1}, {"stage": "manifest"}]}
        """

    /// Ingests `inputs` into `container` (its journal in `state`), keeping the batch to resume it.
    static func ingestKeepingState(
        _ inputs: [ShareInput], pipeline: PipelineDefinition, container: String, state: TemporaryDirectory
    ) throws -> (ShareIngestor, BatchReport) {
        let ingestor = ShareIngestor(
            container: try ContainerDirectory(container, stateDirectory: state.path), pipeline: pipeline)
        return (ingestor, try ingestor.ingest(inputs))
    }

    /// A batch stopped by a full disk: resumable, nothing delivered or failed
    /// for good, `waiting` named as waiting for space (reason `diskFull`,
    /// stage `stage`), nothing of theirs left in the container.
    static func expectWaitingForSpace(
        _ report: BatchReport, _ waiting: String, stage: StageName, containing text: String, container: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(report.interrupted, "the batch is resumable", sourceLocation: sourceLocation)
        guard case .diskFull(let path, _)? = report.stop else {
            Issue.record(
                "stopped for \(String(describing: report.stop)), not a full disk", sourceLocation: sourceLocation)
            return
        }
        #expect(
            path.hasPrefix(URL(fileURLWithPath: container).standardizedFileURL.path),
            "the stop names the container: \(path)", sourceLocation: sourceLocation)
        #expect(report.manifestPath == nil && report.redirectURL == nil, sourceLocation: sourceLocation)
        expectFailure(
            byName(report), waiting, .diskFull, stage: stage, containing: text, sourceLocation: sourceLocation)
        let all = (FileManager.default.enumerator(atPath: container)?.allObjects as? [String]) ?? []
        #expect(
            all.filter { $0.hasSuffix(".partial") }.isEmpty, "temporary files left: \(all)",
            sourceLocation: sourceLocation)
    }

    /// Resumes the batch of `report` and expects every item delivered, once.
    static func expectResumeDeliversEverything(
        _ ingestor: ShareIngestor, _ report: BatchReport, names: [String], container: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let resumed = try ingestor.resume(report.batchID.uuidString)
        #expect(
            !resumed.interrupted && resumed.stop == nil, "\(String(describing: resumed.stop))",
            sourceLocation: sourceLocation)
        #expect(
            resumed.items.map(\.status) == names.map { _ in .ingested },
            "\(resumed.items.map { "\($0.source): \($0.status) \(String(describing: $0.failure))" })",
            sourceLocation: sourceLocation)
        #expect(
            Set(resumed.items.map { ($0.source as NSString).lastPathComponent }) == Set(names),
            sourceLocation: sourceLocation)
        expectCleanContainer(resumed, container, sourceLocation: sourceLocation)
    }

    @Test func aFullDiskAtTheCopyThumbnailOrManifestStopsTheBatchAndResumeDeliversEveryItemOnce() throws {
        let sequential = try Self.pipeline(Self.sequentialWithoutReserve)
        let photo = Fixtures.media("photo.jpg")
        let photoSize = try Self.bytes("photo.jpg").count
        // The thumbnail's size, from a run on an ordinary disk (it is deterministic).
        let calibration = TemporaryDirectory()
        let calibrated = try Self.ingest([.path(photo)], pipeline: sequential, container: calibration.path)
        let thumbnailSize = try #require(
            try calibrated.entries.first?.thumbnail.flatMap(URL.init(string:)).map {
                try FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? Int
            } ?? nil)

        // 1. Copy: a file bigger than the whole disk, between two photos that fit;
        //    once the disk is grown, all three arrive.
        do {
            guard let disk = Tmpfs(kilobytes: 256) else { return }
            let drop = TemporaryDirectory("hostile-drop")
            try drop.add("a-ordinary-1.jpg", copying: photo)
            try drop.add("b-too-big.bin", bytes: [UInt8](repeating: 0x5A, count: 300_000))
            try drop.add("c-ordinary-2.jpg", copying: Fixtures.media("exif3.jpg"))
            let container = disk.path + "/container"
            let state = TemporaryDirectory("state")
            let (ingestor, report) = try Self.ingestKeepingState(
                [.path(drop.path)], pipeline: sequential, container: container, state: state)
            // Found before a byte is written: it is larger than what is free.
            Self.expectWaitingForSpace(
                report, "b-too-big.bin", stage: .copy, containing: "container disk full: it would not fit",
                container: container)
            #expect(
                Self.byName(report)["b-too-big.bin"]?.failure?.message.contains("/container/ (300.0 kB to copy;")
                    == true, "the message names where and how much")
            #expect(
                Self.byName(report)["b-too-big.bin"]?.failure?.message.contains(" free); not copied") == true,
                "the message says what is free")
            try disk.resize(kilobytes: 2048)
            try Self.expectResumeDeliversEverything(
                ingestor, report, names: ["a-ordinary-1.jpg", "b-too-big.bin", "c-ordinary-2.jpg"], container: container
            )
        }
        // 2. Thumbnail: room for the copy, not for its thumbnail. The photo waits
        //    (its copy removed, so the disk has room again); the text too, with the batch.
        do {
            guard let disk = Tmpfs(kilobytes: 512) else { return }
            let container = disk.path + "/container"
            let state = TemporaryDirectory("state")
            _ = try ContainerDirectory(container, stateDirectory: state.path)
            try disk.fill(leaving: Self.pages(photoSize))
            let (ingestor, report) = try Self.ingestKeepingState(
                [.path(photo), .text("sent with the photo")], pipeline: sequential, container: container, state: state)
            Self.expectWaitingForSpace(
                report, "photo.jpg", stage: .thumbnail, containing: "No space left on device", container: container)
            #expect(
                ((try? FileManager.default.contentsOfDirectory(atPath: container + "/thumbnails")) ?? []).isEmpty,
                "no thumbnail left")
            disk.empty()
            let resumed = try ingestor.resume(report.batchID.uuidString)
            #expect(
                resumed.entries.map(\.type) == [.image, .text],
                "\(resumed.items.map { "\($0.source): \(String(describing: $0.failure))" })")
            Self.expectCleanContainer(resumed, container)
        }
        // 3. Manifest: the copy and its thumbnail fit, the manifest does not. It
        //    is tried again on each resume without using up the fan-in's attempts.
        do {
            guard let disk = Tmpfs(kilobytes: 512) else { return }
            let container = disk.path + "/container"
            let state = TemporaryDirectory("state")
            _ = try ContainerDirectory(container, stateDirectory: state.path)
            try disk.fill(leaving: Self.pages(photoSize) + Self.pages(thumbnailSize))
            let (ingestor, report) = try Self.ingestKeepingState(
                [.path(photo)], pipeline: sequential, container: container, state: state)
            #expect(report.interrupted && report.manifestPath == nil)
            guard case .diskFull? = report.stop else {
                Issue.record("stopped for \(String(describing: report.stop)), not a full disk")
                return
            }
            #expect(
                Self.byName(report)["photo.jpg"]?.failure == nil,
                "the photo is not failed for the manifest's want of space")
            // As often as the fan-in's attempts (3 by default): none is used up.
            for _ in 0..<3 {
                let again = try ingestor.resume(report.batchID.uuidString)
                guard case .diskFull? = again.stop else {
                    Issue.record(
                        "a resume on a full disk ended \(String(describing: again.stop)): \(again.items.map { String(describing: $0.failure) })"
                    )
                    return
                }
            }
            disk.empty()
            try Self.expectResumeDeliversEverything(ingestor, report, names: ["photo.jpg"], container: container)
        }
    }

    @Test func aCopyThatWouldLeaveLessThanTheReserveWaitsForSpaceAndTheOthersGoOn() throws {
        guard let disk = Tmpfs(kilobytes: 1024) else { return }
        // Half the disk kept free: a 600 KB file would not fit; a photo would.
        let pipeline = try Self.pipeline(
            """
            {"name": "reserve", "stages": [
              {"stage": "sniff"}, {"stage": "copy", "workers": 1, "reservePercent": 50}, {"stage": "probe"},
              {"stage": "thumbnail"}, {"stage": "manifest"}]}
            """)
        let drop = TemporaryDirectory("hostile-drop")
        try drop.add("a-photo.jpg", copying: Fixtures.media("photo.jpg"))
        try drop.add("b-large.bin", bytes: [UInt8](repeating: 0x33, count: 600_000))
        let container = disk.path + "/container"
        let state = TemporaryDirectory("state")
        let events = Mutex<[String]>([])
        let ingestor = ShareIngestor(
            container: try ContainerDirectory(container, stateDirectory: state.path), pipeline: pipeline)
        let report = try ingestor.ingest([.path(drop.path)]) { event in
            if case .stageFinished(let stage, let index, _) = event {
                events.withLock { $0.append("\(stage.rawValue):\(index)") }
            }
        }
        Self.expectWaitingForSpace(
            report, "b-large.bin", stage: .copy, containing: "kept free, the copy stage's reserve", container: container
        )
        #expect(Self.byName(report)["b-large.bin"]?.failure?.message.contains("not copied") == true)
        #expect(
            events.withLock { $0.contains("thumbnail:0") },
            "the photo went on through its stages: \(events.withLock { $0 })")
        #expect(
            !((try? FileManager.default.contentsOfDirectory(atPath: container)) ?? []).contains {
                $0.hasSuffix(".bin")
            }, "nothing of the large file was written")
        // With a smaller reserve (the pipeline a batch keeps is its own: the disk grows instead).
        try disk.resize(kilobytes: 4096)
        try Self.expectResumeDeliversEverything(
            ingestor, report, names: ["a-photo.jpg", "b-large.bin"], container: container)
    }

    @Test func fileSizeLimitInAChildProcessIsReportedNotFatal() throws {
        let container = TemporaryDirectory()
        let scratch = TemporaryDirectory()
        let reportFile = scratch.file("report.json")
        // 400 KB per file (room for the journal): a 600 KB file cannot be copied, the
        // 1×1 PNG and its thumbnail can.
        let big = try scratch.add(
            "photo.jpg", bytes: Array(try Self.bytes("photo.jpg")) + [UInt8](repeating: 0, count: 600_000))
        let result = try Self.tool(
            "/usr/bin/prlimit",
            [
                "--fsize=400000", "env", "SHARE_STATE_DIR=\(scratch.path)/state", Fixtures.shareBinary, "ingest",
                "--container", container.path, "--report", reportFile,
                big, Fixtures.media("tiny-1x1.png"),
            ])
        // not killed by SIGXFSZ (that is status 153 through a shell, or a signal)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("photo.jpg: too large for the container (File too large)"), "\(result.output)")
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportFile))) as! [String: Any]
        let items = json["items"] as! [[String: Any]]
        #expect(items.map { $0["status"] as? String } == ["failed", "ingested"])
        #expect(items[0]["reason"] as? String == "tooLarge")
        let all = (FileManager.default.enumerator(atPath: container.path)?.allObjects as? [String]) ?? []
        #expect(all.filter { $0.hasSuffix(".partial") }.isEmpty)
        #expect(
            all.filter { $0.hasSuffix(".jpg") && !$0.hasPrefix("thumbnails/") && !$0.hasPrefix(".") }.isEmpty, "\(all)")
    }

    // MARK: - Time budget

    @Test func thumbnailTimeBudgetKillsALongDecode() throws {
        let drop = TemporaryDirectory("hostile-drop")
        // 64 MP of black: compresses to 62 KB, takes hundreds of ms to decode.
        try Self.make("/usr/bin/vips", ["black", drop.file("slow-8000x8000.png"), "8000", "8000"])
        let tight = try Self.pipeline(
            #"{"name": "tight", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "probe"}, {"stage": "thumbnail", "timeLimit": 0.001}, {"stage": "manifest"}]}"#
        )
        let container = TemporaryDirectory()
        let report = try Self.ingest(
            [.path(drop.path), .text("still delivered")], pipeline: tight, container: container.path)
        Self.expectFailure(
            Self.byName(report), "slow-8000x8000.png", .timeLimit, stage: .thumbnail, containing: "killed")
        #expect(report.entries.map(\.type) == [.text])
        Self.expectCleanContainer(report, container.path)
    }

    @Test func probeTimeBudgetInterruptsAStalledRead() throws {
        // A FIFO fed a few bytes of an MPEG-TS at a time and never closed: without
        // the interrupt callback, avformat_find_stream_info would wait forever.
        let directory = TemporaryDirectory()
        let fifo = directory.file("stalled-input")
        #expect(mkfifo(fifo, 0o644) == 0)
        let done = Signal()
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            guard fd >= 0 else { return }
            defer { close(fd) }
            let packet = (0..<188).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            while !done.isSet {
                _ = packet.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                usleep(20_000)
            }
        }
        writer.start()
        defer { done.set(true) }
        do {
            _ = try MediaFile(path: fifo, timeLimit: 0.5)
            Issue.record("a stalled input was probed")
        } catch {
            #expect(error.isTimeout, "\(error)")
        }
        done.set(true)
    }
}
