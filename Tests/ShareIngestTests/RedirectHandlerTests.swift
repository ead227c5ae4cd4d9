import Foundation
import MediaFormats
import ShareIngest
import ShareManifest
import TestSupport
import Testing

@Suite struct RedirectHandlerTests {
    static func share(in container: TemporaryDirectory) throws -> (ContainerDirectory, BatchReport) {
        let directory = try ContainerDirectory(container.path)
        let report = try ShareIngestor(container: directory).ingest([
            .path(Fixtures.media("photo.jpg")), .path(Fixtures.media("clip-h264.mp4")),
        ])
        return (directory, report)
    }

    @Test func opensTheShareARedirectNames() throws {
        let temporary = TemporaryDirectory()
        let (container, report) = try Self.share(in: temporary)
        let share = try RedirectHandler(container: container).open(try #require(report.redirectURL).description)
        #expect(share.entries.count == 2)
        #expect(share.kind == .media)
        #expect(share.schema == .v2)
    }

    @Test func consumeDeliversOnce() throws {
        let temporary = TemporaryDirectory()
        let (container, report) = try Self.share(in: temporary)
        let url = try #require(report.redirectURL).description
        let handler = RedirectHandler(container: container)
        _ = try handler.open(url, consume: true)
        #expect(throws: RedirectError.alreadyConsumed(report.key)) {
            try handler.open(url, consume: true)
        }
    }

    @Test func unknownKeyIsAnError() throws {
        let temporary = TemporaryDirectory()
        let container = try ContainerDirectory(temporary.path)
        #expect(throws: RedirectError.self) {
            try RedirectHandler(container: container).open("ShareMedia://dataUrl=Nope#media")
        }
    }

    /// Writes a hand-made manifest under `key` and opens it.
    static func open(_ json: String, key: String, in temporary: TemporaryDirectory) throws -> ReceivedShare {
        let container = try ContainerDirectory(temporary.path)
        try Data(json.utf8).write(to: URL(fileURLWithPath: container.manifestPath(key: try ShareKey(key))))
        return try RedirectHandler(container: container).open("ShareMedia://dataUrl=\(key)#media")
    }

    @Test func pathOutsideTheContainerIsRefused() throws {
        let temporary = TemporaryDirectory()
        #expect(throws: RedirectError.self) {
            try Self.open(
                #"[{"path": "file:///etc/passwd", "thumbnail": null, "duration": null, "type": 2}]"#, key: "evil",
                in: temporary)
        }
        #expect(throws: RedirectError.self) {
            try Self.open(
                #"[{"path": "file://\#(temporary.path)/../../etc/passwd", "type": "file"}]"#, key: "dots", in: temporary
            )
        }
    }

    /// A preview's path is checked like the entry's own: inside the container,
    /// a regular file; the entry's checked previews reach the host.
    @Test func previewPathsAreCheckedLikeThumbnails() throws {
        let temporary = TemporaryDirectory()
        let container = try ContainerDirectory(temporary.path)
        let photo = try temporary.add("A.jpg", copying: Fixtures.media("photo.jpg"))
        let preview = try temporary.add("thumbnails/A.1440.webp", bytes: Array("RIFF....WEBP".utf8))
        func manifest(_ previewPath: String) -> String {
            #"[{"path": "file://\#(photo)", "thumbnail": null, "duration": null, "type": "image", "previews": [{"path": "file://\#(previewPath)", "width": 1440, "height": 1080, "mimeType": "image/webp", "size": 12}]}]"#
        }
        let share = try Self.open(manifest(preview), key: "inside", in: temporary)
        #expect(
            share.entries.first?.previews == [
                SharedMediaFile.Preview(
                    path: "file://\((preview as NSString).standardizingPath)", width: 1440, height: 1080,
                    mimeType: "image/webp", size: 12)
            ])
        _ = container
        do {
            _ = try Self.open(manifest("/etc/passwd"), key: "outside", in: temporary)
            Issue.record("accepted a preview outside the container")
        } catch {
            #expect("\(error)".contains("/etc/passwd"), "\(error)")
        }
        #expect(throws: RedirectError.self) {
            try Self.open(manifest(temporary.path + "/thumbnails/../../../etc/passwd"), key: "dots", in: temporary)
        }
    }

    @Test func symbolicLinkInTheContainerIsRefused() throws {
        let temporary = TemporaryDirectory()
        _ = try ContainerDirectory(temporary.path)
        try FileManager.default.createSymbolicLink(
            atPath: temporary.file("link.jpg"), withDestinationPath: "/etc/passwd")
        do {
            _ = try Self.open(
                #"[{"path": "file://\#(temporary.path)/link.jpg", "type": 0}]"#, key: "link", in: temporary)
            Issue.record("accepted a symbolic link")
        } catch {
            #expect("\(error)".contains("symbolic link"))
        }
    }

    @Test func unencodedPathsWithSpacesAreRead() throws {
        let temporary = TemporaryDirectory()
        _ = try ContainerDirectory(temporary.path)
        try temporary.add("My Photo.jpg", copying: Fixtures.media("photo.jpg"))
        let share = try Self.open(
            #"[{"path": "file://\#(temporary.path)/My Photo.jpg", "thumbnail": null, "duration": null, "type": 0}]"#,
            key: "plugin", in: temporary)
        #expect(share.entries[0].path.hasSuffix("My%20Photo.jpg"))
        #expect(share.schema == .legacy)
    }

    @Test func badManifestIsRefusedAndNotConsumed() throws {
        let temporary = TemporaryDirectory()
        let container = try ContainerDirectory(temporary.path)
        let key = try ShareKey("broken")
        try Data("[{\"path\": 1}]".utf8).write(to: URL(fileURLWithPath: container.manifestPath(key: key)))
        #expect(throws: RedirectError.self) { try RedirectHandler(container: container).open(key: key, consume: true) }
        #expect(FileManager.default.fileExists(atPath: container.manifestPath(key: key)))
    }
}
