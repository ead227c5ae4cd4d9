import Foundation
import MediaFormats
import ShareManifest

/// A pipeline: which stages run, with how many workers and which settings, and
/// how the manifest is written. Decoded from `pipelines/*.json` and validated;
/// two definitions are built in (`default` and `share-extension`).
///
/// Every setting is a `var`, so a pipeline can also be built or adjusted in code:
/// ```swift
/// var pipeline = PipelineDefinition.standard          // or try .load("share-extension")
/// pipeline.thumbnail?.size = 200                      // nil: this pipeline makes no thumbnails
/// pipeline.manifest.schema = .legacy
/// pipeline.probe = nil                                // drop a stage
/// pipeline.thumbnail = .init()                        // add one with the documented defaults
/// let ingestor = ShareIngestor(container: container, pipeline: pipeline)
/// ```
/// A definition built in code is validated like a file when a batch starts (an
/// out-of-range setting throws ``ShareIngestError/pipeline(_:)``).
public struct PipelineDefinition: Sendable, Hashable {
    /// The name reports and the journal show (`default`, `share-extension`, a file's `name`).
    public var name: String
    /// What the pipeline is for, in one sentence.
    public var description: String
    /// The `sniff` stage (required).
    public var sniff: SniffSettings
    /// The `copy` stage (required).
    public var copy: CopySettings
    /// Nil when the pipeline has no probe stage (types then come from the content alone).
    public var probe: ProbeSettings?
    /// Nil when the pipeline makes no thumbnails.
    public var thumbnail: ThumbnailSettings?
    /// The `manifest` stage (required, last).
    public var manifest: ManifestSettings

    /// A pipeline from its stages' settings; every argument has the documented
    /// default, so `PipelineDefinition(name: "mine")` has every stage of `default`.
    public init(
        name: String, description: String = "", sniff: SniffSettings = .init(), copy: CopySettings = .init(),
        probe: ProbeSettings? = .init(), thumbnail: ThumbnailSettings? = .init(), manifest: ManifestSettings = .init()
    ) {
        self.name = name
        self.description = description
        self.sniff = sniff
        self.copy = copy
        self.probe = probe
        self.thumbnail = thumbnail
        self.manifest = manifest
    }

    /// The stages in order, as item stages run them (manifest excluded: it is the fan-in).
    public var itemStages: [StageName] {
        [.sniff, .copy] + (probe != nil ? [.probe] : []) + (thumbnail != nil ? [.thumbnail] : [])
    }

    /// How many worker threads `stage` runs on (0 for a stage the pipeline lacks).
    public func workers(for stage: StageName) -> Int {
        switch stage {
        case .sniff: sniff.workers
        case .copy: copy.workers
        case .probe: probe?.workers ?? 0
        case .thumbnail: thumbnail?.workers ?? 0
        case .manifest: 1
        }
    }

    /// Settings of the `sniff` stage (content type and extension from the first 4 KB).
    public struct SniffSettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 1
        /// Fail a file whose name claims a media format its unrecognisable content is not.
        public var rejectContradictions = true

        /// The defaults: one worker, contradictions rejected.
        public init() {}
    }

    /// Settings of the `copy` stage.
    public struct CopySettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 2
        /// fsync every copy before the manifest names it.
        public var fsync = true

        /// The defaults: two workers, fsync on.
        public init() {}
    }

    /// Settings of the `probe` stage (confirms the type, reads dimensions and duration).
    public struct ProbeSettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 2
        /// Images and videos with more pixels than this (per frame) are refused before decoding.
        public var pixelLimit = 100_000_000
        /// Seconds one file may take to open and probe.
        public var timeLimit: Double = 30

        /// The defaults: two workers, 100 MP, 30 s.
        public init() {}
    }

    /// Settings of the `thumbnail` stage (JPEG thumbnails and video posters).
    public struct ThumbnailSettings: Sendable, Hashable {
        /// Worker threads (1...64).
        public var workers = 2
        /// The longest side in pixels (16...4096); smaller images are not upscaled.
        public var size = 360
        /// JPEG quality (1...100).
        public var quality = 80
        /// Which kinds get thumbnails: images, videos, documents (PDF first pages).
        public var kinds: Set<ThumbnailKind> = [.image, .video, .document]
        /// What a truncated or damaged image gives: see the README's pipeline table.
        public var damageTolerance: DamageTolerance = .truncated
        /// Seconds one thumbnail may take.
        public var timeLimit: Double = 30
        /// The poster is the keyframe nearest to this many seconds into a video.
        public var posterTime: Double = 1

        /// The defaults of the `default` pipeline: 360 px, quality 80, images, videos and documents.
        public init() {}

        var spec: ThumbnailSpec {
            ThumbnailSpec(size: size, quality: quality, damageTolerance: damageTolerance, timeLimit: timeLimit, posterTime: posterTime)
        }
    }

    /// What a thumbnail stage makes thumbnails for.
    public enum ThumbnailKind: String, Sendable, Hashable, CaseIterable {
        /// Still and animated images (the first frame).
        case image
        /// Videos: a poster from a keyframe.
        case video
        /// Documents libvips renders: the first page of a PDF.
        case document
    }

    /// Settings of the `manifest` stage: what the host app will read.
    public struct ManifestSettings: Sendable, Hashable {
        /// The JSON layout written.
        public var schema: ManifestSchema = .v2
        /// The redirect URL's scheme.
        public var scheme = RedirectURL.defaultScheme
        /// A fixed key; nil gives every batch its own (`ShareKey-<UUID>`).
        public var key: ShareKey?
        /// How `file://` paths are spelled.
        public var pathSpelling: PathSpelling = .percentEncoded

        /// The defaults: v2, `ShareMedia`, a key per batch, percent-encoded paths.
        public init() {}
    }
}

/// Why a pipeline definition was refused: the file, the field, what is wrong and what is allowed.
public struct PipelineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The pipeline file (or `built-in pipeline <name>`, `pipeline <name>` for one built in code).
    public let file: String
    /// The field, e.g. `stages[2].quality`.
    public let field: String
    /// What is wrong and what is allowed.
    public let problem: String

    /// `<file>: <field>: <problem>`.
    public var description: String { "\(file): \(field): \(problem)" }
}

extension PipelineDefinition {
    /// The pipelines compiled into the program, by name.
    public static let builtinNames = ["default", "share-extension"]

    /// A built-in pipeline by name, or a pipeline file by path (anything with a `/`
    /// or ending in `.json`).
    public static func load(_ nameOrPath: String) throws(PipelineError) -> PipelineDefinition {
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: nameOrPath) else {
                throw PipelineError(file: nameOrPath, field: "(file)", problem: "cannot be read (missing or not a file)")
            }
            return try decode(data, file: nameOrPath)
        }
        guard let text = BuiltinPipelines.json[nameOrPath] else {
            throw PipelineError(
                file: nameOrPath, field: "(name)",
                problem: "no built-in pipeline has this name; built in: \(builtinNames.joined(separator: ", ")); or give a path to a .json file")
        }
        return try decode(Data(text.utf8), file: "built-in pipeline \(nameOrPath)")
    }

    /// The `default` pipeline.
    public static var standard: PipelineDefinition { try! load("default") }

    /// Decodes and validates a pipeline document.
    public static func decode(_ data: Data, file: String) throws(PipelineError) -> PipelineDefinition {
        var reader = FieldReader(file: file)
        return try reader.pipeline(data)
    }
}

extension PipelineDefinition {
    /// The definition as a pipeline document (every setting spelled out), so it can
    /// be stored with a batch and read back identically.
    public func encodedJSON() -> String {
        var stages: [[String: Any]] = [
            ["stage": "sniff", "workers": sniff.workers, "rejectContradictions": sniff.rejectContradictions],
            ["stage": "copy", "workers": copy.workers, "fsync": copy.fsync],
        ]
        if let probe {
            stages.append(["stage": "probe", "workers": probe.workers, "pixelLimit": probe.pixelLimit, "timeLimit": probe.timeLimit])
        }
        if let thumbnail {
            stages.append([
                "stage": "thumbnail", "workers": thumbnail.workers, "size": thumbnail.size, "format": "jpeg", "quality": thumbnail.quality,
                "for": ThumbnailKind.allCases.filter(thumbnail.kinds.contains).map(\.rawValue),
                "damageTolerance": thumbnail.damageTolerance.rawValue, "timeLimit": thumbnail.timeLimit, "posterTime": thumbnail.posterTime,
            ])
        }
        var manifestStage: [String: Any] = [
            "stage": "manifest", "schema": manifest.schema.rawValue, "scheme": manifest.scheme, "pathSpelling": manifest.pathSpelling.rawValue,
        ]
        if let key = manifest.key { manifestStage["key"] = key.rawValue }
        stages.append(manifestStage)
        let document: [String: Any] = ["name": name, "description": description, "stages": stages]
        let data = try! JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}

/// Reads a pipeline document field by field, so every error names its field.
private struct FieldReader {
    let file: String

    func fail(_ field: String, _ problem: String) -> PipelineError {
        PipelineError(file: file, field: field, problem: problem)
    }

    mutating func pipeline(_ data: Data) throws(PipelineError) -> PipelineDefinition {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            throw fail("(document)", "not valid JSON: \(detail)")
        }
        guard let object = root as? [String: Any] else { throw fail("(document)", "must be a JSON object") }
        try allowOnly(object, ["name", "description", "stages"], at: "")
        guard let name = object["name"] as? String, !name.isEmpty else { throw fail("name", "must be a non-empty string") }
        let description = try optionalString(object, "description", at: "") ?? ""
        guard let stages = object["stages"] as? [Any], !stages.isEmpty else {
            throw fail("stages", "must be a non-empty array of stage objects")
        }
        var definition = PipelineDefinition(
            name: name, description: description, sniff: .init(), copy: .init(), probe: nil, thumbnail: nil, manifest: .init())
        var seen: [StageName] = []
        for (index, element) in stages.enumerated() {
            let at = "stages[\(index)]"
            guard let stage = element as? [String: Any] else { throw fail(at, "must be an object with a \"stage\" field") }
            guard let stageName = stage["stage"] as? String else { throw fail("\(at).stage", "is missing; allowed: \(allStages)") }
            guard let kind = StageName(rawValue: stageName) else {
                throw fail("\(at).stage", "unknown stage \"\(stageName)\"; allowed: \(allStages)")
            }
            if seen.contains(kind) { throw fail("\(at).stage", "stage \"\(stageName)\" appears twice") }
            if let last = seen.last, kind < last {
                throw fail("\(at).stage", "\"\(stageName)\" cannot come after \"\(last.rawValue)\"; the order is \(allStages)")
            }
            seen.append(kind)
            switch kind {
            case .sniff:
                try allowOnly(stage, ["stage", "workers", "rejectContradictions"], at: at)
                definition.sniff.workers = try integer(stage, "workers", at: at, in: 1...64) ?? 1
                definition.sniff.rejectContradictions = try boolean(stage, "rejectContradictions", at: at) ?? true
            case .copy:
                try allowOnly(stage, ["stage", "workers", "fsync"], at: at)
                definition.copy.workers = try integer(stage, "workers", at: at, in: 1...64) ?? 2
                definition.copy.fsync = try boolean(stage, "fsync", at: at) ?? true
            case .probe:
                try allowOnly(stage, ["stage", "workers", "pixelLimit", "timeLimit"], at: at)
                var probe = PipelineDefinition.ProbeSettings()
                probe.workers = try integer(stage, "workers", at: at, in: 1...64) ?? probe.workers
                probe.pixelLimit = try integer(stage, "pixelLimit", at: at, in: 1...1_000_000_000_000) ?? probe.pixelLimit
                probe.timeLimit = try number(stage, "timeLimit", at: at, in: 0.001...86_400) ?? probe.timeLimit
                definition.probe = probe
            case .thumbnail:
                try allowOnly(stage, ["stage", "workers", "size", "format", "quality", "for", "damageTolerance", "timeLimit", "posterTime"], at: at)
                var thumbnail = PipelineDefinition.ThumbnailSettings()
                thumbnail.workers = try integer(stage, "workers", at: at, in: 1...64) ?? thumbnail.workers
                thumbnail.size = try integer(stage, "size", at: at, in: 16...4096) ?? thumbnail.size
                thumbnail.quality = try integer(stage, "quality", at: at, in: 1...100) ?? thumbnail.quality
                if let format = stage["format"] {
                    guard let format = format as? String, format == "jpeg" else {
                        throw fail("\(at).format", "\(show(format)) is not supported; allowed: \"jpeg\"")
                    }
                }
                if let kinds = stage["for"] {
                    guard let list = kinds as? [String], !list.isEmpty else {
                        throw fail("\(at).for", "must be a non-empty array; allowed values: image, video, document")
                    }
                    var set = Set<PipelineDefinition.ThumbnailKind>()
                    for value in list {
                        guard let kind = PipelineDefinition.ThumbnailKind(rawValue: value) else {
                            throw fail("\(at).for", "unknown kind \"\(value)\"; allowed values: image, video, document")
                        }
                        set.insert(kind)
                    }
                    thumbnail.kinds = set
                }
                if let tolerance = stage["damageTolerance"] {
                    guard let raw = tolerance as? String, let parsed = DamageTolerance(rawValue: raw) else {
                        throw fail("\(at).damageTolerance", "\(show(tolerance)) is not allowed; allowed: none, truncated, error")
                    }
                    thumbnail.damageTolerance = parsed
                }
                thumbnail.timeLimit = try number(stage, "timeLimit", at: at, in: 0.001...86_400) ?? thumbnail.timeLimit
                thumbnail.posterTime = try number(stage, "posterTime", at: at, in: 0...86_400) ?? thumbnail.posterTime
                definition.thumbnail = thumbnail
            case .manifest:
                try allowOnly(stage, ["stage", "schema", "scheme", "key", "pathSpelling"], at: at)
                if let schema = stage["schema"] {
                    guard let raw = schema as? String, let parsed = ManifestSchema(rawValue: raw) else {
                        throw fail("\(at).schema", "\(show(schema)) is not allowed; allowed: legacy, v2")
                    }
                    definition.manifest.schema = parsed
                }
                if let scheme = try optionalString(stage, "scheme", at: at) {
                    do { try RedirectURL.validate(scheme: scheme) } catch {
                        throw fail("\(at).scheme", "\"\(scheme)\" is not a URL scheme (a letter, then letters, digits, + - .)")
                    }
                    definition.manifest.scheme = scheme
                }
                if let key = try optionalString(stage, "key", at: at) {
                    do { definition.manifest.key = try ShareKey(key) } catch { throw fail("\(at).key", error.description) }
                }
                if let spelling = stage["pathSpelling"] {
                    guard let raw = spelling as? String, let parsed = PathSpelling(rawValue: raw) else {
                        throw fail("\(at).pathSpelling", "\(show(spelling)) is not allowed; allowed: percentEncoded, unencoded")
                    }
                    definition.manifest.pathSpelling = parsed
                }
            }
        }
        for required in [StageName.sniff, .copy, .manifest] where !seen.contains(required) {
            throw fail("stages", "the \"\(required.rawValue)\" stage is required")
        }
        return definition
    }

    private var allStages: String { StageName.allCases.map(\.rawValue).joined(separator: ", ") }

    private func show(_ value: Any) -> String {
        if let s = value as? String { return "\"\(s)\"" }
        if value is NSNull { return "null" }
        return "\(value)"
    }

    private func allowOnly(_ object: [String: Any], _ allowed: [String], at: String) throws(PipelineError) {
        for key in object.keys.sorted() where !allowed.contains(key) {
            let prefix = at.isEmpty ? "" : "\(at)."
            throw fail("\(prefix)\(key)", "unknown field; allowed here: \(allowed.joined(separator: ", "))")
        }
    }

    private func isBool(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return JSONValue.isBoolean(number)
    }

    private func integer(_ object: [String: Any], _ key: String, at: String, in range: ClosedRange<Int>) throws(PipelineError) -> Int? {
        guard let value = object[key] else { return nil }
        guard let number = value as? NSNumber, !isBool(value), number.doubleValue == number.doubleValue.rounded(),
            abs(number.doubleValue) < 1e15
        else { throw fail("\(at).\(key)", "\(show(value)) is not an integer; allowed: \(range.lowerBound)...\(range.upperBound)") }
        guard range.contains(number.intValue) else {
            throw fail("\(at).\(key)", "\(number.intValue) is out of range; allowed: \(range.lowerBound)...\(range.upperBound)")
        }
        return number.intValue
    }

    private func number(_ object: [String: Any], _ key: String, at: String, in range: ClosedRange<Double>) throws(PipelineError) -> Double? {
        guard let value = object[key] else { return nil }
        guard let number = value as? NSNumber, !isBool(value) else {
            throw fail("\(at).\(key)", "\(show(value)) is not a number; allowed: \(range.lowerBound)...\(range.upperBound)")
        }
        guard range.contains(number.doubleValue) else {
            throw fail("\(at).\(key)", "\(number.doubleValue) is out of range; allowed: \(range.lowerBound)...\(range.upperBound)")
        }
        return number.doubleValue
    }

    private func boolean(_ object: [String: Any], _ key: String, at: String) throws(PipelineError) -> Bool? {
        guard let value = object[key] else { return nil }
        guard isBool(value), let number = value as? NSNumber else { throw fail("\(at).\(key)", "\(show(value)) is not allowed; allowed: true, false") }
        return number.boolValue
    }

    private func optionalString(_ object: [String: Any], _ key: String, at: String) throws(PipelineError) -> String? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let string = value as? String else {
            throw fail(at.isEmpty ? key : "\(at).\(key)", "\(show(value)) is not a string")
        }
        return string
    }
}

extension PipelineDefinition {
    /// Checks every setting against its allowed values (a definition built in
    /// code is held to the same rules as a file: a batch stores it as JSON, and a
    /// resumed batch must read it back).
    public func validate() throws(PipelineError) {
        _ = try PipelineDefinition.decode(Data(encodedJSON().utf8), file: "pipeline \(name)")
    }
}
