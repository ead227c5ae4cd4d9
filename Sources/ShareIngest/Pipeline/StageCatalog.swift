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
    /// The stage it runs right after (nil: the first); the fan-in (`manifest`) runs last.
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
    let read: @Sendable (_ object: [String: Any], _ field: (String) -> String) throws(SettingProblem) -> AnyStageSettings
    let fields: @Sendable (AnyStageSettings) -> [(key: String, value: Any?)]
    let check: @Sendable (AnyStageSettings) throws(SettingProblem) -> Void
    /// Worker threads its settings ask for (1 for the fan-in).
    let workers: @Sendable (AnyStageSettings) -> Int

    /// A stage named `name` with settings of type `Settings`, described by
    /// `document` (key, allowed values; the default is the type's own), run after
    /// `after`; `make` builds it for a pipeline from its settings.
    init<Settings: StageSettings>(
        _ name: StageName, after: StageName?, required: Bool = false, settings: Settings.Type, document: [Setting<Settings>],
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
                do throws(SettingProblem) { try setting.check(value) } catch { throw SettingProblem(error.problem, field: setting.key) }
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
/// last). ``builtin`` holds share-ingest's own; ``adding(_:)`` places another
/// right after the stage it names.
struct StageCatalog: Sendable, Hashable {
    /// The definitions, in run order.
    let definitions: [StageDefinition]

    /// share-ingest's stages: sniff, copy, location, probe, thumbnail, motion,
    /// compatible, and the manifest's fan-in.
    static let builtin: StageCatalog = {
        var catalog = StageCatalog(definitions: [ManifestStage.definition])
        for definition in [
            SniffStage.definition, CopyStage.definition, LocationStage.definition, ProbeStage.definition, ThumbnailStage.definition,
            MotionStage.definition, CompatibleStage.definition,
        ] {
            catalog = try! catalog.adding(definition)
        }
        return catalog
    }()

    /// Why a definition cannot join a catalog.
    struct Conflict: Error, CustomStringConvertible {
        let description: String
    }

    /// This catalog with `definition` placed right after the stage it names
    /// (first when it names none), before the fan-in.
    func adding(_ definition: StageDefinition) throws(Conflict) -> StageCatalog {
        guard self.definition(named: definition.name.rawValue) == nil else { throw Conflict(description: "a stage named \(definition.name) exists already") }
        var definitions = definitions
        if let after = definition.after {
            guard let position = definitions.firstIndex(where: { $0.name == after }), after != .manifest else {
                throw Conflict(description: "stage \(definition.name) runs after \(after), which is not an item stage of this catalog")
            }
            definitions.insert(definition, at: position + 1)
        } else {
            definitions.insert(definition, at: 0)
        }
        return StageCatalog(definitions: definitions)
    }

    /// Every stage's name, in run order.
    var names: [StageName] { definitions.map(\.name) }

    func definition(named name: String) -> StageDefinition? { definitions.first { $0.name.rawValue == name } }
    func definition(_ name: StageName) -> StageDefinition? { definition(named: name.rawValue) }

    /// Where `name` runs among the catalog's stages (nil: not one of them).
    func position(of name: StageName) -> Int? { definitions.firstIndex { $0.name == name } }

    static func == (a: StageCatalog, b: StageCatalog) -> Bool { a.names == b.names }
    func hash(into hasher: inout Hasher) { hasher.combine(names) }
}
