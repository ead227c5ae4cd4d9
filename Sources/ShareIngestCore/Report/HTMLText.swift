/// Text made safe for HTML, in element content and in quoted attribute values
/// alike. Everything a report shows comes from the outside (file names, library
/// messages, shared text), so all of it goes through here.
enum HTMLText {
    /// Escapes `& < > " '`; every other character that changes how a line
    /// reads (controls other than tab and newline, which HTML does not allow;
    /// format characters such as the bidirectional override U+202E, which makes
    /// `d\u{202E}gpj.exe` read "dexe.jpg" in a browser too; NEL, U+2028,
    /// U+2029) is shown escaped as in a log line (``DisplayText``).
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(scalar)
            case _ where DisplayText.needsEscape(scalar): out += DisplayText.escaped(String(scalar))
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
