import Foundation

/// One line of a service's log (`--log-format plain|json`): plain text for
/// people (the default), or one JSON object per line for a log pipeline, with
/// the keys `time`, `level`, `event`, `batch`, `item`, `stage`, `reason` and
/// `message` (absent ones are null). Every password the process was given
/// (a `--db` URL's, `PGPASSWORD`) is replaced by `****` in both. A plain line
/// escapes every character that would change how it reads (``DisplayText``:
/// control and format characters, line and paragraph separators, such as
/// NEL, U+2028 and U+202E in a dropped file's name); JSON escapes what JSON must.
package struct ServiceLogLine: Sendable {
    package enum Format: String, Sendable { case plain, json }
    package enum Level: String, Sendable { case info, warning, error }

    package var level: Level
    package var event: String
    package var batch: String?
    package var item: String?
    package var stage: String?
    package var reason: String?
    package var message: String

    package init(
        level: Level, event: String, batch: String? = nil, item: String? = nil, stage: String? = nil,
        reason: String? = nil, message: String
    ) {
        (self.level, self.event, self.batch, self.item, self.stage, self.reason, self.message) = (
            level, event, batch, item, stage, reason, message
        )
    }

    /// A plain line as a log line: its level read from its words (`warning:`, `failed`, `cannot`, `error`).
    package init(plain text: String) {
        let lower = text.lowercased()
        let level: Level =
            lower.contains("warning:")
            ? .warning
            : ["failed", "cannot", "error", "gave up"].contains(where: lower.contains) ? .error : .info
        self.init(level: level, event: "message", message: text.hasPrefix("share: ") ? String(text.dropFirst(7)) : text)
    }

    /// The line in `format`, passwords scrubbed. `time` is ISO 8601 UTC with
    /// milliseconds. A plain line is escaped (``DisplayText``); only a free-text
    /// `message` event (what `share` itself writes, such as a usage) keeps its
    /// line breaks.
    package func rendered(_ format: Format, plain: String? = nil, at date: Date = Date()) -> String {
        switch format {
        case .plain:
            return DisplayText.escaped(
                DatabaseSecrets.scrub(plain ?? "share: \(message)"), keepingLineBreaks: event == "message")
        case .json:
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let fields: [String: Any] = [
                "time": formatter.string(from: date), "level": level.rawValue, "event": event,
                "batch": batch ?? NSNull(),
                // An item's index is a number, as in --json's item events.
                "item": item.map { text in Int(text).map { $0 as Any } ?? text } ?? NSNull(),
                "stage": stage ?? NSNull(), "reason": reason ?? NSNull(), "message": DatabaseSecrets.scrub(message),
            ]
            let data =
                (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]))
                ?? Data("{}".utf8)
            return DatabaseSecrets.scrub(String(decoding: data, as: UTF8.self))
        }
    }
}
