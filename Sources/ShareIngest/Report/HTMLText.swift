/// Text made safe for HTML, in element content and in quoted attribute values
/// alike. Everything a report shows comes from the outside (file names, library
/// messages, shared text), so all of it goes through here.
enum HTMLText {
    /// Escapes `& < > " '`; control characters other than tab and newline, which
    /// HTML does not allow, become U+FFFD.
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
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value): out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
