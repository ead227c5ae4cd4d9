// The location properties of an XMP packet: the EXIF schema's GPS properties
// (`exif:GPSLatitude`, `exif:GPSLongitude`, `exif:GPSAltitude`, … whatever
// prefix the packet binds to http://ns.adobe.com/exif/1.0/), as attributes
// (`exif:GPSLatitude="48,51.5N"`) or as elements (`<exif:GPSLatitude>…</…>`,
// nested structures included); DJI's and IPTC Extension's GPS properties
// too, and, when place names are to go, the properties that name the place
// (``XMPLocation/isPlaceName(_:namespace:)``). A small XML scanner, not a parser: it follows
// tags, attributes, namespace declarations, comments, CDATA and processing
// instructions well enough to find those properties' byte ranges, and gives
// up (finding nothing more) on anything it cannot follow. Overwriting a
// property with spaces leaves the rest of the packet well formed.

package enum XMPLocation {
    /// The EXIF schema's namespace.
    static let exifNamespace = "http://ns.adobe.com/exif/1.0/"
    /// The namespaces whose `GPS…` properties are positions: Adobe's EXIF
    /// schema, and CIPA's EXIF 2.3 one (`exifEX`).
    static let exifNamespaces: Set<String> = [exifNamespace, "http://cipa.jp/exif/1.0/"]
    /// DJI's drone schema, which DJI drones and their apps write beside (or
    /// instead of) EXIF GPS: `drone-dji:GpsLatitude`, `GpsLongitude` (and the
    /// misspelt `GpsLongtitude` of some firmware), `AbsoluteAltitude`.
    static let djiNamespace = "http://www.dji.com/drone-dji/1.0/"
    /// IPTC Extension's schema, whose location structures (`LocationCreated`,
    /// `LocationShown`) hold `Iptc4xmpExt:GPSLatitude`, `GPSLongitude` and
    /// `GPSAltitude` where a writer puts them in IPTC's namespace rather than EXIF's.
    static let iptcExtensionNamespace = "http://iptc.org/std/Iptc4xmpExt/2008-02-29/"
    /// Photoshop's schema (`photoshop:City`, `State`, `Country`) and IPTC
    /// Core's (`Iptc4xmpCore:Location`, the sub-location, and `CountryCode`):
    /// where the photo was taken, by name.
    static let photoshopNamespace = "http://ns.adobe.com/photoshop/1.0/"
    static let iptcCoreNamespace = "http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/"
    /// How reports spell the properties of each namespace (EXIF's go unprefixed, shown as `exif:`).
    static let shownPrefixes = [
        djiNamespace: "drone-dji:", iptcExtensionNamespace: "Iptc4xmpExt:", photoshopNamespace: "photoshop:",
        iptcCoreNamespace: "Iptc4xmpCore:",
    ]

    /// Whether the property `local` of the namespace `namespace` records a position.
    static func isPosition(_ local: String, namespace: String) -> Bool {
        if exifNamespaces.contains(namespace) { return local.hasPrefix("GPS") }
        if namespace == djiNamespace { return local.lowercased().hasPrefix("gps") || local == "AbsoluteAltitude" }
        if namespace == iptcExtensionNamespace { return local.hasPrefix("GPS") }
        return false
    }

    /// Whether the property `local` of the namespace `namespace` names the
    /// place (removed only when place names are to go, ``LocationScanner``'s
    /// `placeNames`): a city, a sub-location, a state, a country, and IPTC
    /// Extension's `LocationCreated` and `LocationShown` whole (their names and coordinates).
    static func isPlaceName(_ local: String, namespace: String) -> Bool {
        switch namespace {
        case photoshopNamespace: ["City", "State", "Country"].contains(local)
        case iptcCoreNamespace: ["Location", "CountryCode"].contains(local)
        case iptcExtensionNamespace: ["LocationCreated", "LocationShown"].contains(local)
        default: false
        }
    }

    /// A GPS property: its local name, the whole property (attribute or
    /// element, tags included) and its value (inside the quotes or the tags).
    package struct Property: Equatable {
        package let name: String
        package let whole: Range<Int>
        package let value: Range<Int>

        /// How reports name it: `exif:GPSLatitude`, `drone-dji:GpsLatitude`, `Iptc4xmpExt:GPSLatitude`.
        package var shown: String { name.contains(":") ? name : "exif:" + name }
    }

    /// The GPS properties of the XMP text `bytes`, in order (nested ones are
    /// inside their parent's range and not listed again).
    package static func gpsProperties(_ bytes: [UInt8], placeNames: Bool = false) -> [Property] {
        var scanner = Scanner(bytes: bytes, placeNames: placeNames)
        return scanner.run()
    }

    /// ``gpsProperties(_:placeNames:)``, and whether the scanner followed the text to its
    /// end with every element closed (nil), or where it gave up.
    package static func followed(_ bytes: [UInt8], placeNames: Bool = false) -> (
        properties: [Property], stoppedAt: Int?
    ) {
        var scanner = Scanner(bytes: bytes, placeNames: placeNames)
        let properties = scanner.run()
        return (properties, scanner.completed && scanner.stack.isEmpty ? nil : scanner.position)
    }

    /// The GPS properties of an XMP document that is all of `stream` (an XMP
    /// sidecar; any XML text that may carry XMP), for location privacy: each
    /// value, then each whole property, blanked with spaces. `strict` (a file
    /// that must be XMP: named `.xmp`, or an XMP sidecar by its content): one
    /// the scanner cannot follow to its end, one larger than
    /// ``maximumPacket``, one not in UTF-8, is not removable, so it is not
    /// delivered. Otherwise (an XML text) the same holds only when it names
    /// the EXIF schema's namespace anywhere (it may hold GPS properties).
    static func scanDocument(_ stream: SegmentedBytes, strict: Bool, into findings: inout Findings) {
        let container = strict ? "XMP sidecar" : "XMP"
        func cannot(_ why: String) {
            if strict || namesEXIF(stream) {
                findings.notRemovable("an XMP document \(why): where it records a position cannot be told")
            }
        }
        guard stream.count <= maximumPacket else { return cannot("larger than \(maximumPacket >> 20) MiB") }
        guard let bytes = stream.read(0..<stream.count) else { return cannot("that cannot be read") }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) || bytes.prefix(1024).contains(0) {
            return cannot("not in UTF-8")
        }
        let (properties, stoppedAt) = followed(bytes, placeNames: findings.placeNames)
        for property in properties {
            findings.add(
                LocationRecord(
                    name: "\(container) \(property.shown)",
                    edits: stream.edits(property.value, .spaces, step: 0)
                        + stream.edits(property.whole, .spaces, step: 1)))
        }
        if let stoppedAt { cannot("that cannot be followed past byte \(stoppedAt)") }
    }

    /// True when `stream` holds the EXIF schema's namespace (read in chunks).
    static func namesEXIF(_ stream: SegmentedBytes) -> Bool {
        let needles = [Array(exifNamespace.utf8), Array(djiNamespace.utf8), Array(iptcExtensionNamespace.utf8)]
        let chunk = 1 << 20
        var start = 0
        while start < stream.count {
            let end = min(stream.count, start + chunk + needles.map(\.count).max()!)
            guard let bytes = stream.read(start..<end) else { return true }
            if needles.contains(where: { bytes.firstRange(of: $0) != nil }) { return true }
            start += chunk
        }
        return false
    }

    /// Whether `bytes` looks like an XMP packet (or a bare RDF document).
    static func looksLikeXMP(_ bytes: ArraySlice<UInt8>) -> Bool {
        let head = bytes.prefix(4096)
        return head.firstRange(of: Array("<x:xmpmeta".utf8)) != nil
            || head.firstRange(of: Array("<rdf:RDF".utf8)) != nil
            || head.firstRange(of: Array("<?xpacket".utf8)) != nil
    }

    /// The records for the GPS properties of the XMP packet that is all of
    /// `stream`: each property's value first (step 0), then the whole of it
    /// (step 1); with `placeNames`, the properties that name the place too.
    static func records(in stream: SegmentedBytes, container: String, placeNames: Bool) -> [LocationRecord] {
        guard stream.count <= maximumPacket, let bytes = stream.read(0..<stream.count) else { return [] }
        return gpsProperties(bytes, placeNames: placeNames).map { property in
            LocationRecord(
                name: "\(container) \(property.shown)",
                edits: stream.edits(property.value, .spaces, step: 0) + stream.edits(property.whole, .spaces, step: 1))
        }
    }

    /// The largest packet read (extended XMP can reach megabytes; real GPS sits in the first few KB).
    static let maximumPacket = 16 << 20

    private struct Element {
        let prefixes: [String: String]
        /// Set while inside a GPS property element: its start and name.
        let gpsStart: Int?
        let gpsName: String?
        let valueStart: Int
        let qualifiedName: [UInt8]
    }

    private struct Scanner {
        let bytes: [UInt8]
        /// Whether the properties that name the place are found too.
        let placeNames: Bool
        var position = 0
        var stack: [Element] = []
        var found: [Property] = []
        /// True when the text was followed to its end (no construct it could not read).
        var completed = false
        static let maximumDepth = 256

        init(bytes: [UInt8], placeNames: Bool) {
            self.bytes = bytes
            self.placeNames = placeNames
        }

        var prefixes: [String: String] { stack.last?.prefixes ?? ["xml": "http://www.w3.org/XML/1998/namespace"] }
        var insideGPS: Bool { stack.contains { $0.gpsStart != nil } }

        mutating func run() -> [Property] {
            while let open = index(of: UInt8(ascii: "<"), from: position) {
                position = open
                if starts(with: "<!--") {
                    guard let end = find("-->", from: position + 4) else {
                        completed = false
                        return found
                    }
                    position = end + 3
                } else if starts(with: "<![CDATA[") {
                    guard let end = find("]]>", from: position + 9) else {
                        completed = false
                        return found
                    }
                    position = end + 3
                } else if starts(with: "<?") {
                    guard let end = find("?>", from: position + 2) else {
                        completed = false
                        return found
                    }
                    position = end + 2
                } else if starts(with: "<!") {
                    guard let end = index(of: UInt8(ascii: ">"), from: position) else {
                        completed = false
                        return found
                    }
                    position = end + 1
                } else if starts(with: "</") {
                    guard closeElement() else {
                        completed = false
                        return found
                    }
                } else {
                    guard openElement() else {
                        completed = false
                        return found
                    }
                }
            }
            completed = true
            return found
        }

        /// `</name>`: ends the innermost element (a GPS property element is recorded).
        mutating func closeElement() -> Bool {
            let start = position
            guard let end = index(of: UInt8(ascii: ">"), from: position) else { return false }
            let name = Array(bytes[(start + 2)..<end]).filter { !isSpace($0) }
            position = end + 1
            guard let element = stack.popLast(), element.qualifiedName == name else { return false }
            if let gpsStart = element.gpsStart, let gpsName = element.gpsName, !insideGPS {
                found.append(Property(name: gpsName, whole: gpsStart..<position, value: element.valueStart..<start))
            }
            return true
        }

        /// `<name attributes>` or `<name attributes/>`.
        mutating func openElement() -> Bool {
            let start = position
            position += 1
            let nameStart = position
            while position < bytes.count, !isSpace(bytes[position]), bytes[position] != UInt8(ascii: ">"),
                bytes[position] != UInt8(ascii: "/")
            {
                position += 1
            }
            let qualifiedName = Array(bytes[nameStart..<position])
            guard !qualifiedName.isEmpty else { return false }
            // Attributes: first collect them all (namespace declarations may follow the names they bind).
            var attributes: [(name: [UInt8], whole: Range<Int>, value: Range<Int>)] = []
            var declared = prefixes
            var selfClosing = false
            while true {
                while position < bytes.count, isSpace(bytes[position]) { position += 1 }
                guard position < bytes.count else { return false }
                if bytes[position] == UInt8(ascii: ">") {
                    position += 1
                    break
                }
                if bytes[position] == UInt8(ascii: "/") {
                    guard position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: ">") else { return false }
                    selfClosing = true
                    position += 2
                    break
                }
                let attributeStart = position
                while position < bytes.count, !isSpace(bytes[position]), bytes[position] != UInt8(ascii: "=") {
                    position += 1
                }
                let name = Array(bytes[attributeStart..<position])
                while position < bytes.count, isSpace(bytes[position]) { position += 1 }
                guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else { return false }
                position += 1
                while position < bytes.count, isSpace(bytes[position]) { position += 1 }
                guard position < bytes.count,
                    bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'")
                else { return false }
                let quote = bytes[position]
                guard let close = index(of: quote, from: position + 1) else { return false }
                let value = (position + 1)..<close
                position = close + 1
                attributes.append((name, attributeStart..<position, value))
                let text = String(decoding: name, as: UTF8.self)
                if text.hasPrefix("xmlns:") {
                    declared[String(text.dropFirst(6))] = String(decoding: bytes[value], as: UTF8.self)
                }
                // The default namespace (of the elements without a prefix).
                if text == "xmlns" { declared[""] = String(decoding: bytes[value], as: UTF8.self) }
            }
            if !insideGPS {
                for attribute in attributes {
                    if let local = gpsName(attribute.name, prefixes: declared, attribute: true) {
                        found.append(Property(name: local, whole: attribute.whole, value: attribute.value))
                    }
                }
            }
            let gps = insideGPS ? nil : gpsName(qualifiedName, prefixes: declared)
            if selfClosing {
                if let gps { found.append(Property(name: gps, whole: start..<position, value: position..<position)) }
                return true
            }
            guard stack.count < Self.maximumDepth else { return false }
            stack.append(
                Element(
                    prefixes: declared, gpsStart: gps == nil ? nil : start, gpsName: gps, valueStart: position,
                    qualifiedName: qualifiedName))
            return true
        }

        /// The local name of `qualified` when it is a GPS property of the EXIF
        /// schema (an element without a prefix is in the default namespace; an
        /// attribute without one is in none).
        func gpsName(_ qualified: [UInt8], prefixes: [String: String], attribute: Bool = false) -> String? {
            let colon = qualified.firstIndex(of: UInt8(ascii: ":"))
            guard colon != nil || !attribute else { return nil }
            let prefix = colon.map { String(decoding: qualified[..<$0], as: UTF8.self) } ?? ""
            let local = String(decoding: colon.map { qualified[($0 + 1)...] } ?? qualified[...], as: UTF8.self)
            let namespace = prefixes[prefix] ?? ""
            guard prefix != "xmlns", local != "xmlns" else { return nil }
            guard
                XMPLocation.isPosition(local, namespace: namespace)
                    || (placeNames && XMPLocation.isPlaceName(local, namespace: namespace))
            else { return nil }
            return (XMPLocation.shownPrefixes[namespace] ?? "") + local
        }

        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

        func index(of byte: UInt8, from start: Int) -> Int? {
            guard start < bytes.count else { return nil }
            return bytes[start...].firstIndex(of: byte)
        }

        func starts(with text: String) -> Bool {
            let pattern = Array(text.utf8)
            return position + pattern.count <= bytes.count
                && bytes[position..<(position + pattern.count)].elementsEqual(pattern)
        }

        func find(_ text: String, from start: Int) -> Int? {
            guard start < bytes.count else { return nil }
            return bytes[start...].firstRange(of: Array(text.utf8))?.lowerBound
        }
    }
}
