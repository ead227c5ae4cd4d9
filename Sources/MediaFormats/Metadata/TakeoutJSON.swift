// Google Takeout's JSON sidecars, read by the decoder (in a sandboxed helper)
// over their untrusted bytes: a strict JSON parser of its own (no Foundation),
// bounded in size (``TakeoutJSON/maximumSize``) and nesting
// (``TakeoutJSON/maximumDepth``, so its recursion never runs deep), UTF-8 only,
// no fragments, no comments, no trailing commas. What it returns is a few
// typed facts (``TakeoutSidecar``), which the parent checks before use, and,
// for location privacy, the byte ranges that blank `geoData` and `geoDataExif`
// in place with spaces (the JSON stays valid: the members go with their comma).

/// What a Takeout JSON says about its photo, as the decoder read it. Strings
/// are cut to their maximum (``TakeoutJSON/maximumTitle``,
/// ``TakeoutJSON/maximumDescription``); numbers are as the file wrote them
/// (the parent checks their ranges).
public struct TakeoutSidecar: Sendable, Codable, Hashable {
    /// `title`: the photo's name as Takeout knew it.
    public var title: String
    /// `photoTakenTime.timestamp`: seconds since 1970 (a string or a number in the file).
    public var photoTakenTime: Int64?
    /// `description`.
    public var description: String?
    /// `geoData`.
    public var geoData: TakeoutPlace?
    /// `geoDataExif`.
    public var geoDataExif: TakeoutPlace?

    /// Facts of a sidecar titled `title`.
    public init(
        title: String, photoTakenTime: Int64? = nil, description: String? = nil, geoData: TakeoutPlace? = nil,
        geoDataExif: TakeoutPlace? = nil
    ) {
        self.title = title
        self.photoTakenTime = photoTakenTime
        self.description = description
        self.geoData = geoData
        self.geoDataExif = geoDataExif
    }
}

/// A `geoData` object: degrees, and metres of altitude.
public struct TakeoutPlace: Sendable, Codable, Hashable {
    /// `latitude`, degrees.
    public var latitude: Double
    /// `longitude`, degrees.
    public var longitude: Double
    /// `altitude`, metres.
    public var altitude: Double?

    /// A place at `latitude`, `longitude` (and `altitude`).
    public init(latitude: Double, longitude: Double, altitude: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }
}

/// Reads Takeout JSON sidecars (see the file's header comment).
package enum TakeoutJSON {
    /// The largest JSON read (Takeout's are a few KB).
    package static let maximumSize = 1 << 20
    /// The deepest nesting accepted (Takeout's is 3).
    package static let maximumDepth = 16
    /// The longest title kept, in Unicode scalars.
    package static let maximumTitle = 1024
    /// The longest description kept, in Unicode scalars.
    package static let maximumDescription = 2000

    /// Why a JSON was not read, in words (a helper's failure message).
    package struct Refusal: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// The facts of a Takeout JSON, or why these bytes are not one.
    package static func read(_ bytes: [UInt8]) throws(Refusal) -> TakeoutSidecar {
        let members = try topLevel(bytes)
        guard case .string(let title)? = members.last(where: { $0.key == "title" })?.value else {
            throw Refusal("a JSON object without a \"title\" string (not a Takeout sidecar)")
        }
        var facts = TakeoutSidecar(title: String(String.UnicodeScalarView(title.unicodeScalars.prefix(maximumTitle))))
        func member(_ name: String) -> Value? { members.last { $0.key == name }?.value }
        if case .object(let taken)? = member("photoTakenTime"),
            let stamp = taken.last(where: { $0.key == "timestamp" })?.value
        {
            switch stamp {
            case .string(let text): facts.photoTakenTime = Int64(text)
            case .number(let text):
                facts.photoTakenTime =
                    Int64(text) ?? Double(text).flatMap { $0.isFinite && abs($0) < 1e15 ? Int64($0) : nil }
            default: break
            }
        }
        if case .string(let text)? = member("description") {
            facts.description = String(String.UnicodeScalarView(text.unicodeScalars.prefix(maximumDescription)))
        }
        facts.geoData = place(member("geoData"))
        facts.geoDataExif = place(member("geoDataExif"))
        return facts
    }

    /// Where `bytes` (a Takeout JSON) records a place: its top-level `geoData`
    /// and `geoDataExif` members, each blanked with spaces together with the
    /// comma that separates it from its neighbour. Nothing for bytes that are
    /// not a Takeout JSON (nor for one already blanked).
    package static func location(_ bytes: [UInt8]) -> LocationMetadata {
        guard let members = try? topLevel(bytes), members.contains(where: { $0.key == "title" }) else {
            return LocationMetadata()
        }
        var records: [LocationRecord] = []
        var keptBefore = false
        for (index, member) in members.enumerated() {
            guard member.key == "geoData" || member.key == "geoDataExif" else {
                keptBefore = true
                continue
            }
            let range: Range<Int>
            if keptBefore {
                // From the end of the member before (its comma follows it).
                range = members[index - 1].range.upperBound..<member.range.upperBound
            } else if index + 1 < members.count {
                // A leading member: up to the next member's key.
                range = member.range.lowerBound..<members[index + 1].range.lowerBound
            } else {
                range = member.range
            }
            records.append(
                LocationRecord(
                    name: "Takeout JSON \(member.key)",
                    edits: [MetadataEdit(offset: range.lowerBound, length: range.count, fill: .spaces, step: 0)]))
        }
        return LocationMetadata(found: records)
    }

    private static func place(_ value: Value?) -> TakeoutPlace? {
        guard case .object(let members)? = value else { return nil }
        func number(_ name: String) -> Double? {
            guard case .number(let text)? = members.last(where: { $0.key == name })?.value, let value = Double(text),
                value.isFinite
            else { return nil }
            return value
        }
        // Takeout writes all zeros for "no place": none is answered.
        guard let latitude = number("latitude"), let longitude = number("longitude"), latitude != 0 || longitude != 0
        else { return nil }
        return TakeoutPlace(latitude: latitude, longitude: longitude, altitude: number("altitude"))
    }

    // MARK: - The parser

    /// A member of an object: its key, its value, and the bytes from its key's
    /// opening quote to the end of its value.
    struct Member {
        var key: String
        var value: Value
        var range: Range<Int>
    }

    indirect enum Value {
        case object([Member])
        case array
        case string(String)
        /// The number as written (its grammar checked).
        case number(String)
        case literal
    }

    /// The members of the object `bytes` hold, or why they hold none.
    static func topLevel(_ bytes: [UInt8]) throws(Refusal) -> [Member] {
        guard bytes.count <= maximumSize else { throw Refusal("larger than \(maximumSize >> 20) MiB") }
        var parser = Parser(bytes: bytes)
        // A UTF-8 byte-order mark.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.position = 3 }
        parser.skipSpace()
        guard parser.peek == UInt8(ascii: "{") else { throw Refusal("not a JSON object") }
        let value = try parser.value(depth: 1)
        parser.skipSpace()
        guard parser.position == bytes.count else {
            throw Refusal("bytes after the JSON object, at \(parser.position)")
        }
        guard case .object(let members) = value else { throw Refusal("not a JSON object") }
        return members
    }

    struct Parser {
        let bytes: [UInt8]
        var position = 0

        var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(Refusal) {
            guard peek == byte else {
                throw Refusal("not valid JSON: expected '\(Character(Unicode.Scalar(byte)))' at byte \(position)")
            }
            position += 1
        }

        mutating func value(depth: Int) throws(Refusal) -> Value {
            guard let byte = peek else { throw Refusal("not valid JSON: it ends early") }
            switch byte {
            case UInt8(ascii: "{"):
                guard depth <= maximumDepth else { throw Refusal("nested deeper than \(maximumDepth) levels") }
                position += 1
                var members: [Member] = []
                skipSpace()
                if peek == UInt8(ascii: "}") {
                    position += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    let start = position
                    guard peek == UInt8(ascii: "\"") else {
                        throw Refusal("not valid JSON: expected a key at byte \(position)")
                    }
                    let key = try string()
                    skipSpace()
                    try expect(UInt8(ascii: ":"))
                    skipSpace()
                    let member = try value(depth: depth + 1)
                    // Only the top level's ranges and the few nested values read are kept.
                    members.append(Member(key: key, value: depth <= 2 ? member : .literal, range: start..<position))
                    skipSpace()
                    if peek == UInt8(ascii: ",") {
                        position += 1
                        continue
                    }
                    try expect(UInt8(ascii: "}"))
                    return .object(members)
                }
            case UInt8(ascii: "["):
                guard depth <= maximumDepth else { throw Refusal("nested deeper than \(maximumDepth) levels") }
                position += 1
                skipSpace()
                if peek == UInt8(ascii: "]") {
                    position += 1
                    return .array
                }
                while true {
                    skipSpace()
                    _ = try value(depth: depth + 1)
                    skipSpace()
                    if peek == UInt8(ascii: ",") {
                        position += 1
                        continue
                    }
                    try expect(UInt8(ascii: "]"))
                    return .array
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return .number(try number())
            case UInt8(ascii: "t"): try word("true")
            case UInt8(ascii: "f"): try word("false")
            case UInt8(ascii: "n"): try word("null")
            default:
                throw Refusal("not valid JSON: unexpected byte 0x\(String(byte, radix: 16)) at \(position)")
            }
            return .literal
        }

        mutating func word(_ text: String) throws(Refusal) {
            for byte in text.utf8 { try expect(byte) }
        }

        /// A number's text, its grammar checked (RFC 8259).
        mutating func number() throws(Refusal) -> String {
            let start = position
            if peek == UInt8(ascii: "-") { position += 1 }
            func digits() -> Int {
                var count = 0
                while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    position += 1
                    count += 1
                }
                return count
            }
            if peek == UInt8(ascii: "0") {
                position += 1
            } else if digits() == 0 {
                throw Refusal("not valid JSON: a bad number at byte \(start)")
            }
            if peek == UInt8(ascii: ".") {
                position += 1
                guard digits() > 0 else { throw Refusal("not valid JSON: a bad number at byte \(start)") }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                position += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
                guard digits() > 0 else { throw Refusal("not valid JSON: a bad number at byte \(start)") }
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        /// A string's value: escapes resolved, its bytes valid UTF-8, no raw
        /// control characters. Its bytes are gathered as they are (escapes
        /// written as UTF-8) and checked once, at its end.
        mutating func string() throws(Refusal) -> String {
            try expect(UInt8(ascii: "\""))
            let start = position
            // Most strings are ASCII without escapes: those end at their quote and need no check.
            var ascii = position
            while ascii < bytes.count, bytes[ascii] >= 0x20, bytes[ascii] < 0x80, bytes[ascii] != UInt8(ascii: "\""),
                bytes[ascii] != UInt8(ascii: "\\")
            {
                ascii += 1
            }
            if ascii < bytes.count, bytes[ascii] == UInt8(ascii: "\"") {
                position = ascii + 1
                return String(decoding: bytes[start..<ascii], as: UTF8.self)
            }
            var escaped: [UInt8]?
            var runStart = position
            while true {
                guard let byte = peek else { throw Refusal("not valid JSON: a string that never ends") }
                switch byte {
                case UInt8(ascii: "\""):
                    let text: String?
                    if var gathered = escaped {
                        gathered += bytes[runStart..<position]
                        text = String(validating: gathered, as: UTF8.self)
                    } else {
                        text = String(validating: bytes[start..<position], as: UTF8.self)
                    }
                    guard let text else { throw Refusal("not valid UTF-8 in a string at byte \(start)") }
                    position += 1
                    return text
                case UInt8(ascii: "\\"):
                    var gathered = escaped ?? []
                    gathered += bytes[runStart..<position]
                    position += 1
                    guard let escape = peek else { throw Refusal("not valid JSON: a string that never ends") }
                    position += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): gathered.append(escape)
                    case UInt8(ascii: "b"): gathered.append(0x08)
                    case UInt8(ascii: "f"): gathered.append(0x0C)
                    case UInt8(ascii: "n"): gathered.append(0x0A)
                    case UInt8(ascii: "r"): gathered.append(0x0D)
                    case UInt8(ascii: "t"): gathered.append(0x09)
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800..<0xDC00).contains(code), peek == UInt8(ascii: "\\"), position + 1 < bytes.count,
                            bytes[position + 1] == UInt8(ascii: "u")
                        {
                            position += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else {
                                throw Refusal("not valid JSON: a lone surrogate at byte \(position)")
                            }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else {
                            throw Refusal("not valid JSON: a lone surrogate at byte \(position)")
                        }
                        UTF8.encode(scalar) { gathered.append($0) }
                    default:
                        throw Refusal("not valid JSON: a bad escape at byte \(position - 1)")
                    }
                    escaped = gathered
                    runStart = position
                case 0..<0x20:
                    throw Refusal("not valid JSON: a control character in a string at byte \(position)")
                default:
                    position += 1
                }
            }
        }

        mutating func hex4() throws(Refusal) -> UInt32 {
            guard position + 4 <= bytes.count else { throw Refusal("not valid JSON: a string that never ends") }
            var code: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw Refusal("not valid JSON: a bad \\u escape at byte \(position)")
                }
                code = code << 4 | digit
                position += 1
            }
            return code
        }
    }
}
