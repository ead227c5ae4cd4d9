import Foundation
import SystemCalls

/// Why an item was not delivered: which stage, what kind of problem, and the
/// specific message (naming the file and what the library said).
public struct ItemFailure: Error, Sendable, Hashable, Codable, CustomStringConvertible {
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
        /// The container's disk or quota is full: not final (the item waits
        /// for space, and the batch with it; `--resume` delivers it once there is room).
        case diskFull
        /// Larger than what may be written (`EFBIG`: the container's file
        /// system's largest file, a process's file-size limit) or than the size
        /// limit asked for (`--max-item-size`, `--max-drop-size`): final.
        case tooLarge
        /// Another input/output error (the message has the call and `errno`).
        case io
        /// A shared link that is not a URL.
        case notAURL
        /// Text beside files in a legacy manifest, which cannot hold both (status `skipped`).
        case unsupportedBySchema
        /// A stop was asked while its stage ran (a long copy): not final; the
        /// stage runs again, from its start, when the batch resumes.
        case cancelled
        /// A distributed job failed (its worker died, or an error that is not the
        /// file's fault) more often than the batch's `maxAttempts`.
        case attemptsExhausted
        /// Its content was already delivered (earlier in the batch, or in a share
        /// not yet consumed) and the pipeline skips duplicates (status `skipped`).
        case duplicate
        /// The item's recorded state (in the journal or the queue) cannot be read
        /// (a damaged or foreign record): it is reported failed, never dropped.
        case unreadableState
        /// Location privacy is on and the file holds location metadata that
        /// cannot be removed in place (compressed, or in a structure the parser
        /// cannot read): it is not delivered with it.
        case locationNotRemovable
        /// Left out by the batch's selection (`--include`, `--exclude`):
        /// never copied (status `skipped`; the message names the pattern).
        case filtered
        /// Left out by the capture-date range (`--taken-after`, `--taken-before`):
        /// taken outside it, or with no capture date to compare; its copy removed
        /// (status `skipped`; the message says when it was taken).
        case outsideDateRange
    }

    /// The reasons that leave an item out deliberately (status `skipped`, not `failed`).
    static let skipping: Set<Reason> = [
        .notRegularFile, .symbolicLink, .tooDeep, .unsupportedBySchema, .duplicate, .filtered, .outsideDateRange,
    ]
    /// The reasons that are no verdict on the item: it is finished when its batch resumes.
    public static let notFinal: Set<Reason> = [.diskFull, .cancelled]

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

    /// A failure to write into the container, classified once: `diskFull` when
    /// the disk or quota is full, `tooLarge` for a file larger than may be
    /// written, else `io`.
    init(_ stage: StageName, writing error: SystemError, _ message: String) {
        self.init(stage, error.isDiskFull ? .diskFull : error.kind == .tooLarge ? .tooLarge : .io, message)
    }
}
