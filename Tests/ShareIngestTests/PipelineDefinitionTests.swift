import Foundation
import ShareIngest
import TestSupport
import Testing
import MediaFormats

@Suite struct PipelineDefinitionTests {
    @Test(arguments: PipelineDefinition.builtinNames)
    func builtInPipelinesMatchTheFilesInPipelinesFolder(name: String) throws {
        let file = Fixtures.packageRoot.appendingPathComponent("pipelines/\(name).json").path
        #expect(try PipelineDefinition.load(file) == PipelineDefinition.load(name))
    }

    @Test func defaultPipelineSettings() throws {
        let pipeline = PipelineDefinition.standard
        #expect(pipeline.itemStages == [.sniff, .copy, .probe, .thumbnail, .motion])
        // Motion photos' videos extracted, Live Photos paired (issue 24).
        #expect(pipeline.motion?.extract == true && pipeline.motion?.livePhotos == true)
        #expect(pipeline.thumbnail?.size == 360)
        #expect(pipeline.manifest.schema == .v2)
        #expect(pipeline.manifest.key == nil)
        let legacy = try PipelineDefinition.load("share-extension")
        #expect(legacy.manifest.schema == .legacy)
        #expect(legacy.thumbnail?.kinds == [.video])
        #expect(legacy.motion == nil)
        // Audio cover art is on in `default` (issue 13), off in the reference extension.
        #expect(pipeline.thumbnail?.kinds == [.image, .video, .document, .audio])
    }

    @Test(arguments: [
        (#"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "resize"}]}"#, "stages[1].stage", "unknown stage"),
        (#"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy", "threads": 2}, {"stage": "manifest"}]}"#, "stages[1].threads", "unknown field"),
        (#"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "quality": 150}, {"stage": "manifest"}]}"#, "stages[2].quality", "1...100"),
        (#"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "manifest", "schema": "v3"}]}"#, "stages[2].schema", "legacy, v2"),
        (#"{"name": "x", "stages": [{"stage": "copy"}, {"stage": "sniff"}, {"stage": "manifest"}]}"#, "stages[1].stage", "cannot come after"),
        (#"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}]}"#, "stages", "\"manifest\" stage is required"),
        (#"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "manifest", "key": "../up"}]}"#, "stages[2].key", "dot"),
        (#"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy", "fsync": "yes"}, {"stage": "manifest"}]}"#, "stages[1].fsync", "true, false"),
        (#"{"name": "x", "color": "red", "stages": []}"#, "color", "unknown field"),
        (#"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "for": ["sound"]}, {"stage": "manifest"}]}"#, "stages[2].for", "image, video, document, audio"),
        (#"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "motion", "livePhotos": 1}, {"stage": "manifest"}]}"#, "stages[2].livePhotos", "true, false"),
        (#"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "manifest"}, {"stage": "motion"}]}"#, "stages[3].stage", "cannot come after"),
        ("not json", "(document)", "not valid JSON"),
    ])
    func errorsNameFileFieldAndWhatIsAllowed(json: String, field: String, fragment: String) {
        do {
            _ = try PipelineDefinition.decode(Data(json.utf8), file: "my.json")
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.file == "my.json")
            #expect(error.field == field, "\(error)")
            #expect(error.problem.contains(fragment), "\(error)")
        }
    }

    @Test func unknownNameListsTheBuiltIns() {
        #expect(throws: PipelineError.self) { try PipelineDefinition.load("fancy") }
    }
}
