import Foundation
import SystemCalls

/// The JSON layout of a manifest.
public enum ManifestSchema: String, Sendable, Codable, CaseIterable {
    /// Seed 004 and older plugins: `{path, thumbnail, duration, type: 0|1|2}`; text and
    /// URLs as a plain array of strings.
    case legacy
    /// Newer plugins plus our fields: `type` as a string, `mimeType`, `message`,
    /// `fileName`, `size`, `width`, `height`; text and URLs as entries too.
    case v2
}

/// How `file://` paths are spelled in a manifest. Plugins disagree; hosts must read both.
public enum PathSpelling: String, Sendable, Codable, CaseIterable {
    /// `URL.absoluteString`: `file:///c/My%20Photo.jpg` (valid URLs; the default).
    case percentEncoded
    /// `"file://" + path` with nothing escaped, as some plugins write (not a valid URL).
    case unencoded
}

/// Encodes and decodes manifests in both schemas.
public enum ManifestCoder: Sendable {
    /// A manifest's JSON: an array of entries, or of strings for a legacy text-only share.
    public static func encode(_ entries: [SharedMediaFile], schema: ManifestSchema) -> Data {
        let textOnly = isTextOnly(entries.map(\.type), schema: schema)
        var json = "["
        for (i, entry) in entries.enumerated() {
            json += (i == 0 ? "\n  " : ",\n  ") + encodeEntry(entry, schema: schema, textOnly: textOnly)
        }
        json += closing(empty: entries.isEmpty)
        return Data(json.utf8)
    }

    /// True when a manifest of entries of these types is a legacy array of
    /// strings (text and links only).
    package static func isTextOnly(_ types: some Collection<SharedMediaType>, schema: ManifestSchema) -> Bool {
        schema == .legacy && !types.isEmpty && types.allSatisfy { $0.legacyValue == nil }
    }

    /// One element of the array: an entry object, or (legacy, `textOnly`) its text.
    package static func encodeEntry(_ entry: SharedMediaFile, schema: ManifestSchema, textOnly: Bool) -> String {
        if textOnly { return JSONText.string(entry.path) }
        var fields: [(String, String)] = [
            ("path", JSONText.string(entry.path)),
            ("thumbnail", entry.thumbnail.map(JSONText.string) ?? "null"),
            ("duration", entry.duration.map(JSONText.number) ?? "null"),
        ]
        switch schema {
        case .legacy:
            fields.append(("type", String(entry.type.legacyValue ?? 2)))
        case .v2:
            fields += v2Fields.map { name, value in (name, value(entry) ?? "null") }
            fields += ownFields.compactMap { name, value in value(entry).map { (name, $0) } }
        }
        return JSONText.object(fields)
    }

    /// A field of an entry: its name, and its value encoded (nil when unset).
    private typealias EntryField = (name: String, value: @Sendable (SharedMediaFile) -> String?)

    /// The plugins' v2 fields after `path`, `thumbnail` and `duration`, in their
    /// order: always written, `null` when unset.
    private static let v2Fields: [EntryField] = [
        ("type", { JSONText.string($0.type.rawValue) }),
        ("mimeType", { $0.mimeType.map(JSONText.string) }),
        ("message", { $0.message.map(JSONText.string) }),
        ("fileName", { $0.fileName.map(JSONText.string) }),
        ("size", { $0.size.map { String($0) } }),
        ("width", { $0.width.map { String($0) } }),
        ("height", { $0.height.map { String($0) } }),
    ]

    /// share-ingest's own fields, in their order: each written only when set.
    private static let ownFields: [EntryField] = [
        ("thumbhash", { $0.thumbhash.map(JSONText.string) }),
        ("previews", { $0.previews.flatMap(encodePreviews) }),
        ("sha256", { $0.sha256.map(JSONText.string) }),
        ("duplicateOf", { $0.duplicateOf.map(JSONText.string) }),
        ("similarTo", { $0.similarTo.map(encodeSimilarTo) }),
        ("motionVideo", { $0.motionVideo.map(encodeMotionVideo) }),
        ("livePhoto", { $0.livePhoto.map(encodeLivePhoto) }),
        ("compatible", { $0.compatible.map(encodeCompatible) }),
        ("locationRemoved", { $0.locationRemoved.flatMap(encodeLocationRemoved) }),
        ("sidecars", { $0.sidecars.flatMap(encodeSidecars) }),
        ("group", { $0.group.map(encodeGroup) }),
        ("capturedAt", { $0.capturedAt.map(JSONText.string) }),
        // The capture time's source and offset: only beside a capture time.
        ("capturedAtSource", { $0.capturedAt == nil ? nil : $0.capturedAtSource.map(JSONText.string) }),
        ("capturedAtOffsetKnown", { $0.capturedAt == nil ? nil : $0.capturedAtOffsetKnown.map(JSONText.bool) }),
        ("capturedAtOffsetSource", { $0.capturedAt == nil ? nil : $0.capturedAtOffsetSource.map(JSONText.string) }),
        ("camera", { $0.camera.flatMap(encodeCamera) }),
        ("video", { $0.video.map(encodeVideo) }),
        ("projection", { $0.projection.map(encodeProjection) }),
        ("stereo", { $0.stereo.map(JSONText.bool) }),
        ("hdr", { $0.hdr.map(JSONText.string) }),
        ("thumbnailHdr", { $0.thumbnailHdr.map(JSONText.string) }),
        ("exportLocation", { $0.exportLocation.map(encodeExportLocation) }),
    ]

    /// An array of already encoded elements.
    private static func array(_ elements: [String]) -> String {
        "[" + elements.joined(separator: ", ") + "]"
    }

    private static func encodePreviews(_ previews: [SharedMediaFile.Preview]) -> String? {
        guard !previews.isEmpty else { return nil }
        return array(
            previews.map { preview in
                var object: [(String, String)] = [
                    ("path", JSONText.string(preview.path)), ("width", String(preview.width)),
                    ("height", String(preview.height)),
                    ("mimeType", JSONText.string(preview.mimeType)),
                ]
                if let size = preview.size { object.append(("size", String(size))) }
                if let hdr = preview.hdr { object.append(("hdr", JSONText.string(hdr))) }
                return JSONText.object(object)
            })
    }

    private static func encodeSimilarTo(_ similar: SharedMediaFile.SimilarTo) -> String {
        JSONText.object([("path", JSONText.string(similar.path)), ("distance", String(similar.distance))])
    }

    private static func encodeMotionVideo(_ video: SharedMediaFile.MotionVideo) -> String {
        JSONText.object([
            ("path", JSONText.string(video.path)),
            ("thumbnail", video.thumbnail.map(JSONText.string) ?? "null"),
            ("duration", video.duration.map(JSONText.number) ?? "null"),
            ("mimeType", video.mimeType.map(JSONText.string) ?? "null"),
            ("size", video.size.map { String($0) } ?? "null"),
            ("width", video.width.map { String($0) } ?? "null"),
            ("height", video.height.map { String($0) } ?? "null"),
        ])
    }

    private static func encodeLivePhoto(_ live: SharedMediaFile.LivePhoto) -> String {
        var nested: [(String, String)] = [
            ("photo", JSONText.string(live.photo)), ("video", JSONText.string(live.video)),
        ]
        if let identifier = live.contentIdentifier {
            nested.append(("contentIdentifier", JSONText.string(identifier)))
        }
        nested.append(("pairedBy", JSONText.string(live.pairedBy.rawValue)))
        return JSONText.object(nested)
    }

    private static func encodeCompatible(_ compatible: SharedMediaFile.Compatible) -> String {
        var object: [(String, String)] = [
            ("path", JSONText.string(compatible.path)), ("mimeType", JSONText.string(compatible.mimeType)),
        ]
        if let size = compatible.size { object.append(("size", String(size))) }
        if let width = compatible.width { object.append(("width", String(width))) }
        if let height = compatible.height { object.append(("height", String(height))) }
        return JSONText.object(object)
    }

    private static func encodeLocationRemoved(_ removed: [String]) -> String? {
        removed.isEmpty ? nil : array(removed.map(JSONText.string))
    }

    private static func encodeSidecars(_ sidecars: [SharedMediaFile.Sidecar]) -> String? {
        guard !sidecars.isEmpty else { return nil }
        return array(
            sidecars.map { sidecar in
                var object: [(String, String)] = [
                    ("path", JSONText.string(sidecar.path)), ("kind", JSONText.string(sidecar.kind.rawValue)),
                    ("mimeType", JSONText.string(sidecar.mimeType)),
                ]
                if let size = sidecar.size { object.append(("size", String(size))) }
                return JSONText.object(object)
            })
    }

    private static func encodeGroup(_ group: SharedMediaFile.Group) -> String {
        JSONText.object([
            ("id", JSONText.string(group.id)), ("kind", JSONText.string(group.kind.rawValue)),
            ("role", JSONText.string(group.role.rawValue)),
        ])
    }

    /// Nil when no camera fact is known (no empty object).
    private static func encodeCamera(_ camera: SharedMediaFile.Camera) -> String? {
        var object: [(String, String)] = []
        if let make = camera.make { object.append(("make", JSONText.string(make))) }
        if let model = camera.model { object.append(("model", JSONText.string(model))) }
        if let lens = camera.lens { object.append(("lens", JSONText.string(lens))) }
        return object.isEmpty ? nil : JSONText.object(object)
    }

    private static func encodeVideo(_ video: SharedMediaFile.Video) -> String {
        var object: [(String, String)] = [("codec", JSONText.string(video.codec))]
        if let rate = video.frameRate { object.append(("frameRate", JSONText.number(rate))) }
        if let variable = video.variableFrameRate { object.append(("variableFrameRate", JSONText.bool(variable))) }
        if let rate = video.captureFrameRate { object.append(("captureFrameRate", JSONText.number(rate))) }
        if let slow = video.slowMotion { object.append(("slowMotion", JSONText.bool(slow))) }
        if let hdr = video.hdr { object.append(("hdr", JSONText.string(hdr))) }
        if let profile = video.dolbyVisionProfile { object.append(("dolbyVisionProfile", String(profile))) }
        object.append(("rotation", String(video.rotation)))
        if let audio = video.audio { object.append(("audio", JSONText.string(audio))) }
        return JSONText.object(object)
    }

    private static func encodeProjection(_ projection: SharedMediaFile.Projection) -> String {
        JSONText.object([
            ("type", JSONText.string(projection.type)), ("fullWidth", String(projection.fullWidth)),
            ("fullHeight", String(projection.fullHeight)),
            ("cropLeft", String(projection.cropLeft)), ("cropTop", String(projection.cropTop)),
            ("croppedWidth", String(projection.croppedWidth)),
            ("croppedHeight", String(projection.croppedHeight)),
        ])
    }

    private static func encodeExportLocation(_ place: SharedMediaFile.ExportLocation) -> String {
        var object: [(String, String)] = [
            ("latitude", JSONText.number(place.latitude)), ("longitude", JSONText.number(place.longitude)),
        ]
        if let altitude = place.altitude { object.append(("altitude", JSONText.number(altitude))) }
        object.append(("source", JSONText.string(place.source)))
        return JSONText.object(object)
    }

    /// The end of the array.
    package static func closing(empty: Bool) -> String { empty ? "]\n" : "\n]\n" }

    /// Decodes a manifest in either schema (detected per entry), with either path spelling.
    public static func decode(_ data: Data) throws(ManifestError) -> (
        entries: [SharedMediaFile], schema: ManifestSchema
    ) {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw .malformedJSON(
                String(
                    describing: (error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? error.localizedDescription))
        }
        guard let array = root as? [Any] else {
            throw .wrongType(field: "(top level)", expected: "an array of entries")
        }
        var entries: [SharedMediaFile] = []
        var schema = ManifestSchema.v2
        for (index, element) in array.enumerated() {
            if let text = element as? String {
                schema = .legacy
                entries.append(SharedMediaFile(path: text, type: Self.looksLikeURL(text) ? .url : .text))
                continue
            }
            guard let object = element as? [String: Any] else {
                throw .wrongType(field: "[\(index)]", expected: "an object or a string")
            }
            let (entry, entrySchema) = try decodeEntry(object, index: index)
            if entrySchema == .legacy { schema = .legacy }
            entries.append(entry)
        }
        return (entries, schema)
    }

    private static func decodeEntry(_ object: [String: Any], index: Int) throws(ManifestError) -> (
        SharedMediaFile, ManifestSchema
    ) {
        let n = Nested(object: object, at: "[\(index)]")
        guard let path = try n.field("path", as: String.self, expected: "a string") else {
            throw .missingField("[\(index)].path")
        }
        let (type, schema) = try entryType(n)
        return (try withOwnFields(try pluginFields(n, path: path, type: type, index: index), n, index: index), schema)
    }

    /// An entry's type and the schema it is written in: v2's name, or legacy's number.
    private static func entryType(_ n: Nested) throws(ManifestError) -> (SharedMediaType, ManifestSchema) {
        if let raw = n.object["type"] as? String {
            guard let parsed = SharedMediaType(rawValue: raw) else {
                throw .wrongType(field: "\(n.at).type", expected: "one of image, video, file, text, url")
            }
            return (parsed, .v2)
        } else if let raw = try n.number("type") {
            guard raw.doubleValue == raw.doubleValue.rounded(), let parsed = SharedMediaType(legacyValue: raw.intValue)
            else {
                throw .wrongType(field: "\(n.at).type", expected: "0 (image), 1 (video) or 2 (file)")
            }
            return (parsed, .legacy)
        } else {
            throw .missingField("\(n.at).type")
        }
    }

    /// The fields the plugins write, then the first of share-ingest's own (up
    /// to the sidecars), read in the order the checks have always named them.
    private static func pluginFields(
        _ n: Nested, path: String, type: SharedMediaType, index: Int
    ) throws(ManifestError) -> SharedMediaFile {
        SharedMediaFile(
            path: path,
            thumbnail: try n.field("thumbnail", as: String.self, expected: "a string or null"),
            duration: try n.number("duration")?.doubleValue,
            type: type,
            mimeType: try n.field("mimeType", as: String.self, expected: "a string or null"),
            message: try n.field("message", as: String.self, expected: "a string or null"),
            fileName: try n.field("fileName", as: String.self, expected: "a string or null"),
            size: try n.number("size")?.int64Value,
            width: try n.number("width")?.intValue,
            height: try n.number("height")?.intValue
        ).with(
            sha256: try n.field("sha256", as: String.self, expected: "a string or null"),
            duplicateOf: try n.field("duplicateOf", as: String.self, expected: "a string or null"),
            motionVideo: try motionVideo(
                try n.field("motionVideo", as: [String: Any].self, expected: "an object or null"),
                at: "[\(index)].motionVideo"),
            livePhoto: try livePhoto(
                try n.field("livePhoto", as: [String: Any].self, expected: "an object or null"),
                at: "[\(index)].livePhoto")
        ).with(
            compatible: try compatible(
                try n.field("compatible", as: [String: Any].self, expected: "an object or null"),
                at: "[\(index)].compatible"),
            locationRemoved: try n.field("locationRemoved", as: [String].self, expected: "an array of strings or null")
        ).with(
            sidecars: try sidecars(
                try n.field("sidecars", as: [Any].self, expected: "an array of objects or null"),
                at: "[\(index)].sidecars")
        )
    }

    /// `entry` with the rest of share-ingest's own fields (capture time,
    /// place, group, video, camera, similar picture, projection, previews).
    private static func withOwnFields(
        _ entry: SharedMediaFile, _ n: Nested, index: Int
    ) throws(ManifestError) -> SharedMediaFile {
        var pictures = entry.with(
            capturedAt: try n.field("capturedAt", as: String.self, expected: "a string or null"),
            capturedAtSource: try n.field("capturedAtSource", as: String.self, expected: "a string or null"),
            exportLocation: try exportLocation(
                try n.field("exportLocation", as: [String: Any].self, expected: "an object or null"),
                at: "[\(index)].exportLocation")
        ).with(
            group: try group(
                try n.field("group", as: [String: Any].self, expected: "an object or null"), at: "[\(index)].group")
        )
        .with(
            capturedAtOffsetKnown: try n.field("capturedAtOffsetKnown", as: Bool.self, expected: "a boolean or null"),
            capturedAtOffsetSource: try n.field("capturedAtOffsetSource", as: String.self, expected: "a string or null")
        )
        .with(
            video: try video(
                try n.field("video", as: [String: Any].self, expected: "an object or null"), at: "[\(index)].video")
        )
        .with(
            camera: try camera(
                try n.field("camera", as: [String: Any].self, expected: "an object or null"), at: "[\(index)].camera")
        )
        .with(
            similarTo: try similarTo(
                try n.field("similarTo", as: [String: Any].self, expected: "an object or null"),
                at: "[\(index)].similarTo")
        )
        .with(
            projection: try projection(
                try n.field("projection", as: [String: Any].self, expected: "an object or null"),
                at: "[\(index)].projection"),
            stereo: try n.field("stereo", as: Bool.self, expected: "a boolean or null"),
            hdr: try n.field("hdr", as: String.self, expected: "a string or null"))
        pictures = pictures.with(thumbhash: try n.field("thumbhash", as: String.self, expected: "a string or null"))
            .with(
                previews: try previews(
                    try n.field("previews", as: [Any].self, expected: "an array of objects or null"),
                    at: "[\(index)].previews"))
        pictures.thumbnailHdr = try n.field("thumbnailHdr", as: String.self, expected: "a string or null")
        return pictures
    }

    /// Reads a nested object's fields with the same checks as an entry's, naming
    /// the field (`[2].motionVideo.path`).
    private struct Nested {
        let object: [String: Any]
        let at: String

        func field<T>(_ name: String, as type: T.Type, expected: String) throws(ManifestError) -> T? {
            guard let value = object[name], !(value is NSNull) else { return nil }
            guard let typed = value as? T else { throw .wrongType(field: "\(at).\(name)", expected: expected) }
            return typed
        }

        func number(_ name: String) throws(ManifestError) -> NSNumber? {
            guard let value = try field(name, as: NSNumber.self, expected: "a number") else { return nil }
            if JSONValue.isBoolean(value) { throw .wrongType(field: "\(at).\(name)", expected: "a number") }
            return value
        }

        func string(_ name: String) throws(ManifestError) -> String {
            guard let value = try field(name, as: String.self, expected: "a string") else {
                throw .missingField("\(at).\(name)")
            }
            return value
        }
    }

    private static func similarTo(_ object: [String: Any]?, at: String) throws(ManifestError) -> SharedMediaFile
        .SimilarTo?
    {
        guard let object else { return nil }
        let n = Nested(object: object, at: at)
        guard let distance = try n.number("distance")?.intValue else { throw .missingField("\(at).distance") }
        return SharedMediaFile.SimilarTo(path: try n.string("path"), distance: distance)
    }

    private static func previews(_ array: [Any]?, at: String) throws(ManifestError) -> [SharedMediaFile.Preview]? {
        guard let array else { return nil }
        var previews: [SharedMediaFile.Preview] = []
        for (index, element) in array.enumerated() {
            guard let object = element as? [String: Any] else {
                throw .wrongType(field: "\(at)[\(index)]", expected: "an object")
            }
            let n = Nested(object: object, at: "\(at)[\(index)]")
            guard let width = try n.number("width")?.intValue else { throw .missingField("\(at)[\(index)].width") }
            guard let height = try n.number("height")?.intValue else { throw .missingField("\(at)[\(index)].height") }
            var preview = SharedMediaFile.Preview(
                path: try n.string("path"), width: width, height: height, mimeType: try n.string("mimeType"),
                size: try n.number("size")?.int64Value)
            preview.hdr = try n.field("hdr", as: String.self, expected: "a string")
            previews.append(preview)
        }
        return previews
    }

    private static func camera(_ object: [String: Any]?, at: String) throws(ManifestError) -> SharedMediaFile.Camera? {
        guard let object else { return nil }
        let n = Nested(object: object, at: at)
        return SharedMediaFile.Camera(
            make: try n.field("make", as: String.self, expected: "a string"),
            model: try n.field("model", as: String.self, expected: "a string"),
            lens: try n.field("lens", as: String.self, expected: "a string"))
    }

    private static func motionVideo(_ object: [String: Any]?, at: String) throws(ManifestError) -> SharedMediaFile
        .MotionVideo?
    {
        guard let object else { return nil }
        let n = Nested(object: object, at: at)
        return SharedMediaFile.MotionVideo(
            path: try n.string("path"),
            thumbnail: try n.field("thumbnail", as: String.self, expected: "a string or null"),
            duration: try n.number("duration")?.doubleValue,
            mimeType: try n.field("mimeType", as: String.self, expected: "a string or null"),
            size: try n.number("size")?.int64Value, width: try n.number("width")?.intValue,
            height: try n.number("height")?.intValue)
    }

    private static func livePhoto(_ object: [String: Any]?, at: String) throws(ManifestError) -> SharedMediaFile
        .LivePhoto?
    {
        guard let object else { return nil }
        let n = Nested(object: object, at: at)
        let allowed = SharedMediaFile.LivePhoto.Pairing.allCases.map(\.rawValue).joined(separator: ", ")
        guard let pairedBy = SharedMediaFile.LivePhoto.Pairing(rawValue: try n.string("pairedBy")) else {
            throw .wrongType(field: "\(at).pairedBy", expected: "one of \(allowed)")
        }
        return SharedMediaFile.LivePhoto(
            photo: try n.string("photo"), video: try n.string("video"),
            contentIdentifier: try n.field("contentIdentifier", as: String.self, expected: "a string or null"),
            pairedBy: pairedBy)
    }

    private static func sidecars(_ array: [Any]?, at: String) throws(ManifestError) -> [SharedMediaFile.Sidecar]? {
        guard let array else { return nil }
        var sidecars: [SharedMediaFile.Sidecar] = []
        for (index, element) in array.enumerated() {
            guard let object = element as? [String: Any] else {
                throw .wrongType(field: "\(at)[\(index)]", expected: "an object")
            }
            let n = Nested(object: object, at: "\(at)[\(index)]")
            let allowed = SharedMediaFile.Sidecar.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            guard let kind = SharedMediaFile.Sidecar.Kind(rawValue: try n.string("kind")) else {
                throw .wrongType(field: "\(at)[\(index)].kind", expected: "one of \(allowed)")
            }
            sidecars.append(
                SharedMediaFile.Sidecar(
                    path: try n.string("path"), kind: kind, mimeType: try n.string("mimeType"),
                    size: try n.number("size")?.int64Value))
        }
        return sidecars
    }

    private static func group(_ object: [String: Any]?, at: String) throws(ManifestError) -> SharedMediaFile.Group? {
        guard let object else { return nil }
        let n = Nested(object: object, at: at)
        guard let kind = SharedMediaFile.Group.Kind(rawValue: try n.string("kind")) else {
            throw .wrongType(
                field: "\(at).kind",
                expected: "one of " + SharedMediaFile.Group.Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        guard let role = SharedMediaFile.Group.Role(rawValue: try n.string("role")) else {
            throw .wrongType(
                field: "\(at).role",
                expected: "one of " + SharedMediaFile.Group.Role.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return SharedMediaFile.Group(id: try n.string("id"), kind: kind, role: role)
    }

    private static func exportLocation(_ object: [String: Any]?, at: String) throws(ManifestError) -> SharedMediaFile
        .ExportLocation?
    {
        guard let object else { return nil }
        let n = Nested(object: object, at: at)
        guard let latitude = try n.number("latitude")?.doubleValue else { throw .missingField("\(at).latitude") }
        guard let longitude = try n.number("longitude")?.doubleValue else { throw .missingField("\(at).longitude") }
        return SharedMediaFile.ExportLocation(
            latitude: latitude, longitude: longitude, altitude: try n.number("altitude")?.doubleValue,
            source: try n.string("source"))
    }

    private static func video(_ object: [String: Any]?, at: String) throws(ManifestError) -> SharedMediaFile.Video? {
        guard let object else { return nil }
        let n = Nested(object: object, at: at)
        return SharedMediaFile.Video(
            codec: try n.string("codec"), frameRate: try n.number("frameRate")?.doubleValue,
            variableFrameRate: try n.field("variableFrameRate", as: Bool.self, expected: "a boolean"),
            captureFrameRate: try n.number("captureFrameRate")?.doubleValue,
            slowMotion: try n.field("slowMotion", as: Bool.self, expected: "a boolean"),
            hdr: try n.field("hdr", as: String.self, expected: "a string"),
            dolbyVisionProfile: try n.number("dolbyVisionProfile")?.intValue,
            rotation: try n.number("rotation")?.intValue ?? 0,
            audio: try n.field("audio", as: String.self, expected: "a string"))
    }

    private static func projection(_ object: [String: Any]?, at: String) throws(ManifestError) -> SharedMediaFile
        .Projection?
    {
        guard let object else { return nil }
        let n = Nested(object: object, at: at)
        func integer(_ name: String) throws(ManifestError) -> Int {
            guard let value = try n.number(name)?.intValue else { throw .missingField("\(at).\(name)") }
            return value
        }
        return SharedMediaFile.Projection(
            type: try n.string("type"), fullWidth: try integer("fullWidth"), fullHeight: try integer("fullHeight"),
            cropLeft: try integer("cropLeft"),
            cropTop: try integer("cropTop"), croppedWidth: try integer("croppedWidth"),
            croppedHeight: try integer("croppedHeight"))
    }

    private static func compatible(_ object: [String: Any]?, at: String) throws(ManifestError) -> SharedMediaFile
        .Compatible?
    {
        guard let object else { return nil }
        let n = Nested(object: object, at: at)
        return SharedMediaFile.Compatible(
            path: try n.string("path"),
            mimeType: try n.field("mimeType", as: String.self, expected: "a string") ?? "image/jpeg",
            size: try n.number("size")?.int64Value, width: try n.number("width")?.intValue,
            height: try n.number("height")?.intValue)
    }

    package static func looksLikeURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty,
            !text.contains(where: \.isWhitespace)
        else { return false }
        return url.host != nil || scheme == "mailto" || scheme == "tel"
    }

    /// A `file://` URL for an absolute path of a file (never a folder: no
    /// trailing `/`, and no `stat` to find out), in the given spelling.
    public static func fileURLString(_ path: String, spelling: PathSpelling) -> String {
        switch spelling {
        case .percentEncoded: URL(fileURLWithPath: path, isDirectory: false).absoluteString
        case .unencoded: "file://" + path
        }
    }

    /// The absolute path a `file://` string names, whichever way it is spelled; nil
    /// for anything that is not a local file URL.
    public static func filePath(fromURLString string: String) -> String? {
        guard string.hasPrefix("file://") else { return nil }
        let rest = string.dropFirst("file://".count)
        // `file://localhost/x` and `file:///x` are both local.
        let pathPart: Substring
        if rest.hasPrefix("/") {
            pathPart = rest
        } else if rest.hasPrefix("localhost/") {
            pathPart = rest.dropFirst("localhost".count)
        } else {
            return nil
        }
        let raw = String(pathPart)
        guard let decoded = raw.removingPercentEncoding, decoded != raw else { return raw }
        // Both spellings are in use and a raw name may itself contain "%": prefer the
        // decoded path unless only the raw one exists.
        if !FileSystem.exists(decoded), FileSystem.exists(raw) { return raw }
        return decoded
    }
}

/// Why a manifest could not be read.
public enum ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not JSON; the parser's explanation.
    case malformedJSON(String)
    /// A field (e.g. `[2].type`) has the wrong type or value; what it must be.
    case wrongType(field: String, expected: String)
    /// A required field (e.g. `[0].path`) is missing.
    case missingField(String)

    /// A sentence naming the field and the problem.
    public var description: String {
        switch self {
        case .malformedJSON(let detail): "malformed JSON: \(detail)"
        case .wrongType(let field, let expected): "field \(field) must be \(expected)"
        case .missingField(let field): "field \(field) is missing"
        }
    }
}

/// Minimal JSON text building with stable field order (JSONEncoder sorts or shuffles keys).
package enum JSONText {
    /// `{"a": 1, "b": "x"}` from fields already encoded, in their order.
    package static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
    }

    /// `true` or `false`.
    package static func bool(_ value: Bool) -> String { value ? "true" : "false" }

    package static func string(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A Double as the manifests have always spelled it: a whole number with one
    /// decimal (`2000.0`, as Foundation's JSONSerialization writes a Double), else
    /// the shortest form that reads back exactly; `null` for NaN and infinities.
    package static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(format: "%.1f", value) }
        return String(value)
    }
}

/// JSONSerialization gives booleans as NSNumber too; this tells them apart.
package enum JSONValue {
    package static func isBoolean(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }
}
