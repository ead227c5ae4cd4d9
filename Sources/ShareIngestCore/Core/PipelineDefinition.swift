import Foundation
import MediaFormats
import ShareManifest
import SystemCalls

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
/// pipeline.location = .init()                         // location privacy on
/// pipeline.compatible = .init()                       // JPEG copies of HEIC, AVIF, JPEG XL, RAW
/// let ingestor = ShareIngestor(container: container, pipeline: pipeline)
/// ```
/// A definition built in code is validated like a file when a batch starts (an
/// out-of-range setting throws ``ShareIngestError/pipeline(_:)``).
///
/// Each stage's settings type, document table and place in the order are its
/// ``StageDefinition``'s (beside the stage, in `Stages/`); a pipeline holds the
/// settings of the stages it has, and the catalog they come from.
public struct PipelineDefinition: Sendable, Hashable {
    /// The name reports and the journal show (`default`, `share-extension`, a file's `name`).
    public var name: String
    /// What the pipeline is for, in one sentence.
    public var description: String
    /// The settings of each stage the pipeline has, by name.
    private var stageSettings: [StageName: AnyStageSettings] = [:]
    /// The stages it can have (the built-in ones unless a caller added its own).
    var catalog: StageCatalog

    /// The `sniff` stage (required).
    public var sniff: SniffSettings {
        get { settings(SniffSettings.self, of: .sniff) ?? .init() }
        set { set(newValue, for: .sniff) }
    }
    /// The `copy` stage (required).
    public var copy: CopySettings {
        get { settings(CopySettings.self, of: .copy) ?? .init() }
        set { set(newValue, for: .copy) }
    }
    /// Location privacy: the copies carry no location. Nil (the default): they
    /// are copied as they are.
    public var location: LocationSettings? {
        get { settings(LocationSettings.self, of: .location) }
        set { set(newValue, for: .location) }
    }
    /// Nil when the pipeline has no probe stage (types then come from the content alone).
    public var probe: ProbeSettings? {
        get { settings(ProbeSettings.self, of: .probe) }
        set { set(newValue, for: .probe) }
    }
    /// Nil when the pipeline makes no thumbnails.
    public var thumbnail: ThumbnailSettings? {
        get { settings(ThumbnailSettings.self, of: .thumbnail) }
        set { set(newValue, for: .thumbnail) }
    }
    /// Nil when the pipeline neither extracts motion photos' videos nor pairs Live Photos.
    public var motion: MotionSettings? {
        get { settings(MotionSettings.self, of: .motion) }
        set { set(newValue, for: .motion) }
    }
    /// Whether a stage decodes media (probe, thumbnail or motion): the decoder
    /// is prepared for the batch, and told of items to decode, only then.
    var decodes: Bool { probe != nil || thumbnail != nil || motion != nil }
    /// Nil (the default) when the pipeline makes no compatible copies.
    public var compatible: CompatibleSettings? {
        get { settings(CompatibleSettings.self, of: .compatible) }
        set { set(newValue, for: .compatible) }
    }
    /// The `manifest` stage (required, last).
    public var manifest: ManifestSettings {
        get { settings(ManifestSettings.self, of: .manifest) ?? .init() }
        set { set(newValue, for: .manifest) }
    }

    /// A pipeline from its stages' settings; every argument has the documented
    /// default, so `PipelineDefinition(name: "mine")` has every stage of `default`.
    public init(
        name: String, description: String = "", sniff: SniffSettings = .init(), copy: CopySettings = .init(),
        location: LocationSettings? = nil, probe: ProbeSettings? = .init(), thumbnail: ThumbnailSettings? = .init(),
        motion: MotionSettings? = .init(),
        compatible: CompatibleSettings? = nil, manifest: ManifestSettings = .init()
    ) {
        self.name = name
        self.description = description
        self.catalog = .builtin
        self.sniff = sniff
        self.copy = copy
        self.location = location
        self.probe = probe
        self.thumbnail = thumbnail
        self.motion = motion
        self.compatible = compatible
        self.manifest = manifest
    }

    /// A pipeline of `catalog`'s stages with no stage yet (the document adds them).
    init(name: String, description: String, catalog: StageCatalog) {
        self.name = name
        self.description = description
        self.catalog = catalog
    }

    /// The settings of the stage `name`, when the pipeline has it.
    func settings<Settings: StageSettings>(_ type: Settings.Type, of name: StageName) -> Settings? {
        stageSettings[name]?.value as? Settings
    }

    /// Gives the pipeline the stage `name` with `settings`, or (nil) removes it.
    mutating func set<Settings: StageSettings>(_ settings: Settings?, for name: StageName) {
        stageSettings[name] = settings.map(AnyStageSettings.init)
    }

    /// The same, for settings of a type known only to their stage's definition.
    mutating func setSettings(_ settings: AnyStageSettings?, for name: StageName) {
        stageSettings[name] = settings
    }

    /// The settings of every stage the pipeline has, in run order (the fan-in last).
    var stages: [(definition: StageDefinition, settings: AnyStageSettings)] {
        catalog.definitions.compactMap { definition in stageSettings[definition.name].map { (definition, $0) } }
    }

    /// The stages in order, as item stages run them (manifest excluded: it is the fan-in).
    public var itemStages: [StageName] { stages.filter { $0.definition.make != nil }.map(\.definition.name) }

    /// How many worker threads `stage` runs on (0 for a stage the pipeline lacks).
    public func workers(for stage: StageName) -> Int {
        guard let settings = stageSettings[stage], let definition = catalog.definition(stage) else { return 0 }
        return definition.workers(settings)
    }

    /// The item stages this pipeline runs, in order, built from its settings by
    /// their definitions: the one place stages are made, for the local runner
    /// and for remote workers alike.
    func makeItemStages() -> [any PipelineStage] {
        stages.compactMap { $0.definition.make?(self) }
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
    public static let builtinNames = BuiltinPipelines.json.keys.sorted()

    /// A built-in pipeline by name, or a pipeline file by path (anything with a `/`
    /// or ending in `.json`).
    public static func load(_ nameOrPath: String) throws(PipelineError) -> PipelineDefinition {
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") {
            guard let data = try? Data(FileSystem.readWholeFile(nameOrPath)) else {
                throw PipelineError(
                    file: nameOrPath, field: "(file)", problem: "cannot be read (missing or not a file)")
            }
            return try decode(data, file: nameOrPath)
        }
        guard let text = BuiltinPipelines.json[nameOrPath] else {
            throw PipelineError(
                file: nameOrPath, field: "(name)",
                problem:
                    "no built-in pipeline has this name; built in: \(builtinNames.joined(separator: ", ")); or give a path to a .json file"
            )
        }
        return try decode(Data(text.utf8), file: "built-in pipeline \(nameOrPath)")
    }

    /// The `default` pipeline.
    public static var standard: PipelineDefinition { try! load("default") }

    /// Decodes and validates a pipeline document (see ``PipelineDocument``).
    public static func decode(_ data: Data, file: String) throws(PipelineError) -> PipelineDefinition {
        try decode(data, file: file, catalog: .builtin)
    }

    /// Decodes a pipeline document whose stages come from `catalog`.
    static func decode(_ data: Data, file: String, catalog: StageCatalog) throws(PipelineError) -> PipelineDefinition {
        try PipelineDocument(file: file, catalog: catalog).decode(data)
    }

    /// The definition as a pipeline document (every setting spelled out), so it can
    /// be stored with a batch and read back identically.
    public func encodedJSON() -> String { PipelineDocument.encode(self) }

    /// Checks every setting against what the document allows, for a definition
    /// built in code (a batch stores it as JSON, and a resumed batch must read it
    /// back): the same rules as a file, naming the same fields.
    public func validate() throws(PipelineError) {
        try PipelineDocument(file: "pipeline \(name)", catalog: catalog).check(self)
    }
}
