import Foundation

/// One end of a capture-date range (`--taken-after`, `--taken-before`; the
/// manifest stage's `takenAfter`, `takenBefore`): a date (`2024-05-01`, its
/// midnight) or an ISO 8601 date and time (`2024-05-01T12:00`,
/// `2024-05-01T12:00:00.250+02:00`, `…Z`).
///
/// It is compared with an entry's `capturedAt` as the manifest states it:
/// as instants when both have an offset (or `Z`), else as the wall-clock
/// times they state (a bound without an offset is the capture's own local
/// time, wherever it was taken).
public struct CaptureBound: Sendable, Hashable, CustomStringConvertible {
    /// The bound as given.
    public let text: String
    /// Seconds of the wall-clock time stated, counted as if it were UTC.
    let wallClock: Double
    /// Seconds east of UTC, when stated.
    let offset: Int?

    /// The bound `text`; refused (with what is accepted) when it is no date.
    public init(_ text: String) throws(CaptureBoundError) {
        guard let parsed = Self.parse(text) else {
            throw CaptureBoundError(
                text: text,
                problem:
                    "is not a date: give YYYY-MM-DD or an ISO 8601 date and time (2024-05-01, 2024-05-01T12:00:00, 2024-05-01T12:00:00+02:00)"
            )
        }
        self.text = text
        (wallClock, offset) = parsed
    }

    /// The bound as given.
    public var description: String { text }

    /// `self` compared with `other` (a capture time or another bound):
    /// negative when earlier, as instants when both state an offset.
    func compare(_ other: CaptureBound) -> Double {
        if let own = offset, let theirs = other.offset {
            return (wallClock - Double(own)) - (other.wallClock - Double(theirs))
        }
        return wallClock - other.wallClock
    }

    /// `YYYY-MM-DD`, then optionally `T` (or a space) `HH:MM`, `:SS`, `.fraction`, then `Z` or `±HH:MM` (`±HHMM`).
    static func parse(_ text: String) -> (wallClock: Double, offset: Int?)? {
        let characters = Array(text.utf8)
        var position = 0
        func number(_ digits: Int) -> Int? {
            guard position + digits <= characters.count else { return nil }
            var value = 0
            for byte in characters[position..<(position + digits)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            position += digits
            return value
        }
        func take(_ character: Character) -> Bool {
            guard position < characters.count, characters[position] == character.asciiValue! else { return false }
            position += 1
            return true
        }
        guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2) else { return nil }
        guard (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day) else { return nil }
        var seconds = Double(Self.daysSinceEpoch(year: year, month: month, day: day)) * 86_400
        var offset: Int?
        if position < characters.count {
            guard take("T") || take("t") || take(" ") else { return nil }
            guard let hour = number(2), take(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
            seconds += Double(hour * 3600 + minute * 60)
            if take(":") {
                guard let second = number(2), second < 60 else { return nil }
                seconds += Double(second)
                if take(".") || take(",") {
                    var scale = 0.1
                    let start = position
                    while let digit = number(1) {
                        seconds += Double(digit) * scale
                        scale /= 10
                    }
                    guard position > start else { return nil }
                }
            }
            if take("Z") || take("z") {
                offset = 0
            } else if position < characters.count {
                let sign: Int
                if take("+") { sign = 1 } else if take("-") { sign = -1 } else { return nil }
                guard let hours = number(2) else { return nil }
                _ = take(":")
                guard let minutes = number(2), hours <= 14, minutes < 60 else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            }
        }
        guard position == characters.count else { return nil }
        return (seconds, offset)
    }

    private static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the date (the proleptic Gregorian calendar).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// Why a capture-date bound was refused.
public struct CaptureBoundError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bound as given.
    public let text: String
    /// What is wrong, and what is accepted.
    public let problem: String

    /// `"<text>" <problem>`.
    public var description: String { "\"\(text)\" \(problem)" }
}

/// The capture-date range of a manifest stage (``PipelineDefinition/ManifestSettings``):
/// which delivered photos and videos the fan-in keeps.
struct CaptureRange {
    let after: CaptureBound?
    let before: CaptureBound?

    /// Nil when `settings` set no bound.
    init?(_ settings: PipelineDefinition.ManifestSettings) {
        guard settings.takenAfter != nil || settings.takenBefore != nil else { return nil }
        (after, before) = (settings.takenAfter, settings.takenBefore)
    }

    /// Why an item whose entry states `captured` (nil: no capture date), shown
    /// as `label`, is left out: taken before `after`, at or after `before`, or
    /// with no date to compare; nil when it is kept.
    func refusal(of captured: (text: String, source: String)?, label: String) -> ItemFailure? {
        let asked = [after.map { "--taken-after \($0.text)" }, before.map { "--taken-before \($0.text)" }].compactMap {
            $0
        }.joined(separator: ", ")
        guard let captured, let time = try? CaptureBound(captured.text) else {
            return ItemFailure(
                .manifest, .outsideDateRange, "\(label): no capture date to compare with \(asked); its copy removed")
        }
        if let after, time.compare(after) < 0 {
            return ItemFailure(
                .manifest, .outsideDateRange,
                "\(label): taken \(captured.text) (\(captured.source)), before \(after.text) (--taken-after); its copy removed"
            )
        }
        if let before, time.compare(before) >= 0 {
            return ItemFailure(
                .manifest, .outsideDateRange,
                "\(label): taken \(captured.text) (\(captured.source)), not before \(before.text) (--taken-before); its copy removed"
            )
        }
        return nil
    }
}
