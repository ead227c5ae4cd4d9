import Foundation
import MediaFormats
import ShareManifest

/// The pipeline document (`pipelines/*.json`): each stage's settings are
/// described once, below (key, allowed values, where the value lives; the
/// default is the settings struct's own). Reading a document, writing one and
/// ``PipelineDefinition/validate()`` are all derived from those descriptions,
/// so a setting cannot be accepted by one and unknown to another.
struct PipelineDocument {
    /// The file (or `built-in pipeline <name>`, `pipeline <name>`), for messages.
    let file: String

    // MARK: - The settings of each stage

    static let sniff: [Setting<PipelineDefinition.SniffSettings>] = [
        .integer("workers", \.workers, in: 1...64),
        .boolean("rejectContradictions", \.rejectContradictions),
    ]
    static let copy: [Setting<PipelineDefinition.CopySettings>] = [
        .integer("workers", \.workers, in: 1...64),
        .boolean("fsync", \.fsync),
    ]
    static let location: [Setting<PipelineDefinition.LocationSettings>] = [
        .integer("workers", \.workers, in: 1...64),
        .number("timeLimit", \.timeLimit, in: 0.001...86_400),
    ]
    static let probe: [Setting<PipelineDefinition.ProbeSettings>] = [
        .integer("workers", \.workers, in: 1...64),
        .integer("pixelLimit", \.pixelLimit, in: 1...1_000_000_000_000),
        .number("timeLimit", \.timeLimit, in: 0.001...86_400),
    ]
    static let thumbnail: [Setting<PipelineDefinition.ThumbnailSettings>] = [
        .integer("workers", \.workers, in: 1...64),
        .integer("size", \.size, in: 16...4096),
        .constant("format", "jpeg"),
        .integer("quality", \.quality, in: 1...100),
        .choices("for", \.kinds),
        .choice("damageTolerance", \.damageTolerance),
        .number("timeLimit", \.timeLimit, in: 0.001...86_400),
        .number("posterTime", \.posterTime, in: 0...86_400),
    ]
    static let motion: [Setting<PipelineDefinition.MotionSettings>] = [
        .integer("workers", \.workers, in: 1...64),
        .boolean("extract", \.extract),
        .boolean("livePhotos", \.livePhotos),
    ]
    static let compatible: [Setting<PipelineDefinition.CompatibleSettings>] = [
        .integer("workers", \.workers, in: 1...64),
        .integer("quality", \.quality, in: 1...100),
        .choices("for", \.formats),
        .number("timeLimit", \.timeLimit, in: 0.001...86_400),
    ]
    static let manifest: [Setting<PipelineDefinition.ManifestSettings>] = [
        .choice("schema", \.schema),
        .custom(
            "scheme", read: { value, settings throws(SettingProblem) in
                guard let scheme = value as? String else { throw SettingProblem("\(show(value)) is not a string") }
                settings.scheme = scheme
            },
            write: { $0.scheme },
            check: { settings throws(SettingProblem) in
                do throws(RedirectURLError) { try RedirectURL.validate(scheme: settings.scheme) } catch {
                    throw SettingProblem("\"\(settings.scheme)\" is not a URL scheme (a letter, then letters, digits, + - .)")
                }
            }),
        .custom(
            "key", read: { value, settings throws(SettingProblem) in
                if value is NSNull { return }
                guard let key = value as? String else { throw SettingProblem("\(show(value)) is not a string") }
                do throws(ShareKeyError) { settings.key = try ShareKey(key) } catch { throw SettingProblem(error.description) }
            },
            write: { $0.key?.rawValue }, check: { _ in }),
        .choice("pathSpelling", \.pathSpelling),
        .choice("duplicates", \.duplicates),
    ]

    // MARK: - Reading

    func fail(_ field: String, _ problem: String) -> PipelineError {
        PipelineError(file: file, field: field, problem: problem)
    }

    /// Decodes and validates a document; every error names its field and what is allowed.
    func decode(_ data: Data) throws(PipelineError) -> PipelineDefinition {
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
        if let description = object["description"], !(description is String || description is NSNull) {
            throw fail("description", "\(Self.show(description)) is not a string")
        }
        guard let stages = object["stages"] as? [Any], !stages.isEmpty else {
            throw fail("stages", "must be a non-empty array of stage objects")
        }
        var definition = PipelineDefinition(name: name, description: object["description"] as? String ?? "", probe: nil, thumbnail: nil, motion: nil)
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
            case .sniff: definition.sniff = try read(Self.sniff, from: stage, at: at)
            case .copy: definition.copy = try read(Self.copy, from: stage, at: at)
            case .location: definition.location = try read(Self.location, from: stage, at: at)
            case .compatible: definition.compatible = try read(Self.compatible, from: stage, at: at)
            case .probe: definition.probe = try read(Self.probe, from: stage, at: at)
            case .thumbnail: definition.thumbnail = try read(Self.thumbnail, from: stage, at: at)
            case .motion: definition.motion = try read(Self.motion, from: stage, at: at)
            case .manifest: definition.manifest = try read(Self.manifest, from: stage, at: at)
            }
        }
        for required in [StageName.sniff, .copy, .manifest] where !seen.contains(required) {
            throw fail("stages", "the \"\(required.rawValue)\" stage is required")
        }
        return definition
    }

    private func read<Settings: DefaultInitializable>(_ settings: [Setting<Settings>], from object: [String: Any], at: String) throws(PipelineError) -> Settings {
        try allowOnly(object, ["stage"] + settings.map(\.key), at: at)
        var value = Settings()
        for setting in settings {
            guard let raw = object[setting.key] else { continue }
            do {
                try setting.read(raw, &value)
                try setting.check(value)
            } catch {
                throw fail("\(at).\(setting.key)", error.problem)
            }
        }
        return value
    }

    private var allStages: String { StageName.allCases.map(\.rawValue).joined(separator: ", ") }

    private func allowOnly(_ object: [String: Any], _ allowed: [String], at: String) throws(PipelineError) {
        for key in object.keys.sorted() where !allowed.contains(key) {
            let prefix = at.isEmpty ? "" : "\(at)."
            throw fail("\(prefix)\(key)", "unknown field; allowed here: \(allowed.joined(separator: ", "))")
        }
    }

    static func show(_ value: Any) -> String {
        if let s = value as? String { return "\"\(s)\"" }
        if value is NSNull { return "null" }
        return "\(value)"
    }

    // MARK: - Checking and writing

    /// One stage of a definition: its written fields, and the check of its settings.
    private struct StageFields {
        let name: StageName
        let fields: [(key: String, value: Any?)]
        let check: () throws(SettingProblem) -> Void

        init<Settings>(_ name: StageName, _ settings: [Setting<Settings>], _ value: Settings) {
            self.name = name
            fields = settings.map { ($0.key, $0.write(value)) }
            check = { () throws(SettingProblem) in
                for setting in settings {
                    do throws(SettingProblem) { try setting.check(value) } catch { throw SettingProblem(error.problem, field: setting.key) }
                }
            }
        }
    }

    /// The stages a definition has, in document order.
    private static func stages(of pipeline: PipelineDefinition) -> [StageFields] {
        var stages = [StageFields(.sniff, sniff, pipeline.sniff), StageFields(.copy, copy, pipeline.copy)]
        if let location = pipeline.location { stages.append(StageFields(.location, Self.location, location)) }
        if let probe = pipeline.probe { stages.append(StageFields(.probe, Self.probe, probe)) }
        if let thumbnail = pipeline.thumbnail { stages.append(StageFields(.thumbnail, Self.thumbnail, thumbnail)) }
        if let motion = pipeline.motion { stages.append(StageFields(.motion, Self.motion, motion)) }
        if let compatible = pipeline.compatible { stages.append(StageFields(.compatible, Self.compatible, compatible)) }
        stages.append(StageFields(.manifest, manifest, pipeline.manifest))
        return stages
    }

    /// Every setting of `pipeline` within what a document allows; the error names
    /// the field as the document would (`stages[3].size`).
    func check(_ pipeline: PipelineDefinition) throws(PipelineError) {
        guard !pipeline.name.isEmpty else { throw fail("name", "must be a non-empty string") }
        for (index, stage) in Self.stages(of: pipeline).enumerated() {
            do throws(SettingProblem) { try stage.check() } catch { throw fail("stages[\(index)].\(error.field ?? "")", error.problem) }
        }
    }

    /// The document for `pipeline`, every setting spelled out, keys sorted: stored
    /// with each batch and read back identically.
    static func encode(_ pipeline: PipelineDefinition) -> String {
        let stageObjects: [[String: Any]] = stages(of: pipeline).map { stage in
            var object: [String: Any] = ["stage": stage.name.rawValue]
            for field in stage.fields { if let value = field.value { object[field.key] = value } }
            return object
        }
        let document: [String: Any] = ["name": pipeline.name, "description": pipeline.description, "stages": stageObjects]
        let data = try! JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}

/// Settings structs a document fills in, starting from their defaults.
protocol DefaultInitializable { init() }
extension PipelineDefinition.SniffSettings: DefaultInitializable {}
extension PipelineDefinition.CopySettings: DefaultInitializable {}
extension PipelineDefinition.ProbeSettings: DefaultInitializable {}
extension PipelineDefinition.ThumbnailSettings: DefaultInitializable {}
extension PipelineDefinition.MotionSettings: DefaultInitializable {}
extension PipelineDefinition.LocationSettings: DefaultInitializable {}
extension PipelineDefinition.CompatibleSettings: DefaultInitializable {}
extension PipelineDefinition.ManifestSettings: DefaultInitializable {}

/// What is wrong with one setting's value, and what is allowed.
struct SettingProblem: Error {
    let problem: String
    /// The setting's key, when the problem was found checking a whole stage.
    var field: String?

    init(_ problem: String, field: String? = nil) {
        self.problem = problem
        self.field = field
    }
}

/// One setting of one stage: its key in a document, how a JSON value is read
/// into the settings (type checked), how it is checked (range, allowed
/// values), and how it is written back.
struct Setting<Settings>: Sendable {
    let key: String
    let read: @Sendable (Any, inout Settings) throws(SettingProblem) -> Void
    let write: @Sendable (Settings) -> Any?
    let check: @Sendable (Settings) throws(SettingProblem) -> Void

    static func custom(
        _ key: String, read: @escaping @Sendable (Any, inout Settings) throws(SettingProblem) -> Void, write: @escaping @Sendable (Settings) -> Any?,
        check: @escaping @Sendable (Settings) throws(SettingProblem) -> Void
    ) -> Setting {
        Setting(key: key, read: read, write: write, check: check)
    }

    /// An integer in `range`.
    static func integer(_ key: String, _ path: WritableKeyPath<Settings, Int> & Sendable, in range: ClosedRange<Int>) -> Setting {
        let allowed = "allowed: \(range.lowerBound)...\(range.upperBound)"
        return Setting(
            key: key,
            read: { value, settings throws(SettingProblem) in
                guard let number = value as? NSNumber, !JSONValue.isBoolean(number), number.doubleValue == number.doubleValue.rounded(),
                    abs(number.doubleValue) < 1e15
                else { throw SettingProblem("\(PipelineDocument.show(value)) is not an integer; \(allowed)") }
                settings[keyPath: path] = number.intValue
            },
            write: { $0[keyPath: path] },
            check: { settings throws(SettingProblem) in
                let value = settings[keyPath: path]
                guard range.contains(value) else { throw SettingProblem("\(value) is out of range; \(allowed)") }
            })
    }

    /// A number in `range`.
    static func number(_ key: String, _ path: WritableKeyPath<Settings, Double> & Sendable, in range: ClosedRange<Double>) -> Setting {
        let allowed = "allowed: \(range.lowerBound)...\(range.upperBound)"
        return Setting(
            key: key,
            read: { value, settings throws(SettingProblem) in
                guard let number = value as? NSNumber, !JSONValue.isBoolean(number) else {
                    throw SettingProblem("\(PipelineDocument.show(value)) is not a number; \(allowed)")
                }
                settings[keyPath: path] = number.doubleValue
            },
            write: { $0[keyPath: path] },
            check: { settings throws(SettingProblem) in
                let value = settings[keyPath: path]
                guard range.contains(value) else { throw SettingProblem("\(value) is out of range; \(allowed)") }
            })
    }

    /// `true` or `false`.
    static func boolean(_ key: String, _ path: WritableKeyPath<Settings, Bool> & Sendable) -> Setting {
        Setting(
            key: key,
            read: { value, settings throws(SettingProblem) in
                guard let number = value as? NSNumber, JSONValue.isBoolean(number) else {
                    throw SettingProblem("\(PipelineDocument.show(value)) is not allowed; allowed: true, false")
                }
                settings[keyPath: path] = number.boolValue
            },
            write: { $0[keyPath: path] }, check: { _ in })
    }

    /// One of an enumeration's values, by name.
    static func choice<Value: RawRepresentable & CaseIterable & Sendable>(_ key: String, _ path: WritableKeyPath<Settings, Value> & Sendable) -> Setting
    where Value.RawValue == String {
        let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
        return Setting(
            key: key,
            read: { value, settings throws(SettingProblem) in
                guard let raw = value as? String, let parsed = Value(rawValue: raw) else {
                    throw SettingProblem("\(PipelineDocument.show(value)) is not allowed; allowed: \(allowed)")
                }
                settings[keyPath: path] = parsed
            },
            write: { $0[keyPath: path].rawValue }, check: { _ in })
    }

    /// A non-empty set of an enumeration's values, as an array of names.
    static func choices<Value: RawRepresentable & CaseIterable & Hashable & Sendable>(_ key: String, _ path: WritableKeyPath<Settings, Set<Value>> & Sendable) -> Setting
    where Value.RawValue == String {
        let allowed = "allowed values: " + Value.allCases.map(\.rawValue).joined(separator: ", ")
        return Setting(
            key: key,
            read: { value, settings throws(SettingProblem) in
                guard let list = value as? [String], !list.isEmpty else { throw SettingProblem("must be a non-empty array; \(allowed)") }
                var set = Set<Value>()
                for name in list {
                    guard let parsed = Value(rawValue: name) else { throw SettingProblem("unknown kind \"\(name)\"; \(allowed)") }
                    set.insert(parsed)
                }
                settings[keyPath: path] = set
            },
            write: { settings in Value.allCases.filter(settings[keyPath: path].contains).map(\.rawValue) },
            check: { settings throws(SettingProblem) in
                if settings[keyPath: path].isEmpty { throw SettingProblem("must be a non-empty array; \(allowed)") }
            })
    }

    /// A value that has one allowed spelling (e.g. the thumbnail `format`, `jpeg`).
    static func constant(_ key: String, _ only: String) -> Setting {
        Setting(
            key: key,
            read: { value, _ throws(SettingProblem) in
                guard value as? String == only else { throw SettingProblem("\(PipelineDocument.show(value)) is not supported; allowed: \"\(only)\"") }
            },
            write: { _ in only }, check: { _ in })
    }
}
