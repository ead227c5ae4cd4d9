import Synchronization

/// A flag set once (on SIGINT/SIGTERM or by the caller) and read by every worker.
public final class CancellationFlag: Sendable {
    private let cancelled = Atomic(false)
    private let parent: CancellationFlag?

    /// A flag not yet set.
    public init() { parent = nil }

    /// A flag set when `parent` is, which can also be set alone: a batch that
    /// stops itself (its journal failed, its disk is full) stops no one else
    /// (the watcher that ran it goes on).
    public init(within parent: CancellationFlag) { self.parent = parent }

    /// Sets the flag: workers finish their current stage and the batch stops, resumable. Thread-safe.
    public func cancel() { cancelled.store(true, ordering: .releasing) }

    /// True once ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) || parent?.isCancelled == true }
}
