import Foundation
import MediaFormats
import SystemCalls

/// What travels between the parent and a decoder helper over their Unix stream
/// socket, one message at a time:
///
///     message  = length (UInt32, little-endian, of what follows) · type (UInt8) · body
///     ready    (helper → parent, once)  body: JSON ``HelperReady``
///     decode   (parent → helper)        body: UInt32 JSON length · JSON ``DecodeRequest``
///                                       · for each Takeout JSON sent with the file
///                                       (``DecodeRequest/takeoutJSONs``): UInt32
///                                       length · its bytes; the file's read-only
///                                       descriptor rides along (SCM_RIGHTS)
///     accepted (helper → parent)        empty: the request was received and decoding
///                                       starts (a helper that dies before this never
///                                       had the item: it is not the item's fault)
///     result   (helper → parent)        body: UInt32 JSON length · JSON ``WireResult``
///                                       · the thumbnail's JPEG bytes · each preview's
///                                       bytes (``WireResult/previews``' lengths) · the compatible
///                                       copy's JPEG bytes (the last
///                                       ``WireResult/compatibleLength`` bytes); for a
///                                       pixel request, the pixels' bytes alone
///
/// and between the parent and a helper template (see ``HelperTemplate``):
///
///     spawn    (parent → template)      empty, or one byte 1: load libvips' modules
///                                       first (``HelperKind/modules``); the new
///                                       helper's end of its socket rides along; no
///                                       answer (the helper's own ready message, with
///                                       its pid, is the answer)
///     reap     (parent → template)      body: Int32 pid (little-endian): kill and reap it
///     reaped   (template → parent)      body: Int32 `waitpid` status, or empty when
///                                       that pid was not the template's child
///
/// The JPEG bytes travel raw, not as a JSON array of numbers. Sizes are bounded
/// on both sides: a peer announcing more is broken (or hostile) and is dropped.
package enum HelperMessage {
    /// Message types.
    package enum Kind: UInt8 {
        case ready = 1
        case decode = 2
        case result = 3
        case accepted = 4
        case spawn = 5
        case reap = 6
        case reaped = 7
        /// To a template forked at the parent's start: how to go on. No longer sent
        /// (share-helper is started by exec since issue 59); the number stays taken.
        case configure = 8
        /// Helper → parent, from its SIGSYS handler: its policy trapped a call
        /// (body: the call's number, Int32 little-endian); it then dies.
        /// `SHIM_FORBIDDEN_CALL_MESSAGE` in shim_sandbox.h.
        case forbiddenCall = 9
    }

    /// The largest request (a `DecodeRequest` is a few hundred bytes, and the
    /// Takeout JSONs sent with a file at most `DecodeRequest.maximumTakeoutJSONs`
    /// of `TakeoutJSON.maximumSize` each).
    package static let maximumRequest = (DecodeRequest.maximumTakeoutJSONs + 1) << 20
    /// The largest result: the facts and a thumbnail (a 360 px JPEG is ~30 KB;
    /// this leaves room for any size a pipeline may ask for), or a compatible
    /// copy (a full-resolution JPEG: ~3 MB for 12 MP at quality 90; its spec
    /// bounds it below this, ``CompatibleCopySpec/maximumBytes``).
    package static let maximumResult = 64 << 20
    /// The largest JSON part of a result.
    package static let maximumResultJSON = 1 << 20

    /// A whole message: length, type, body.
    package static func frame(_ kind: Kind, _ body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(5 + body.count)
        withUnsafeBytes(of: UInt32(body.count + 1).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(kind.rawValue)
        bytes.append(contentsOf: body)
        return bytes
    }

    /// The body of a decode message: the request's JSON, then the bytes of
    /// each Takeout JSON it carries.
    package static func requestBody(_ request: DecodeRequest) throws -> [UInt8] {
        let json = try JSONEncoder().encode(request)
        var body: [UInt8] = []
        body.reserveCapacity(4 + json.count + request.takeoutJSONs.reduce(0) { $0 + 4 + $1.count })
        func append(length: Int) { withUnsafeBytes(of: UInt32(length).littleEndian) { body.append(contentsOf: $0) } }
        append(length: json.count)
        body.append(contentsOf: json)
        for bytes in request.takeoutJSONs {
            append(length: bytes.count)
            body.append(contentsOf: bytes)
        }
        return body
    }

    /// The request of a decode message's body (``requestBody(_:)``), with its
    /// Takeout JSONs.
    package static func parseRequest(_ body: [UInt8], decoder: JSONDecoder) throws(ProtocolError) -> DecodeRequest {
        var rest = body[...]
        func length() throws(ProtocolError) -> Int {
            guard rest.count >= 4 else { throw ProtocolError("a request shorter than its lengths") }
            let value = Int(UInt32(littleEndian: rest.prefix(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }))
            rest = rest.dropFirst(4)
            guard value <= rest.count else {
                throw ProtocolError("a request part of \(value) bytes where \(rest.count) are left")
            }
            return value
        }
        let jsonLength = try length()
        var request: DecodeRequest
        do { request = try decoder.decode(DecodeRequest.self, from: Data(rest.prefix(jsonLength))) } catch {
            throw ProtocolError("an unreadable request: \(error)")
        }
        rest = rest.dropFirst(jsonLength)
        while !rest.isEmpty {
            guard request.takeoutJSONs.count < DecodeRequest.maximumTakeoutJSONs else {
                throw ProtocolError("more than \(DecodeRequest.maximumTakeoutJSONs) Takeout JSONs")
            }
            let count = try length()
            request.takeoutJSONs.append(Array(rest.prefix(count)))
            rest = rest.dropFirst(count)
        }
        return request
    }

    /// The body of a result message.
    package static func resultBody(_ result: WireResult, jpeg: [UInt8]) throws -> [UInt8] {
        let json = try JSONEncoder().encode(result)
        var body: [UInt8] = []
        body.reserveCapacity(4 + json.count + jpeg.count)
        withUnsafeBytes(of: UInt32(json.count).littleEndian) { body.append(contentsOf: $0) }
        body.append(contentsOf: json)
        body.append(contentsOf: jpeg)
        return body
    }

    /// Splits a result body into its JSON and JPEG parts.
    package static func parseResult(_ body: ArraySlice<UInt8>) throws(ProtocolError) -> (WireResult, ArraySlice<UInt8>)
    {
        guard body.count >= 4 else { throw ProtocolError("a result shorter than its header") }
        let length = Int(UInt32(littleEndian: body.prefix(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }))
        guard length <= maximumResultJSON, length <= body.count - 4 else {
            throw ProtocolError("a result whose JSON part is \(length) bytes")
        }
        let json = body.dropFirst(4).prefix(length)
        do {
            return (try JSONDecoder().decode(WireResult.self, from: Data(json)), body.dropFirst(4 + length))
        } catch {
            throw ProtocolError("an unreadable result: \(error)")
        }
    }

    /// The length and type of a message, from its first 5 bytes.
    package static func header(_ bytes: [UInt8]) -> (length: Int, kind: UInt8) {
        let length = Int(UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24)
        return (length - 1, bytes[4])
    }
}

/// A helper's first message: it is ready (libraries loaded, sandbox in place), or why not.
package struct HelperReady: Codable, Sendable {
    /// Its process id.
    package var pid: Int32
    /// What the sandbox holds, as the helper itself checked it.
    package var sandbox: SandboxStatus
    /// Why the helper cannot decode (its sandbox could not be set up); nil when ready.
    package var failure: String?
    /// Whether libvips' modules are loaded (a helper of kind ``HelperKind/modules`` or above).
    package var modules: Bool

    package init(pid: Int32, sandbox: SandboxStatus, failure: String?, modules: Bool) {
        (self.pid, self.sandbox, self.failure, self.modules) = (pid, sandbox, failure, modules)
    }
}

/// A decode's answer, without the JPEG bytes (they follow the JSON).
package struct WireResult: Codable, Sendable {
    /// The facts, when decoding succeeded.
    package var facts: MediaFacts?
    /// The thumbnail's width and height, when one was made (its bytes follow).
    package var thumbnailWidth: Int?
    package var thumbnailHeight: Int?
    /// The thumbnail's ThumbHash, base64 (standard alphabet, padded), when one was made.
    package var thumbnailThumbHash: String?
    /// The thumbnail's perceptual hash, 16 lowercase hexadecimal digits, when one was made.
    package var thumbnailPerceptualHash: String?
    /// The thumbnail's colour cells (4×4), 96 lowercase hexadecimal digits, sent with its perceptual hash.
    package var thumbnailColourCells: String?
    /// Why no thumbnail was made, when one was asked for.
    package var thumbnailFailure: MediaError?
    /// The previews made with the thumbnail, smallest first (their bytes follow the thumbnail's).
    package var previews: [WirePicture]?
    /// The thumbnail's gain map, when it carries one (issue 54; ``WireGainMap``).
    package var thumbnailGainMap: WireGainMap?
    /// Why decoding failed.
    package var failure: MediaError?
    /// What makes the file part of a moment, when asked for and found.
    package var moments: MomentFacts?
    /// Where the file records a location (a location request's answer).
    package var location: LocationMetadata?
    /// The compatible copy's size and what it carries, when one was made (its
    /// bytes are the body's last ``compatibleLength``).
    package var compatibleWidth: Int?
    package var compatibleHeight: Int?
    package var compatibleMetadata: [String]?
    package var compatibleLength: Int?
    /// Why no compatible copy was made, when one was asked for.
    package var compatibleFailure: MediaError?
    /// What each Takeout JSON sent with the file was read as, in their order.
    package var takeouts: [TakeoutReading]?
    /// The size of the pixels a ``DecodeTask/pixels`` request asked for, and
    /// the bytes from one row to the next (their bytes follow the JSON, where a
    /// thumbnail's would).
    package var pixelsWidth: Int?
    package var pixelsHeight: Int?
    package var pixelsStride: Int?

    /// The answer for `outcome`, and the JPEG bytes to send after it.
    package init(_ outcome: Result<DecodedMedia, MediaError>) {
        switch outcome {
        case .success(let decoded):
            facts = decoded.facts
            moments = decoded.moments
            location = decoded.location
            takeouts = decoded.takeouts.isEmpty ? nil : decoded.takeouts
            if let pixels = decoded.pixels {
                pixelsWidth = pixels.width
                pixelsHeight = pixels.height
                pixelsStride = pixels.stride
            }
            switch decoded.thumbnail {
            case .made(let thumbnail):
                thumbnailWidth = thumbnail.width
                thumbnailHeight = thumbnail.height
                thumbnailThumbHash = thumbnail.thumbHash.map { Data($0).base64EncodedString() }
                thumbnailPerceptualHash = thumbnail.perceptualHash.map(PerceptualHash.hex)
                thumbnailColourCells = thumbnail.colourCells.map { PerceptualHash.hex(colours: $0) }
                previews = thumbnail.previews?.map {
                    WirePicture(
                        width: $0.width, height: $0.height, format: $0.format, length: $0.bytes.count,
                        gainMap: $0.gainMap.map(WireGainMap.init))
                }
                thumbnailGainMap = thumbnail.gainMap.map(WireGainMap.init)
            case .failed(let error): thumbnailFailure = error
            case nil: break
            }
            switch decoded.compatibleCopy {
            case .made(let copy):
                compatibleWidth = copy.width
                compatibleHeight = copy.height
                compatibleMetadata = copy.metadata
                compatibleLength = copy.jpeg.count
            case .failed(let error): compatibleFailure = error
            case nil: break
            }
        case .failure(let error):
            failure = error
        }
    }

    /// The bytes that follow the JSON of `outcome`: the thumbnail's JPEG, each
    /// preview's, then the compatible copy's JPEG; or a pixel request's pixels.
    package static func jpeg(of outcome: Result<DecodedMedia, MediaError>) -> [UInt8] {
        guard case .success(let decoded) = outcome else { return [] }
        if let pixels = decoded.pixels { return pixels.bytes }
        var bytes: [UInt8] = []
        if case .made(let thumbnail) = decoded.thumbnail {
            bytes += thumbnail.jpeg
            for preview in thumbnail.previews ?? [] { bytes += preview.bytes }
        }
        if case .made(let copy) = decoded.compatibleCopy { bytes += copy.jpeg }
        return bytes
    }
}

/// A preview's claimed size and encoding, and how many of the body's bytes are its.
package struct WirePicture: Codable, Sendable, Hashable {
    package var width: Int
    package var height: Int
    package var format: PreviewFormat
    package var length: Int
    /// A JPEG preview's gain map (issue 54).
    package var gainMap: WireGainMap? = nil
}

/// A peer that broke the protocol (or died mid-message).
package struct ProtocolError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// One message as read: its type, body and the descriptor that came with it
/// (owned: closed when released, unless taken).
package struct ReceivedMessage {
    package let kind: UInt8
    package let body: [UInt8]
    package let descriptor: FileDescriptor?
}

/// Blocking reads and writes of whole messages on a socket, for both ends.
package struct MessageSocket {
    package let socket: UnixSocket

    package init(_ socket: UnixSocket) { self.socket = socket }

    /// Sends `bytes` whole, the first chunk carrying `attaching` (when >= 0).
    package func send(_ bytes: [UInt8], attaching descriptorToPass: Int32 = -1) -> Bool {
        socket.send(bytes, attaching: descriptorToPass)
    }

    /// Why a read stopped.
    package enum ReadFailure: Error {
        /// The peer closed its end (it exited or died).
        case closed
        /// The deadline passed first.
        case timedOut
        /// The peer sent something the protocol does not allow.
        case malformed(ProtocolError)
        /// The read itself failed.
        case failed(Int32)
        /// The wait was given up: `abandon` said so (the peer is stopped).
        case abandoned
    }

    /// How often a read with an `abandon` test runs it while nothing arrives (seconds).
    static let abandonCheckInterval = 0.5

    /// Reads one message. `deadline` (monotonic seconds) bounds the wait; nil
    /// waits as long as it takes.
    /// `abandon`, when given, is asked every ``abandonCheckInterval`` seconds
    /// while nothing arrives; the read stops with ``ReadFailure/abandoned`` once it says yes.
    package func receive(maximum: Int, deadline: Double? = nil, abandon: (() -> Bool)? = nil) throws(ReadFailure)
        -> ReceivedMessage
    {
        var header = [UInt8](repeating: 0, count: 5)
        var received: FileDescriptor?
        try read(into: &header, count: 5, deadline: deadline, abandon: abandon, descriptor: &received)
        let (length, kind) = HelperMessage.header(header)
        guard length >= 0, length <= maximum else {
            throw .malformed(ProtocolError("a message of \(length) bytes (at most \(maximum) expected)"))
        }
        var body = [UInt8](repeating: 0, count: length)
        var ignored: FileDescriptor?
        try read(into: &body, count: length, deadline: deadline, abandon: abandon, descriptor: &ignored)
        return ReceivedMessage(kind: kind, body: body, descriptor: received)
    }

    /// Fills `buffer[0..<count]`; the first descriptor arriving with the bytes is
    /// stored in `received` (any later one is closed).
    private func read(
        into buffer: inout [UInt8], count: Int, deadline: Double?, abandon: (() -> Bool)?,
        descriptor passed: inout FileDescriptor?
    ) throws(ReadFailure) {
        var done = 0
        while done < count {
            if let deadline {
                let remaining = deadline - MonotonicClock.now()
                guard remaining > 0 else { throw .timedOut }
                let wait = abandon == nil ? remaining : min(remaining, Self.abandonCheckInterval)
                if !socket.waitReadable(milliseconds: Int32(min(wait * 1000 + 1, Double(Int32.max)))) {
                    if let abandon, abandon() { throw .abandoned }
                    continue
                }
            }
            let received = buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(SystemError) in
                    try socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: bytes[done..<count]))
                }
            }
            let got: (count: Int, descriptor: FileDescriptor?)
            switch received {
            case .success(let value): got = value
            case .failure(let error): throw .failed(error.code)
            }
            if passed == nil { passed = got.descriptor }
            if got.count == 0 { throw .closed }
            done += got.count
        }
    }
}
