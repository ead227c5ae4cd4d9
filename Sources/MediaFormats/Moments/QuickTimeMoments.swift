// A QuickTime movie's Live Photo metadata, read from its `moov` by random
// access (only the boxes named here are read; never the media data):
// - `moov/meta` with the `mdta` handler: its `keys` and `ilst` give
//   `com.apple.quicktime.content.identifier`, `com.apple.quicktime.creationdate`,
//   the location and the camera (`com.apple.quicktime.make`, `model`; else
//   `udta`'s `©mak` and `©mod`);
// - `mvhd`'s creation time (UTC) when there is no creation date;
// - the timed-metadata track (`mebx` sample entry) whose key is
//   `com.apple.quicktime.still-image-time`: its first sample's presentation
//   time, through the track's edit list, is the frame the Live Photo's still shows.

/// What a QuickTime or MP4 movie says about the moment it belongs to.
enum QuickTimeMoments {
    static let contentIdentifierKey = "com.apple.quicktime.content.identifier"
    static let creationDateKey = "com.apple.quicktime.creationdate"
    static let stillImageTimeKey = "com.apple.quicktime.still-image-time"
    static let locationKey = "com.apple.quicktime.location.ISO6709"
    static let makeKey = "com.apple.quicktime.make"
    static let modelKey = "com.apple.quicktime.model"
    /// The keys whose values are read.
    static let readKeys: Set<String> = [contentIdentifierKey, creationDateKey, locationKey, makeKey, modelKey]

    /// Most bytes of a `keys`, `ilst`, sample description or sample table read.
    static let maximumBoxRead = 1 << 20

    /// The facts of the movie in `source`; nil when it has none of them.
    static func read(_ source: any RandomAccessBytes) -> MomentFacts? {
        guard let moov = ISOBox.list(source, in: 0..<source.count, limit: 4096).first(where: { $0.type == "moov" })
        else { return nil }
        let movie = ISOBox.list(source, in: moov.payload, limit: 4096)
        var facts = MomentFacts()
        var movieTimescale = 0
        if let mvhd = movie.first(where: { $0.type == "mvhd" }),
            let head = source.read(mvhd.payload.lowerBound..<min(mvhd.payload.upperBound, mvhd.payload.lowerBound + 32))
        {
            let b = BigEndianBytes(bytes: head)
            let version = head.first ?? 0
            movieTimescale = (version == 1 ? b.u32(20) : b.u32(12)) ?? 0
            // Seconds since 1904-01-01 UTC; 0 (unset) and the years before 1971 are no date.
            if let created = version == 1 ? b.u64(4) : b.u32(4), created > 2_082_844_800 + 31_536_000 {
                facts.captureTime = CaptureTime(utc: Double(created - 2_082_844_800), source: .mp4)
            }
        }
        for meta in movie where meta.type == "meta" {
            let values = metadata(source, meta: meta)
            if let identifier = values[contentIdentifierKey], MomentFacts.isValidIdentifier(identifier) {
                facts.contentIdentifier = identifier
            }
            if var date = values[creationDateKey].flatMap(DateText.iso8601) {
                date.source = .quicktime
                facts.captureTime = date
            }
            if let position = values[locationKey].flatMap(CapturePosition.init(iso6709:)) { facts.position = position }
            if values[makeKey] != nil || values[modelKey] != nil {
                facts.camera = CameraFacts(make: values[makeKey], model: values[modelKey]).cleaned
            }
        }
        // Android's (and older QuickTime's) `udta/©xyz`: a 16-bit length, a language, the ISO 6709 text.
        if facts.position == nil, let udta = movie.first(where: { $0.type == "udta" }),
            let xyz = ISOBox.list(source, in: udta.payload, limit: 256).first(where: { $0.type == "©xyz" }),
            xyz.payload.count > 4,
            xyz.payload.count <= 256, let bytes = source.read(xyz.payload)
        {
            let length = Int(bytes[0]) << 8 | Int(bytes[1])
            if length <= bytes.count - 4 {
                facts.position = CapturePosition(iso6709: String(decoding: bytes[4..<(4 + length)], as: UTF8.self))
            }
        }
        // Older QuickTime's (and some cameras') `udta/©mak` and `©mod`, in the same layout, when the keys name no camera.
        if facts.camera == nil, let udta = movie.first(where: { $0.type == "udta" }) {
            let atoms = ISOBox.list(source, in: udta.payload, limit: 256)
            facts.camera =
                CameraFacts(make: userDataText(source, atoms, "©mak"), model: userDataText(source, atoms, "©mod"))
                .cleaned
        }
        facts.stillImageTime = stillImageTime(source, movie: movie, movieTimescale: movieTimescale)
        return facts.isEmpty ? nil : facts
    }

    /// The still-image time alone (what a poster needs): the movie's tracks only.
    static func stillImageTime(_ source: any RandomAccessBytes) -> Double? {
        guard let moov = ISOBox.list(source, in: 0..<source.count, limit: 4096).first(where: { $0.type == "moov" })
        else { return nil }
        let movie = ISOBox.list(source, in: moov.payload, limit: 4096)
        guard let mvhd = movie.first(where: { $0.type == "mvhd" }),
            let head = source.read(
                mvhd.payload.lowerBound..<min(mvhd.payload.upperBound, mvhd.payload.lowerBound + 24)),
            let timescale = BigEndianBytes(bytes: head).u32(head.first == 1 ? 20 : 12)
        else { return nil }
        return stillImageTime(source, movie: movie, movieTimescale: timescale)
    }

    static func stillImageTime(_ source: any RandomAccessBytes, movie: [ISOBox], movieTimescale: Int) -> Double? {
        guard movieTimescale > 0 else { return nil }
        for trak in movie where trak.type == "trak" {
            if let time = stillImageTime(source, trak: trak, movieTimescale: movieTimescale) { return time }
        }
        return nil
    }

    /// The text of the `udta` atom of `type` among `atoms` (a 16-bit length, a
    /// language, the text), when it holds one of at most 256 bytes.
    static func userDataText(_ source: any RandomAccessBytes, _ atoms: [ISOBox], _ type: String) -> String? {
        guard let atom = atoms.first(where: { $0.type == type }), atom.payload.count > 4, atom.payload.count <= 260,
            let bytes = source.read(atom.payload)
        else { return nil }
        let length = Int(bytes[0]) << 8 | Int(bytes[1])
        guard length <= bytes.count - 4 else { return nil }
        return String(decoding: bytes[4..<(4 + length)], as: UTF8.self)
    }

    /// The UTF-8 values of a QuickTime `meta` box's `mdta` keys (`keys` + `ilst`), by key.
    static func metadata(_ source: any RandomAccessBytes, meta: ISOBox) -> [String: String] {
        // QuickTime's `meta` has no version and flags; ISO's (in `udta`) has four bytes of them.
        var range = meta.payload
        if let head = source.read(range.lowerBound..<(range.lowerBound + 12)),
            String(decoding: head[4..<8], as: UTF8.self) != "hdlr",
            String(decoding: head[8..<12], as: UTF8.self) == "hdlr"
        {
            range = (range.lowerBound + 4)..<range.upperBound
        }
        let children = ISOBox.list(source, in: range, limit: 256)
        guard let keysBox = children.first(where: { $0.type == "keys" }),
            let ilst = children.first(where: { $0.type == "ilst" }),
            keysBox.payload.count <= maximumBoxRead, let keyBytes = source.read(keysBox.payload)
        else { return [:] }
        // keys: version and flags, a count, then [size, namespace, name] entries (1-based).
        var keys: [Int: String] = [:]
        let b = BigEndianBytes(bytes: keyBytes)
        guard let count = b.u32(4), count <= 4096 else { return [:] }
        var position = 8
        for index in stride(from: 1, through: count, by: 1) {
            guard let size = b.u32(position), size >= 8, position + size <= keyBytes.count else { break }
            if String(decoding: keyBytes[(position + 4)..<(position + 8)], as: UTF8.self) == "mdta" {
                keys[index] = String(decoding: keyBytes[(position + 8)..<(position + size)], as: UTF8.self)
            }
            position += size
        }
        var values: [String: String] = [:]
        for item in ISOBox.list(source, in: ilst.payload, limit: 4096) {
            // An item's type is its key's index, as a big-endian number.
            let index = item.type.utf8.reduce(0) { $0 << 8 | Int($1) }
            guard let key = keys[index], readKeys.contains(key),
                let data = ISOBox.list(source, in: item.payload, limit: 16).first(where: { $0.type == "data" }),
                data.payload.count >= 8, data.payload.count <= 4096, let bytes = source.read(data.payload)
            else { continue }
            // data: type indicator (1: UTF-8), locale, the value.
            guard BigEndianBytes(bytes: bytes).u32(0) == 1 else { continue }
            values[key] = String(decoding: bytes[8...], as: UTF8.self)
        }
        return values
    }

    /// The presentation time (seconds) of the still-image-time sample, when
    /// `trak` is the timed-metadata track that carries that key.
    static func stillImageTime(_ source: any RandomAccessBytes, trak: ISOBox, movieTimescale: Int) -> Double? {
        guard let mdia = ISOBox.find(source, in: trak.payload, path: ["mdia"]),
            let hdlr = ISOBox.find(source, in: mdia.payload, path: ["hdlr"]),
            let handler = source.read((hdlr.payload.lowerBound + 8)..<(hdlr.payload.lowerBound + 12)),
            String(decoding: handler, as: UTF8.self) == "meta",
            let mdhd = ISOBox.find(source, in: mdia.payload, path: ["mdhd"]),
            let mediaHead = source.read(
                mdhd.payload.lowerBound..<min(mdhd.payload.upperBound, mdhd.payload.lowerBound + 24)),
            let mediaTimescale = BigEndianBytes(bytes: mediaHead).u32(mediaHead.first == 1 ? 20 : 12),
            mediaTimescale > 0,
            let stbl = ISOBox.find(source, in: mdia.payload, path: ["minf", "stbl"]),
            let stsd = ISOBox.find(source, in: stbl.payload, path: ["stsd"]), stsd.payload.count <= maximumBoxRead,
            let description = source.read(stsd.payload), describesStillImageTime(description)
        else { return nil }
        // The first sample that holds anything (writers put empty samples in gaps).
        var sampleTime = 0
        if let stsz = ISOBox.find(source, in: stbl.payload, path: ["stsz"]),
            let stts = ISOBox.find(source, in: stbl.payload, path: ["stts"]),
            stsz.payload.count <= maximumBoxRead, stts.payload.count <= maximumBoxRead,
            let sizes = source.read(stsz.payload), let times = source.read(stts.payload)
        {
            let s = BigEndianBytes(bytes: sizes)
            let t = BigEndianBytes(bytes: times)
            let uniform = s.u32(4) ?? 0
            let sampleCount = min(s.u32(8) ?? 0, 100_000)
            let first = (0..<sampleCount).first { uniform > 0 || (s.u32(12 + $0 * 4) ?? 0) > 0 } ?? 0
            // Sum the durations of the samples before it.
            var remaining = first
            var entry = 0
            let entries = min(t.u32(4) ?? 0, 100_000)
            while remaining > 0, entry < entries, let count = t.u32(8 + entry * 8), let delta = t.u32(12 + entry * 8) {
                let taken = min(count, remaining)
                sampleTime += taken * delta
                remaining -= taken
                entry += 1
            }
        }
        // The edit list: empty edits shift the track; the first media edit says where its media starts.
        var offset = 0.0
        var mediaStart = 0
        if let elst = ISOBox.find(source, in: trak.payload, path: ["edts", "elst"]),
            elst.payload.count <= maximumBoxRead, let edits = source.read(elst.payload)
        {
            let e = BigEndianBytes(bytes: edits)
            let version = edits.first ?? 0
            let size = version == 1 ? 20 : 12
            for i in 0..<min(e.u32(4) ?? 0, 1000) {
                let at = 8 + i * size
                guard at + size <= edits.count, let duration = version == 1 ? e.u64(at) : e.u32(at) else { break }
                // media_time −1 (all ones): an empty edit.
                let mediaField = version == 1 ? edits[(at + 8)..<(at + 16)] : edits[(at + 4)..<(at + 8)]
                if mediaField.allSatisfy({ $0 == 0xFF }) {
                    offset += Double(duration) / Double(movieTimescale)
                } else {
                    guard let mediaTime = version == 1 ? e.u64(at + 8) : e.u32(at + 4) else { break }
                    mediaStart = mediaTime
                    break
                }
            }
        }
        let time = offset + Double(sampleTime - mediaStart) / Double(mediaTimescale)
        return time.isFinite && time >= 0 ? time : nil
    }

    /// True when a `stsd` payload's first entry is a `mebx` (timed metadata)
    /// description whose keys include the still-image-time key.
    static func describesStillImageTime(_ stsd: [UInt8]) -> Bool {
        // version and flags, entry count, then the first entry: size, format, six reserved bytes, data reference index.
        let b = BigEndianBytes(bytes: stsd)
        guard let size = b.u32(8), size >= 16, 8 + size <= stsd.count,
            String(decoding: stsd[12..<16], as: UTF8.self) == "mebx"
        else { return false }
        let entry = Array(stsd[8..<(8 + size)])
        guard let keys = ISOBox.find(entry, in: 16..<entry.count, path: ["keys"]) else { return false }
        for key in ISOBox.list(entry, in: keys.payload, limit: 64) {
            guard let keyd = ISOBox.find(entry, in: key.payload, path: ["keyd"]), keyd.payload.count > 4 else {
                continue
            }
            // keyd: the namespace (`mdta`), then the key.
            if String(decoding: entry[(keyd.payload.lowerBound + 4)..<keyd.payload.upperBound], as: UTF8.self)
                == stillImageTimeKey
            {
                return true
            }
        }
        return false
    }
}

/// Dates as EXIF and QuickTime write them, to seconds since 1970 (no Foundation:
/// this module is pure Swift).
enum DateText {
    /// Seconds since 1970-01-01 00:00 for a civil date and time (proleptic Gregorian).
    static func seconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Double? {
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute),
            (0...60).contains(second),
            (1800...2300).contains(year)
        else { return nil }
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let value = Double(days * 86_400 + hour * 3600 + minute * 60 + second)
        return CaptureTime.isPlaceholder(value) ? nil : value
    }

    /// Decimal digits at `range` of `bytes`.
    static func number(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        guard range.upperBound <= bytes.count, !range.isEmpty else { return nil }
        var value = 0
        for b in bytes[range] {
            guard (0x30...0x39).contains(b) else { return nil }
            value = value * 10 + Int(b - 0x30)
        }
        return value
    }

    /// `±HH:MM`, `±HHMM` or `Z` → seconds east of UTC.
    static func offset(_ text: [UInt8]) -> Int? {
        if text == [UInt8(ascii: "Z")] { return 0 }
        guard text.count == 6 || text.count == 5, text[0] == UInt8(ascii: "+") || text[0] == UInt8(ascii: "-") else {
            return nil
        }
        let digits = text.count == 6 ? [text[1], text[2], text[4], text[5]] : Array(text[1...4])
        // Real zones lie within ±14:00, on a 15-minute grid.
        guard let hours = number(digits, 0..<2), let minutes = number(digits, 2..<4), hours * 60 + minutes <= 14 * 60,
            minutes % 15 == 0
        else { return nil }
        return (text[0] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    /// EXIF `YYYY:MM:DD HH:MM:SS`, with its sub-seconds (`SubSecTimeOriginal`) and
    /// offset (`OffsetTimeOriginal`) when given.
    static func exif(_ text: String, subSeconds: String? = nil, offset: String? = nil) -> CaptureTime? {
        let b = Array(text.utf8)
        guard b.count >= 19, let y = number(b, 0..<4), let mo = number(b, 5..<7), let d = number(b, 8..<10),
            let h = number(b, 11..<13),
            let mi = number(b, 14..<16), let s = number(b, 17..<19),
            var local = seconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
        else { return nil }
        if let sub = subSeconds.map({ Array($0.utf8.prefix(3)) }), let fraction = number(sub, 0..<sub.count) {
            local += Double(fraction) / pow10(sub.count)
        }
        let zone = offset.flatMap { DateText.offset(Array($0.utf8)) }
        return CaptureTime(local: local, utc: zone.map { local - Double($0) })
    }

    /// ISO 8601 as QuickTime writes it: `2023-06-10T14:03:22+0200` (also with
    /// `+02:00`, `Z`, fractional seconds, or no zone).
    static func iso8601(_ text: String) -> CaptureTime? {
        let b = Array(text.utf8.prefix(40))
        guard b.count >= 19, let y = number(b, 0..<4), let mo = number(b, 5..<7), let d = number(b, 8..<10),
            let h = number(b, 11..<13),
            let mi = number(b, 14..<16), let s = number(b, 17..<19),
            var local = seconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
        else { return nil }
        var rest = Array(b[19...])
        if rest.first == UInt8(ascii: ".") {
            let digits = rest.dropFirst().prefix { (0x30...0x39).contains($0) }
            if let fraction = number(Array(digits.prefix(3)), 0..<min(3, digits.count)) {
                local += Double(fraction) / pow10(min(3, digits.count))
            }
            rest = Array(rest.dropFirst(1 + digits.count))
        }
        let zone = rest.isEmpty ? nil : offset(rest)
        return CaptureTime(local: local, utc: zone.map { local - Double($0) })
    }

    private static func pow10(_ n: Int) -> Double { (0..<n).reduce(1.0) { value, _ in value * 10 } }
}
