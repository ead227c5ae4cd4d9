import Foundation
import Glibc
import Synchronization
import SystemCalls

/// The address `--metrics HOST:PORT` names: `HOST` an IPv4 or IPv6 literal
/// (`[::1]:9464`) or `localhost`, loopback when left out (`:9464` or `9464`).
package struct ServiceAddress: Sendable, Equatable, CustomStringConvertible {
    package let host: String
    package let port: Int

    /// Parses `text`; nil with the reason when it is not an address.
    package static func parse(_ text: String) -> Result<ServiceAddress, ServiceAddressError> {
        var host = "127.0.0.1"
        var portText = Substring(text)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return .failure(ServiceAddressError(text))
            }
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = text[text.index(close, offsetBy: 2)...]
        } else if let colon = text.lastIndex(of: ":") {
            if colon != text.startIndex { host = String(text[..<colon]) }
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText), (0...65_535).contains(port), !host.isEmpty else {
            return .failure(ServiceAddressError(text))
        }
        return .success(ServiceAddress(host: host, port: port))
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Why a `--metrics` value is not an address.
package struct ServiceAddressError: Error, CustomStringConvertible {
    let text: String
    init(_ text: String) { self.text = text }
    package var description: String {
        "--metrics must be HOST:PORT (HOST an IP address, loopback if left out; PORT 0-65535), not \"\(text)\""
    }
}

/// A small HTTP/1.x server of its own thread, for `/metrics`, `/healthz` and
/// `/readyz` alone: one `poll` loop over the listening socket and at most
/// ``Limits/connections`` connections, each answered once and closed (when all
/// are taken, the one idle longest without a complete request is closed to
/// make room for a new one). A request
/// larger than ``Limits/requestBytes`` gets 431, one not complete within
/// ``Limits/readSeconds`` gets 408, a malformed one 400, another method 405,
/// another path 404. Nothing it does waits on a peer: a slow or endless request
/// only holds its own connection slot until its deadline, and never a batch.
package final class ServiceListener: Sendable {
    /// What it accepts.
    package struct Limits: Sendable {
        /// Connections open at once. When all are taken, a new connection closes
        /// the one idle longest without a complete request (or, when every one is
        /// being answered, is itself closed).
        package var connections = 16
        /// Bytes of a request's line and headers (no request here has a body).
        package var requestBytes = 8192
        /// Seconds from accepting a connection to having its whole request, and then its answer sent.
        package var readSeconds: Double = 5
        package init() {}
    }

    /// An answer.
    package struct Response: Sendable {
        package let status: Int
        package let contentType: String
        package let body: String
        package init(_ status: Int, _ body: String, contentType: String = "text/plain; charset=utf-8") {
            (self.status, self.body, self.contentType) = (status, body, contentType)
        }
    }

    /// The port it listens on (the system's choice when asked for 0).
    package let port: Int
    package let address: ServiceAddress
    private let socket: TCPListener
    private let wake = WakePipe()
    private let stopped = Atomic(false)
    private let finished = Mutex(false)
    private let limits: Limits
    private let route: @Sendable (String) -> Response?

    /// Binds `address`; `route` answers a GET of a path (nil: 404). Call ``start()`` to serve.
    package init(_ address: ServiceAddress, limits: Limits = Limits(), route: @escaping @Sendable (String) -> Response?)
        throws(SystemError)
    {
        socket = try TCPListener(host: address.host, port: address.port, backlog: Int32(limits.connections))
        port = socket.port
        self.address = ServiceAddress(host: address.host, port: socket.port)
        self.limits = limits
        self.route = route
    }

    /// Serves on a thread of its own until ``stop()``.
    package func start() {
        let thread = Thread { [self] in serve() }
        thread.name = "share-metrics"
        thread.start()
    }

    /// Stops serving (connections open now are closed).
    package func stop() {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
    }

    private final class Connection {
        let socket: TCPConnection
        let deadline: Double
        /// When the peer last sent something (or connected).
        var lastActivity: Double
        var request: [UInt8] = []
        var answer: [UInt8]?
        var sent = 0
        init(_ socket: TCPConnection, at now: Double, deadline: Double) {
            (self.socket, self.lastActivity, self.deadline) = (socket, now, deadline)
        }
        /// Answered in full, or the peer is gone.
        var finished: Bool { answer.map { sent >= $0.count } ?? false }
    }

    private func serve() {
        var connections: [Connection] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopped.load(ordering: .relaxed) {
            let waits: [(descriptor: Int32, readiness: Polling.Readiness)] =
                [(socket.raw, .readable), (wake.readEnd, .readable)]
                + connections.map { ($0.socket.raw, $0.answer == nil ? .readable : .writable) }
            guard let ready = try? Polling.wait(waits, milliseconds: 250) else { continue }
            if ready[1] { wake.drain() }
            let now = MonotonicClock.now()
            for (index, connection) in connections.enumerated() where ready[index + 2] {
                advance(connection, at: now, &buffer)
            }
            for connection in connections where connection.answer == nil && now >= connection.deadline {
                connection.answer = Self.encode(
                    Response(
                        408, "the request was not complete within \(MetricsRegistry.number(limits.readSeconds)) s\n"),
                    head: false)
                write(connection)
            }
            // Answered (or the peer is gone), or not taking its answer in time either.
            connections.removeAll { $0.finished || now >= $0.deadline + limits.readSeconds }
            if ready[0] {
                while let accepted = socket.accept() {
                    let connection = Connection(accepted, at: now, deadline: now + limits.readSeconds)
                    // What came with the connection is read at once: a client that
                    // sends its request right away (a probe) is answered now.
                    advance(connection, at: now, &buffer)
                    if connection.finished { continue }  // answered: closed
                    if connections.count >= limits.connections {
                        // Full: the connection idle longest without a complete request
                        // makes room, so idle sockets cannot hold the listener shut.
                        // When every slot is sending an answer, the new one is closed.
                        let waiting = connections.indices.filter { connections[$0].answer == nil }
                        guard
                            let oldest = waiting.min(by: { connections[$0].lastActivity < connections[$1].lastActivity }
                            )
                        else { continue }
                        connections.remove(at: oldest)  // closed
                    }
                    connections.append(connection)
                }
            }
        }
    }

    /// Reads what the peer sent, and writes the answer once there is one.
    private func advance(_ connection: Connection, at now: Double, _ buffer: inout [UInt8]) {
        if connection.answer == nil { read(connection, at: now, &buffer) }
        if connection.answer != nil { write(connection) }
    }

    private func read(_ connection: Connection, at now: Double, _ buffer: inout [UInt8]) {
        while connection.answer == nil {
            let transfer = buffer.withUnsafeMutableBytes { connection.socket.read(into: $0) }
            switch transfer {
            case .bytes(let count):
                connection.lastActivity = now
                connection.request += buffer.prefix(count)
                if let answer = answer(to: connection.request) { connection.answer = answer }
            case .wouldBlock:
                return
            case .closed:
                connection.answer = []  // nothing to answer: the peer is gone
                return
            }
        }
    }

    private func write(_ connection: Connection) {
        guard let answer = connection.answer else { return }
        while connection.sent < answer.count {
            switch connection.socket.write(answer[connection.sent...]) {
            case .bytes(let count): connection.sent += count
            case .wouldBlock: return
            case .closed:
                connection.sent = answer.count
                return
            }
        }
    }

    /// The answer to `request` once it is complete (or too large, or malformed); nil while more must come.
    func answer(to request: [UInt8]) -> [UInt8]? {
        let end = Self.headersEnd(request)
        guard let end else {
            if request.count > limits.requestBytes {
                return Self.encode(
                    Response(431, "the request is larger than \(limits.requestBytes) bytes\n"), head: false)
            }
            return nil
        }
        guard end <= limits.requestBytes else {
            return Self.encode(Response(431, "the request is larger than \(limits.requestBytes) bytes\n"), head: false)
        }
        let head = String(decoding: request[..<end], as: UTF8.self)
        let line =
            head.split(separator: "\r\n", maxSplits: 1, omittingEmptySubsequences: false).first.map {
                $0.split(separator: "\n").first ?? ""
            } ?? ""
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), parts[1].hasPrefix("/"), !parts[0].isEmpty,
            parts[0].allSatisfy({ $0.isASCII && $0.isUppercase })
        else { return Self.encode(Response(400, "bad request\n"), head: false) }
        let method = parts[0]
        guard method == "GET" || method == "HEAD" else {
            return Self.encode(Response(405, "only GET and HEAD\n"), head: false)
        }
        let path = String(parts[1].prefix { $0 != "?" })
        let response = route(path) ?? Response(404, "not found: this listener serves /metrics, /healthz and /readyz\n")
        return Self.encode(response, head: method == "HEAD")
    }

    /// The index just past the blank line ending the headers (CRLF or LF), if there is one.
    private static func headersEnd(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            if bytes[index] == 10 {
                if index + 1 < bytes.count, bytes[index + 1] == 10 { return index + 2 }
                if index + 2 < bytes.count, bytes[index + 1] == 13, bytes[index + 2] == 10 { return index + 3 }
            }
            index += 1
        }
        return nil
    }

    private static let reasons = [
        200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
        431: "Request Header Fields Too Large", 503: "Service Unavailable",
    ]

    private static func encode(_ response: Response, head: Bool) -> [UInt8] {
        let body = Array(response.body.utf8)
        var text = "HTTP/1.1 \(response.status) \(reasons[response.status] ?? "Status")\r\n"
        text += "Content-Type: \(response.contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        if response.status == 405 { text += "Allow: GET, HEAD\r\n" }
        text += "\r\n"
        return Array(text.utf8) + (head ? [] : body)
    }
}
