import Foundation

/// The key a share's manifest is stored under: one safe path component.
///
/// Allowed: 1–128 characters from `A–Z a–z 0–9 . _ -`, not starting with a dot
/// (so never `.`, `..` or a hidden name).
public struct ShareKey: Sendable, Hashable, CustomStringConvertible, Codable {
    /// The key as written in file names and redirect URLs.
    public let rawValue: String

    /// Validates `rawValue`; throws ``ShareKeyError`` with the reason.
    public init(_ rawValue: String) throws(ShareKeyError) {
        guard !rawValue.isEmpty else { throw .empty }
        guard rawValue.utf8.count <= 128 else { throw .tooLong(rawValue.utf8.count) }
        guard !rawValue.hasPrefix(".") else { throw .leadingDot(rawValue) }
        if let bad = rawValue.unicodeScalars.first(where: { !Self.allowed($0) }) {
            throw .forbiddenCharacter(rawValue, bad)
        }
        self.rawValue = rawValue
    }

    private static func allowed(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "." || c == "_"
            || c == "-"
    }

    /// A fresh key for one batch: `ShareKey-<UUID>`, so a second share is never
    /// mistaken for the first.
    public static func unique(id: UUID = UUID()) -> ShareKey {
        // "ShareKey-" and a UUID's letters, digits and dashes: always a valid key.
        ShareKey(checked: "ShareKey-\(id.uuidString)")
    }

    /// A fresh key with a prefix of the caller's: `<prefix>-<UUID>`. Throws
    /// ``ShareKeyError`` when the prefix makes it invalid (a character outside
    /// `A–Z a–z 0–9 . _ -`, a leading dot, more than 91 characters).
    public static func unique(prefix: String, id: UUID = UUID()) throws(ShareKeyError) -> ShareKey {
        try ShareKey("\(prefix)-\(id.uuidString)")
    }

    private init(checked rawValue: String) { self.rawValue = rawValue }

    /// The ``rawValue``.
    public var description: String { rawValue }
}

/// Why a string is not a usable key.
public enum ShareKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key is empty.
    case empty
    /// The key is longer than 128 bytes (its length).
    case tooLong(Int)
    /// The key starts with a dot.
    case leadingDot(String)
    /// The key holds a character outside `A-Z a-z 0-9 . _ -` (the key, the character).
    case forbiddenCharacter(String, Unicode.Scalar)

    /// A sentence for people: the key and what is wrong with it.
    public var description: String {
        switch self {
        case .empty: "the key is empty"
        case .tooLong(let n): "the key is \(n) bytes long; at most 128 are allowed"
        case .leadingDot(let key): "the key \(JSONText.string(key)) starts with a dot; a key must be a plain name"
        case .forbiddenCharacter(let key, let c):
            "the key \(JSONText.string(key)) contains \(JSONText.string(String(c))); allowed are letters, digits, '.', '_' and '-'"
        }
    }
}

/// What a redirect tells the host app to expect.
public enum RedirectKind: String, Sendable, Codable, CaseIterable {
    /// At least one image or video.
    case media
    /// Only files.
    case file
    /// Only text and URLs.
    case text

    /// The kind for a batch holding entries of these types.
    public init(types: some Sequence<SharedMediaType>) {
        var sawFile = false
        for type in types {
            if type.isMedia {
                self = .media
                return
            }
            if type == .file { sawFile = true }
        }
        self = sawFile ? .file : .text
    }
}

/// The URL that opens the host app: `<scheme>://dataUrl=<key>#<kind>`.
public struct RedirectURL: Sendable, Hashable, CustomStringConvertible {
    /// `ShareMedia`: the scheme the share-extension plugins use.
    public static let defaultScheme = "ShareMedia"

    /// The URL scheme the host app registered, e.g. `ShareMedia`.
    public let scheme: String
    /// The manifest key.
    public let key: ShareKey
    /// What the share holds: `media`, `file` or `text`.
    public let kind: RedirectKind

    /// A redirect URL for `key`; the scheme is not validated here (see ``validate(scheme:)``).
    public init(scheme: String = RedirectURL.defaultScheme, key: ShareKey, kind: RedirectKind) {
        self.scheme = scheme
        self.key = key
        self.kind = kind
    }

    /// `<scheme>://dataUrl=<key>#<kind>`.
    public var description: String { "\(scheme)://dataUrl=\(key.rawValue)#\(kind.rawValue)" }

    /// Checks a URL scheme as RFC 3986 defines it: a letter, then letters, digits, `+ - .`.
    public static func validate(scheme: String) throws(RedirectURLError) {
        guard let first = scheme.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
            scheme.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0))
            })
        else { throw .badScheme(scheme) }
    }

    /// Parses `<scheme>://dataUrl=<key>#<kind>`. The kind may be missing (then nil
    /// means "look at the manifest"); anything else malformed is an error.
    public static func parse(_ text: String) throws(RedirectURLError) -> (
        url: RedirectURL?, key: ShareKey, scheme: String
    ) {
        guard text.utf8.count <= 4096 else { throw .malformed(String(text.prefix(64)) + "…", "longer than 4096 bytes") }
        guard let separator = text.range(of: "://") else { throw .malformed(text, "no \"://\" after the scheme") }
        let scheme = String(text[..<separator.lowerBound])
        try validate(scheme: scheme)
        var rest = text[separator.upperBound...]
        var kind: RedirectKind?
        if let hash = rest.firstIndex(of: "#") {
            let fragment = String(rest[rest.index(after: hash)...])
            guard let parsed = RedirectKind(rawValue: fragment) else {
                throw .malformed(text, "the fragment \(JSONText.string(fragment)) is not media, file or text")
            }
            kind = parsed
            rest = rest[..<hash]
        }
        guard rest.hasPrefix("dataUrl=") else { throw .malformed(text, "expected dataUrl=<key> after \"://\"") }
        var keyText = String(rest.dropFirst("dataUrl=".count))
        if keyText.contains("%") {
            guard let decoded = keyText.removingPercentEncoding else {
                throw .malformed(text, "bad percent-encoding in the key")
            }
            keyText = decoded
        }
        let key: ShareKey
        do {
            key = try ShareKey(keyText)
        } catch {
            throw .badKey(error)
        }
        return (kind.map { RedirectURL(scheme: scheme, key: key, kind: $0) }, key, scheme)
    }
}

/// Why a redirect URL was refused.
public enum RedirectURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not of the form `<scheme>://dataUrl=<key>#<kind>` (the URL, what is wrong).
    case malformed(String, String)
    /// The scheme is not valid (RFC 3986).
    case badScheme(String)
    /// The key is not a valid ``ShareKey``.
    case badKey(ShareKeyError)

    /// A sentence for people: the URL and what is wrong with it.
    public var description: String {
        switch self {
        case .malformed(let url, let why): "not a share redirect URL: \(JSONText.string(url)): \(why)"
        case .badScheme(let scheme): "\(JSONText.string(scheme)) is not a valid URL scheme"
        case .badKey(let error): "bad key in redirect URL: \(error)"
        }
    }
}
