// What Google's motion-photo XMP says, read from untrusted bytes by a small,
// tolerant XML scanner: namespaces are resolved from their `xmlns`
// declarations (a prefix is the writer's choice: `Camera:`, `GCamera:`,
// `Item:`, `ContainerItem:` are all seen), values are read from attributes or
// from elements' text. No entity beyond the five predefined ones, no DTD, no
// recursion: the scanner walks the bytes once and gives up on anything odd.

/// The motion-photo fields of an XMP packet.
package struct MotionPhotoXMP: Equatable {
    /// `GCamera:MotionPhoto` is 1.
    var motionPhoto = false
    /// `GCamera:MicroVideo` is 1.
    var microVideo = false
    /// `GCamera:MicroVideoOffset`: the video's distance from the end of the file.
    var microVideoOffset: Int?
    /// The items of `Container:Directory`, in order (the first is the primary image).
    var items: [Item] = []

    /// One `Container:Item`.
    struct Item: Equatable {
        var mime: String?
        var semantic: String?
        var length: Int?
        var padding: Int?

        /// A video item (`Semantic` MotionPhoto, or a `video/*` MIME type).
        var isVideo: Bool { semantic == "MotionPhoto" || (mime?.hasPrefix("video/") ?? false) }
    }

    /// True when the packet says the file is a motion photo.
    var declaresMotionPhoto: Bool { motionPhoto || microVideo || items.contains(where: \.isVideo) }

    static let cameraNamespace = "http://ns.google.com/photos/1.0/camera/"
    static let containerNamespace = "http://ns.google.com/photos/1.0/container/"
    static let itemNamespace = "http://ns.google.com/photos/1.0/container/item/"

    /// Most bytes of XMP read (a JPEG's XMP segment holds at most 64 KiB).
    static let maximumSize = 1 << 20
    /// Most container items kept.
    static let maximumItems = 16

    /// The fields in `xmp` (the packet's bytes); nil when it names none of them.
    package init?(_ xmp: ArraySlice<UInt8>) {
        guard xmp.count <= Self.maximumSize else { return nil }
        var scanner = XMLScanner(xmp)
        var itemDepth: Int?  // the depth of the open Container:Item element
        var field: (namespace: String, name: String)?  // an element whose text is a value
        var found = false
        while let event = scanner.next() {
            switch event {
            case .start(let element, let attributes, let depth, let selfClosing):
                let isItem = element.namespace == Self.containerNamespace && element.name == "Item"
                if isItem, items.count < Self.maximumItems {
                    items.append(Item())
                    itemDepth = selfClosing ? nil : depth
                    found = true
                }
                for attribute in attributes {
                    found =
                        apply(attribute.namespace, attribute.name, attribute.value, inItem: isItem || itemDepth != nil)
                        || found
                }
                field = selfClosing ? nil : (element.namespace, element.name)
            case .text(let text):
                if let open = field {
                    found = apply(open.namespace, open.name, text, inItem: itemDepth != nil) || found
                }
            case .end(let depth):
                field = nil
                if depth == itemDepth { itemDepth = nil }
            }
        }
        guard found else { return nil }
    }

    /// Records one value; true when it was a motion-photo field.
    private mutating func apply(_ namespace: String, _ name: String, _ value: String, inItem: Bool) -> Bool {
        let trimmed = String(value.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        switch namespace {
        case Self.cameraNamespace:
            switch name {
            case "MotionPhoto": motionPhoto = trimmed == "1"
            case "MicroVideo": microVideo = trimmed == "1"
            case "MicroVideoOffset": microVideoOffset = Self.integer(trimmed)
            default: return false
            }
            return true
        case Self.itemNamespace where inItem && !items.isEmpty:
            switch name {
            case "Mime": items[items.count - 1].mime = String(trimmed.prefix(64))
            case "Semantic": items[items.count - 1].semantic = String(trimmed.prefix(64))
            case "Length": items[items.count - 1].length = Self.integer(trimmed)
            case "Padding": items[items.count - 1].padding = Self.integer(trimmed)
            default: return false
            }
            return true
        default:
            return false
        }
    }

    /// A non-negative decimal integer of at most 15 digits.
    static func integer(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 15, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int(text)
    }
}

/// A forward-only XML scanner over bytes: start tags (with their attributes,
/// names resolved to namespaces), text, end tags. Comments, processing
/// instructions and declarations are skipped; malformed input ends the scan.
struct XMLScanner {
    struct Name {
        let namespace: String
        let name: String
    }

    struct Attribute {
        let namespace: String
        let name: String
        let value: String
    }

    enum Event {
        case start(Name, [Attribute], depth: Int, selfClosing: Bool)
        case text(String)
        /// The end of the element opened at `depth`.
        case end(depth: Int)
    }

    private let bytes: ArraySlice<UInt8>
    private var position: Int
    /// Prefix → namespace, one dictionary per open element.
    private var scopes: [[String: String]] = [[:]]
    /// Most elements open at once.
    static let maximumDepth = 64

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    mutating func next() -> Event? {
        while position < bytes.endIndex {
            if bytes[position] != UInt8(ascii: "<") {
                let start = position
                while position < bytes.endIndex, bytes[position] != UInt8(ascii: "<") { position += 1 }
                let text = Self.unescape(bytes[start..<position])
                if text.contains(where: { !$0.isWhitespace }) { return .text(text) }
                continue
            }
            // Comments, processing instructions, declarations, CDATA: skipped.
            if let skip = skipSpecial() {
                guard skip else { return nil }
                continue
            }
            if position + 1 < bytes.endIndex, bytes[position + 1] == UInt8(ascii: "/") {
                guard let close = index(of: UInt8(ascii: ">"), from: position) else { return nil }
                position = close + 1
                guard scopes.count > 1 else { return nil }
                scopes.removeLast()
                return .end(depth: scopes.count)
            }
            return startTag()
        }
        return nil
    }

    /// Skips `<!-- … -->`, `<? … ?>`, `<![CDATA[ … ]]>` and `<! … >`: true when one
    /// was skipped, false when one is unterminated, nil when the tag is an element.
    private mutating func skipSpecial() -> Bool? {
        guard position + 1 < bytes.endIndex else { return false }
        let second = bytes[position + 1]
        guard second == UInt8(ascii: "!") || second == UInt8(ascii: "?") else { return nil }
        let terminator: [UInt8]
        if starts(with: "<!--") {
            terminator = Array("-->".utf8)
        } else if starts(with: "<![CDATA[") {
            terminator = Array("]]>".utf8)
        } else if second == UInt8(ascii: "?") {
            terminator = Array("?>".utf8)
        } else {
            terminator = Array(">".utf8)
        }
        guard let end = bytes[position...].firstRange(of: terminator) else { return false }
        position = end.upperBound
        return true
    }

    private func starts(with prefix: String) -> Bool {
        let p = Array(prefix.utf8)
        return bytes.endIndex - position >= p.count && bytes[position..<(position + p.count)].elementsEqual(p)
    }

    private func index(of byte: UInt8, from: Int) -> Int? {
        var i = from
        while i < bytes.endIndex {
            if bytes[i] == byte { return i }
            i += 1
        }
        return nil
    }

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    private mutating func startTag() -> Event? {
        position += 1
        guard let qualified = readName() else { return nil }
        var raw: [(String, String)] = []
        var selfClosing = false
        while true {
            while position < bytes.endIndex, Self.isSpace(bytes[position]) { position += 1 }
            guard position < bytes.endIndex else { return nil }
            if bytes[position] == UInt8(ascii: ">") {
                position += 1
                break
            }
            if bytes[position] == UInt8(ascii: "/") {
                guard position + 1 < bytes.endIndex, bytes[position + 1] == UInt8(ascii: ">") else { return nil }
                position += 2
                selfClosing = true
                break
            }
            guard let name = readName() else { return nil }
            while position < bytes.endIndex, Self.isSpace(bytes[position]) { position += 1 }
            guard position < bytes.endIndex, bytes[position] == UInt8(ascii: "=") else { return nil }
            position += 1
            while position < bytes.endIndex, Self.isSpace(bytes[position]) { position += 1 }
            guard position < bytes.endIndex,
                bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'")
            else { return nil }
            let quote = bytes[position]
            guard let close = index(of: quote, from: position + 1) else { return nil }
            raw.append((name, Self.unescape(bytes[(position + 1)..<close])))
            position = close + 1
            guard raw.count <= 256 else { return nil }
        }
        guard scopes.count <= Self.maximumDepth else { return nil }
        var scope = scopes[scopes.count - 1]
        for (name, value) in raw {
            if name == "xmlns" {
                scope[""] = value
            } else if name.hasPrefix("xmlns:") {
                scope[String(name.dropFirst(6))] = value
            }
        }
        func resolve(_ qualified: String, isAttribute: Bool) -> (String, String) {
            guard let colon = qualified.firstIndex(of: ":") else {
                return (isAttribute ? "" : scope[""] ?? "", qualified)
            }
            return (scope[String(qualified[..<colon])] ?? "", String(qualified[qualified.index(after: colon)...]))
        }
        let element = resolve(qualified, isAttribute: false)
        let attributes = raw.filter { $0.0 != "xmlns" && !$0.0.hasPrefix("xmlns:") }.map { name, value in
            let (namespace, local) = resolve(name, isAttribute: true)
            return Attribute(namespace: namespace, name: local, value: value)
        }
        let depth = scopes.count
        if !selfClosing { scopes.append(scope) }
        return .start(Name(namespace: element.0, name: element.1), attributes, depth: depth, selfClosing: selfClosing)
    }

    private mutating func readName() -> String? {
        let start = position
        while position < bytes.endIndex {
            let b = bytes[position]
            if Self.isSpace(b) || b == UInt8(ascii: ">") || b == UInt8(ascii: "/") || b == UInt8(ascii: "=") { break }
            position += 1
        }
        guard position > start, position - start <= 256 else { return nil }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// Text with the five predefined entities and numeric references replaced.
    static func unescape(_ raw: ArraySlice<UInt8>) -> String {
        let text = String(decoding: raw, as: UTF8.self)
        guard text.contains("&") else { return text }
        var out = ""
        var rest = text[...]
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semi) <= 10 else {
                out += rest[amp...]
                return out
            }
            let entity = rest[rest.index(after: amp)..<semi]
            switch entity {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                if entity.hasPrefix("#x"), let v = UInt32(entity.dropFirst(2), radix: 16), let s = Unicode.Scalar(v) {
                    out.unicodeScalars.append(s)
                } else if entity.hasPrefix("#"), let v = UInt32(entity.dropFirst()), let s = Unicode.Scalar(v) {
                    out.unicodeScalars.append(s)
                }
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }
}
