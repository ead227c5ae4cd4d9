// A still's moment facts from its EXIF (a TIFF structure): the capture time
// (`DateTimeOriginal`, with `SubSecTimeOriginal` and `OffsetTimeOriginal`) and
// Apple's content identifier, tag 0x0011 of the Apple maker note
// (`Apple iOS\0`, a version, `MM`, then an IFD whose offsets count from the
// maker note's start).

enum StillMoments {
    /// EXIF tags read here.
    enum Tag {
        static let exifIFD = 0x8769
        static let gpsIFD = 0x8825
        static let gpsTimeStamp = 0x0007
        static let gpsDateStamp = 0x001D
        static let makerNote = 0x927C
        static let dateTimeOriginal = 0x9003
        static let createDate = 0x9004
        static let offsetTimeOriginal = 0x9011
        static let subSecTimeOriginal = 0x9291
        /// IFD0: the camera's maker and model.
        static let make = 0x010F
        static let model = 0x0110
        /// EXIF IFD: the lens.
        static let lensModel = 0xA434
        /// Apple maker note: the content identifier a Live Photo's still and movie share.
        static let appleContentIdentifier = 0x0011
        /// Apple maker note: the burst identifier (`BurstUUID`) the frames of one burst share.
        static let appleBurstIdentifier = 0x000B
    }

    /// The GPS date and time stamp (UTC; whole seconds), when both are there.
    static func gpsTime(_ tiff: TIFFReader, _ entries: [TIFFEntry]) -> Double? {
        guard let date = tiff.string(Tag.gpsDateStamp, in: entries),
            let time = tiff.integers(Tag.gpsTimeStamp, in: entries, limit: 3), time.count == 3
        else { return nil }
        let b = Array(date.utf8)
        guard b.count >= 10, let y = DateText.number(b, 0..<4), let mo = DateText.number(b, 5..<7),
            let d = DateText.number(b, 8..<10),
            let seconds = DateText.seconds(year: y, month: mo, day: d, hour: time[0], minute: time[1], second: time[2])
        else { return nil }
        return seconds
    }

    /// The EXIF GPS position (`GPSLatitudeRef`, `GPSLatitude`, `GPSLongitudeRef`,
    /// `GPSLongitude`: degrees, minutes and seconds as rationals), when it is
    /// there and plausible.
    static func position(_ tiff: TIFFReader) -> CapturePosition? {
        guard let ifd0 = tiff.ifd(at: tiff.firstIFD), let pointer = tiff.integer(Tag.gpsIFD, in: ifd0.entries),
            let gps = tiff.ifd(at: pointer),
            let latitude = degrees(tiff, 0x0002, in: gps.entries),
            let longitude = degrees(tiff, 0x0004, in: gps.entries)
        else { return nil }
        let south = tiff.string(0x0001, in: gps.entries)?.uppercased() == "S"
        let west = tiff.string(0x0003, in: gps.entries)?.uppercased() == "W"
        let position = CapturePosition(latitude: south ? -latitude : latitude, longitude: west ? -longitude : longitude)
        return position.isPlausible ? position : nil
    }

    /// Three unsigned rationals (degrees, minutes, seconds) as degrees.
    static func degrees(_ tiff: TIFFReader, _ tag: Int, in entries: [TIFFEntry]) -> Double? {
        guard let entry = tiff.entry(tag, in: entries), entry.type == 5, entry.count == 3,
            let bytes = tiff.source.read(entry.valueOffset..<(entry.valueOffset + 24))
        else { return nil }
        func u32(_ at: Int) -> Double {
            let b = bytes[at..<(at + 4)].map(UInt32.init)
            return Double(
                tiff.bigEndian ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
            )
        }
        var value = 0.0
        for (index, unit) in [1.0, 60, 3600].enumerated() {
            let denominator = u32(index * 8 + 4)
            guard denominator != 0 else { return nil }
            value += u32(index * 8) / denominator / unit
        }
        return value
    }

    /// The camera the EXIF `tiff` names (IFD0 `Make` and `Model`, the EXIF
    /// IFD's `LensModel`), each value cleaned (``CameraFacts/cleaned(_:)``);
    /// nil when it names none. Never a maker note's.
    static func camera(_ tiff: TIFFReader) -> CameraFacts? {
        guard let ifd0 = tiff.ifd(at: tiff.firstIFD) else { return nil }
        var facts = CameraFacts(
            make: tiff.string(Tag.make, in: ifd0.entries), model: tiff.string(Tag.model, in: ifd0.entries))
        if let exifOffset = tiff.integer(Tag.exifIFD, in: ifd0.entries), let exif = tiff.ifd(at: exifOffset) {
            facts.lens = tiff.string(Tag.lensModel, in: exif.entries)
        }
        return facts.cleaned
    }

    /// The Apple maker note's header.
    static let appleSignature = Array("Apple iOS\0".utf8)

    /// The identifiers (content, burst) and capture time in the EXIF `tiff`.
    static func read(_ tiff: TIFFReader) -> (identifier: String?, captureTime: CaptureTime?, burst: String?) {
        guard let ifd0 = tiff.ifd(at: tiff.firstIFD), let exifOffset = tiff.integer(Tag.exifIFD, in: ifd0.entries),
            let exif = tiff.ifd(at: exifOffset)
        else { return (nil, nil, nil) }
        let date = tiff.string(Tag.dateTimeOriginal, in: exif.entries) ?? tiff.string(Tag.createDate, in: exif.entries)
        // Never `OffsetTime` (0x9010): that is the zone of the last edit, not of the capture.
        var captureTime = date.flatMap {
            DateText.exif(
                $0, subSeconds: tiff.string(Tag.subSecTimeOriginal, in: exif.entries),
                offset: tiff.string(Tag.offsetTimeOriginal, in: exif.entries))
        }
        if captureTime != nil, captureTime?.utc == nil, let gpsOffset = tiff.integer(Tag.gpsIFD, in: ifd0.entries),
            let gps = tiff.ifd(at: gpsOffset)
        {
            captureTime?.gps = gpsTime(tiff, gps.entries)
        }
        captureTime?.source = .exif
        var identifier: String?
        var burst: String?
        if let note = tiff.blob(Tag.makerNote, in: exif.entries), note.count > 16,
            let head = tiff.source.read(note.lowerBound..<(note.lowerBound + 14)),
            Array(head[0..<10]) == appleSignature, head[12] == head[13],
            head[12] == UInt8(ascii: "M") || head[12] == UInt8(ascii: "I")
        {
            let apple = TIFFReader(
                tiff.source, bigEndian: head[12] == UInt8(ascii: "M"), base: note.lowerBound, firstIFD: 14)
            if let entries = apple.ifd(at: 14)?.entries,
                let value = apple.string(Tag.appleContentIdentifier, in: entries), MomentFacts.isValidIdentifier(value)
            {
                identifier = value
            }
            if let entries = apple.ifd(at: 14)?.entries,
                let value = apple.string(Tag.appleBurstIdentifier, in: entries), MomentFacts.isValidIdentifier(value)
            {
                burst = value
            }
        }
        return (identifier, captureTime, burst)
    }
}
