import Foundation
import ShareManifest

/// What the pipeline tells its caller while it works. The library only emits
/// events; the caller (the CLI, a test) decides how to show them.
public enum IngestEvent: Sendable {
    /// A batch begins, its inputs planned: `itemCount` is how many items it
    /// has (the walk of its folders is over, so the count does not grow).
    case batchStarted(batchID: UUID, key: ShareKey, itemCount: Int)
    /// A stage finished with one item (for progress: per-stage counts and bytes).
    case stageFinished(StageName, index: Int, bytes: Int64)
    /// An item left the pipeline: ingested, failed or skipped.
    case itemFinished(ItemReport)
    /// The batch is done; the manifest (if any item was delivered) is written.
    case batchFinished(BatchReport)
}

/// Receives events; called from worker threads, so it must be thread-safe.
public typealias IngestEventSink = @Sendable (IngestEvent) -> Void
