import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

/// Previews from one decode (issue 33 item 2, the decoder's part): every size
/// of a real 12 MP JPEG and HEIC, its long edge, and its encoding.
@Suite struct PreviewTests {
    @Test(arguments: [
        ("motion/real/samsung-s9plus-video-removed.jpg", 4032, 3024), ("privacy/iphone7-gps.heic", 4032, 3024),
        ("motion/real/samsung-s22-motion.heic", 3000, 4000),
    ])
    func everySizeHasItsLongEdgeAndItsFormat(name: String, width: Int, height: Int) throws {
        let path = Fixtures.testdata(name)
        let directory = TemporaryDirectory()
        for format in PreviewFormat.allCases {
            let pictures = try Thumbnailer.pictures(
                path: path, spec: ThumbnailSpec(), sizes: [1440, 360], format: format)
            #expect(pictures.map { max($0.width, $0.height) } == [360, 1440], "\(name) \(format)")
            for picture in pictures {
                // The photo's shape, within a pixel of rounding.
                #expect(
                    abs(picture.width * height - picture.height * width) <= max(width, height),
                    "\(name): \(picture.width)×\(picture.height)")
                switch format {
                case .jpeg: #expect(Array(picture.bytes.prefix(3)) == [0xFF, 0xD8, 0xFF])
                case .webp:
                    #expect(
                        Array(picture.bytes.prefix(4)) == Array("RIFF".utf8)
                            && Array(picture.bytes[8..<12]) == Array("WEBP".utf8))
                }
                // What a decoder reads back from the bytes is the size claimed.
                let file = try directory.add("\(format)-\(picture.width).\(format.fileExtension)", bytes: picture.bytes)
                let onDisk = try ImageInspector.size(file)
                #expect(onDisk.width == picture.width && onDisk.height == picture.height)
            }
        }
    }

    @Test func aPictureSmallerThanASizeIsNotEnlarged() throws {
        let pictures = try Thumbnailer.pictures(
            path: Fixtures.media("photo.jpg"), spec: ThumbnailSpec(), sizes: [360, 1440], format: .jpeg)
        #expect(pictures.map { "\($0.width)×\($0.height)" } == ["360×270", "640×480"])
    }
}
