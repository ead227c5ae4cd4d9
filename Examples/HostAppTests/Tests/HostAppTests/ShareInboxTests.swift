import Foundation
import HostApp
import ShareIngest
import ShareManifest
import Testing

/// The host app's redirect handling, tested on real shares: made by the same
/// pipeline the share extension runs, in a throwaway container, with sequential
/// UUIDs and a fixed clock so the manifest can be compared with a golden file.
@Suite struct ShareInboxTests {
    /// `testdata/media/<name>` of share-ingest (this file is Examples/HostAppTests/Tests/HostAppTests/…).
    static func media(_ name: String) -> String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().appendingPathComponent("../../../../testdata/media/\(name)")
            .standardizedFileURL.path
    }

    /// What a person shares: three photos, a video, a PDF and a line of text.
    static let inputs: [ShareInput] = [
        .path(media("photo.jpg")), .path(media("portrait-exif6.jpg")), .path(media("exif3.jpg")),
        .path(media("clip-h264.mp4")), .path(media("document.pdf")), .text("See you at the beach"),
    ]

    /// Runs the share extension's pipeline into `container`, reproducibly.
    static func share(
        _ inputs: [ShareInput], into container: TemporaryContainer, pipeline: PipelineDefinition = .standard
    ) throws -> BatchReport {
        let ingestor = ShareIngestor(
            container: container.directory, pipeline: pipeline,
            identifiers: .sequential(), now: { Date(timeIntervalSince1970: 0) })
        return try ingestor.ingest(inputs)
    }

    @Test func manifestMatchesTheGolden() throws {
        let container = try TemporaryContainer()
        let report = try Self.share(Self.inputs, into: container)
        #expect(report.isComplete, "\(report.items.compactMap(\.failure))")
        let manifest = try String(contentsOfFile: try #require(report.manifestPath), encoding: .utf8)
        // A file without a capture time of its own is dated by its modification
        // time, which a checkout sets: normalised like the container's path.
        let normalised = manifest.replacingOccurrences(of: container.root, with: "<container>")
            .replacing(
                /"capturedAt": "[^"]*", "capturedAtSource": "fileTime"/,
                with: #""capturedAt": "<mtime>", "capturedAtSource": "fileTime""#)
        try Golden.check(normalised, named: "share.v2.json")
    }

    @Test func handlingTheRedirectShowsEveryItem() throws {
        let container = try TemporaryContainer()
        let report = try Self.share(Self.inputs, into: container)
        let redirect = try #require(report.redirectURL).description
        #expect(redirect == "ShareMedia://dataUrl=ShareKey-00000000-0000-0000-0000-000000000001#media")

        let items = try ShareInbox(container: container.directory).handle(url: redirect)
        #expect(items.map(\.kind) == [.photo, .photo, .photo, .video, .document, .text])
        #expect(
            items.map(\.title) == [
                "photo.jpg", "portrait-exif6.jpg", "exif3.jpg", "clip-h264.mp4", "document.pdf", "See you at the beach",
            ])
        for item in items where item.kind != .text {
            let file = try #require(item.fileURL)
            #expect(file.path.hasPrefix(container.root + "/"))
            #expect(FileManager.default.fileExists(atPath: file.path))
            let thumbnail = try #require(item.thumbnailURL, "\(item.title) has no thumbnail")
            #expect(FileManager.default.fileExists(atPath: thumbnail.path))
        }
        #expect(items[3].durationSeconds == 2.0)
    }

    @Test func aShareIsShownOnce() throws {
        let container = try TemporaryContainer()
        let report = try Self.share([.path(Self.media("photo.jpg"))], into: container)
        let inbox = ShareInbox(container: container.directory)
        let redirect = try #require(report.redirectURL).description
        #expect(try inbox.handle(url: redirect).count == 1)
        #expect(throws: RedirectError.alreadyConsumed(report.key)) {
            try inbox.handle(url: redirect)
        }
    }

    @Test func aManifestNamingAFileOutsideTheContainerIsRefused() throws {
        let container = try TemporaryContainer()
        // Hand-written, as a hostile or buggy extension might leave it.
        let manifest = #"[{"path": "file:///etc/passwd", "thumbnail": null, "duration": null, "type": 2}]"#
        let key = try ShareKey("Hostile")
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: container.directory.manifestPath(key: key)))
        #expect(throws: RedirectError.badEntry(index: 0, .outsideContainer("/etc/passwd"))) {
            try ShareInbox(container: container.directory).handle(url: "ShareMedia://dataUrl=Hostile#file")
        }
    }

    @Test(arguments: PluginFlavor.allCases)
    func everyPluginsManifestIsRead(_ flavor: PluginFlavor) throws {
        // A space in the container's path: the unencoded flavor writes it raw.
        let container = try TemporaryContainer(label: "host app")
        let report = try Self.share(
            [.path(Self.media("photo.jpg")), .path(Self.media("clip-h264.mp4")), .path(Self.media("document.pdf"))],
            into: container, pipeline: PipelineDefinition.standard.simulating(flavor))
        let items = try ShareInbox(container: container.directory).handle(
            url: try #require(report.redirectURL).description)
        #expect(items.map(\.kind) == [.photo, .video, .document])
        for item in items {
            let file = try #require(item.fileURL)
            #expect(FileManager.default.fileExists(atPath: file.path), "\(flavor): \(file)")
        }
        #expect(items[1].durationSeconds == 2.0)
    }
}

/// Golden files beside this test, in `Goldens/`. `RECORD_GOLDENS=1` re-records
/// them, and fails so that it cannot be left on.
enum Golden {
    static func check(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Goldens/\(name)")
        if ProcessInfo.processInfo.environment["RECORD_GOLDENS"] == "1" {
            try Data(actual.utf8).write(to: url)
            Issue.record("recorded \(url.path); unset RECORD_GOLDENS and run again", sourceLocation: sourceLocation)
            return
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(actual == expected, "differs from \(url.path)", sourceLocation: sourceLocation)
    }
}
