import Foundation
import ShareManifest

/// The outcome of one input item.
public enum ItemStatus: String, Sendable, Codable {
    /// Delivered: it is in the manifest.
    case ingested
    /// It could not be delivered; `error` says why.
    case failed
    /// Deliberately left out (a FIFO, a symbolic link out of the drop, …); `error` says why.
    case skipped
}

/// What happened to one item, as the report and the events tell it.
public struct ItemReport: Sendable, Hashable {
    /// Position in the batch (input order).
    public let index: Int
    /// The source path (or `text:`/`url:` and the first characters).
    public let source: String
    /// Ingested, failed or skipped.
    public let status: ItemStatus
    /// Why it failed or was skipped.
    public let failure: ItemFailure?
    /// Things that went wrong without costing the item (e.g. a video without a poster).
    public let warnings: [String]
    /// The manifest entry, when ingested.
    public let entry: SharedMediaFile?
    /// The item's UUID in the container, when one was assigned.
    public let id: UUID?
    /// Seconds spent in each stage.
    public let stageSeconds: [StageName: Double]
}

/// Why an item was not delivered: which stage, what kind of problem, and the
/// specific message (naming the file and what the library said).
public struct ItemFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of failure a caller can match on.
    public enum Reason: String, Sendable, Codable {
        /// The source cannot be opened or read (permissions, a vanished file).
        case unreadable
        /// The source is empty.
        case empty
        /// A FIFO, socket or device in a drop: never opened (status `skipped`).
        case notRegularFile
        /// A symbolic link leading out of the drop, or to something not a regular file (status `skipped`).
        case symbolicLink
        /// A folder nested too deeply in a drop: not walked (status `skipped`).
        case tooDeep
        /// The content contradicts the name (random bytes named `.jpg`), or the media is not what its header claims.
        case contentMismatch
        /// An image or frame larger than the pipeline's `pixelLimit`; refused before decoding.
        case tooManyPixels
        /// The media cannot be decoded (truncated, damaged, no decodable video stream).
        case undecodable
        /// Probing or thumbnailing took longer than the stage's `timeLimit`.
        case timeLimit
        /// Decoding needed more memory than a decoder helper may use.
        case memoryLimit
        /// The decoder crashed on this file (the message names the signal); the batch went on.
        case decoderCrashed
        /// The sandboxed decoder answered with something the checks refuse (the
        /// message says what), or its sandbox was weaker than this machine allows.
        case decoderMisbehaved
        /// A stage that decodes media was started on this file several times and the
        /// whole process died each time (decoding in-process): not tried again.
        case crashedRepeatedly
        /// The source changed while it was being copied.
        case changedWhileCopying
        /// The container's disk or quota is full.
        case diskFull
        /// Another input/output error (the message has the call and `errno`).
        case io
        /// A shared link that is not a URL.
        case notAURL
        /// Text beside files in a legacy manifest, which cannot hold both (status `skipped`).
        case unsupportedBySchema
        /// The batch was cancelled before this item finished.
        case cancelled
        /// A distributed job failed (its worker died, or an error that is not the
        /// file's fault) more often than the batch's `maxAttempts`.
        case attemptsExhausted
    }

    /// The stage that failed (`copy` for entries skipped while walking a drop).
    public let stage: StageName
    /// What kind of problem: match on this in tests.
    public let reason: Reason
    /// The specific message: names the file and says what the library reported.
    public let message: String

    /// A failure at `stage` for `reason`, with the message people read.
    public init(_ stage: StageName, _ reason: Reason, _ message: String) {
        self.stage = stage
        self.reason = reason
        self.message = message
    }

    /// The ``message``.
    public var description: String { message }
}

/// Everything about one finished batch.
public struct BatchReport: Sendable {
    /// The batch's UUID (from the ingestor's ``IdentifierSource``).
    public let batchID: UUID
    /// The manifest key.
    public let key: ShareKey
    /// The redirect URL, when a manifest was written (at least one item delivered).
    public let redirectURL: RedirectURL?
    /// The manifest file, when written.
    public let manifestPath: String?
    /// The schema the manifest was written in.
    public let schema: ManifestSchema
    /// The pipeline's name.
    public let pipeline: String
    /// One report per input item, in input order (folders expanded).
    public let items: [ItemReport]
    /// Seconds of work per stage, summed over items, and the batch's wall time.
    public let stageSeconds: [StageName: Double]
    /// Wall-clock seconds the batch took (a measurement: differs between runs).
    public let wallSeconds: Double
    /// True when the batch was interrupted (a signal, a cancellation) before all its
    /// items finished: no manifest yet; `share ingest --resume` finishes it.
    public var interrupted = false

    /// The manifest's entries: the ingested items', in input order.
    public var entries: [SharedMediaFile] { items.compactMap(\.entry) }
    /// How many items were delivered.
    public var ingestedCount: Int { items.count { $0.status == .ingested } }
    /// How many items failed.
    public var failedCount: Int { items.count { $0.status == .failed } }
    /// How many items were skipped.
    public var skippedCount: Int { items.count { $0.status == .skipped } }
    /// True when every item was delivered.
    public var isComplete: Bool { ingestedCount == items.count }

    /// The JSON report document (`--report FILE`, and the report stored beside
    /// each manifest): every input with its status (``BatchReportDocument``).
    public func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(BatchReportDocument(self))) ?? Data()
    }
}
