import CPostgres
import Foundation
import Glibc
import ShareManifest
import Synchronization
import SystemCalls

/// The passwords of the database URLs this process connects with (and
/// `PGPASSWORD`), which no message may show: libpq echoes pieces of a URL it
/// cannot parse, and any message passes through ``scrub(_:)`` before it is
/// kept in a ``PostgresError``.
package enum DatabaseSecrets {
    private static let known = Mutex<Set<String>>([])

    /// The password `url` holds, as written and as libpq reads it: a URI's
    /// `user:password@` or `?password=`, or `password=` in `key=value`
    /// settings. Empty when it holds none.
    package static func passwords(in url: String) -> Set<String> {
        var found: Set<String> = []
        var error: UnsafeMutablePointer<CChar>?
        // (Without libpq, only the URL as written below.)
        if PostgresClientLibrary.unavailable == nil, let options = PQconninfoParse(url, &error) {
            defer { PQconninfoFree(options) }
            var option = options
            while let keyword = option.pointee.keyword {
                if String(cString: keyword) == "password", let value = option.pointee.val, value.pointee != 0 {
                    found.insert(String(cString: value))
                }
                option += 1
            }
        }
        if let error { PQfreemem(error) }
        // As written, also in a URL libpq cannot parse: between "//user:" and "@",
        // or after "password=" up to a separator.
        if let scheme = url.range(of: "://") {
            let authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                let written = String(authority[authority.index(after: colon)..<at])
                if !written.isEmpty { found.insert(written) }
            }
        }
        var rest = url[...]
        while let key = rest.range(of: "password=") {
            let value = rest[key.upperBound...].prefix { $0 != " " && $0 != "&" && $0 != "'" }
            if !value.isEmpty { found.insert(String(value)) }
            rest = rest[key.upperBound...]
        }
        return found
    }

    /// The first password `url` holds, if any.
    package static func password(in url: String) -> String? { passwords(in: url).first }

    /// Remembers `url`'s passwords (and `PGPASSWORD`'s) for ``scrub(_:)``.
    package static func remember(_ url: String) {
        var found = passwords(in: url)
        if let environment = ProcessEnvironment.value("PGPASSWORD"), !environment.isEmpty { found.insert(environment) }
        guard !found.isEmpty else { return }
        known.withLock { $0.formUnion(found) }
    }

    /// `text` with every password masked as a token, never as a substring: the
    /// password of any URL in it (`//user:****@`), any `password=****` setting,
    /// and a remembered password (a URL's, `PGPASSWORD`) where a message quotes
    /// it whole (libpq echoes a URL's piece it cannot read in quotes). A word
    /// that merely contains the password, or equals it elsewhere in a sentence,
    /// is left alone: with the password `on`, "connection refused … running on
    /// that host" stays as libpq wrote it.
    package static func scrub(_ text: String) -> String {
        var scrubbed = DatabaseURL.maskedSettings(in: text)
        let secrets = known.withLock { $0 }
        for secret in secrets.sorted(by: { $0.count > $1.count }) where !secret.isEmpty {
            for quote in ["\"", "'"] {
                scrubbed = scrubbed.replacingOccurrences(of: quote + secret + quote, with: quote + "****" + quote)
            }
        }
        return scrubbed
    }
}

/// What `--db` may be: a `postgres://` or `postgresql://` URL, or libpq's
/// `key=value` settings; anything else (`http://…`, `postgres:/oops`, a bare
/// word libpq would take for a database name) is refused before any
/// connection is tried, naming it with its password masked.
public enum DatabaseURL {
    /// Why a `--db` value was refused (the value shown with its password masked).
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// The value (its password masked) and what is wrong with it.
        public let description: String
    }

    /// Refuses `url` unless it is a PostgreSQL URL or `key=value` settings that libpq reads.
    public static func check(_ url: String) throws(Refusal) {
        let shown = masked(url)
        let lowered = url.lowercased()
        let isURI = lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
        if !isURI {
            let looksLikeSettings = url.contains("=") && !url.contains("://")
            guard looksLikeSettings else {
                throw Refusal(
                    description:
                        "\(JSONText.string(shown)): not a PostgreSQL database: give a postgres:// or postgresql:// URL, or key=value settings (host=… dbname=…)"
                )
            }
        }
        // Without libpq what it would read cannot be checked here: the
        // connection says why it cannot be made (PostgresClientLibrary).
        guard PostgresClientLibrary.unavailable == nil else { return }
        var error: UnsafeMutablePointer<CChar>?
        let options = PQconninfoParse(url, &error)
        if let options { PQconninfoFree(options) }
        if let error {
            let message = String(cString: error).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfreemem(error)
            DatabaseSecrets.remember(url)
            throw Refusal(
                description: "\(JSONText.string(shown)): libpq cannot read it: \(DatabaseSecrets.scrub(message))")
        }
        if options == nil { throw Refusal(description: "\(JSONText.string(shown)): libpq cannot read it") }
    }

    /// `url` with its password masked: `postgresql://user:****@host/db`, `password=****`.
    public static func masked(_ url: String) -> String { maskedSettings(in: url) }

    /// `text` with the password of every URL (`//user:****@`) and of every
    /// `password=` setting (in a query or in `key=value` settings, quoted or not) masked.
    static func maskedSettings(in text: String) -> String {
        var result = text
        for (pattern, template) in patterns {
            result = pattern.stringByReplacingMatches(
                in: result, range: NSRange(result.startIndex..., in: result), withTemplate: template)
        }
        return result
    }

    private static let patterns: [(NSRegularExpression, String)] = [
        // scheme://user:password@ — the user part holds no '/', '@' or ':'.
        (try! NSRegularExpression(pattern: #"(://[^/@:\s"']*:)[^@\s/"']*@"#), "$1****@"),
        // password='quoted \' value' or password=value (up to a separator).
        (
            try! NSRegularExpression(
                pattern: #"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&'"]+)"#, options: [.caseInsensitive]), "$1****"
        ),
    ]
}
