import Foundation

/// The library's entry point: ingests what a person shares into a container
/// and writes the manifest a host app reads after the redirect.
///
/// ```swift
/// let container = try ContainerDirectory("/tmp/container")
/// let report = try ShareIngestor(container: container).ingest([.path("/drops/holiday"), .text("Look!")])
/// print(report.redirectURL!)   // ShareMedia://dataUrl=ShareKey-…#media
/// ```
public struct ShareIngestor: Sendable {
    public var container: ContainerDirectory
    public var pipeline: PipelineDefinition

    public init(container: ContainerDirectory, pipeline: PipelineDefinition = .standard) {
        self.container = container
        self.pipeline = pipeline
    }

    /// Runs one batch, blocking the calling thread (work happens on the pipeline's
    /// own threads). Throws only when nothing can be done; item failures are in the report.
    ///
    /// - Parameters:
    ///   - key: the manifest key; default: the pipeline's, else unique per batch.
    ///   - message: text that came with the share (v2 `message` of every entry).
    ///   - events: progress and per-item outcomes, called from worker threads.
    public func ingest(
        _ inputs: [ShareInput], key: ShareKey? = nil, message: String? = nil,
        events: IngestEventSink? = nil, cancellation: CancellationFlag = CancellationFlag()
    ) throws(ShareIngestError) -> BatchReport {
        let batchID = UUID()
        let key = key ?? pipeline.manifest.key ?? ShareKey.unique(id: batchID)
        let runner = BatchRunner(pipeline: pipeline, container: container, events: events, cancellation: cancellation)
        return try runner.run(inputs, key: key, message: message, batchID: batchID)
    }

    /// The same, for async callers: the batch runs on its own threads and the
    /// cooperative pool is not blocked.
    public func ingest(
        _ inputs: [ShareInput], key: ShareKey? = nil, message: String? = nil,
        events: IngestEventSink? = nil, cancellation: CancellationFlag = CancellationFlag()
    ) async throws(ShareIngestError) -> BatchReport {
        let result: Result<BatchReport, ShareIngestError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                do throws(ShareIngestError) {
                    continuation.resume(returning: .success(try self.ingest(inputs, key: key, message: message, events: events, cancellation: cancellation)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        return try result.get()
    }
}
