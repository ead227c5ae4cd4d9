import Foundation
import ShareIngest
import Testing

/// The globs of `--include` and `--exclude` (``PathPattern``) and the bounds
/// of `--taken-after` and `--taken-before` (``CaptureBound``), as a user
/// writes them.
@Suite struct PathPatternTests {
    @Test(arguments: [
        // A pattern without a slash: the name, at any depth.
        ("*.jpg", "a.jpg", true), ("*.jpg", "2024/05/a.jpg", true), ("*.jpg", "a.jpeg", false),
        ("*.jpg", "a.JPG", false),
        ("*.jpg", "jpg/a.png", false), ("IMG_????.HEIC", "x/IMG_0001.HEIC", true),
        ("IMG_????.HEIC", "IMG_001.HEIC", false),
        ("*.[jJ][pP][gG]", "b/C.JpG", true), ("[!.]*", "a", true), ("[!.]*", ".a", false), ("*", ".hidden", true),
        ("[a-c]x", "bx", true), ("[a-c]x", "dx", false), ("\\*.jpg", "*.jpg", true), ("\\*.jpg", "a.jpg", false),
        ("photo", "photo", true), ("photo", "a/photo", true), ("photo", "photo/a", false), ("é*.jpg", "été.jpg", true),
        // With a slash: the whole path; * and ? stay within a component, ** crosses them.
        ("2024/*.jpg", "2024/a.jpg", true), ("2024/*.jpg", "2024/05/a.jpg", false),
        ("2024/*.jpg", "x/2024/a.jpg", false),
        ("2024/**", "2024/a.jpg", true), ("2024/**", "2024/05/06/a.jpg", true), ("2024/**", "2025/a.jpg", false),
        ("**/raw/*", "raw/a.dng", true), ("**/raw/*", "a/b/raw/a.dng", true), ("**/raw/*", "a/raw/b/a.dng", false),
        ("a/**/b.jpg", "a/b.jpg", true), ("a/**/b.jpg", "a/x/y/b.jpg", true), ("a/*/b.jpg", "a/b.jpg", false),
        ("a?b/c", "a/b/c", false), ("**/*.jpg", "a.jpg", true), ("**", "a/b/c", true),
    ])
    func aGlobMatchesAsDocumented(pattern: String, path: String, matches: Bool) throws {
        #expect(try PathPattern(pattern).matches(path) == matches, "\(pattern) against \(path)")
    }

    @Test(arguments: [
        ("", "is empty"), ("a\tb", "control character"), ("a\u{7}", "control character"), ("/..", "starts with /"),
        ("/a/*.jpg", "starts with /"),
        ("a/../b", ". or .. component"), ("..", ". or .. component"), ("./a", ". or .. component"),
        ("a//b", "empty component"),
        ("2024/", "ends with /"), ("[abc", "never closed"), ("a\\", "lone \\"), ("[z-a]", "wrong order"),
    ])
    func aPatternThatCannotMatchAPathInsideADropIsRefused(pattern: String, problem: String) {
        #expect(throws: PathPatternError.self) { try PathPattern(pattern) }
        do { _ = try PathPattern(pattern) } catch { #expect(error.description.contains(problem), "\(error)") }
    }

    /// A pathological pattern against a long name ends at once (no backtracking blow-up).
    @Test func manyStarsAgainstALongNameStayCheap() throws {
        let pattern = try PathPattern(String(repeating: "*a", count: 30) + "b")
        #expect(!pattern.matches(String(repeating: "a", count: 200)))
    }

    /// Many `**` against a deep path end too (each pair of components is tried once).
    @Test func manyDoubleStarsAgainstADeepPathEnd() throws {
        let deep = (0..<64).map { "d\($0)" }.joined(separator: "/")
        #expect(
            !(try PathPattern(Array(repeating: "**/d*", count: 12).joined(separator: "/") + "/x.jpg").matches(deep)))
        #expect(try PathPattern("**/**/**/d63").matches(deep))
    }

    @Test(arguments: [
        "2024-05-01", "2024-05-01T12:00", "2024-05-01T12:00:30", "2024-05-01T12:00:30.250", "2024-05-01T12:00:30Z",
        "2024-05-01T12:00:30+02:00", "2024-05-01 12:00:30-0530", "2024-02-29",
    ])
    func aDateOrAnISO8601TimeIsABound(text: String) throws {
        #expect(try CaptureBound(text).text == text)
    }

    @Test(arguments: [
        "", "2024", "2024-5-1", "2024-13-01", "2023-02-29", "2024-05-01T25:00", "2024-05-01T12",
        "2024-05-01T12:00+15:00", "yesterday", "2024-05-01T12:00:00.", "2024-05-01x",
    ])
    func anythingElseIsRefused(text: String) {
        #expect(throws: CaptureBoundError.self) { try CaptureBound(text) }
    }
}
