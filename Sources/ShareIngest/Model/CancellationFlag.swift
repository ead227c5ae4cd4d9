import Synchronization

/// A flag set once (on SIGINT/SIGTERM or by the caller) and read by every worker.
public final class CancellationFlag: Sendable {
    private let cancelled = Atomic(false)

    /// A flag not yet set.
    public init() {}

    /// Sets the flag: workers finish their current stage and the batch stops, resumable. Thread-safe.
    public func cancel() { cancelled.store(true, ordering: .releasing) }

    /// True once ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}
