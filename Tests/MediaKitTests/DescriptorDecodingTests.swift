import Foundation
import Glibc
import MediaFormats
import MediaKit
import TestSupport
import Testing

/// The in-process decoder reads from an open descriptor (what a sandboxed
/// helper is handed), wherever its offset is, and never opens the name.
@Suite struct DescriptorDecodingTests {
    @Test(arguments: [
        ("photo.jpg", MediaFormat.jpeg, MediaFacts.Kind.image), ("clip-h264.mp4", .mp4, .video),
        ("image.heic", .heic, .image),
        ("document.pdf", .pdf, .document),
    ])
    func decodesFromADescriptorAtAnyOffset(name: String, format: MediaFormat, kind: MediaFacts.Kind) throws {
        let expected = Fixtures.expected(name)
        let descriptor = open(Fixtures.media(name), O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        lseek(descriptor, 0, SEEK_END)
        // The name is only a name: nothing exists there.
        let request = DecodeRequest(
            path: "/nonexistent/\(name)", label: name, format: format, thumbnail: ThumbnailSpec())
        let decoder = InProcessDecoder()
        decoder.prepare()
        let decoded = try decoder.decode(request, descriptor: descriptor)
        #expect(decoded.facts.kind == kind)
        if kind != .document {
            #expect(decoded.facts.width == expected?.displayWidth)
            #expect(decoded.facts.height == expected?.displayHeight)
        }
        guard case .made(let thumbnail) = decoded.thumbnail else {
            Issue.record("\(name): no thumbnail: \(String(describing: decoded.thumbnail))")
            return
        }
        #expect(Array(thumbnail.jpeg.prefix(3)) == [0xFF, 0xD8, 0xFF])
    }

    /// SVG and PSD are read only by loaders libvips marks untrusted (librsvg,
    /// ImageMagick): in-process they stay blocked, and say so.
    @Test(arguments: [MediaFormat.svg, .psd])
    func sandboxOnlyFormatsAreNotDecodedInProcess(format: MediaFormat) throws {
        let scratch = TemporaryDirectory()
        let file = try scratch.add(
            "drawing", bytes: Array(#"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>"#.utf8))
        let decoder = InProcessDecoder()
        decoder.prepare()
        let decoded = try decoder.decode(
            DecodeRequest(path: file, label: "drawing", format: format, thumbnail: ThumbnailSpec()))
        #expect(decoded.facts.kind == .document)
        guard case .failed(let error) = decoded.thumbnail else {
            Issue.record("\(format): decoded in-process: \(String(describing: decoded.thumbnail))")
            return
        }
        #expect(error.message.contains("only in sandboxed decoder helpers (share --isolation process)"), "\(error)")
    }

    @Test func missingCopyIsUnreadable() {
        #expect(throws: MediaError.self) {
            try InProcessDecoder().decode(
                DecodeRequest(path: "/nonexistent/copy.jpg", label: "copy.jpg", format: .jpeg))
        }
    }
}
