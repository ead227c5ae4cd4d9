// A still's moment facts from its EXIF (a TIFF structure): the capture time
// (`DateTimeOriginal`, with `SubSecTimeOriginal` and `OffsetTimeOriginal`) and
// Apple's content identifier, tag 0x0011 of the Apple maker note
// (`Apple iOS\0`, a version, `MM`, then an IFD whose offsets count from the
// maker note's start).

enum StillMoments {
    /// EXIF tags read here.
    enum Tag {
        static let exifIFD = 0x8769
        static let makerNote = 0x927C
        static let dateTimeOriginal = 0x9003
        static let createDate = 0x9004
        static let offsetTimeOriginal = 0x9011
        static let subSecTimeOriginal = 0x9291
        /// Apple maker note: the content identifier a Live Photo's still and movie share.
        static let appleContentIdentifier = 0x0011
    }

    /// The Apple maker note's header.
    static let appleSignature = Array("Apple iOS\0".utf8)

    /// The identifier and capture time in the EXIF `tiff`.
    static func read(_ tiff: TIFFReader) -> (identifier: String?, captureTime: CaptureTime?) {
        guard let ifd0 = tiff.ifd(at: tiff.firstIFD), let exifOffset = tiff.integer(Tag.exifIFD, in: ifd0.entries),
            let exif = tiff.ifd(at: exifOffset)
        else { return (nil, nil) }
        let date = tiff.string(Tag.dateTimeOriginal, in: exif.entries) ?? tiff.string(Tag.createDate, in: exif.entries)
        let captureTime = date.flatMap {
            DateText.exif($0, subSeconds: tiff.string(Tag.subSecTimeOriginal, in: exif.entries), offset: tiff.string(Tag.offsetTimeOriginal, in: exif.entries))
        }
        var identifier: String?
        if let note = tiff.blob(Tag.makerNote, in: exif.entries), note.count > 16, let head = tiff.source.read(note.lowerBound..<(note.lowerBound + 14)),
            Array(head[0..<10]) == appleSignature, head[12] == head[13], head[12] == UInt8(ascii: "M") || head[12] == UInt8(ascii: "I")
        {
            let apple = TIFFReader(tiff.source, bigEndian: head[12] == UInt8(ascii: "M"), base: note.lowerBound, firstIFD: 14)
            if let entries = apple.ifd(at: 14)?.entries, let value = apple.string(Tag.appleContentIdentifier, in: entries), MomentFacts.isValidIdentifier(value) {
                identifier = value
            }
        }
        return (identifier, captureTime)
    }
}
