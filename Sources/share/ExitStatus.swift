import SystemCalls

/// The exit statuses of `share`, as documented in the README.
enum ExitStatus: Int32 {
    /// Every item was delivered (or the command succeeded).
    case success = 0
    /// The batch ran but some items failed or were skipped (the rest were
    /// delivered); or `share open` refused the share.
    case partial = 1
    /// Nothing could be done: bad arguments, bad pipeline, unusable container,
    /// missing input, a key already taken.
    case unusable = 2
    /// `--db`: the batch did not end while we waited (`--timeout`, or a signal);
    /// it goes on with the workers, and `share ingest --resume` waits again.
    case notFinished = 3

    func exit() -> Never { Processes.exit(rawValue) }
}
