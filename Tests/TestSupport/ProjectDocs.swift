import Foundation

/// The documents a reader opens: README.md, then each page of docs/ (issue 60:
/// the README links to one page per reader). The checks that read a table or
/// an example find it in whichever page it now lives in.
public enum ProjectDocs {
    /// One document: its path relative to the package root, and its text.
    public struct Page: Sendable {
        /// `README.md` or `docs/NAME.md`.
        public let path: String
        /// The whole file.
        public let text: String
    }

    /// README.md first, then docs/*.md in name order.
    public static func pages() throws -> [Page] {
        let docs = Fixtures.packageRoot.appendingPathComponent("docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
            .sorted()
        return try (["README.md"] + names.map { "docs/" + $0 }).map { path in
            Page(
                path: path,
                text: try String(contentsOf: Fixtures.packageRoot.appendingPathComponent(path), encoding: .utf8))
        }
    }

    /// The one page that holds `marker`; an error naming the pages when none
    /// or several do (a section copied instead of moved is a failure too).
    public static func page(containing marker: String) throws -> Page {
        let holding = try pages().filter { $0.text.contains(marker) }
        guard holding.count == 1 else { throw Missing(marker: marker, pages: holding.map(\.path)) }
        return holding[0]
    }

    /// A marker that no page, or more than one, holds.
    public struct Missing: Error, CustomStringConvertible {
        /// What was looked for.
        public let marker: String
        /// The pages that hold it (none, or several).
        public let pages: [String]
        /// Says which.
        public var description: String {
            pages.isEmpty
                ? "no page of README.md and docs/ holds \(marker.debugDescription)"
                : "several pages hold \(marker.debugDescription): \(pages.joined(separator: ", "))"
        }
    }
}
