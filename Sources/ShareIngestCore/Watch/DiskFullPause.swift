import SystemCalls

/// The watcher's pause while the disk that holds the container (or the
/// journal) is full: no new drop is taken, and the batches that stopped for
/// want of space are tried again once the disk has room, more free than when
/// it filled, or after ``retrySeconds`` in any case (a quota raised, space
/// freed where this process cannot see it). A full disk never fails a drop:
/// its files stay in `.processing/` until the batch is finished.
struct DiskFullPause: Sendable {
    /// Where a write failed for want of space (its nearest existing folder is measured).
    let path: String
    /// What that disk had free then.
    let freeBytes: Int64
    /// When the pause began (monotonic seconds).
    let since: Double

    /// How long a pause lasts at most before the batches are tried again anyway.
    static let retrySeconds = 60.0
    /// How much more than was free when it filled counts as room again.
    static let room: Int64 = 1 << 20

    init(path: String, freeBytes: Int64?, since: Double) {
        self.path = path
        self.freeBytes = freeBytes ?? Self.free(at: path) ?? 0
        self.since = since
    }

    /// True once the disk has room again (or the pause has lasted ``retrySeconds``).
    func isOver(now: Double) -> Bool {
        if now - since >= Self.retrySeconds { return true }
        guard let free = Self.free(at: path) else { return false }
        return free >= freeBytes + Self.room
    }

    /// The space free on the disk of `path`, or of its nearest existing ancestor.
    static func free(at path: String) -> Int64? {
        var candidate = path
        while !candidate.isEmpty {
            if let space = try? FileSystem.space(of: candidate) { return space.available }
            guard let slash = candidate.lastIndex(of: "/") else { return nil }
            candidate = String(candidate[..<slash])
        }
        return (try? FileSystem.space(of: "/"))?.available
    }
}
