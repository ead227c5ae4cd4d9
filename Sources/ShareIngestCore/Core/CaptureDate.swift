import MediaFormats
import PlaceTimeZones

/// The time zone of the place a photo or video was taken, and how the place
/// is known: `position` (the position its own metadata records: EXIF GPS,
/// QuickTime's location) or `takeout` (its Takeout JSON's `geoData`). Under
/// location privacy no zone name is kept (issue 58): only the offset in force
/// there at the capture time, what a camera writes.
struct CapturePlace: Sendable, Codable, Hashable {
    enum Source: String, Sendable, Codable, Hashable {
        case position, takeout
    }

    /// The IANA zone (`Europe/Paris`); nil under location privacy.
    var zone: String?
    /// Under location privacy: the offset (seconds east of UTC) at the place at the capture time.
    var offset: Int?
    var source: Source

    init(zone: String, source: Source) {
        self.zone = zone
        self.source = source
    }

    /// The place as the offset at the capture time alone, the zone's name forgotten
    /// (``CaptureDate/placeOffset(_:time:fileName:modified:takeout:)``); nil when there is no such time.
    init?(
        offsetIn zone: String, time: CaptureTime?, fileName: String?, modified: FileVersion?, takeout: String? = nil,
        source: Source
    ) {
        guard let rules = ZoneRules.named(zone),
            let offset = CaptureDate.placeOffset(
                rules, time: time, fileName: fileName, modified: modified, takeout: takeout)
        else { return nil }
        self.offset = offset
        self.source = source
    }

    /// The place's offsets over time: its zone's, or the one offset kept.
    var rules: ZoneRules? {
        if let zone { return ZoneRules.named(zone) }
        return offset.map(ZoneRules.fixed)
    }

    /// The zone at `position`, looked up only when it is plausible (finite, in
    /// range, not 0, 0: the reply check refused any other already).
    static func zone(at position: CapturePosition?) -> String? {
        guard let position, position.isPlausible else { return nil }
        return TimeZoneMap.shared?.zone(latitude: position.latitude, longitude: position.longitude)
    }
}

/// An item's v2 `capturedAt`, `capturedAtSource`, `capturedAtOffsetKnown` and
/// `capturedAtOffsetSource`, decided in the parent from what the decoder read
/// (checked by the reply check), the source's name and its modification time,
/// in this order:
/// - a Takeout JSON's `photoTakenTime` (an instant), when it has one: it wins;
/// - the metadata's time (`exif`, `quicktime`, `mp4`), with its offset when the
///   file gives one; an EXIF time without an offset takes the one its GPS time
///   stamp implies (`gps`: the difference rounded to 15 minutes, within ±14:00);
/// - the name a phone gave the file (`fileName`): `IMG_20240501_120000`,
///   `VID_…`, `PXL_20240501_120000123` (Pixel names are in UTC),
///   `IMG-20240501-WA0001` (WhatsApp: the date alone, midnight),
///   `Screenshot_20240501-120000`;
/// - the source's modification time (`fileTime`, UTC), the last resort.
/// A time without the place's offset (a wall clock without an offset, an
/// instant in UTC) gets the offset in force at its place at that instant,
/// daylight saving time included, when the place is known
/// (``CapturePlace``): the zone at the position its metadata records, else at
/// its Takeout JSON's `geoData`; a wall-clock time that occurs twice takes the
/// first instant. `capturedAtOffsetSource` says where the offset came from.
/// Placeholder dates (the first days of 1970 and 1904) and years outside
/// 1900–2200 count as missing.
struct CaptureDate: Equatable {
    var text: String
    var source: String
    /// False for a local time without an offset; nil when it has one.
    var offsetKnown: Bool?
    /// Where the place's offset came from (`exif`, `quicktime`, `position`,
    /// `takeout`); nil when the time has none (a wall clock, or a `Z` instant).
    var offsetSource: String?

    /// Years accepted.
    static let years = 1900...2200

    /// The place of `item`: the zone at the position its metadata records (read
    /// by the probe), else the one a stage kept (the location stage, before it
    /// removed the position; the probe, from its Takeout JSON's `geoData`).
    static func place(of item: ItemState) -> CapturePlace? {
        if let zone = CapturePlace.zone(at: item.moments?.position) {
            return CapturePlace(zone: zone, source: .position)
        }
        return item.capturePlace
    }

    /// The item's capture time as the fan-in's rules compare it (the Live
    /// Photo window, the RAW+JPEG, edit and burst gaps, a burst's cover): its
    /// metadata's, with the instant filled in where the file gives only a
    /// wall clock and its GPS time stamp or its place gives the offset, so
    /// that two times are compared as instants (``CaptureTime/distance(to:)``).
    static func comparableTime(of item: ItemState) -> CaptureTime? {
        guard var time = item.moments?.captureTime else { return nil }
        guard time.utc == nil, let local = usable(time.local) else { return time }
        if let own = fileOffset(time) {
            time.utc = local - Double(own.offset)
        } else if let place = place(of: item), let rules = place.rules,
            let offset = wholeMinutes(rules.offset(forLocal: Int64(local.rounded(.down))))
        {
            time.utc = local - Double(offset)
        }
        return time
    }

    static func decide(
        _ time: CaptureTime?, fileName: String?, modified: FileVersion?, takeout: String? = nil,
        place: CapturePlace? = nil
    ) -> CaptureDate? {
        let zone = place.flatMap(\.rules).map { (rules: $0, source: place?.source.rawValue ?? "") }
        if let takeout, let instant = instant(takeout) {
            // The file's own offset for this moment, else its place's.
            let own = time.flatMap(fileOffset)
            return placed(
                Reading(
                    seconds: instant, clock: .instant(own?.offset, own?.source),
                    source: TakeoutMetadata.capturedAtSource), zone: zone)
                ?? CaptureDate(text: takeout, source: TakeoutMetadata.capturedAtSource)
        }
        if let time, let found = fromMetadata(time) { return placed(found, zone: zone) }
        if let fileName, let found = fromName(fileName) { return placed(found, zone: zone) }
        if let modified {
            return placed(
                Reading(seconds: Double(modified.modifiedSeconds), clock: .instant(nil, nil), source: "fileTime"),
                zone: zone)
        }
        return nil
    }

    /// The offset at the place whose rules are `rules` at the capture time
    /// ``decide(_:fileName:modified:takeout:place:)`` reads (the Takeout
    /// instant, else the metadata's time, the name's, the file time); nil for a
    /// date alone or no time. What location privacy keeps of a place.
    static func placeOffset(
        _ rules: ZoneRules, time: CaptureTime?, fileName: String?, modified: FileVersion?, takeout: String? = nil
    ) -> Int? {
        var reading: Reading?
        if let takeout, let instant = instant(takeout) {
            reading = Reading(seconds: instant, clock: .instant(nil, nil), source: TakeoutMetadata.capturedAtSource)
        } else if let time, let found = fromMetadata(time) {
            reading = found
        } else if let fileName, let found = fromName(fileName) {
            reading = found
        } else if let modified {
            reading = Reading(seconds: Double(modified.modifiedSeconds), clock: .instant(nil, nil), source: "fileTime")
        }
        guard let reading else { return nil }
        switch reading.clock {
        case .instant: return wholeMinutes(rules.offset(at: Int64(reading.seconds.rounded(.down))))
        case .wallClock: return wholeMinutes(rules.offset(forLocal: Int64(reading.seconds.rounded(.down))))
        case .dateOnly: return nil
        }
    }

    /// A time read, before the place is applied: an instant (with the file's
    /// own offset and where it came from, when it has one) or a wall clock.
    struct Reading: Equatable {
        enum Clock: Equatable {
            case instant(Int?, String?)
            case wallClock
            /// A date alone (WhatsApp's names): never given an offset.
            case dateOnly
        }

        var seconds: Double
        var clock: Clock
        var source: String
    }

    /// The entry's text for `reading`: at its own offset, else at the place's (`zone`), else as it is.
    static func placed(_ reading: Reading, zone: (rules: ZoneRules, source: String)?) -> CaptureDate? {
        switch reading.clock {
        case .instant(let offset?, let offsetSource):
            return rfc3339(reading.seconds, offset: offset).map {
                CaptureDate(text: $0, source: reading.source, offsetSource: offsetSource)
            }
        case .instant(nil, _):
            if let zone, let offset = wholeMinutes(zone.rules.offset(at: Int64(reading.seconds.rounded(.down)))),
                let text = rfc3339(reading.seconds, offset: offset)
            {
                return CaptureDate(text: text, source: reading.source, offsetSource: zone.source)
            }
            return rfc3339(reading.seconds, offset: 0).map { CaptureDate(text: $0, source: reading.source) }
        case .wallClock:
            if let zone, let offset = wholeMinutes(zone.rules.offset(forLocal: Int64(reading.seconds.rounded(.down)))),
                let text = rfc3339(reading.seconds - Double(offset), offset: offset)
            {
                return CaptureDate(text: text, source: reading.source, offsetSource: zone.source)
            }
            return rfc3339(reading.seconds, offset: nil).map {
                CaptureDate(text: $0, source: reading.source, offsetKnown: false)
            }
        case .dateOnly:
            return rfc3339(reading.seconds, offset: nil).map {
                CaptureDate(text: $0, source: reading.source, offsetKnown: false)
            }
        }
    }

    /// An offset an RFC 3339 time can show (whole minutes, within ±14:00): tzdata's
    /// local mean times before standard time (Paris' +0:09:21) cannot be.
    static func wholeMinutes(_ offset: Int) -> Int? { offset % 60 == 0 && abs(offset) <= 14 * 3600 ? offset : nil }

    /// The instant a Takeout time was recorded as (``TakeoutMetadata/rfc3339(_:)``: `2019-07-01T16:53:20Z`).
    static func instant(_ text: String) -> Double? {
        let b = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= b.count else { return nil }
            var value = 0
            for byte in b[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard b.count >= 20, b.last == UInt8(ascii: "Z"), let y = number(0..<4), let mo = number(5..<7),
            let d = number(8..<10), let h = number(11..<13),
            let mi = number(14..<16), let s = number(17..<19), let seconds = civil(y, mo, d, h, mi, s)
        else { return nil }
        if b.count == 24, b[19] == UInt8(ascii: "."), let ms = number(20..<23) { return seconds + Double(ms) / 1000 }
        return b.count == 20 ? seconds : nil
    }

    static func usable(_ value: Double?) -> Double? {
        guard let value, value.isFinite, CaptureTime.plausible.contains(value), !CaptureTime.isPlaceholder(value) else {
            return nil
        }
        return value
    }

    /// An offset (seconds east of UTC) within ±14:00 on a 15-minute grid, when `seconds` is near one.
    static func gridOffset(_ seconds: Double, tolerance: Double) -> Int? {
        let rounded = (seconds / 900).rounded() * 900
        guard abs(seconds - rounded) <= tolerance, abs(rounded) <= 14 * 3600 else { return nil }
        return Int(rounded)
    }

    /// The offset the file's metadata gives its own capture time, and where it
    /// came from (`exif`: `OffsetTimeOriginal` or the GPS time stamp; `quicktime`).
    static func fileOffset(_ time: CaptureTime) -> (offset: Int, source: String)? {
        guard let local = usable(time.local) else { return nil }
        let source = time.source == .quicktime ? "quicktime" : "exif"
        if let utc = usable(time.utc), let offset = gridOffset(local - utc, tolerance: 0.01) { return (offset, source) }
        if let gps = usable(time.gps), let offset = gridOffset(local - gps, tolerance: 120) { return (offset, "exif") }
        return nil
    }

    static func fromMetadata(_ time: CaptureTime) -> Reading? {
        let source = (time.source ?? .exif).rawValue
        let local = usable(time.local)
        let utc = usable(time.utc)
        if let local, let utc, let offset = gridOffset(local - utc, tolerance: 0.01) {
            return Reading(
                seconds: utc, clock: .instant(offset, time.source == .quicktime ? "quicktime" : "exif"), source: source)
        }
        if let local {
            // The GPS time stamp is whole seconds, taken a moment apart from the shutter.
            if let gps = usable(time.gps), let offset = gridOffset(local - gps, tolerance: 120),
                rfc3339(local - Double(offset), offset: offset) != nil
            {
                return Reading(seconds: local - Double(offset), clock: .instant(offset, "exif"), source: "gps")
            }
            if rfc3339(local, offset: nil) != nil { return Reading(seconds: local, clock: .wallClock, source: source) }
        }
        if let utc, rfc3339(utc, offset: 0) != nil {
            return Reading(seconds: utc, clock: .instant(nil, nil), source: source)
        }
        return nil
    }

    // MARK: - File names

    /// The capture time a phone's file name says.
    static func fromName(_ name: String) -> Reading? {
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
        let underscore = UInt8(ascii: "_")
        let dash = UInt8(ascii: "-")
        func stamp(_ at: Int, separator: UInt8) -> (date: (Int, Int, Int), time: (Int, Int, Int))? {
            guard let y = digits(at, 4), let mo = digits(at + 4, 2), let d = digits(at + 6, 2),
                byte(at + 8) == separator,
                let h = digits(at + 9, 2), let mi = digits(at + 11, 2), let s = digits(at + 13, 2)
            else { return nil }
            return ((y, mo, d), (h, mi, s))
        }
        func local(_ date: (Int, Int, Int), _ time: (Int, Int, Int), milliseconds: Int = 0) -> Double? {
            guard years.contains(date.0), let seconds = civil(date.0, date.1, date.2, time.0, time.1, time.2) else {
                return nil
            }
            return usable(seconds + Double(milliseconds) / 1000)
        }
        // Pixel: PXL_YYYYMMDD_HHMMSSmmm, in UTC.
        if starts("PXL_"), let found = stamp(4, separator: underscore) {
            let ms = digits(19, 3) ?? 0
            guard let seconds = local(found.date, found.time, milliseconds: ms), rfc3339(seconds, offset: 0) != nil
            else { return nil }
            return Reading(seconds: seconds, clock: .instant(nil, nil), source: "fileName")
        }
        // Android cameras: IMG_YYYYMMDD_HHMMSS, VID_YYYYMMDD_HHMMSS (local time).
        for prefix in ["IMG_", "VID_"] where starts(prefix) {
            if let found = stamp(4, separator: underscore), let seconds = local(found.date, found.time),
                rfc3339(seconds, offset: nil) != nil
            {
                return Reading(seconds: seconds, clock: .wallClock, source: "fileName")
            }
        }
        // WhatsApp: IMG-YYYYMMDD-WA0001, VID-YYYYMMDD-WA0001 (the date alone).
        for prefix in ["IMG-", "VID-"] where starts(prefix) {
            if let y = digits(4, 4), let mo = digits(8, 2), let d = digits(10, 2), byte(12) == dash,
                byte(13) == UInt8(ascii: "W"),
                byte(14) == UInt8(ascii: "A"), let seconds = local((y, mo, d), (0, 0, 0)),
                rfc3339(seconds, offset: nil) != nil
            {
                return Reading(seconds: seconds, clock: .dateOnly, source: "fileName")
            }
        }
        // Android screenshots: Screenshot_YYYYMMDD-HHMMSS (local time).
        if starts("Screenshot_"), let found = stamp(11, separator: dash), let seconds = local(found.date, found.time),
            rfc3339(seconds, offset: nil) != nil
        {
            return Reading(seconds: seconds, clock: .wallClock, source: "fileName")
        }
        return nil
    }

    // MARK: - Calendar

    /// Seconds since 1970-01-01 00:00 for a civil date and time (proleptic Gregorian).
    static func civil(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int) -> Double? {
        guard (1...12).contains(month), (1...daysIn(year, month)).contains(day), (0...23).contains(hour),
            (0...59).contains(minute),
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
        var text =
            "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
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
