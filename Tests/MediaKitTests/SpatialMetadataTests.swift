import Foundation
import TestSupport
import Testing

@testable import MediaFormats

/// What the decoder reads of how a picture is meant to be shown (issue 33 item 5)
/// on the forms XMP writers use, and on bytes that only look like it.
@Suite struct SpatialMetadataTests {
    static func jpeg(xmp: String) -> [UInt8] {
        let payload = MomentReader.xmpSignature + Array(xmp.utf8)
        let length = payload.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + [
            0xFF, 0xDA, 0, 2, 0xFF, 0xD9,
        ]
    }

    static func packet(_ body: String) -> String {
        "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\(body)</rdf:RDF></x:xmpmeta>"
    }

    @Test func gpanoIsReadAsAttributesOrElementsUnderAnyPrefix() {
        let attributes = Self.packet(
            "<rdf:Description xmlns:GPano='http://ns.google.com/photos/1.0/panorama/' GPano:ProjectionType='equirectangular' GPano:FullPanoWidthPixels='8000' GPano:FullPanoHeightPixels='4000'/>"
        )
        let found = SpatialMetadata.read(Self.jpeg(xmp: attributes), format: .jpeg)
        #expect(
            found.projection(width: 8000, height: 4000)
                == Projection(type: .equirectangular, fullWidth: 8000, fullHeight: 4000))
        #expect(found.projection(width: 8000, height: 4000)?.isFullSphere == true)

        let elements = Self.packet(
            """
            <rdf:Description xmlns:pano="http://ns.google.com/photos/1.0/panorama/"><pano:ProjectionType>cylindrical</pano:ProjectionType>
            <pano:FullPanoWidthPixels>1600</pano:FullPanoWidthPixels><pano:FullPanoHeightPixels>400</pano:FullPanoHeightPixels>
            <pano:CroppedAreaLeftPixels>200</pano:CroppedAreaLeftPixels><pano:CroppedAreaTopPixels>50</pano:CroppedAreaTopPixels>
            </rdf:Description>
            """)
        // The crop's size defaults to the picture's.
        #expect(
            SpatialMetadata.read(Self.jpeg(xmp: elements), format: .jpeg).projection(width: 1200, height: 300)
                == Projection(
                    type: .cylindrical, fullWidth: 1600, fullHeight: 400, cropLeft: 200, cropTop: 50,
                    croppedWidth: 1200, croppedHeight: 300))
    }

    @Test func lookalikesAreNotPanoramasOrGainMaps() {
        // GPano's names without its namespace; an unknown projection; a namespace prefix bound to another URI.
        for body in [
            "<rdf:Description GPano:ProjectionType='equirectangular'/>",
            "<rdf:Description xmlns:GPano='http://ns.google.com/photos/1.0/panorama/' GPano:ProjectionType='cubemap'/>",
            "<rdf:Description xmlns:GPano='http://example.com/' GPano:ProjectionType='equirectangular'/>",
            "<rdf:Description xmlns:hdrgm='http://example.com/' hdrgm:Version='1.0'/>",
            "<rdf:Description xmlns:hdrgm='http://ns.adobe.com/hdr-gain-map/1.0/' hdrgm:GainMapMax='2'/>",
        ] {
            let found = SpatialMetadata.read(Self.jpeg(xmp: Self.packet(body)), format: .jpeg)
            #expect(found.projectionType == nil && !found.gainMap && !found.stereo, "\(body)")
        }
        // A projection type without any size, on a picture of unknown size: none.
        let bare = Self.packet(
            "<rdf:Description xmlns:GPano='http://ns.google.com/photos/1.0/panorama/' GPano:ProjectionType='equirectangular'/>"
        )
        #expect(SpatialMetadata.read(Self.jpeg(xmp: bare), format: .jpeg).projection(width: nil, height: nil) == nil)
    }

    /// Every prefix of the made files (cut anywhere) reads without trapping, and
    /// the whole files read as testdata/README says.
    @Test func madeFilesReadAndTheirPrefixesDoNotTrap() throws {
        let cases: [(String, MediaFormat, (SpatialFacts) -> Bool)] = [
            ("spatial/ultrahdr.jpg", .jpeg, { $0.gainMap }), ("spatial/ultrahdr-mpf-only.jpg", .jpeg, { $0.gainMap }),
            ("spatial/apple-gainmap.heic", .heic, { $0.gainMap && !$0.stereo }),
            ("spatial/spatial.heic", .heic, { $0.stereo && $0.leftEye == nil }),
            ("spatial/spatial-right-primary.heic", .heic, { $0.stereo && $0.leftEye == 1 }),
            ("spatial/spatial.mov", .mov, { $0.stereo }),
            ("spatial/pano-360.jpg", .jpeg, { $0.projectionType == .equirectangular && $0.fullWidth == 2048 }),
        ]
        for (name, format, check) in cases {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.testdata(name))))
            #expect(check(SpatialMetadata.read(bytes, format: format)), "\(name)")
            for cut in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 97)) {
                _ = SpatialMetadata.read(Array(bytes[..<cut]), format: format)
            }
        }
    }
}
