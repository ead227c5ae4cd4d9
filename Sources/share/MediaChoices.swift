import MediaFormats
import ShareIngestCore
import ShareManifest

/// The choices `share ingest` and `share watch` give over what a batch takes
/// and makes: `--size`, `--format` and `--quality` over the thumbnail stage of
/// the pipeline in use; `--taken-after` and `--taken-before` into its manifest
/// stage (so they travel with the batch's pipeline to every worker and to a
/// resumed run); `--include`, `--exclude` and `--hidden` as the selection the
/// walk applies where the batch is planned.
enum MediaChoices {
    /// The options that change a batch's pipeline or selection, as given.
    static let names = ["size", "format", "quality", "include", "exclude", "hidden", "taken-after", "taken-before"]

    /// The first of these options `parsed` holds (for a command that cannot take them, `--resume`).
    static func given(_ parsed: Arguments) -> String? {
        names.first { parsed.spec.option(named: $0)?.isFlag == true ? parsed.flag($0) : parsed.value($0) != nil }
    }

    /// `pipeline` with the thumbnail and capture-date choices of `parsed`;
    /// a choice the pipeline cannot take is a usage error saying why.
    static func apply(_ parsed: Arguments, to pipeline: PipelineDefinition) throws(UsageError) -> PipelineDefinition {
        var pipeline = pipeline
        let thumbnailOptions = ["size", "format", "quality"].filter { parsed.value($0) != nil }
        if let first = thumbnailOptions.first {
            guard var thumbnail = pipeline.thumbnail else {
                throw UsageError(
                    "--\(first): the pipeline \(pipeline.name) makes no thumbnails (it has no thumbnail stage)")
            }
            if let sizes = parsed.integers("size") { thumbnail.sizes = sizes.sorted() }
            if let format = parsed.value("format").flatMap(PreviewFormat.init(rawValue:)) {
                guard thumbnail.sizes.count > 1 else {
                    throw UsageError(
                        "--format \(format.rawValue) sets the previews' encoding, and with one size (\(thumbnail.size) px) there is no preview; the thumbnail itself stays a JPEG (give --size \(thumbnail.size),1080 for a preview)"
                    )
                }
                thumbnail.format = format
            }
            if let quality = parsed.integer("quality") { thumbnail.quality = quality }
            pipeline.thumbnail = thumbnail
        }
        let after = parsed.value("taken-after").flatMap { try? CaptureBound($0) }
        let before = parsed.value("taken-before").flatMap { try? CaptureBound($0) }
        if after != nil || before != nil {
            let option = after != nil ? "--taken-after" : "--taken-before"
            guard pipeline.manifest.schema == .v2 else {
                throw UsageError(
                    "\(option): the pipeline \(pipeline.name) writes a legacy manifest, which states no capture dates (every item would be left out)"
                )
            }
            if let after { pipeline.manifest.takenAfter = after }
            if let before { pipeline.manifest.takenBefore = before }
            if let after = pipeline.manifest.takenAfter, let before = pipeline.manifest.takenBefore {
                do { try pipeline.validate() } catch  where error.field.hasSuffix("takenBefore") {
                    throw UsageError(
                        "--taken-before \(before.text) is not later than --taken-after \(after.text): no capture time lies between them"
                    )
                } catch {
                    throw UsageError(error.description)
                }
            }
        }
        return pipeline
    }

    /// The files `parsed` asks to take (`--include`, `--exclude`, `--hidden`; checked by the parser).
    static func selection(_ parsed: Arguments) -> DropSelection {
        DropSelection(
            include: parsed.all("include").compactMap { try? PathPattern($0) },
            exclude: parsed.all("exclude").compactMap { try? PathPattern($0) },
            hidden: parsed.flag("hidden"))
    }
}
