import Foundation

/// Golden files beside the tests. Run with `RECORD_GOLDENS=1` to re-record;
/// recording always reports a failure so it cannot be left on.
public enum Golden {
    /// Compares `actual` with `Tests/<suite>/Goldens/<name>`; returns nil when equal,
    /// else a message (also when recording).
    public static func check(_ actual: String, named name: String, suite: String) -> String? {
        let url = Fixtures.packageRoot.appendingPathComponent("Tests/\(suite)/Goldens/\(name)")
        if ProcessInfo.processInfo.environment["RECORD_GOLDENS"] == "1" {
            try? FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? Data(actual.utf8).write(to: url)
            return "recorded \(url.path); unset RECORD_GOLDENS and run again"
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            return "no golden file at \(url.path); run with RECORD_GOLDENS=1 to record it"
        }
        return expected == actual ? nil : "differs from \(url.path):\n--- expected\n\(expected)\n--- actual\n\(actual)"
    }

    /// Replaces run-specific parts: the container path with `<container>` and each
    /// distinct UUID with `<UUID-n>` in order of first appearance, and a
    /// `capturedAt` from the modification time (`fileTime`) with `<mtime>`.
    public static func normalise(_ text: String, container: String) -> String {
        var result = text.replacingOccurrences(of: container, with: "<container>")
        let pattern = try! NSRegularExpression(pattern: "[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}")
        var names: [String: String] = [:]
        let range = NSRange(result.startIndex..., in: result)
        for match in pattern.matches(in: result, range: range) {
            let uuid = String(result[Range(match.range, in: result)!])
            if names[uuid] == nil { names[uuid] = "<UUID-\(names.count + 1)>" }
        }
        for (uuid, name) in names { result = result.replacingOccurrences(of: uuid, with: name) }
        // A capture time taken from the file's modification time is the checkout's.
        let fileTime = try! NSRegularExpression(pattern: #""capturedAt": "[^"]*", "capturedAtSource": "fileTime""#)
        result = fileTime.stringByReplacingMatches(
            in: result, range: NSRange(result.startIndex..., in: result),
            withTemplate: #""capturedAt": "<mtime>", "capturedAtSource": "fileTime""#)
        return result
    }
}
