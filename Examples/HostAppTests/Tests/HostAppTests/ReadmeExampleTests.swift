import Foundation
import HostApp
import ShareIngest
import ShareManifest
import Testing

@Test func theAppShowsWhatWasSharedOnce() throws {
    // A fresh container, removed when the test ends.
    let container = try TemporaryContainer()
    // The share extension's pipeline ("default"); sequential UUIDs and a fixed clock
    // make its output the same on every run.
    let ingestor = ShareIngestor(
        container: container.directory, pipeline: .standard,
        identifiers: .sequential(), now: { Date(timeIntervalSince1970: 0) })
    let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    let media = here.appendingPathComponent("../../../../testdata/media").standardizedFileURL.path
    let report = try ingestor.ingest([
        .path(media + "/photo.jpg"), .path(media + "/clip-h264.mp4"), .text("See you at the beach"),
    ])
    #expect(report.isComplete, "\(report.items.compactMap(\.failure))")

    // The manifest, byte for byte, with the container's path normalised, and the
    // capture time of a file that carries none (its modification time, which a
    // checkout sets).
    let manifest = try String(contentsOfFile: try #require(report.manifestPath), encoding: .utf8)
        .replacingOccurrences(of: container.root, with: "<container>")
        .replacing(
            /"capturedAt": "[^"]*", "capturedAtSource": "fileTime"/,
            with: #""capturedAt": "<mtime>", "capturedAtSource": "fileTime""#)
    let golden = try String(contentsOf: here.appendingPathComponent("Goldens/readme.v2.json"), encoding: .utf8)
    #expect(manifest == golden)

    // The app's own redirect handling, on what the extension would hand it.
    let redirect = try #require(report.redirectURL).description
    #expect(redirect == "ShareMedia://dataUrl=ShareKey-00000000-0000-0000-0000-000000000001#media")
    let inbox = ShareInbox(container: container.directory)
    #expect(try inbox.handle(url: redirect).map(\.kind) == [.photo, .video, .text])
    #expect(throws: RedirectError.alreadyConsumed(report.key)) { try inbox.handle(url: redirect) }
}
