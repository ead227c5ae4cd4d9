import Foundation
import MediaFormats
import ShareIngest
import TestSupport
import Testing

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
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy", "threads": 2}, {"stage": "manifest"}]}"#,
            "stages[1].threads", "unknown field"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "quality": 150}, {"stage": "manifest"}]}"#,
            "stages[2].quality", "1...100"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "manifest", "schema": "v3"}]}"#,
            "stages[2].schema", "legacy, v2"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "copy"}, {"stage": "sniff"}, {"stage": "manifest"}]}"#,
            "stages[1].stage", "cannot come after"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}]}"#, "stages",
            "\"manifest\" stage is required"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "manifest", "key": "../up"}]}"#,
            "stages[2].key", "dot"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy", "fsync": "yes"}, {"stage": "manifest"}]}"#,
            "stages[1].fsync", "true, false"
        ),
        (#"{"name": "x", "color": "red", "stages": []}"#, "color", "unknown field"),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "for": ["sound"]}, {"stage": "manifest"}]}"#,
            "stages[2].for", "image, video, document, audio"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "motion", "livePhotos": 1}, {"stage": "manifest"}]}"#,
            "stages[2].livePhotos", "true, false"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "manifest"}, {"stage": "motion"}]}"#,
            "stages[3].stage", "cannot come after"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "sizes": [8, 360]}, {"stage": "manifest"}]}"#,
            "stages[2].sizes", "8 is out of range; allowed: an array of 1 to 4 different integers in 16...4096"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "sizes": [360, 1440, 360]}, {"stage": "manifest"}]}"#,
            "stages[2].sizes", "360 appears twice"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "sizes": [100, 200, 300, 400, 500]}, {"stage": "manifest"}]}"#,
            "stages[2].sizes", "has 5 sizes"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "sizes": []}, {"stage": "manifest"}]}"#,
            "stages[2].sizes", "must not be empty"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "sizes": 360}, {"stage": "manifest"}]}"#,
            "stages[2].sizes", "is not an array"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "sizes": [360.5]}, {"stage": "manifest"}]}"#,
            "stages[2].sizes", "is not an integer"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "size": 5000}, {"stage": "manifest"}]}"#,
            "stages[2].size", "16...4096"
        ),
        (
            #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", "format": "png"}, {"stage": "manifest"}]}"#,
            "stages[2].format", "jpeg, webp"
        ),
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

    /// Issue 33: `sizes` (the smallest is the thumbnail, the others previews from
    /// the same decode) and `format`; the older `size` means one size.
    @Test func thumbnailSizesAndFormat() throws {
        let standard = PipelineDefinition.standard
        #expect(standard.thumbnail?.sizes == [360] && standard.thumbnail?.format == .jpeg)
        let stages = #"{"stage": "sniff"}, {"stage": "copy"}, {"stage": "thumbnail", %@}, {"stage": "manifest"}"#
        func load(_ settings: String) throws -> PipelineDefinition {
            try PipelineDefinition.decode(
                Data(#"{"name": "x", "stages": [\#(stages.replacingOccurrences(of: "%@", with: settings))]}"#.utf8),
                file: "my.json")
        }
        let two = try load(#""sizes": [1440, 360], "format": "webp""#)
        #expect(two.thumbnail?.sizes == [360, 1440] && two.thumbnail?.size == 360 && two.thumbnail?.format == .webp)
        // What is stored with a batch reads back the same.
        #expect(try PipelineDefinition.decode(Data(two.encodedJSON().utf8), file: "stored") == two)
        #expect(
            two.encodedJSON().contains(#""sizes":[360,1440]"#) && two.encodedJSON().contains(#""format":"webp""#),
            "\(two.encodedJSON())")
        let one = try load(#""size": 200"#)
        #expect(one.thumbnail?.sizes == [200] && one.thumbnail?.format == .jpeg)
        #expect(try PipelineDefinition.decode(Data(one.encodedJSON().utf8), file: "stored") == one)
        var set = PipelineDefinition.standard
        set.thumbnail?.size = 200
        #expect(set.thumbnail?.sizes == [200])
        set.thumbnail?.sizes = [200, 200]
        #expect(throws: PipelineError.self) { try set.validate() }
    }

    @Test func unknownNameListsTheBuiltIns() {
        #expect(throws: PipelineError.self) { try PipelineDefinition.load("fancy") }
    }

    /// The capture-date range travels with a batch's pipeline (to workers, to a
    /// resume): a document's `takenAfter`/`takenBefore` are read, written back
    /// as given, and refused when they are no date or hold no time between them.
    @Test func aCaptureDateRangeIsReadWrittenAndChecked() throws {
        func manifest(_ settings: String) -> Data {
            Data(
                #"{"name": "x", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "manifest", \#(settings)}]}"#
                    .utf8)
        }
        let pipeline = try PipelineDefinition.decode(
            manifest(#""takenAfter": "2024-01-01", "takenBefore": "2025-01-01T00:00:00+02:00""#), file: "my.json")
        #expect(
            pipeline.manifest.takenAfter?.text == "2024-01-01"
                && pipeline.manifest.takenBefore?.text == "2025-01-01T00:00:00+02:00")
        #expect(try PipelineDefinition.decode(Data(pipeline.encodedJSON().utf8), file: "stored") == pipeline)
        #expect(!PipelineDefinition.standard.encodedJSON().contains("taken"), "no range, no key")
        for (settings, field, problem) in [
            (#""takenAfter": "2024-02-30""#, "stages[2].takenAfter", "is not a date"),
            (#""takenAfter": 2024"#, "stages[2].takenAfter", "is not a string"),
            (
                #""takenAfter": "2025-01-01", "takenBefore": "2025-01-01""#, "stages[2].takenBefore",
                "is not later than takenAfter"
            ),
        ] {
            do {
                _ = try PipelineDefinition.decode(manifest(settings), file: "my.json")
                Issue.record("\(settings) was accepted")
            } catch {
                #expect(error.field == field && error.problem.contains(problem), "\(settings): \(error)")
            }
        }
    }
}
