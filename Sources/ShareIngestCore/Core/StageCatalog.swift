import Foundation

/// The settings of one stage: what its object in a pipeline document holds.
/// `init()` gives the documented defaults.
public protocol StageSettings: Sendable, Hashable {
    /// The documented defaults.
    init()
}

/// One stage, declared once (in its own file, beside the stage): its name, its
/// settings with their document table, where it stands in the order, how it is
/// made for a pipeline, and which of the item's recorded fields it writes.
/// Everything that lists stages (``StageName``, a pipeline's stages and workers,
/// the pipeline document, the runners) derives from these definitions, through
/// the ``StageCatalog`` that holds them.
///
/// A stage that is not built in is defined the same way and added to a catalog
/// (``StageCatalog/adding(_:)``); a pipeline decoded with that catalog runs it in
/// every mode (`StageDefinitionTests` defines one in the test target).
struct StageDefinition: Sendable {
    let name: StageName
    /// The stage it runs after (nil: the first item stage); the fan-in
    /// (`manifest`) names none and runs last. Where this puts it is the
    /// catalog's to work out (``StageCatalog``), whatever the order stages are
    /// registered in.
    let after: StageName?
    /// True for the stages every pipeline has (`sniff`, `copy`, `manifest`).
    let required: Bool
    /// The item's recorded fields this stage writes (for people, and for the
    /// check that every field has an owner).
    let records: [ItemState.CodingKeys]
    /// Makes the stage for a pipeline that has it; nil for the fan-in, which
    /// ``BatchCompletion`` runs once per batch.
    let make: (@Sendable (PipelineDefinition) -> any PipelineStage)?

    /// The document keys of its settings, in their table's order.
    let keys: [String]
    /// Its settings at their defaults.
    let defaults: AnyStageSettings
    let read:
        @Sendable (_ object: [String: Any], _ field: (String) -> String) throws(SettingProblem) -> AnyStageSettings
    let fields: @Sendable (AnyStageSettings) -> [(key: String, value: Any?)]
    let check: @Sendable (AnyStageSettings) throws(SettingProblem) -> Void
    /// Worker threads its settings ask for (1 for the fan-in).
    let workers: @Sendable (AnyStageSettings) -> Int

    /// True for the fan-in (no factory: ``BatchCompletion`` runs it once per batch).
    var isFanIn: Bool { make == nil }

    /// A stage named `name` with settings of type `Settings`, described by
    /// `document` (key, allowed values; the default is the type's own), run after
    /// `after`; `make` builds it for a pipeline from its settings.
    init<Settings: StageSettings>(
        _ name: StageName, after: StageName?, required: Bool = false, settings: Settings.Type,
        document: [Setting<Settings>],
        workers: (@Sendable (Settings) -> Int)?, records: [ItemState.CodingKeys],
        make: (@Sendable (Settings, PipelineDefinition) -> any PipelineStage)?
    ) {
        self.name = name
        self.after = after
        self.required = required
        self.records = records
        self.make = make.map { make in
            { @Sendable pipeline in make(pipeline.settings(Settings.self, of: name) ?? Settings(), pipeline) }
        }
        keys = document.map(\.key)
        defaults = AnyStageSettings(Settings())
        read = { object, field throws(SettingProblem) in
            var value = Settings()
            for setting in document {
                guard let raw = object[setting.key] else { continue }
                do throws(SettingProblem) {
                    try setting.read(raw, &value)
                    try setting.check(value)
                } catch {
                    throw SettingProblem(error.problem, field: setting.key)
                }
            }
            return AnyStageSettings(value)
        }
        fields = { settings in
            guard let value = settings.value as? Settings else { return [] }
            return document.map { ($0.key, $0.write(value)) }
        }
        check = { settings throws(SettingProblem) in
            guard let value = settings.value as? Settings else { throw SettingProblem("settings of another stage") }
            for setting in document {
                do throws(SettingProblem) { try setting.check(value) } catch {
                    throw SettingProblem(error.problem, field: setting.key)
                }
            }
        }
        self.workers = { settings in (settings.value as? Settings).flatMap { value in workers?(value) } ?? 1 }
    }
}

/// One stage's settings, whatever their type: what a pipeline keeps per stage.
struct AnyStageSettings: Hashable, Sendable {
    let value: any StageSettings

    init(_ value: any StageSettings) { self.value = value }

    static func == (a: AnyStageSettings, b: AnyStageSettings) -> Bool { AnyHashable(a.value) == AnyHashable(b.value) }
    func hash(into hasher: inout Hasher) { hasher.combine(AnyHashable(value)) }
}

/// The stages pipelines can be made of, in the order they run (the fan-in
/// last). ``builtin`` holds share-ingest's own; ``adding(_:)`` registers another.
///
/// The order follows from the definitions alone (``StageDefinition/after``),
/// whatever order they are registered in: each item stage runs after the one
/// it names, and right after it unless another stage names the same one.
/// Then, of the stages that name it, those fewer stages follow run first (a
/// stage nothing runs after, before a chain), and equals by name; each is
/// followed at once by the stages that follow it. One item stage names none
/// (it runs first); the fan-in (the definition with no factory: `manifest`)
/// names none and runs last. A stage that names one the catalog lacks, the
/// fan-in, or (through others) itself is refused when it is registered.
struct StageCatalog: Sendable, Hashable {
    /// The definitions, in run order.
    let definitions: [StageDefinition]
    /// Every stage's name, in run order (kept: a worker asks for them with every job).
    let names: [StageName]
    /// Each stage's place in the run order.
    private let positions: [StageName: Int]

    /// Why a definition cannot join a catalog.
    struct Conflict: Error, CustomStringConvertible, Equatable {
        let description: String
    }

    /// A catalog of `definitions` (in any order), each placed as its
    /// definition says; throws when they do not make one order.
    init(_ definitions: [StageDefinition]) throws(Conflict) {
        let ordered = try Self.order(definitions)
        self.definitions = ordered
        names = ordered.map(\.name)
        positions = Dictionary(uniqueKeysWithValues: ordered.enumerated().map { ($1.name, $0) })
    }

    /// This catalog with `definition` registered too.
    func adding(_ definition: StageDefinition) throws(Conflict) -> StageCatalog {
        try StageCatalog(definitions + [definition])
    }

    /// The run order of `definitions` (see the type's summary).
    private static func order(_ definitions: [StageDefinition]) throws(Conflict) -> [StageDefinition] {
        var byName: [StageName: StageDefinition] = [:]
        for definition in definitions {
            guard byName[definition.name] == nil else {
                throw Conflict(description: "a stage named \(definition.name) exists already")
            }
            byName[definition.name] = definition
        }
        let fanIns = definitions.filter(\.isFanIn)
        guard fanIns.count == 1, let fanIn = fanIns.first else {
            throw Conflict(
                description: "a catalog has one fan-in (a stage without a factory), not \(fanIns.map(\.name.rawValue))")
        }
        if let after = fanIn.after {
            throw Conflict(
                description: "the fan-in \(fanIn.name) runs last, after every item stage: it cannot name \(after)")
        }
        let stages = definitions.filter { !$0.isFanIn }
        var followers: [StageName: [StageDefinition]] = [:]
        var first: [StageDefinition] = []
        for stage in stages {
            guard let after = stage.after else {
                first.append(stage)
                continue
            }
            guard let named = byName[after], !named.isFanIn else {
                throw Conflict(
                    description: "stage \(stage.name) runs after \(after), which is not an item stage of this catalog")
            }
            followers[after, default: []].append(stage)
        }
        guard first.count == 1, let root = first.first else {
            throw Conflict(
                description:
                    "one item stage runs first (names no stage to run after), not \(first.map(\.name.rawValue).sorted())"
            )
        }
        func following(_ name: StageName) -> Int { (followers[name] ?? []).reduce(0) { $0 + 1 + following($1.name) } }
        var ordered: [StageDefinition] = []
        var visiting: [StageDefinition] = [root]
        while let stage = visiting.popLast() {
            ordered.append(stage)
            let next = (followers[stage.name] ?? []).sorted {
                (following($0.name), $0.name.rawValue) < (following($1.name), $1.name.rawValue)
            }
            visiting.append(contentsOf: next.reversed())
        }
        guard ordered.count == stages.count else {
            // What the first stage does not lead to runs after itself, through others.
            let placed = Set(ordered.map(\.name))
            let loop = stages.filter { !placed.contains($0.name) }.map {
                "\($0.name) after \($0.after?.rawValue ?? "")"
            }.sorted()
            throw Conflict(
                description: "stages that run after one another in a circle: \(loop.joined(separator: ", "))")
        }
        return ordered + [fanIn]
    }

    /// The item stages' names (every stage but the fan-in), in run order.
    var itemStages: [StageName] { definitions.filter { !$0.isFanIn }.map(\.name) }

    func definition(named name: String) -> StageDefinition? { definition(StageName(name)) }
    func definition(_ name: StageName) -> StageDefinition? { positions[name].map { definitions[$0] } }

    /// Where `name` runs among the catalog's stages (nil: not one of them).
    func position(of name: StageName) -> Int? { positions[name] }

    /// `names` in this catalog's run order; names it does not have come last, by name.
    func inRunOrder(_ names: some Sequence<StageName>) -> [StageName] {
        names.sorted { (position(of: $0) ?? .max, $0.rawValue) < (position(of: $1) ?? .max, $1.rawValue) }
    }

    static func == (a: StageCatalog, b: StageCatalog) -> Bool { a.names == b.names }
    func hash(into hasher: inout Hasher) { hasher.combine(names) }
}
