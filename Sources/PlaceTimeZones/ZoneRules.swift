import Synchronization
import SystemCalls

/// A time zone's offsets from UTC over time, read from the system's tzdata
/// (`/usr/share/zoneinfo/<name>`, TZif as RFC 8536 defines it: its 64-bit
/// transitions, and after the last one the POSIX TZ rule of its footer), so
/// an offset follows the tzdata the system keeps up to date, daylight saving
/// time included. (Foundation's `TimeZone` works on Linux here too, but
/// answers from the ICU data built into the toolchain, not the system's.)
public struct ZoneRules: Sendable {
    /// Where the system keeps its zones.
    public static let directory = "/usr/share/zoneinfo"

    /// Transition instants (seconds since 1970, UTC), ascending.
    let transitions: [Int64]
    /// The offset (seconds east of UTC) in force from each transition on.
    let offsets: [Int32]
    /// The offset before the first transition.
    let initial: Int32
    /// The rule after the last transition (the footer), when there is one.
    let rule: PosixRule?

    /// The rules of the zone named `name` (`Europe/Paris`), read from the
    /// system's tzdata once and kept; nil when the name is not a zone's or its
    /// file cannot be read or parsed.
    public static func named(_ name: String) -> ZoneRules? {
        if let known = cache.withLock({ $0[name] }) { return known }
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= 64, bytes.first != UInt8(ascii: "/"), !name.contains(".."),
            bytes.allSatisfy({
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                    || "/_+-".utf8.contains($0)
            }),
            let file = try? FileSystem.readWholeFile(directory + "/" + name)
        else { return nil }
        let rules = ZoneRules(tzif: file)
        cache.withLock { $0[name] = rules }
        return rules
    }

    private static let cache = Mutex<[String: ZoneRules?]>([:])

    /// The rules of one offset (seconds east of UTC) at every instant: a place
    /// kept as the offset of its capture time alone (under location privacy, no zone name is kept).
    public static func fixed(_ offset: Int) -> ZoneRules {
        ZoneRules(initial: Int32(clamping: offset))
    }

    private init(initial: Int32) {
        (transitions, offsets, self.initial, rule) = ([], [], initial, nil)
    }

    /// The rules a TZif file holds (version 2 or later: the 64-bit block and
    /// the footer; a version 1 file's 32-bit block otherwise); nil when it is
    /// no TZif or its counts run past its end.
    public init?(tzif bytes: [UInt8]) {
        func u32(_ at: Int) -> Int? {
            guard at >= 0, at + 4 <= bytes.count else { return nil }
            return Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
        }
        func counts(_ at: Int) -> (isut: Int, isstd: Int, leap: Int, time: Int, type: Int, char: Int)? {
            guard bytes.count >= at + 44, bytes[at..<(at + 4)].elementsEqual("TZif".utf8), let a = u32(at + 20),
                let b = u32(at + 24),
                let c = u32(at + 28), let d = u32(at + 32), let e = u32(at + 36), let f = u32(at + 40), e >= 1
            else { return nil }
            return (a, b, c, d, e, f)
        }
        guard let first = counts(0) else { return nil }
        let version = bytes[4]
        var at = 44
        var timeSize = 4
        var header = first
        if version >= 0x32 {
            // Skip the version 1 block to the 64-bit one.
            at += first.time * 5 + first.type * 6 + first.char + first.leap * 8 + first.isstd + first.isut
            guard let second = counts(at) else { return nil }
            header = second
            at += 44
            timeSize = 8
        }
        let timesEnd = at + header.time * timeSize
        let indicesEnd = timesEnd + header.time
        let typesEnd = indicesEnd + header.type * 6
        guard typesEnd <= bytes.count else { return nil }
        var transitions: [Int64] = []
        transitions.reserveCapacity(header.time)
        for index in 0..<header.time {
            let start = at + index * timeSize
            var value: Int64 = 0
            for byte in bytes[start..<(start + timeSize)] { value = value << 8 | Int64(byte) }
            if timeSize == 4 { value = Int64(Int32(truncatingIfNeeded: value)) }
            transitions.append(value)
        }
        var types: [Int32] = []
        for index in 0..<header.type {
            guard let raw = u32(indicesEnd + index * 6) else { return nil }
            types.append(Int32(truncatingIfNeeded: raw))
        }
        var offsets: [Int32] = []
        for index in 0..<header.time {
            let type = Int(bytes[timesEnd + index])
            guard type < types.count else { return nil }
            offsets.append(types[type])
        }
        self.transitions = transitions
        self.offsets = offsets
        initial = types[0]
        // The footer: "\n<POSIX TZ>\n" after the 64-bit block.
        var footer: PosixRule?
        if timeSize == 8 {
            let end = typesEnd + header.char + header.leap * 12 + header.isstd + header.isut
            if end < bytes.count, bytes[end] == 0x0A, let close = bytes[(end + 1)...].firstIndex(of: 0x0A) {
                footer = PosixRule(String(decoding: bytes[(end + 1)..<close], as: UTF8.self))
            }
        }
        rule = footer
    }

    /// The offset (seconds east of UTC) in force at the instant `utc` (seconds since 1970).
    public func offset(at utc: Int64) -> Int {
        guard let last = transitions.last else { return Int(rule?.offset(at: utc) ?? initial) }
        if utc >= last, let rule { return Int(rule.offset(at: utc)) }
        guard utc >= transitions[0] else { return Int(initial) }
        // The last transition at or before `utc`.
        var (low, high) = (0, transitions.count - 1)
        while low < high {
            let middle = (low + high + 1) / 2
            if transitions[middle] <= utc { low = middle } else { high = middle - 1 }
        }
        return Int(offsets[low])
    }

    /// The offset of the wall-clock time `local` (seconds since 1970 of that
    /// clock): the one that makes it an instant of this zone. A time that
    /// occurs twice (the hour clocks go back) gets the earlier instant's (the
    /// first offset); one that never occurs (the hour clocks skip) gets the
    /// offset before the change, as Python's `zoneinfo` does for `fold=0`.
    public func offset(forLocal local: Int64) -> Int {
        let before = offset(at: local - 86_400)
        var valid: [Int] = []
        for candidate in [before, offset(at: local), offset(at: local + 86_400)]
        where offset(at: local - Int64(candidate)) == candidate {
            valid.append(candidate)
        }
        return valid.max() ?? before
    }
}

/// A POSIX TZ rule as tzdata's footers write it: `CET-1CEST,M3.5.0,M10.5.0/3`,
/// `<-03>3`, `EST5EDT,M3.2.0,M11.1.0`; `Mm.w.d`, `Jn` and `n` dates, times
/// with a sign and beyond 24 hours (RFC 8536's extension).
struct PosixRule: Sendable {
    /// Standard time's offset, seconds east of UTC.
    let standard: Int32
    /// Daylight time's offset and when it starts and ends (in local standard
    /// and daylight time), when the zone has one.
    let daylight: (offset: Int32, start: DateRule, startTime: Int32, end: DateRule, endTime: Int32)?

    enum DateRule: Sendable {
        /// Month, week (1–5, 5 the last), weekday (0 Sunday).
        case month(Int, Int, Int)
        /// Day 1–365, 29 February never counted.
        case julian(Int)
        /// Day 0–365, 29 February counted.
        case zeroBased(Int)
    }

    init?(_ text: String) {
        var scanner = RuleScanner(text)
        guard scanner.name(), let std = scanner.time() else { return nil }
        standard = Int32(-std)
        guard !scanner.isAtEnd else {
            daylight = nil
            return
        }
        guard scanner.name() else { return nil }
        var dst = std - 3600
        if let first = scanner.rest.first, first != UInt8(ascii: ",") {
            guard let value = scanner.time() else { return nil }
            dst = value
        }
        guard scanner.take(","), let start = scanner.date() else { return nil }
        var startTime = 7200
        var endTime = 7200
        if scanner.take("/") {
            guard let value = scanner.time() else { return nil }
            startTime = value
        }
        guard scanner.take(","), let end = scanner.date() else { return nil }
        if scanner.take("/") {
            guard let value = scanner.time() else { return nil }
            endTime = value
        }
        guard scanner.isAtEnd else { return nil }
        daylight = (Int32(-dst), start, Int32(startTime), end, Int32(endTime))
    }

    /// The offset in force at `utc`: the state after the last change (daylight
    /// time starting or ending, in the years around it) at or before it.
    func offset(at utc: Int64) -> Int32 {
        guard let daylight else { return standard }
        let year = Self.year(of: utc + Int64(standard))
        // The start is written in standard time, the end in daylight time.
        var changes: [(instant: Int64, offset: Int32)] = []
        for candidate in (year - 1)...(year + 1) {
            changes.append(
                (
                    Int64(Self.day(daylight.start, year: candidate)) * 86_400 + Int64(daylight.startTime)
                        - Int64(standard), daylight.offset
                ))
            changes.append(
                (
                    Int64(Self.day(daylight.end, year: candidate)) * 86_400 + Int64(daylight.endTime)
                        - Int64(daylight.offset), standard
                ))
        }
        changes.sort { $0.instant < $1.instant }
        guard let last = changes.last(where: { $0.instant <= utc }) else {
            return changes[0].offset == standard ? daylight.offset : standard
        }
        return last.offset
    }

    /// The year (proleptic Gregorian) of a wall-clock time in seconds since 1970.
    static func year(of seconds: Int64) -> Int {
        let days = Int((Double(seconds) / 86_400).rounded(.down))
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        return yoe + era * 400 + (mp >= 10 ? 1 : 0)
    }

    /// Days since 1970 of the civil date.
    static func days(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        return era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
    }

    static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    /// Days since 1970 of a rule's date in `year`.
    static func day(_ rule: DateRule, year: Int) -> Int {
        switch rule {
        case .julian(let n):
            // 1–365, never counting 29 February.
            return days(year, 1, 1) + n - 1 + (isLeap(year) && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            return days(year, 1, 1) + n
        case .month(let month, let week, let weekday):
            let first = days(year, month, 1)
            // 1970-01-01 was a Thursday (4).
            let firstWeekday = ((first % 7) + 7 + 4) % 7
            var day = first + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let length = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            while day >= first + length { day -= 7 }
            return day
        }
    }
}

/// Reads a POSIX TZ rule (`CET-1CEST,M3.5.0,M10.5.0/3`) piece by piece, for
/// ``PosixRule/init(_:)``: each read takes what it read off ``rest``.
private struct RuleScanner {
    /// What is left to read.
    var rest: ArraySlice<UInt8>

    init(_ text: String) { rest = Array(text.utf8)[...] }

    /// True when everything was read.
    var isAtEnd: Bool { rest.isEmpty }

    /// Takes `character` when it comes next.
    mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard rest.first == UInt8(ascii: character) else { return false }
        rest = rest.dropFirst()
        return true
    }

    /// A zone's name: `<+03>`, or three letters or more.
    mutating func name() -> Bool {
        if rest.first == UInt8(ascii: "<") {
            guard let close = rest.firstIndex(of: UInt8(ascii: ">")) else { return false }
            rest = rest[(close + 1)...]
            return true
        }
        let letters = rest.prefix { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        guard letters.count >= 3 else { return false }
        rest = rest.dropFirst(letters.count)
        return true
    }

    /// One to three digits.
    mutating func number() -> Int? {
        let digits = rest.prefix { (0x30...0x39).contains($0) }
        guard !digits.isEmpty, digits.count <= 3 else { return nil }
        rest = rest.dropFirst(digits.count)
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// `[+-]hh[:mm[:ss]]`, in seconds.
    mutating func time() -> Int? {
        var sign = 1
        if rest.first == UInt8(ascii: "-") || rest.first == UInt8(ascii: "+") {
            sign = rest.first == UInt8(ascii: "-") ? -1 : 1
            rest = rest.dropFirst()
        }
        guard let hours = number(), hours <= 167 else { return nil }
        var seconds = hours * 3600
        for unit in [60, 1] where rest.first == UInt8(ascii: ":") {
            rest = rest.dropFirst()
            guard let value = number(), value < 60 else { return nil }
            seconds += value * unit
        }
        return sign * seconds
    }

    /// A day of the year: `Mm.w.d`, `Jn` or `n`.
    mutating func date() -> PosixRule.DateRule? {
        switch rest.first {
        case UInt8(ascii: "M"):
            rest = rest.dropFirst()
            guard let month = number(), rest.popFirst() == UInt8(ascii: "."), let week = number(),
                rest.popFirst() == UInt8(ascii: "."),
                let day = number(), (1...12).contains(month), (1...5).contains(week), (0...6).contains(day)
            else { return nil }
            return .month(month, week, day)
        case UInt8(ascii: "J"):
            rest = rest.dropFirst()
            guard let day = number(), (1...365).contains(day) else { return nil }
            return .julian(day)
        default:
            guard let day = number(), (0...365).contains(day) else { return nil }
            return .zeroBased(day)
        }
    }
}
