import Foundation
// The library as a host app's tests use it: the pipeline (ShareIngestCore,
// which links no decoder, as `share` does) with MediaKit's InProcessDecoder as
// the default decoder, so `ShareIngestor(container:)` decodes in this process
// without a helper executable to ship.
import MediaFormats
import MediaKit
@_exported import ShareIngestCore
import ShareManifest

extension ShareIngestor {
    /// An ingestor for `container` that decodes in this process
    /// (``InProcessDecoder``); see ``ShareIngestor/init(container:pipeline:identifiers:now:decoder:)``
    /// to choose the decoder (DecoderIsolation's `ProcessIsolatedDecoder` decodes in sandboxed helpers).
    ///
    /// - Parameters:
    ///   - pipeline: the `default` pipeline unless given (``PipelineDefinition/load(_:)``
    ///     by name, or built in code).
    ///   - identifiers: ``IdentifierSource/sequential(startingAt:)`` or
    ///     ``IdentifierSource/seeded(_:)`` make manifests reproducible.
    ///   - now: the clock for recorded timestamps.
    public init(
        container: ContainerDirectory, pipeline: PipelineDefinition = .standard,
        identifiers: IdentifierSource = .random, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(
            container: container, pipeline: pipeline, identifiers: identifiers, now: now, decoder: InProcessDecoder())
    }
}

extension StageWorker {
    /// A worker on the database at `url` that decodes in this process
    /// (``InProcessDecoder``); see ``StageWorker/init(url:settings:events:log:decoder:)``.
    public convenience init(
        url: String, settings: Settings, events: IngestEventSink? = nil, log: (@Sendable (Event) -> Void)? = nil
    ) {
        self.init(url: url, settings: settings, events: events, log: log, decoder: InProcessDecoder())
    }
}

extension BatchReport {
    /// ``writeOutputs(in:html:sheet:layout:decoder:)`` with the sheet's
    /// thumbnails decoded, and the sheet drawn, in this process (``InProcessDecoder``).
    public func writeOutputs(
        in container: ContainerDirectory, html htmlPath: String?, sheet: Bool,
        layout: ContactSheetLayout = ContactSheetLayout()
    ) -> ReportOutputs {
        writeOutputs(in: container, html: htmlPath, sheet: sheet, layout: layout, decoder: InProcessDecoder())
    }

    /// ``contactSheet(in:layout:decoder:)`` decoded and drawn in this process (``InProcessDecoder``).
    public func contactSheet(in container: ContainerDirectory, layout: ContactSheetLayout = ContactSheetLayout())
        throws(MediaError) -> ContactSheet
    {
        try contactSheet(in: container, layout: layout, decoder: InProcessDecoder())
    }
}
