import Foundation
import MediaFormats
import ShareIngest
import ShareManifest
import TestSupport
import Testing

@Suite struct ManifestTests {
    static let entry = SharedMediaFile(
        path: "file:///c/8F2C.jpg", thumbnail: "file:///c/thumbnails/8F2C.jpg", duration: nil, type: .image,
        mimeType: "image/jpeg", message: nil, fileName: "My Photo.jpg", size: 1234, width: 480, height: 640)

    @Test func v2EncodingHasEveryFieldInOrder() {
        let json = String(decoding: ManifestCoder.encode([Self.entry], schema: .v2), as: UTF8.self)
        #expect(
            json == """
                [
                  {"path": "file:///c/8F2C.jpg", "thumbnail": "file:///c/thumbnails/8F2C.jpg", "duration": null, "type": "image", "mimeType": "image/jpeg", "message": null, "fileName": "My Photo.jpg", "size": 1234, "width": 480, "height": 640}
                ]

                """)
    }

    @Test func legacyEncodingIsTheSeedFormat() {
        var video = Self.entry
        video.type = .video
        video.duration = 10000
        let json = String(decoding: ManifestCoder.encode([video], schema: .legacy), as: UTF8.self)
        #expect(
            json.contains(
                #"{"path": "file:///c/8F2C.jpg", "thumbnail": "file:///c/thumbnails/8F2C.jpg", "duration": 10000.0, "type": 1}"#
            ))
    }

    @Test func legacyTextOnlyIsAnArrayOfStrings() {
        let json = ManifestCoder.encode([SharedMediaFile(path: "hi \"there\"", type: .text)], schema: .legacy)
        #expect(String(decoding: json, as: UTF8.self) == "[\n  \"hi \\\"there\\\"\"\n]\n")
    }

    /// Issue 24's fields (`compatible`, `locationRemoved`): in a v2 entry only
    /// when set, after the others, read back typed; a legacy manifest's bytes
    /// are those of the same entry without them.
    @Test func compatibleAndLocationRemovedAreV2FieldsOnlyWhenSet() throws {
        var entry = Self.entry
        entry.path = "file:///c/8F2C.heic"
        entry.mimeType = "image/heic"
        let plain = entry
        entry.compatible = SharedMediaFile.Compatible(
            path: "file:///c/8F2C.compatible.jpg", size: 2_345_678, width: 3024, height: 4032)
        entry.locationRemoved = ["EXIF GPS (GPSLatitudeRef, GPSLatitude)", "XMP exif:GPSLatitude"]
        #expect(ManifestCoder.encode([entry], schema: .legacy) == ManifestCoder.encode([plain], schema: .legacy))
        let json = String(decoding: ManifestCoder.encode([entry], schema: .v2), as: UTF8.self)
        #expect(
            json.contains(
                #""height": 640, "compatible": {"path": "file:///c/8F2C.compatible.jpg", "mimeType": "image/jpeg", "size": 2345678, "width": 3024, "height": 4032}, "locationRemoved": ["EXIF GPS (GPSLatitudeRef, GPSLatitude)", "XMP exif:GPSLatitude"]}"#
            ), "\(json)")
        let without = String(decoding: ManifestCoder.encode([plain], schema: .v2), as: UTF8.self)
        #expect(!without.contains("compatible") && !without.contains("locationRemoved"))
        let decoded = try ManifestCoder.decode(Data(json.utf8))
        #expect(decoded.schema == .v2 && decoded.entries == [entry], "\(decoded.entries)")
        // An empty list is not written: nothing was removed.
        entry.locationRemoved = []
        #expect(
            !String(decoding: ManifestCoder.encode([entry], schema: .v2), as: UTF8.self).contains("locationRemoved"))
    }

    /// `thumbhash` and `previews` are v2 fields, written only when set (an
    /// empty list of previews is none), and read back as written.
    @Test func thumbhashAndPreviewsAreV2FieldsOnlyWhenSet() throws {
        var entry = Self.entry
        let plain = entry
        entry.thumbhash = "INgNPYR3eHd/h4d2d0d4iHdgiAn4"
        entry.previews = [
            SharedMediaFile.Preview(
                path: "file:///c/thumbnails/8F2C.1440.jpg", width: 1080, height: 1440, mimeType: "image/jpeg",
                size: 301_422)
        ]
        #expect(ManifestCoder.encode([entry], schema: .legacy) == ManifestCoder.encode([plain], schema: .legacy))
        let json = String(decoding: ManifestCoder.encode([entry], schema: .v2), as: UTF8.self)
        #expect(
            json.contains(
                #""height": 640, "thumbhash": "INgNPYR3eHd/h4d2d0d4iHdgiAn4", "previews": [{"path": "file:///c/thumbnails/8F2C.1440.jpg", "width": 1080, "height": 1440, "mimeType": "image/jpeg", "size": 301422}]"#
            ), "\(json)")
        let without = String(decoding: ManifestCoder.encode([plain], schema: .v2), as: UTF8.self)
        #expect(!without.contains("thumbhash") && !without.contains("previews"))
        let decoded = try ManifestCoder.decode(Data(json.utf8))
        #expect(decoded.schema == .v2 && decoded.entries == [entry], "\(decoded.entries)")
        #expect(entry.with(previews: []).previews == nil)
        #expect(throws: ManifestError.self) {
            try ManifestCoder.decode(
                Data(
                    #"[{"path": "file:///c/a.jpg", "type": "image", "previews": [{"path": "file:///c/p.jpg", "mimeType": "image/jpeg"}]}]"#
                        .utf8))
        }
    }

    @Test func projectionStereoAndHDRAreV2FieldsOnlyWhenSet() throws {
        let plain = Self.entry
        let entry = plain.with(
            projection: SharedMediaFile.Projection(
                type: "cylindrical", fullWidth: 12000, fullHeight: 3000, cropLeft: 1500, cropTop: 500,
                croppedWidth: 9000, croppedHeight: 2000),
            stereo: true, hdr: "gainMap")
        #expect(ManifestCoder.encode([entry], schema: .legacy) == ManifestCoder.encode([plain], schema: .legacy))
        let json = String(decoding: ManifestCoder.encode([entry], schema: .v2), as: UTF8.self)
        #expect(
            json.contains(
                #""projection": {"type": "cylindrical", "fullWidth": 12000, "fullHeight": 3000, "cropLeft": 1500, "cropTop": 500, "croppedWidth": 9000, "croppedHeight": 2000}, "stereo": true, "hdr": "gainMap""#
            ), "\(json)")
        let without = String(decoding: ManifestCoder.encode([plain], schema: .v2), as: UTF8.self)
        #expect(!without.contains("projection") && !without.contains("stereo") && !without.contains("\"hdr\""))
        let decoded = try ManifestCoder.decode(Data(json.utf8))
        #expect(decoded.schema == .v2 && decoded.entries == [entry], "\(decoded.entries)")
        #expect(throws: ManifestError.self) {
            try ManifestCoder.decode(
                Data(
                    #"[{"path": "file:///c/a.jpg", "type": "image", "projection": {"type": "cylindrical", "fullWidth": 10}}]"#
                        .utf8))
        }
        #expect(throws: ManifestError.self) {
            try ManifestCoder.decode(Data(#"[{"path": "file:///c/a.jpg", "type": "image", "stereo": "yes"}]"#.utf8))
        }
    }

    @Test func bothSchemasRoundTrip() throws {
        for schema in ManifestSchema.allCases {
            let decoded = try ManifestCoder.decode(ManifestCoder.encode([Self.entry], schema: schema))
            #expect(decoded.schema == schema)
            #expect(decoded.entries[0].path == Self.entry.path)
            #expect(decoded.entries[0].type == .image)
        }
    }

    @Test(arguments: [
        ("{}", "(top level)"), ("[1]", "[0]"), (#"[{"type": "image"}]"#, "[0].path"),
        (#"[{"path": 3, "type": 0}]"#, "[0].path"),
        (#"[{"path": "x", "type": 7}]"#, "[0].type"), (#"[{"path": "x", "type": "movie"}]"#, "[0].type"),
        (#"[{"path": "x", "type": 0, "duration": "long"}]"#, "[0].duration"),
        (#"[{"path": "x", "type": 0, "width": true}]"#, "[0].width"),
    ])
    func wrongShapesAreNamed(json: String, field: String) {
        do {
            _ = try ManifestCoder.decode(Data(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.description.contains(field), "\(error)")
        }
    }

    @Test func malformedJSONIsReported() {
        #expect(throws: ManifestError.self) { try ManifestCoder.decode(Data("[{".utf8)) }
    }

    @Test func bothPathSpellingsAreRead() {
        let path = "/tmp/My Photo 100%.jpg"
        #expect(ManifestCoder.fileURLString(path, spelling: .percentEncoded) == "file:///tmp/My%20Photo%20100%25.jpg")
        #expect(ManifestCoder.fileURLString(path, spelling: .unencoded) == "file:///tmp/My Photo 100%.jpg")
        #expect(ManifestCoder.filePath(fromURLString: "file:///tmp/My%20Photo%20100%25.jpg") == path)
        #expect(ManifestCoder.filePath(fromURLString: "file:///tmp/My Photo.jpg") == "/tmp/My Photo.jpg")
        #expect(ManifestCoder.filePath(fromURLString: "https://x/y") == nil)
    }
}

@Suite struct RedirectURLTests {
    @Test func formatsLikeTheSeed() throws {
        let url = RedirectURL(key: try ShareKey("ShareKey"), kind: .media)
        #expect(url.description == "ShareMedia://dataUrl=ShareKey#media")
    }

    @Test func parsesSchemeKeyAndKind() throws {
        let parsed = try RedirectURL.parse("MyApp://dataUrl=ShareKey-1#file")
        #expect(parsed.url?.kind == .file)
        #expect(parsed.key.rawValue == "ShareKey-1")
        #expect(parsed.scheme == "MyApp")
    }

    @Test(arguments: [
        "ShareMedia://dataUrl=../etc#media", "ShareMedia://dataUrl=a/b#media", "ShareMedia://dataUrl=#media",
        "ShareMedia://dataUrl=.hidden#media", "ShareMedia://dataUrl=a%2Fb#media", "ShareMedia://key=a#media",
        "ShareMedia://dataUrl=a#video", "1abc://dataUrl=a#media", "no-scheme", "ShareMedia://dataUrl=a b#text",
    ])
    func refusesUnsafeOrMalformed(url: String) {
        #expect(throws: RedirectURLError.self) { try RedirectURL.parse(url) }
    }

    /// A host app's own prefix: a valid one makes a key of it; a bad one is an
    /// error the app can show, never a crash.
    @Test func uniqueKeysWithAPrefixAreCheckedNotForced() throws {
        let id = UUID()
        #expect(try ShareKey.unique(prefix: "Photos_2", id: id).rawValue == "Photos_2-\(id.uuidString)")
        #expect(ShareKey.unique(id: id).rawValue == "ShareKey-\(id.uuidString)")
        #expect(throws: ShareKeyError.forbiddenCharacter("my share-\(id.uuidString)", " ")) {
            try ShareKey.unique(prefix: "my share", id: id)
        }
        #expect(throws: ShareKeyError.leadingDot(".x-\(id.uuidString)")) { try ShareKey.unique(prefix: ".x", id: id) }
        #expect(throws: ShareKeyError.self) { try ShareKey.unique(prefix: String(repeating: "k", count: 100), id: id) }
    }

    @Test func kindFollowsTheContents() {
        #expect(RedirectKind(types: [.file, .image]) == .media)
        #expect(RedirectKind(types: [.file, .text]) == .file)
        #expect(RedirectKind(types: [.url, .text]) == .text)
    }
}
