import Foundation
import Glibc
import MediaFormats
import ShareIngest
import ShareManifest
import TestSupport
import Testing

/// The host side is pointed at whatever URL and manifest an attacker can write:
/// it refuses anything that is not a small, well-typed manifest naming regular
/// files inside the container, without blocking and without consuming it.
@Suite struct HostSafetyTests {
    /// A container with one real photo in it, and a hand-written manifest under `key`.
    static func container(manifest json: String?, key: String = "evil", in temporary: TemporaryDirectory) throws
        -> ContainerDirectory
    {
        let container = try ContainerDirectory(temporary.path)
        try temporary.add("photo.jpg", copying: Fixtures.media("photo.jpg"))
        if let json {
            try Data(json.utf8).write(to: URL(fileURLWithPath: container.manifestPath(key: try ShareKey(key))))
        }
        return container
    }

    /// Opens `key` with consume and expects a refusal whose message contains `text`;
    /// the manifest must still be there afterwards.
    static func expectRefused(
        _ container: ContainerDirectory, key: String = "evil", containing text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try RedirectHandler(container: container).open("ShareMedia://dataUrl=\(key)#media", consume: true)
            Issue.record("accepted", sourceLocation: sourceLocation)
        } catch {
            #expect(error.description.contains(text), "\(error)", sourceLocation: sourceLocation)
        }
        var st = stat()
        #expect(
            lstat(container.manifestPath(key: try! ShareKey(key)), &st) == 0, "a refused manifest was consumed",
            sourceLocation: sourceLocation)
    }

    static func entry(_ path: String) -> String {
        #"[{"path": "\#(path)", "thumbnail": null, "duration": null, "type": "image"}]"#
    }

    @Test func aManifestOverTheSizeLimitIsRefusedUnread() throws {
        let temporary = TemporaryDirectory()
        let container = try Self.container(manifest: nil, in: temporary)
        let path = container.manifestPath(key: try ShareKey("evil"))
        #expect(FileManager.default.createFile(atPath: path, contents: Data("[".utf8)))
        #expect(truncate(path, off_t(ManifestStore.maximumSize + 1)) == 0)  // sparse: costs no disk
        Self.expectRefused(container, containing: "refusing more than \(ManifestStore.maximumSize)")
    }

    @Test func aManifestThatIsAFIFOOrASymbolicLinkIsRefusedWithoutBlocking() throws {
        let temporary = TemporaryDirectory()
        let container = try Self.container(manifest: nil, in: temporary)
        #expect(mkfifo(container.manifestPath(key: try ShareKey("fifo")), 0o644) == 0)
        Self.expectRefused(container, key: "fifo", containing: "manifest is not a regular file")
        let outside = TemporaryDirectory()
        let json = try outside.add("m.json", bytes: Array(Self.entry("file://\(temporary.path)/photo.jpg").utf8))
        try FileManager.default.createSymbolicLink(
            atPath: container.manifestPath(key: try ShareKey("link")), withDestinationPath: json)
        Self.expectRefused(container, key: "link", containing: "manifest is not a regular file")
    }

    @Test func entriesLeadingOutOfTheContainerAreRefused() throws {
        let temporary = TemporaryDirectory()
        let root = URL(fileURLWithPath: temporary.path).standardizedFileURL.path
        // A symbolic link to a folder outside, then a file through it.
        let container = try Self.container(manifest: Self.entry("file://\(root)/escape/passwd"), in: temporary)
        try FileManager.default.createSymbolicLink(atPath: root + "/escape", withDestinationPath: "/etc")
        Self.expectRefused(container, containing: "is outside the container")
        // "..", percent-encoded, only visible after decoding; and encoded slashes.
        for path in [
            "file://\(root)/thumbnails/%2E%2E/%2E%2E/%2E%2E/etc/passwd",
            "file://\(root)/thumbnails%2F..%2F..%2F..%2Fetc%2Fpasswd",
            "file://\(root)/../\((root as NSString).lastPathComponent)-sibling/x.jpg",
        ] {
            try Data(Self.entry(path).utf8).write(
                to: URL(fileURLWithPath: container.manifestPath(key: try ShareKey("dots"))))
            Self.expectRefused(container, key: "dots", containing: "manifest entry 0")
            unlink(container.manifestPath(key: try ShareKey("dots")))
        }
        // Not file URLs at all.
        for path in [
            "https://example.org/x.jpg", "file://evil.example.org/etc/passwd", "/etc/passwd", "file:etc/passwd",
        ] {
            try Data(Self.entry(path).utf8).write(
                to: URL(fileURLWithPath: container.manifestPath(key: try ShareKey("remote"))))
            Self.expectRefused(container, key: "remote", containing: "is not a file:// URL")
            unlink(container.manifestPath(key: try ShareKey("remote")))
        }
        // The thumbnail is checked like the path.
        try Data(#"[{"path": "file://\#(root)/photo.jpg", "thumbnail": "file:///etc/passwd", "type": "image"}]"#.utf8)
            .write(to: URL(fileURLWithPath: container.manifestPath(key: try ShareKey("thumb"))))
        Self.expectRefused(container, key: "thumb", containing: "outside the container")
    }

    @Test func entriesThatAreNotRegularFilesAreRefusedWithoutBlocking() throws {
        let temporary = TemporaryDirectory()
        let root = URL(fileURLWithPath: temporary.path).standardizedFileURL.path
        let container = try Self.container(manifest: Self.entry("file://\(root)/pipe.jpg"), in: temporary)
        #expect(mkfifo(root + "/pipe.jpg", 0o644) == 0)
        Self.expectRefused(container, containing: "is not a regular file")
        try Data(Self.entry("file://\(root)/thumbnails").utf8).write(
            to: URL(fileURLWithPath: container.manifestPath(key: try ShareKey("dir"))))
        Self.expectRefused(container, key: "dir", containing: "is not a regular file")
        try Data(Self.entry("file://\(root)/missing.jpg").utf8).write(
            to: URL(fileURLWithPath: container.manifestPath(key: try ShareKey("missing"))))
        Self.expectRefused(container, key: "missing", containing: "file does not exist")
    }

    @Test(arguments: [
        (#"{"path": "file:///x"}"#, "must be an array of entries"),
        (#"[{"path": 1, "type": "image"}]"#, "field [0].path must be a string"),
        (#"[{"path": "file:///x", "type": true}]"#, "field [0].type must be"),
        (#"[{"path": "file:///x", "type": 7}]"#, "field [0].type must be 0 (image), 1 (video) or 2 (file)"),
        (#"[{"path": "file:///x", "type": 0.5}]"#, "field [0].type must be"),
        (#"[{"path": "file:///x", "type": "picture"}]"#, "field [0].type must be one of image, video, file, text, url"),
        (#"[{"path": "file:///x", "type": "image", "size": "big"}]"#, "field [0].size must be a number"),
        (#"[{"path": "file:///x", "type": "image", "width": false}]"#, "field [0].width must be a number"),
        (#"[{"path": "file:///x", "type": "image", "thumbnail": 3}]"#, "field [0].thumbnail must be a string or null"),
        (#"[{"type": "image"}]"#, "field [0].path is missing"),
        (#"[{"path": "file:///x"}]"#, "field [0].type is missing"),
        (#"[42]"#, "field [0] must be an object or a string"),
        (#"[{"path": "file:///x", "type": "image""#, "malformed JSON"),
        ("", "malformed JSON"),
    ])
    func wrongFieldTypesAndMalformedJSONAreRefusedByName(json: String, message: String) throws {
        let temporary = TemporaryDirectory()
        let container = try Self.container(manifest: json, in: temporary)
        Self.expectRefused(container, containing: message)
    }

    @Test func deeplyNestedJSONIsRefusedNotACrash() throws {
        let temporary = TemporaryDirectory()
        let depth = 100_000
        let container = try Self.container(
            manifest: String(repeating: "[", count: depth) + String(repeating: "]", count: depth), in: temporary)
        Self.expectRefused(container, containing: "evil")
    }

    @Test(arguments: [
        ("ShareMedia://dataUrl=a%2F..%2F..%2Fetc%2Fpasswd#media", "contains \"/\""),
        ("ShareMedia://dataUrl=..%2F..%2Fetc%2Fpasswd#media", "starts with a dot"),
        ("ShareMedia://dataUrl=%2E%2E#media", "starts with a dot"),
        ("ShareMedia://dataUrl=a%00b#media", "contains"),
        ("ShareMedia://dataUrl=#media", "the key is empty"),
        ("ShareMedia://dataUrl=ok#evil", "is not media, file or text"),
        ("Share Media://dataUrl=ok#media", "is not a valid URL scheme"),
        ("ShareMedia://dataUrl=%ZZ#media", "bad percent-encoding"),
    ])
    func unsafeKeysInRedirectURLsAreRefused(url: String, message: String) throws {
        let temporary = TemporaryDirectory()
        let container = try ContainerDirectory(temporary.path)
        do {
            _ = try RedirectHandler(container: container).open(url)
            Issue.record("accepted \(url)")
        } catch {
            #expect(error.description.contains(message), "\(url): \(error)")
        }
    }

    @Test func shareOpenRefusesWithAMessageAndAStatusThatSaysWhy() throws {
        let temporary = TemporaryDirectory()
        _ = try Self.container(manifest: Self.entry("file:///etc/passwd"), in: temporary)
        let refused = try ShareProcess.run(["open", "--container", temporary.path, "ShareMedia://dataUrl=evil#media"])
        #expect(refused.status == 66)
        #expect(refused.stderr.contains("/etc/passwd: is outside the container; refused"), "\(refused.stderr)")
        #expect(refused.stdout.isEmpty)
        let traversal = try ShareProcess.run([
            "open", "--container", temporary.path, "ShareMedia://dataUrl=..%2Fevil#media",
        ])
        #expect(traversal.status == 64)
        #expect(traversal.stderr.contains("bad key"), "\(traversal.stderr)")
    }

    /// Under umask 000, 022 and 077 everything the CLI creates in the container
    /// is owner-only (a decoder helper running as another user can read none of
    /// it): files are 0600 and folders 0700, less the umask.
    @Test(arguments: ["000", "022", "077"])
    func containerFilesAreNeverWorldWritable(umask mask: String) throws {
        let temporary = TemporaryDirectory()
        let container = temporary.path + "/container"
        let result = try HostileInputTests.tool(
            "/bin/sh",
            [
                "-c", "umask \(mask) && exec \"$0\" ingest --quiet --container \"$1\" \"$2\" \"$3\"",
                Fixtures.shareBinary, container,
                Fixtures.media("photo.jpg"), Fixtures.media("clip-h264.mp4"),
            ])
        #expect(result.status == 0, "\(result.output)")
        let umaskBits = mode_t(mask, radix: 8)!
        var checked = 0
        for relative in [""] + ((FileManager.default.enumerator(atPath: container)?.allObjects as? [String]) ?? []) {
            var st = stat()
            #expect(lstat(container + "/" + relative, &st) == 0)
            let permissions = st.st_mode & 0o7777
            let isDirectory = st.st_mode & S_IFMT == S_IFDIR
            #expect(
                permissions == (isDirectory ? 0o700 : 0o600) & ~umaskBits,
                "\(relative): \(String(permissions, radix: 8))")
            #expect(permissions & 0o077 == 0, "\(relative) is open to others")
            checked += 1
        }
        #expect(checked >= 10)  // folders, 2 copies, 2 thumbnails, manifest, report
    }
}
