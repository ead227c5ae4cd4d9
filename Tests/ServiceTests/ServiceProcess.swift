import Foundation
import Glibc
import TestSupport
import Testing

/// A `share watch` or `share worker` running in the background, as a service
/// manager would run it: its stdout and stderr in files, stopped with SIGTERM.
final class ServiceProcess {
    let process = Process()
    let files = TemporaryDirectory("service")

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: Fixtures.shareBinary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        for name in ["out", "err"] { _ = FileManager.default.createFile(atPath: files.file(name), contents: nil) }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: files.file("out")))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: files.file("err")))
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    var stdout: String { (try? String(contentsOfFile: files.file("out"), encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: files.file("err"), encoding: .utf8)) ?? "" }

    /// The port of the line `serving … at http://HOST:PORT/`, once it is printed.
    func metricsPort() -> Int? {
        var port: Int?
        _ = eventually(timeout: 60) {
            guard let range = stderr.range(of: #"at http://127\.0\.0\.1:[0-9]+/"#, options: .regularExpression) else {
                return !process.isRunning
            }
            port = Int(stderr[range].split(separator: ":").last!.dropLast())
            return true
        }
        return port
    }

    /// SIGTERM, then the exit status (nil if it did not exit within a minute: killed).
    @discardableResult
    func stop() -> Int32? {
        kill(process.processIdentifier, SIGTERM)
        guard eventually(timeout: 60, { !process.isRunning }) else {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        return process.terminationStatus
    }

}

/// A raw TCP client for the listener: what a scraper (or a hostile peer) sends.
final class HTTPClient {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw ClientError(what: "connect: \(String(cString: strerror(errno)))") }
        // A test never waits forever on an answer.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// Everything until the server closes the connection.
    func readToEnd() -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            data += buffer.prefix(n)
        }
        return String(decoding: data, as: UTF8.self)
    }

    struct ClientError: Error { let what: String }

    /// One GET: status and body.
    static func get(_ port: Int, _ path: String) throws -> (status: Int, body: String) {
        let client = try HTTPClient(port: port)
        client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return parse(client.readToEnd())
    }

    static func parse(_ response: String) -> (status: Int, body: String) {
        let parts = response.components(separatedBy: "\r\n\r\n")
        let status = parts.first?.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}

/// A scrape of `/metrics`: each sample's value by its name and labels as written.
struct Scrape {
    let text: String
    let samples: [String: Double]

    init(_ text: String) {
        self.text = text
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = Double(line[line.index(after: space)...])
        }
        self.samples = samples
    }

    subscript(_ sample: String) -> Double? { samples[sample] }

    /// `promtool check metrics` on the scrape: its exit status and what it said.
    func promtool() throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/promtool")
        process.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        try input.fileHandleForWriting.close()
        let said = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: said, as: UTF8.self))
    }
}
