#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Processes: this one's id, signals, and reaping children.
package enum Processes {
    /// This process's id (`getpid`).
    package static var current: pid_t { getpid() }

    /// True while a process with this id exists (`kill(pid, 0)`; EPERM: it
    /// exists, owned by someone else).
    package static func exists(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 || errno == EPERM }

    /// Sends `signal` to `pid` (`kill`); false if it could not be sent.
    @discardableResult
    package static func send(_ signal: Int32, to pid: pid_t) -> Bool { kill(pid, signal) == 0 }

    /// Waits for the child `pid` to end (`waitpid`, retried on EINTR); its wait
    /// status, or nil if it is not a child of ours (any more).
    package static func waitForExit(of pid: pid_t) -> Int32? {
        var status: Int32 = 0
        return retryingInterrupts { waitpid(pid, &status, 0) } == pid ? status : nil
    }

    /// Raises `signal` in this process (`raise`): a test's named crash point.
    package static func raiseInSelf(_ signal: Int32) { raise(signal) }

    /// Whether process `pid` is stopped by a signal (SIGSTOP, SIGTSTP, …) or a
    /// tracer: its state in /proc/PID/stat, which any process may read, is `T`
    /// or `t`. False when it runs, sleeps, or is gone.
    package static func isStopped(_ pid: pid_t) -> Bool {
        guard pid > 0, let stat = try? FileSystem.readWholeFile("/proc/\(pid)/stat"),
            let state = String(decoding: stat, as: UTF8.self).split(separator: ")").last?.split(separator: " ").first
        else { return false }
        return state == "T" || state == "t"
    }

    /// The CPU seconds (user and system) process `pid` has used: fields 14 and
    /// 15 of /proc/PID/stat, which any process may read, in clock ticks
    /// (`sysconf(_SC_CLK_TCK)` a second). Nil when the process is gone.
    package static func cpuSeconds(of pid: pid_t) -> Double? {
        guard let stat = try? FileSystem.readWholeFile("/proc/\(pid)/stat"),
            let fields = String(decoding: stat, as: UTF8.self).split(separator: ")").last?.split(separator: " "),
            fields.count > 13,
            let user = Double(fields[11]), let system = Double(fields[12])
        else { return nil }
        let ticks = sysconf(Int32(_SC_CLK_TCK))
        return (user + system) / Double(ticks > 0 ? ticks : 100)
    }
}
