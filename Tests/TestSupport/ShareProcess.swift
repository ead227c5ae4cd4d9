import Foundation

/// Runs the built `share` binary like a user: arguments, exit status, stdout, stderr.
public struct ShareProcess {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// The last non-empty line of stdout (where `share ingest` prints the redirect URL).
    public var lastLine: String? { stdout.split(separator: "\n").last.map(String.init) }

    /// Runs `share` with `arguments` and waits for it; `under` is a command
    /// that runs it (e.g. `["/usr/bin/strace", "-f", …]`), the binary's path appended;
    /// `directory`: its working directory (the test's, unless given).
    @discardableResult
    /// `executable`: another program to run with `arguments` (one that runs `share` itself, as `setpriv`).
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], under wrapper: [String] = [],
        directory: String? = nil,
        executable: String? = nil
    ) throws -> ShareProcess {
        let process = Process()
        let command = executable.map { [$0] + arguments } ?? (wrapper + [Fixtures.shareBinary] + arguments)
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes concurrently so neither fills up and blocks the child.
        let errData = LockedData()
        let reader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errData.isSet { usleep(1000) }
        return ShareProcess(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData.value, as: UTF8.self))
    }
}

final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) {
        lock.lock()
        data = value
        lock.unlock()
    }
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return data != nil
    }
    var value: Data {
        lock.lock()
        defer { lock.unlock() }
        return data ?? Data()
    }
}
