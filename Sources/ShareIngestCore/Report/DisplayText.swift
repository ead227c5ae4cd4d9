/// Text shown to people in a line of their terminal or log: names and messages
/// that may come from a dropped file (its name, a library's message about it)
/// must not change how the line reads.
package enum DisplayText {
    /// `text` with every character that changes how a line reads escaped, and
    /// everything else kept: control characters (Unicode's Cc: C0 such as ESC
    /// and CR, DEL, and C1 such as NEL, U+0085), format characters (Cf: the
    /// bidirectional overrides and isolates such as U+202E, which turn
    /// `d\u{202E}gpj.exe` into what reads "dexe.jpg", zero-width characters,
    /// the byte-order mark) and the line and paragraph separators (Zl U+2028,
    /// Zp U+2029). Escapes: `\n`, `\t`, `\r`, `\xNN` for the other C0
    /// characters and DEL (as `SourcePath`'s display names write them), and
    /// `\u{XXXX}` for the rest. With `lineBreaks`, a `\n` stays a line break
    /// (text of several lines written by `share` itself, such as a usage).
    /// (Emoji sequences joined by U+200D, a format character, show it escaped.)
    package static func escaped(_ text: String, keepingLineBreaks lineBreaks: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0) && !(lineBreaks && $0 == "\n") }) else {
            return text
        }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar), !(lineBreaks && scalar == "\n") else {
                escaped.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case "\r": escaped += "\\r"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: scalar.value >= 0x80)
                escaped +=
                    scalar.value < 0x80
                    ? "\\x" + (hex.count < 2 ? "0" + hex : hex)
                    : "\\u{" + (hex.count < 4 ? String(repeating: "0", count: 4 - hex.count) + hex : hex) + "}"
            }
        }
        return escaped
    }

    /// True for the characters ``escaped(_:keepingLineBreaks:)`` escapes.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        // The common case first: printable ASCII.
        if scalar.value >= 0x20 && scalar.value < 0x7F { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}
