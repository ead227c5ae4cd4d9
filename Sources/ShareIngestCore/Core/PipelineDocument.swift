import Foundation
import MediaFormats
import ShareManifest

/// The pipeline document (`pipelines/*.json`): an object with `name`,
/// `description` and `stages`, an array of stage objects in run order. Each
/// stage's settings are described once, in its ``StageDefinition`` (key,
/// allowed values, where the value lives; the default is the settings type's
/// own). Reading a document, writing one and ``PipelineDefinition/validate()``
/// are all derived from those descriptions, so a setting cannot be accepted by
/// one and unknown to another.
struct PipelineDocument {
    /// The file (or `built-in pipeline <name>`, `pipeline <name>`), for messages.
    let file: String
    /// The stages a document may name.
    let catalog: StageCatalog

    // MARK: - Reading

    /// Where `data` has a comma followed (after white space) by `]` or `}`,
    /// outside strings: its line and column (1-based), if anywhere.
    static func trailingComma(in data: Data) -> (line: Int, column: Int)? {
        var inString = false
        var escaped = false
        var line = 1
        var column = 0
        var comma: (line: Int, column: Int)?
        for byte in data {
            column += 1
            if byte == UInt8(ascii: "\n") { (line, column) = (line + 1, 0) }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                comma = nil
            case UInt8(ascii: ","): comma = (line, column)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): if let comma { return comma }
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): break
            default: comma = nil
            }
        }
        return nil
    }

    func fail(_ field: String, _ problem: String) -> PipelineError {
        PipelineError(file: file, field: field, problem: problem)
    }

    /// Decodes and validates a document; every error names its field and what is allowed.
    func decode(_ data: Data) throws(PipelineError) -> PipelineDefinition {
        // Foundation's parser accepts a trailing comma, which JSON does not:
        // such a file must be refused here, not read as something else.
        if let (line, column) = Self.trailingComma(in: data) {
            throw fail(
                "(document)",
                "not valid JSON: a comma before a closing bracket or brace at line \(line), column \(column)")
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            throw fail("(document)", "not valid JSON: \(detail)")
        }
        guard let object = root as? [String: Any] else { throw fail("(document)", "must be a JSON object") }
        try allowOnly(object, ["name", "description", "stages"], at: "")
        guard let name = object["name"] as? String, !name.isEmpty else {
            throw fail("name", "must be a non-empty string")
        }
        if let description = object["description"], !(description is String || description is NSNull) {
            throw fail("description", "\(Self.show(description)) is not a string")
        }
        guard let stages = object["stages"] as? [Any], !stages.isEmpty else {
            throw fail("stages", "must be a non-empty array of stage objects")
        }
        var pipeline = PipelineDefinition(
            name: name, description: object["description"] as? String ?? "", catalog: catalog)
        var seen: [StageName] = []
        for (index, element) in stages.enumerated() {
            let at = "stages[\(index)]"
            guard let stage = element as? [String: Any] else {
                throw fail(at, "must be an object with a \"stage\" field")
            }
            guard let stageName = stage["stage"] as? String else {
                throw fail("\(at).stage", "is missing; allowed: \(allStages)")
            }
            guard let definition = catalog.definition(named: stageName) else {
                throw fail("\(at).stage", "unknown stage \"\(stageName)\"; allowed: \(allStages)")
            }
            if seen.contains(definition.name) { throw fail("\(at).stage", "stage \"\(stageName)\" appears twice") }
            if let last = seen.last, let position = catalog.position(of: definition.name),
                position < catalog.position(of: last) ?? 0
            {
                throw fail(
                    "\(at).stage", "\"\(stageName)\" cannot come after \"\(last.rawValue)\"; the order is \(allStages)")
            }
            seen.append(definition.name)
            try allowOnly(stage, ["stage"] + definition.keys, at: at)
            do throws(SettingProblem) {
                pipeline.setSettings(try definition.read(stage) { "\(at).\($0)" }, for: definition.name)
            } catch {
                throw fail("\(at).\(error.field ?? "")", error.problem)
            }
        }
        for required in catalog.definitions where required.required && !seen.contains(required.name) {
            throw fail("stages", "the \"\(required.name.rawValue)\" stage is required")
        }
        return pipeline
    }

    private var allStages: String { catalog.names.map(\.rawValue).joined(separator: ", ") }

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

    /// Every setting of `pipeline` within what a document allows; the error names
    /// the field as the document would (`stages[3].size`).
    func check(_ pipeline: PipelineDefinition) throws(PipelineError) {
        guard !pipeline.name.isEmpty else { throw fail("name", "must be a non-empty string") }
        for (index, stage) in pipeline.stages.enumerated() {
            do throws(SettingProblem) { try stage.definition.check(stage.settings) } catch {
                throw fail("stages[\(index)].\(error.field ?? "")", error.problem)
            }
        }
        for required in catalog.definitions
        where required.required && !pipeline.stages.contains(where: { $0.definition.name == required.name }) {
            throw fail("stages", "the \"\(required.name.rawValue)\" stage is required")
        }
    }

    /// The document for `pipeline`, every setting spelled out, keys sorted: stored
    /// with each batch and read back identically.
    static func encode(_ pipeline: PipelineDefinition) -> String {
        let stageObjects: [[String: Any]] = pipeline.stages.map { stage in
            var object: [String: Any] = ["stage": stage.definition.name.rawValue]
            for field in stage.definition.fields(stage.settings) {
                if let value = field.value { object[field.key] = value }
            }
            return object
        }
        let document: [String: Any] = [
            "name": pipeline.name, "description": pipeline.description, "stages": stageObjects,
        ]
        let data = try! JSONSerialization.data(
            withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}

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
        _ key: String, read: @escaping @Sendable (Any, inout Settings) throws(SettingProblem) -> Void,
        write: @escaping @Sendable (Settings) -> Any?,
        check: @escaping @Sendable (Settings) throws(SettingProblem) -> Void
    ) -> Setting {
        Setting(key: key, read: read, write: write, check: check)
    }

    /// An integer in `range`.
    static func integer(_ key: String, _ path: WritableKeyPath<Settings, Int> & Sendable, in range: ClosedRange<Int>)
        -> Setting
    {
        let allowed = "allowed: \(range.lowerBound)...\(range.upperBound)"
        return Setting(
            key: key,
            read: { value, settings throws(SettingProblem) in
                guard let number = value as? NSNumber, !JSONValue.isBoolean(number),
                    number.doubleValue == number.doubleValue.rounded(),
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
    static func number(
        _ key: String, _ path: WritableKeyPath<Settings, Double> & Sendable, in range: ClosedRange<Double>
    ) -> Setting {
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
    static func choice<Value: RawRepresentable & CaseIterable & Sendable>(
        _ key: String, _ path: WritableKeyPath<Settings, Value> & Sendable
    ) -> Setting
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
    static func choices<Value: RawRepresentable & CaseIterable & Hashable & Sendable>(
        _ key: String, _ path: WritableKeyPath<Settings, Set<Value>> & Sendable
    ) -> Setting
    where Value.RawValue == String {
        let allowed = "allowed values: " + Value.allCases.map(\.rawValue).joined(separator: ", ")
        return Setting(
            key: key,
            read: { value, settings throws(SettingProblem) in
                guard let list = value as? [String], !list.isEmpty else {
                    throw SettingProblem("must be a non-empty array; \(allowed)")
                }
                var set = Set<Value>()
                for name in list {
                    guard let parsed = Value(rawValue: name) else {
                        throw SettingProblem("unknown kind \"\(name)\"; \(allowed)")
                    }
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
                guard value as? String == only else {
                    throw SettingProblem("\(PipelineDocument.show(value)) is not supported; allowed: \"\(only)\"")
                }
            },
            write: { _ in only }, check: { _ in })
    }
}
