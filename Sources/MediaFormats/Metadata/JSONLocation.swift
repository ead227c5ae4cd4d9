// Where a JSON document records a position, for location privacy: run by the
// decoder (in a sandboxed helper) over a JSON file's untrusted bytes, read in
// chunks from start to end (any size, in bounded memory), its nesting kept in
// an explicit stack (no recursion, any depth up to ``JSONLocation/maximumDepth``).
// A member whose key names a position (Takeout's `geoData` and `geoDataExif`,
// `latitude`, `longitude`, `location`, `position`, `loc`, any `gps…`, …:
// ``JSONLocation/isPositionKey(_:)``), and a number under a key that names a
// latitude or a longitude (`lat…`, `lng…`, `lon…`, `…E7`: `latE7`, `lngE7`,
// `lat_deg`: ``JSONLocation/namesCoordinate(_:)``; or a text that reads as a
// number: ``JSONLocation/isNumber(_:)``), at any depth, in any object, is blanked whole with spaces together with the
// comma that separates it from a neighbour, so the JSON stays valid and every
// other byte keeps its offset. A file of several values one after the other
// (JSON Lines) is read value by value.

/// Finds where a JSON document records a position (see the file's header comment).
package enum JSONLocation {
    /// The deepest nesting followed; a deeper document's location cannot be
    /// told (it is not removable).
    package static let maximumDepth = 1_000_000
    /// Bytes read at a time.
    static let chunk = 64 << 10
    /// Keys longer than this are no position key (and are not kept whole).
    static let maximumKey = 64

    /// The keys that hold a position, compared in lower case without `_`,
    /// `-` and spaces: Takeout's, Google's location history's, the usual
    /// spellings of coordinates and places. Any key starting with `gps` is one too.
    static let positionKeys: Set<String> = [
        "geodata", "geodataexif", "geo", "geolocation", "geopoint", "geocoordinates", "geotag", "location", "locations",
        "coordinates",
        "coords", "latlng", "latlong", "lat", "lng", "lon", "latitude", "longitude", "altitude", "latitudee7",
        "longitudee7",
        "latitudespan", "longitudespan", "position", "pos", "loc",
    ]

    /// True when a member with the key `key` (its characters, escapes read)
    /// records a position.
    package static func isPositionKey(_ key: String) -> Bool {
        let normalized = String(key.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != " " })
        return positionKeys.contains(normalized) || normalized.hasPrefix("gps")
    }

    /// True when a number under the key `key` is a latitude or a longitude:
    /// the key starts with `lat`, `lng` or `lon`, or ends with `e7` (degrees
    /// times 10^7, as Google writes them), compared as ``isPositionKey(_:)``
    /// compares. Only a number is, or a text that reads as one
    /// (``isNumber(_:)``: `"latE7": "488584370"`): `longDescription: "…"` stays.
    package static func namesCoordinate(_ key: String) -> Bool {
        let normalized = String(key.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != " " })
        return ["lat", "lng", "lon"].contains { normalized.hasPrefix($0) } || normalized.hasSuffix("e7")
    }

    /// True when the text `text` is a number (a coordinate written as a
    /// string: `"48.8584"`, `" -2.29 "`, `"488584370"`): an optional sign,
    /// digits with at most one decimal point (`.` or `,`), an optional
    /// exponent, spaces around.
    package static func isNumber(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        while bytes.first == 0x20 { bytes = bytes.dropFirst() }
        while bytes.last == 0x20 { bytes = bytes.dropLast() }
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        var digits = 0
        var points = 0
        while let byte = bytes.first {
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                digits += 1
            } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: ",") {
                points += 1
            } else {
                break
            }
            bytes = bytes.dropFirst()
        }
        guard digits > 0, points <= 1 else { return false }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                return false
            }
            return true
        }
        return bytes.isEmpty
    }

    /// The position members of the JSON document that is all of `stream`.
    /// `strict` (a file that must be JSON: named `.json`, or a Takeout
    /// sidecar): one that is not valid JSON is not removable, so it is not
    /// delivered. Otherwise (a text that may be JSON by its first character) a
    /// document that turns out not to be JSON holds no position, unless one
    /// was found before the fault.
    static func scan(_ stream: SegmentedBytes, strict: Bool, into findings: inout Findings) {
        var scanner = JSONScanner(stream)
        let fault = scanner.run()
        for found in scanner.found {
            findings.add(LocationRecord(name: "JSON \(found.key)", edits: stream.edits(found.range, .spaces, step: 0)))
        }
        if let fault, strict || !scanner.found.isEmpty {
            findings.notRemovable(
                "a JSON document that cannot be read to its end (\(fault)): where it records a position cannot be told")
        }
    }
}

/// A JSON reader that follows a document's structure from its start to its
/// end, with no recursion, and notes the byte range of each member whose key
/// names a position (with the comma that goes with it).
private struct JSONScanner {
    let stream: SegmentedBytes
    private var buffer: [UInt8] = []
    private var bufferStart = 0
    private(set) var position = 0
    /// What was found: each position member's key and the range to blank.
    private(set) var found: [(key: String, range: Range<Int>)] = []

    /// An object or an array being read.
    private struct Frame {
        let isObject: Bool
        /// Where the last member's value ended (just after `{` at first).
        var lastEnd: Int
        /// True once a member that stays was met.
        var keptBefore = false
        /// A position member met before any member that stays: blanked up to
        /// the next member's key (or alone, if it is the last).
        var pending: (start: Int, end: Int, key: String)?
        /// The member being read: where its key starts, the key, whether it is
        /// a position, whether its key names a coordinate (a position when its value is a number).
        var member: (start: Int, key: String, position: Bool, coordinate: Bool)?
    }

    private var stack: [Frame] = []
    /// The depth of the object whose position member is being read: nothing
    /// inside it is looked for (it is blanked whole).
    private var removingDepth: Int?

    init(_ stream: SegmentedBytes) { self.stream = stream }

    private enum Expect { case value, firstKey, key, firstElement }

    struct Fault: CustomStringConvertible {
        let description: String
    }

    /// Reads the document to its end: nil, or what is wrong with it.
    mutating func run() -> Fault? {
        if peekBytes(3) == [0xEF, 0xBB, 0xBF] { position = 3 }
        skipSpace()
        if peek == nil { return nil }
        var expect = Expect.value
        while true {
            skipSpace()
            switch expect {
            case .value:
                guard let byte = peek else {
                    return Fault(description: "it ends where a value should be, at byte \(position)")
                }
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    guard stack.count < JSONLocation.maximumDepth else {
                        return Fault(description: "nested deeper than \(JSONLocation.maximumDepth) levels")
                    }
                    position += 1
                    let isObject = byte == UInt8(ascii: "{")
                    stack.append(Frame(isObject: isObject, lastEnd: position))
                    expect = isObject ? .firstKey : .firstElement
                    continue
                }
                if let fault = scalar(byte) { return fault }
            case .firstKey, .key:
                if expect == .firstKey, peek == UInt8(ascii: "}") {
                    position += 1
                    stack.removeLast()
                } else {
                    if let fault = key() { return fault }
                    expect = .value
                    continue
                }
            case .firstElement:
                if peek == UInt8(ascii: "]") {
                    position += 1
                    stack.removeLast()
                } else {
                    expect = .value
                    continue
                }
            }
            switch afterValue() {
            case .end: return nil
            case .next(let next): expect = next
            case .fault(let fault): return fault
            }
        }
    }

    /// A string, a number, `true`, `false` or `null`, starting with `byte`:
    /// nil, or what is wrong with it.
    private mutating func scalar(_ byte: UInt8) -> Fault? {
        switch byte {
        case UInt8(ascii: "\""):
            // Under a key that names a coordinate, a number written as a text is one too.
            let coordinate = stack.last?.member?.coordinate == true
            let (text, fault) = string(keeping: coordinate)
            if let fault { return fault }
            if coordinate, let text, JSONLocation.isNumber(text) {
                stack[stack.count - 1].member?.position = true
            }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            if let fault = number() { return fault }
            // A latitude or a longitude: the member is a position.
            if let member = stack.last?.member, member.coordinate {
                stack[stack.count - 1].member?.position = true
            }
        case UInt8(ascii: "t"): if let fault = word("true") { return fault }
        case UInt8(ascii: "f"): if let fault = word("false") { return fault }
        case UInt8(ascii: "n"): if let fault = word("null") { return fault }
        default: return Fault(description: "an unexpected byte 0x\(String(byte, radix: 16)) at \(position)")
        }
        return nil
    }

    /// A member's key and its `:`, noted as the innermost object's member
    /// being read (a position's, a coordinate's): nil, or what is wrong with it.
    private mutating func key() -> Fault? {
        let start = position
        guard peek == UInt8(ascii: "\"") else {
            return Fault(description: "a key expected at byte \(position)")
        }
        let (key, fault) = string(keeping: true)
        if let fault { return fault }
        skipSpace()
        guard peek == UInt8(ascii: ":") else {
            return Fault(description: "':' expected at byte \(position)")
        }
        position += 1
        let isPosition = removingDepth == nil && JSONLocation.isPositionKey(key ?? "")
        if isPosition { removingDepth = stack.count }
        let coordinate = removingDepth == nil && JSONLocation.namesCoordinate(key ?? "")
        stack[stack.count - 1].member = (start, key ?? "", isPosition, coordinate)
        return nil
    }

    /// What follows a value that ended at `position`.
    private enum AfterValue {
        /// The document ended.
        case end
        /// The next thing to read.
        case next(Expect)
        case fault(Fault)
    }

    /// Closes what a value that ended at `position` completes, then sees what
    /// follows: the end, the next value (JSON Lines), key or element.
    private mutating func afterValue() -> AfterValue {
        while true {
            guard !stack.isEmpty else {
                // A top-level value ended: the end, or the next value (JSON Lines).
                skipSpace()
                return peek == nil ? .end : .next(.value)
            }
            if stack[stack.count - 1].isObject { memberEnded() }
            skipSpace()
            let frame = stack[stack.count - 1]
            let close = frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            guard let byte = peek else {
                return .fault(Fault(description: "it ends inside \(frame.isObject ? "an object" : "an array")"))
            }
            position += 1
            if byte == UInt8(ascii: ",") { return .next(frame.isObject ? .key : .value) }
            guard byte == close else {
                return .fault(
                    Fault(
                        description: "',' or '\(Character(Unicode.Scalar(close)))' expected at byte \(position - 1)"))
            }
            if let pending = frame.pending { note(pending.key, pending.start..<pending.end) }
            stack.removeLast()
        }
    }

    /// The member being read in the innermost object ended at `position`.
    private mutating func memberEnded() {
        let depth = stack.count
        var frame = stack[depth - 1]
        guard let member = frame.member else { return }
        frame.member = nil
        if let pending = frame.pending {
            note(pending.key, pending.start..<member.start)
            frame.pending = nil
        }
        if member.position {
            removingDepth = nil
            if frame.keptBefore {
                note(member.key, frame.lastEnd..<position)
            } else {
                frame.pending = (member.start, position, member.key)
            }
        } else {
            frame.keptBefore = true
        }
        frame.lastEnd = position
        stack[depth - 1] = frame
    }

    private mutating func note(_ key: String, _ range: Range<Int>) {
        found.append((key, range))
    }

    // MARK: - Bytes

    private var peek: UInt8? {
        mutating get {
            if position - bufferStart >= buffer.count || position < bufferStart { refill() }
            let offset = position - bufferStart
            return offset >= 0 && offset < buffer.count ? buffer[offset] : nil
        }
    }

    private mutating func refill() {
        bufferStart = position
        let end = min(stream.count, position + JSONLocation.chunk)
        buffer = position < end ? stream.read(position..<end) ?? [] : []
    }

    private mutating func peekBytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        let start = position
        for _ in 0..<count {
            guard let byte = peek else { break }
            bytes.append(byte)
            position += 1
        }
        position = start
        return bytes
    }

    private mutating func skipSpace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    private mutating func word(_ text: StaticString) -> Fault? {
        let start = position
        for expected in text.withUTF8Buffer(Array.init) {
            guard peek == expected else { return Fault(description: "a bad literal at byte \(start)") }
            position += 1
        }
        return nil
    }

    private mutating func number() -> Fault? {
        let start = position
        if peek == UInt8(ascii: "-") { position += 1 }
        func digits() -> Int {
            var count = 0
            while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                position += 1
                count += 1
            }
            return count
        }
        if peek == UInt8(ascii: "0") {
            position += 1
        } else if digits() == 0 {
            return Fault(description: "a bad number at byte \(start)")
        }
        if peek == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { return Fault(description: "a bad number at byte \(start)") }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            position += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { return Fault(description: "a bad number at byte \(start)") }
        }
        return nil
    }

    /// A string (at its opening quote), its escapes checked; with `keeping`,
    /// its characters when it is short (a key: escapes read, up to
    /// ``JSONLocation/maximumKey`` bytes; nil beyond).
    private mutating func string(keeping: Bool) -> (String?, fault: Fault?) {
        let start = position
        position += 1
        var kept: [UInt8]? = keeping ? [] : nil
        func keep(_ byte: UInt8) {
            guard kept != nil else { return }
            if kept!.count >= JSONLocation.maximumKey { kept = nil } else { kept!.append(byte) }
        }
        while true {
            guard let byte = peek else {
                return (nil, Fault(description: "a string from byte \(start) that never ends"))
            }
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return (kept.map { String(decoding: $0, as: UTF8.self) }, nil)
            case UInt8(ascii: "\\"):
                guard let escape = peek else {
                    return (nil, Fault(description: "a string from byte \(start) that never ends"))
                }
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): keep(escape)
                case UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    keep(0x20)
                case UInt8(ascii: "u"):
                    var code: UInt32 = 0
                    for _ in 0..<4 {
                        guard let digit = peek.flatMap({ UInt32(String(UnicodeScalar($0)), radix: 16) }) else {
                            return (nil, Fault(description: "a bad \\u escape at byte \(position)"))
                        }
                        code = code << 4 | digit
                        position += 1
                    }
                    // Keys are compared in ASCII: anything else makes no position key.
                    if code < 0x80 { keep(UInt8(code)) } else { keep(0xFF) }
                default:
                    return (nil, Fault(description: "a bad escape at byte \(position - 1)"))
                }
            case 0..<0x20:
                return (nil, Fault(description: "a control character in a string at byte \(position - 1)"))
            default:
                keep(byte)
            }
        }
    }
}
