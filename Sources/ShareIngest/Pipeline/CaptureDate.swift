import MediaFormats

/// An item's v2 `capturedAt`, `capturedAtSource` and `capturedAtOffsetKnown`,
/// decided in the parent from what the decoder read (checked by the reply
/// check), the source's name and its modification time, in this order:
/// - the metadata's time (`exif`, `quicktime`, `mp4`), with its offset when the
///   file gives one; an EXIF time without an offset takes the one its GPS time
///   stamp implies (`gps`: the difference rounded to 15 minutes, within ±14:00);
/// - the name a phone gave the file (`fileName`): `IMG_20240501_120000`,
///   `VID_…`, `PXL_20240501_120000123` (Pixel names are in UTC),
///   `IMG-20240501-WA0001` (WhatsApp: the date alone, midnight),
///   `Screenshot_20240501-120000`;
/// - the source's modification time (`fileTime`, UTC), the last resort.
/// A Takeout JSON's time, set by the fan-in, wins over all of them.
/// Placeholder dates (the first days of 1970 and 1904) and years outside
/// 1900–2200 count as missing.
struct CaptureDate: Equatable {
    var text: String
    var source: String
    /// False for a local time without an offset; nil when it has one.
    var offsetKnown: Bool?

    /// Years accepted.
    static let years = 1900...2200

    static func decide(_ time: CaptureTime?, fileName: String?, modified: FileVersion?) -> CaptureDate? {
        if let time, let found = fromMetadata(time) { return found }
        if let fileName, let found = fromName(fileName) { return found }
        if let modified, let text = rfc3339(Double(modified.modifiedSeconds), offset: 0) { return CaptureDate(text: text, source: "fileTime") }
        return nil
    }

    static func usable(_ value: Double?) -> Double? {
        guard let value, value.isFinite, CaptureTime.plausible.contains(value), !CaptureTime.isPlaceholder(value) else { return nil }
        return value
    }

    /// An offset (seconds east of UTC) within ±14:00 on a 15-minute grid, when `seconds` is near one.
    static func gridOffset(_ seconds: Double, tolerance: Double) -> Int? {
        let rounded = (seconds / 900).rounded() * 900
        guard abs(seconds - rounded) <= tolerance, abs(rounded) <= 14 * 3600 else { return nil }
        return Int(rounded)
    }

    static func fromMetadata(_ time: CaptureTime) -> CaptureDate? {
        let source = (time.source ?? .exif).rawValue
        let local = usable(time.local), utc = usable(time.utc)
        if let local, let utc, let offset = gridOffset(local - utc, tolerance: 0.01), let text = rfc3339(utc, offset: offset) {
            return CaptureDate(text: text, source: source)
        }
        if let local {
            // The GPS time stamp is whole seconds, taken a moment apart from the shutter.
            if let gps = usable(time.gps), let offset = gridOffset(local - gps, tolerance: 120), let text = rfc3339(local - Double(offset), offset: offset) {
                return CaptureDate(text: text, source: "gps")
            }
            if let text = rfc3339(local, offset: nil) { return CaptureDate(text: text, source: source, offsetKnown: false) }
        }
        if let utc, let text = rfc3339(utc, offset: 0) { return CaptureDate(text: text, source: source) }
        return nil
    }

    // MARK: - File names

    /// The capture time a phone's file name says.
    static func fromName(_ name: String) -> CaptureDate? {
        let bytes = Array(name.utf8)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at >= 0, at + count <= bytes.count else { return nil }
            var value = 0
            for b in bytes[at..<(at + count)] {
                guard (0x30...0x39).contains(b) else { return nil }
                value = value * 10 + Int(b - 0x30)
            }
            return value
        }
        func byte(_ at: Int) -> UInt8? { at < bytes.count ? bytes[at] : nil }
        func starts(_ prefix: String) -> Bool { bytes.starts(with: prefix.utf8) }
        let underscore = UInt8(ascii: "_"), dash = UInt8(ascii: "-")
        func stamp(_ at: Int, separator: UInt8) -> (date: (Int, Int, Int), time: (Int, Int, Int))? {
            guard let y = digits(at, 4), let mo = digits(at + 4, 2), let d = digits(at + 6, 2), byte(at + 8) == separator,
                let h = digits(at + 9, 2), let mi = digits(at + 11, 2), let s = digits(at + 13, 2)
            else { return nil }
            return ((y, mo, d), (h, mi, s))
        }
        func local(_ date: (Int, Int, Int), _ time: (Int, Int, Int), milliseconds: Int = 0) -> Double? {
            guard years.contains(date.0), let seconds = civil(date.0, date.1, date.2, time.0, time.1, time.2) else { return nil }
            return usable(seconds + Double(milliseconds) / 1000)
        }
        // Pixel: PXL_YYYYMMDD_HHMMSSmmm, in UTC.
        if starts("PXL_"), let found = stamp(4, separator: underscore) {
            let ms = digits(19, 3) ?? 0
            guard let seconds = local(found.date, found.time, milliseconds: ms), let text = rfc3339(seconds, offset: 0) else { return nil }
            return CaptureDate(text: text, source: "fileName")
        }
        // Android cameras: IMG_YYYYMMDD_HHMMSS, VID_YYYYMMDD_HHMMSS (local time).
        for prefix in ["IMG_", "VID_"] where starts(prefix) {
            if let found = stamp(4, separator: underscore), let seconds = local(found.date, found.time), let text = rfc3339(seconds, offset: nil) {
                return CaptureDate(text: text, source: "fileName", offsetKnown: false)
            }
        }
        // WhatsApp: IMG-YYYYMMDD-WA0001, VID-YYYYMMDD-WA0001 (the date alone).
        for prefix in ["IMG-", "VID-"] where starts(prefix) {
            if let y = digits(4, 4), let mo = digits(8, 2), let d = digits(10, 2), byte(12) == dash, byte(13) == UInt8(ascii: "W"),
                byte(14) == UInt8(ascii: "A"), let seconds = local((y, mo, d), (0, 0, 0)), let text = rfc3339(seconds, offset: nil)
            {
                return CaptureDate(text: text, source: "fileName", offsetKnown: false)
            }
        }
        // Android screenshots: Screenshot_YYYYMMDD-HHMMSS (local time).
        if starts("Screenshot_"), let found = stamp(11, separator: dash), let seconds = local(found.date, found.time),
            let text = rfc3339(seconds, offset: nil)
        {
            return CaptureDate(text: text, source: "fileName", offsetKnown: false)
        }
        return nil
    }

    // MARK: - Calendar

    /// Seconds since 1970-01-01 00:00 for a civil date and time (proleptic Gregorian).
    static func civil(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int) -> Double? {
        guard (1...12).contains(month), (1...daysIn(year, month)).contains(day), (0...23).contains(hour), (0...59).contains(minute),
            (0...59).contains(second)
        else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return Double((era * 146_097 + doe - 719_468) * 86_400 + hour * 3600 + minute * 60 + second)
    }

    static func daysIn(_ year: Int, _ month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// RFC 3339 for the instant `utc` shown at `offset` seconds east of UTC
    /// (`Z` for 0); with `offset` nil, `utc` is a local wall clock written without
    /// an offset. Milliseconds are written when there are any. Nil outside
    /// `accepted` (the years a capture date may have, unless told otherwise).
    static func rfc3339(_ utc: Double, offset: Int?, accepted: ClosedRange<Int> = years) -> String? {
        let shown = utc + Double(offset ?? 0)
        guard shown.isFinite else { return nil }
        var milliseconds = Int((shown * 1000).rounded())
        let whole = Int((Double(milliseconds) / 1000).rounded(.down))
        milliseconds -= whole * 1000
        let days = Int((Double(whole) / 86_400).rounded(.down))
        let secondOfDay = whole - days * 86_400
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        guard accepted.contains(year) else { return nil }
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if milliseconds > 0 { text += "." + pad(milliseconds, 3) }
        if let offset {
            if offset == 0 {
                text += "Z"
            } else {
                let minutes = abs(offset) / 60
                text += (offset < 0 ? "-" : "+") + pad(minutes / 60, 2) + ":" + pad(minutes % 60, 2)
            }
        }
        return text
    }
}
