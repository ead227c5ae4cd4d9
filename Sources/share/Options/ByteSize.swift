/// A size as people write it on a command line: `1048576`, `500M`, `8G`,
/// `1T` (binary units: K = 1024 bytes; a trailing `B` or `iB` is allowed).
enum ByteSize {
    /// The bytes `text` says, or nil when it is no size (or one past `Int64`).
    static func parse(_ text: String) -> Int64? {
        var digits = Substring(text.uppercased())
        for suffix in ["IB", "B"] where digits.hasSuffix(suffix) && digits.count > suffix.count {
            digits = digits.dropLast(suffix.count)
            break
        }
        let shifts: [Character: Int64] = ["K": 10, "M": 20, "G": 30, "T": 40]
        var shift: Int64 = 0
        if let last = digits.last, let unit = shifts[last] {
            shift = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }), let number = Int64(digits) else {
            return nil
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: 1 << shift)
        return overflow ? nil : bytes
    }
}
