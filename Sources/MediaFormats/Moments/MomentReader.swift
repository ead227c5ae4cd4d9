// Where a motion photo keeps its video, and what ties a still or a movie to its
// moment, read from the untrusted bytes by random access (only metadata, box
// headers and trailers are read; a JPEG's entropy-coded data is scanned only when
// bytes follow it that nothing else explains).
//
// Layouts, tried in this order (the first that points at an MP4 `ftyp` wins):
// - HEIF: a top-level `mpvd` box (Samsung, Android): its payload.
// - Google's XMP `Container:Directory`: the items after the primary one occupy
//   the end of the file; the video item starts `Length` bytes before the end of
//   what follows it. Samsung counts an item's trailing `Padding` inside its
//   `Length`, Google's specification after it: both starts are tried.
// - Google's older XMP `GCamera:MicroVideoOffset`: the video starts that many
//   bytes before the end of the file.
// - Samsung's trailer: the file ends with `SEFT` after the length of an `SEFH`
//   directory, whose `MotionPhoto_Data` (0x0A30) entry names a block before it:
//   two zero bytes, the type, the name's length, the name, then the video.
// - Samsung's `MotionPhoto=1` XMP without a directory, its trailer naming no
//   `MotionPhoto_Data`: an MP4 `ftyp` between the JPEG's EOI and `SEFH`.
// - Otherwise an MP4 `ftyp` box after the primary image's end: a JPEG's EOI (the
//   entropy-coded data is scanned only when the file does not end there), a
//   HEIF's last box (or a top-level box of a type HEIF does not have).
// The video's extent is its own top-level MP4 boxes (the walk stops at the first
// type an MP4 does not have, such as Samsung's `sefd`); one that runs past the
// end of the file is cut short (`truncated`).

/// Reads a file's ``MomentFacts``.
package enum MomentReader {
    /// Stills whose embedded video, identifier and capture time are read.
    static let stillFormats: Set<String> = ["jpeg", "heic", "heif", "avif"]
    /// Other pictures whose EXIF names the camera (``CaptureMetadata/read(_:format:)``).
    package static let cameraFormats: Set<String> = [
        "tiff", "dng", "nef", "cr2", "arw", "orf", "rw2", "raf", "cr3", "jxl", "png", "webp",
    ]
    /// Movies whose QuickTime metadata is read.
    package static let movieFormats: Set<String> = ["mov", "mp4", "m4v", "3gp"]

    /// The moment facts of the file in `source`, whose sniffed format is `format`;
    /// nil when it has none.
    package static func read(_ source: any RandomAccessBytes, format: MediaFormat) -> MomentFacts? {
        if movieFormats.contains(format.id) { return QuickTimeMoments.read(source) }
        guard stillFormats.contains(format.id) else {
            // Other pictures (TIFF, camera RAW, JPEG XL, PNG, WebP): only the camera, from the EXIF found for compatible copies.
            guard cameraFormats.contains(format.id), let camera = CaptureMetadata.read(source, format: format)?.camera
            else { return nil }
            return MomentFacts(camera: camera)
        }
        let facts = format.id == "jpeg" ? jpeg(source) : heif(source)
        return facts.isEmpty ? nil : facts
    }

    /// A movie's still-image time (seconds), read alone: what its poster shows.
    package static func stillImageTime(_ source: any RandomAccessBytes) -> Double? {
        QuickTimeMoments.stillImageTime(source)
    }

    // MARK: - JPEG

    /// The APP1 segments of a JPEG that matter here, and where its headers end.
    struct JPEGSegments {
        var exif: Range<Int>?
        var xmp: Range<Int>?
        /// The start of the first scan's entropy-coded data (after SOS's header).
        var scan: Int?
    }

    static let xmpSignature = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
    static let exifSignature: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]

    /// Walks a JPEG's marker segments from SOI to the first SOS.
    static func segments(_ source: any RandomAccessBytes) -> JPEGSegments? {
        guard let soi = source.read(0..<2), soi == [0xFF, 0xD8] else { return nil }
        var found = JPEGSegments()
        var position = 2
        for _ in 0..<512 {
            guard let head = source.read(position..<(position + 4)), head[0] == 0xFF else { return found }
            let marker = head[1]
            if marker == 0xFF {
                position += 1
                continue
            }
            let length = Int(head[2]) << 8 | Int(head[3])
            guard length >= 2 else { return found }
            let payload = (position + 4)..<(position + 2 + length)
            if marker == 0xDA {
                found.scan = payload.upperBound
                return found
            }
            if marker == 0xE1,
                let signature = source.read(
                    payload.lowerBound..<min(payload.upperBound, payload.lowerBound + xmpSignature.count))
            {
                if found.exif == nil, signature.starts(with: exifSignature) {
                    found.exif = (payload.lowerBound + 6)..<payload.upperBound
                }
                if found.xmp == nil, signature == xmpSignature {
                    found.xmp = (payload.lowerBound + xmpSignature.count)..<payload.upperBound
                }
            }
            position = payload.upperBound
        }
        return found
    }

    static func jpeg(_ source: any RandomAccessBytes) -> MomentFacts {
        var facts = MomentFacts()
        guard let segments = segments(source) else { return facts }
        if let exif = segments.exif, let tiff = TIFFReader(source, base: exif.lowerBound) {
            (facts.contentIdentifier, facts.captureTime, facts.burstIdentifier) = StillMoments.read(tiff)
            facts.position = StillMoments.position(tiff)
            facts.camera = StillMoments.camera(tiff)
        }
        let xmp = segments.xmp.flatMap { source.read($0) }.flatMap { MotionPhotoXMP($0[...]) }
        let trailer = SamsungTrailer(source)
        facts.declaresMotionPhoto = (xmp?.declaresMotionPhoto ?? false) || trailer?.motionPhoto != nil
        if let xmp, let video = fromXMP(xmp, source: source) {
            facts.embeddedVideo = video
        } else if let video = trailer?.motionPhoto.flatMap({
            mp4(source, at: $0.lowerBound, limit: $0.upperBound, layout: .samsungTrailer)
        }) {
            facts.embeddedVideo = video
        } else {
            // A JPEG that ends with its EOI holds nothing after it; otherwise look
            // for an MP4 after the primary image (before a Samsung trailer).
            let end = trailer?.start ?? source.count
            // (A trailer whose blocks claim the image's own bytes starts before the EOI: nothing lies between.)
            if let last = source.read((end - 2)..<end), last != [0xFF, 0xD9], let scan = segments.scan,
                let eoi = endOfImage(source, from: scan), eoi <= end
            {
                facts.embeddedVideo = scanForMP4(source, in: eoi..<end)
            }
            // Samsung's `MotionPhoto=1` without a directory, and a trailer that
            // names no `MotionPhoto_Data`: the video runs from the `ftyp` after
            // the JPEG's EOI to `SEFH` (past the trailer's blocks before it).
            if facts.embeddedVideo == nil, xmp?.motionPhoto == true, let trailer, trailer.directory >= end,
                let scan = segments.scan, let eoi = endOfImage(source, from: scan), eoi < trailer.directory
            {
                facts.embeddedVideo = scanForMP4(source, in: eoi..<trailer.directory, layout: .samsungTrailer)
            }
        }
        return facts
    }

    /// The offset just past the primary image's EOI: the entropy-coded data is
    /// scanned for markers (a 0xFF not followed by 0x00 or a restart marker);
    /// segments between scans (progressive JPEGs) are skipped by their lengths.
    static func endOfImage(_ source: any RandomAccessBytes, from start: Int) -> Int? {
        let chunk = 1 << 20
        var position = start
        while position < source.count {
            guard let bytes = source.read(position..<min(source.count, position + chunk)) else { return nil }
            var i = 0
            var resume: Int?
            while let ff = bytes[i...].firstIndex(of: 0xFF) {
                guard ff + 1 < bytes.count else { break }  // its marker is in the next chunk
                let marker = bytes[ff + 1]
                if marker == 0x00 || (0xD0...0xD7).contains(marker) {
                    i = ff + 2
                    continue
                }
                if marker == 0xFF {
                    i = ff + 1
                    continue
                }
                if marker == 0xD9 { return position + ff + 2 }
                // Another segment (DHT, the SOS of a progressive scan, DRI, COM…): skipped by its length.
                guard let length = source.read((position + ff + 2)..<(position + ff + 4)) else { return nil }
                let skip = 2 + (Int(length[0]) << 8 | Int(length[1]))
                guard skip >= 4 else { return nil }
                if ff + skip >= bytes.count {
                    resume = position + ff + skip
                    break
                }
                i = ff + skip
            }
            // The last byte is read again with the next chunk (a 0xFF whose marker follows).
            position = resume ?? position + max(1, bytes.count - 1)
        }
        return nil
    }

    // MARK: - HEIF

    /// HEIF's own top-level boxes: anything else after them may hide a video.
    static let heifBoxTypes: Set<String> = [
        "ftyp", "meta", "mdat", "free", "skip", "moov", "uuid", "idat", "wide", "pdin", "sefd", "mpvd",
    ]

    static func heif(_ source: any RandomAccessBytes) -> MomentFacts {
        var facts = MomentFacts()
        let (top, cut) = topLevelBoxes(source)
        if let (file, copied) = heifStructure(source, boxes: top) {
            if let primary = file.primaryItem {
                for exif in file.items(referring: primary.id, type: "cdsc") where exif.type == "Exif" {
                    guard let data = file.bytes(of: exif, in: source, copied: copied, limit: 1 << 20), data.count > 8
                    else { continue }
                    let offset = Int(BigEndianBytes(bytes: data).u32(0) ?? Int.max)
                    guard offset < data.count - 8, let tiff = TIFFReader(data, base: 4 + offset) else { continue }
                    (facts.contentIdentifier, facts.captureTime, facts.burstIdentifier) = StillMoments.read(tiff)
                    facts.position = StillMoments.position(tiff)
                    facts.camera = StillMoments.camera(tiff)
                    break
                }
            }
            var xmp: MotionPhotoXMP?
            for item in file.items.values.sorted(by: { $0.id < $1.id }) where item.type == "mime" {
                if let data = file.bytes(of: item, in: source, copied: copied, limit: MotionPhotoXMP.maximumSize),
                    let parsed = MotionPhotoXMP(data[...])
                {
                    xmp = parsed
                    break
                }
            }
            facts.declaresMotionPhoto = xmp?.declaresMotionPhoto ?? false
            if let found = motionBox(source, top: top, cut: cut, facts: &facts) { return found }
            if let xmp, let video = fromXMP(xmp, source: source) {
                facts.embeddedVideo = video
                return facts
            }
        } else if let found = motionBox(source, top: top, cut: cut, facts: &facts) {
            return found
        }
        let trailer = SamsungTrailer(source)
        if trailer?.motionPhoto != nil { facts.declaresMotionPhoto = true }
        if let video = trailer?.motionPhoto.flatMap({
            mp4(source, at: $0.lowerBound, limit: $0.upperBound, layout: .samsungTrailer)
        }) {
            facts.embeddedVideo = video
            return facts
        }
        // Boxes HEIF does not have, and whatever follows the last box.
        for box in top where !heifBoxTypes.contains(box.type) {
            if let video = mp4(source, at: box.payload.lowerBound, limit: box.payload.upperBound, layout: .appended) {
                facts.embeddedVideo = video
                return facts
            }
        }
        let walked = cut.map { $0.payload.lowerBound - 8 } ?? top.last?.payload.upperBound ?? 0
        let end = trailer?.start ?? source.count
        if walked < end { facts.embeddedVideo = scanForMP4(source, in: walked..<end) }
        return facts
    }

    /// The facts with the video of a top-level `mpvd` box, when it holds one.
    static func motionBox(_ source: any RandomAccessBytes, top: [ISOBox], cut: ISOBox?, facts: inout MomentFacts)
        -> MomentFacts?
    {
        guard let motion = top.first(where: { $0.type == "mpvd" }) ?? cut.flatMap({ $0.type == "mpvd" ? $0 : nil })
        else { return nil }
        facts.declaresMotionPhoto = true
        guard
            var video = mp4(
                source, at: motion.payload.lowerBound, limit: motion.payload.upperBound, layout: .heifMotionBox)
        else { return nil }
        if cut?.type == "mpvd" { video.truncated = true }
        facts.embeddedVideo = video
        return facts
    }

    /// The top-level boxes of a HEIF that fit the file, and the box that runs past
    /// its end (its payload then ends with the file), if any.
    static func topLevelBoxes(_ source: any RandomAccessBytes) -> (boxes: [ISOBox], cut: ISOBox?) {
        var boxes: [ISOBox] = []
        var position = 0
        while position + 8 <= source.count, boxes.count < 4096, let header = source.read(position..<(position + 8)) {
            var size = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let type = String(decoding: header[4..<8], as: UTF8.self)
            var start = position + 8
            if size == 1 {
                guard let large = source.read(start..<(start + 8)).map({ BigEndianBytes(bytes: $0).u64(0) }),
                    let value = large
                else { break }
                size = value
                start += 8
            } else if size == 0 {
                size = source.count - position
            }
            guard size >= start - position, type.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { break }
            if position + size > source.count {
                return (boxes, ISOBox(type: type, payload: start..<source.count, uuid: nil))
            }
            boxes.append(ISOBox(type: type, payload: start..<(position + size), uuid: nil))
            position += size
        }
        return (boxes, nil)
    }

    /// The item structure from the file's `ftyp` and `meta` boxes alone, and
    /// those boxes' bytes (item data is read where `iloc` puts it: from the file,
    /// or from the copied `meta`'s `idat`; never the whole file).
    static func heifStructure(_ source: any RandomAccessBytes, boxes: [ISOBox]) -> (HEIFFile, [UInt8])? {
        guard let ftyp = boxes.first, ftyp.type == "ftyp", let meta = boxes.first(where: { $0.type == "meta" }),
            meta.payload.count <= 16 << 20,
            let ftypBytes = source.read((ftyp.payload.lowerBound - 8)..<ftyp.payload.upperBound),
            let metaBytes = source.read((meta.payload.lowerBound - 8)..<meta.payload.upperBound)
        else { return nil }
        // Box sizes are read from the bytes themselves: a large-size header is not expected here.
        guard ftyp.payload.count + 8 == ftypBytes.count, meta.payload.count + 8 == metaBytes.count else { return nil }
        let copied = ftypBytes + metaBytes
        guard let file = try? HEIFFile.parse(copied) else { return nil }
        return (file, copied)
    }

    // MARK: - Layouts

    /// The video Google's XMP points at: `Container:Directory`, then `MicroVideoOffset`.
    static func fromXMP(_ xmp: MotionPhotoXMP, source: any RandomAccessBytes) -> EmbeddedVideo? {
        let size = source.count
        if let video = xmp.items.indices.dropFirst().first(where: { xmp.items[$0].isVideo }) {
            let following = xmp.items[video...]
            if following.allSatisfy({ $0.length != nil }) {
                let lengths = following.reduce(0) { $0 + ($1.length ?? 0) }
                let withPadding = following.reduce(0) { $0 + ($1.length ?? 0) + ($1.padding ?? 0) }
                for start in [size - lengths, size - withPadding] where start > 0 {
                    if let found = mp4(source, at: start, limit: size, layout: .containerDirectory) { return found }
                }
            }
        }
        if xmp.microVideo || xmp.microVideoOffset != nil, let offset = xmp.microVideoOffset, offset > 0, offset < size {
            return mp4(source, at: size - offset, limit: size, layout: .microVideo)
        }
        return nil
    }

    /// An MP4's top-level box types: its walk stops at any other.
    static let mp4BoxTypes: Set<String> = [
        "ftyp", "free", "skip", "wide", "mdat", "moov", "moof", "mfra", "meta", "uuid", "pdin", "styp", "sidx", "ssix",
        "prft", "emsg", "udta", "pnot",
    ]

    /// The MP4 starting with an `ftyp` box at `offset`, its extent its top-level
    /// boxes up to `limit`; nil when there is no plausible `ftyp` there.
    static func mp4(_ source: any RandomAccessBytes, at offset: Int, limit: Int, layout: EmbeddedVideo.Layout)
        -> EmbeddedVideo?
    {
        let limit = min(limit, source.count)
        guard offset >= 0, offset + 16 <= limit, let head = source.read(offset..<(offset + 12)) else { return nil }
        let ftypSize = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        guard String(decoding: head[4..<8], as: UTF8.self) == "ftyp", (16...1024).contains(ftypSize),
            head[8..<12].allSatisfy({ (0x20...0x7E).contains($0) })
        else { return nil }
        var position = offset
        var truncated = false
        var boxes = 0
        while position + 8 <= limit, boxes < 100_000, let header = source.read(position..<(position + 8)) {
            var size = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let type = String(decoding: header[4..<8], as: UTF8.self)
            guard mp4BoxTypes.contains(type) else { break }
            var headerSize = 8
            if size == 1 {
                guard
                    let large = source.read((position + 8)..<(position + 16)).map({ BigEndianBytes(bytes: $0).u64(0) }),
                    let value = large
                else {
                    truncated = position + 16 > limit
                    break
                }
                size = value
                headerSize = 16
            } else if size == 0 {
                size = limit - position
            }
            guard size >= headerSize else { break }
            if position + size > limit {
                truncated = true
                position = limit
                break
            }
            position += size
            boxes += 1
        }
        guard position > offset + ftypSize else { return nil }
        return EmbeddedVideo(layout: layout, offset: offset, length: position - offset, truncated: truncated)
    }

    /// The first MP4 found in `range` by its `ftyp` box (the last resort).
    static func scanForMP4(
        _ source: any RandomAccessBytes, in range: Range<Int>, layout: EmbeddedVideo.Layout = .appended
    ) -> EmbeddedVideo? {
        let pattern = Array("ftyp".utf8)
        let chunk = 1 << 20
        var position = max(range.lowerBound, 0)
        while position + 8 <= range.upperBound {
            guard let bytes = source.read(position..<min(range.upperBound, position + chunk + 3)) else { return nil }
            var from = bytes.startIndex
            while let found = bytes[from...].firstRange(of: pattern) {
                let start = position + found.lowerBound - 4
                if start >= range.lowerBound,
                    let video = mp4(source, at: start, limit: range.upperBound, layout: layout)
                {
                    return video
                }
                from = found.upperBound
            }
            position += chunk
        }
        return nil
    }
}

/// Samsung's trailer: `… [blocks] SEFH version count [entries of 12 bytes] length SEFT`
/// at the end of the file. Each entry: two bytes, the type (little-endian), the
/// block's distance back from `SEFH`, its length.
struct SamsungTrailer {
    /// Where the trailer's first block starts (what precedes it is the image).
    let start: Int
    /// Where `SEFH` starts.
    let directory: Int
    /// The `MotionPhoto_Data` block's payload (after its name), if it has one.
    let motionPhoto: Range<Int>?

    static let motionPhotoType = 0x0A30

    init?(_ source: any RandomAccessBytes) {
        let size = source.count
        guard size > 24, let tail = source.read((size - 8)..<size), tail[4..<8].elementsEqual("SEFT".utf8) else {
            return nil
        }
        let directoryLength = Int(tail[0]) | Int(tail[1]) << 8 | Int(tail[2]) << 16 | Int(tail[3]) << 24
        let directory = size - 8 - directoryLength
        guard directoryLength >= 12, directoryLength <= 1 << 20, directory >= 0,
            let bytes = source.read(directory..<(size - 8)),
            bytes[0..<4].elementsEqual("SEFH".utf8)
        else { return nil }
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        let count = u32(8)
        guard count <= (bytes.count - 12) / 12 else { return nil }
        var first = directory
        var motionPhoto: Range<Int>?
        for i in 0..<count {
            let at = 12 + i * 12
            let type = Int(bytes[at + 2]) | Int(bytes[at + 3]) << 8
            let back = u32(at + 4)
            let length = u32(at + 8)
            let block = directory - back
            guard back > 0, block >= 0, length >= 8, block + length <= directory else { continue }
            first = min(first, block)
            guard type == Self.motionPhotoType, motionPhoto == nil, let head = source.read(block..<(block + 8)) else {
                continue
            }
            let nameLength = Int(head[4]) | Int(head[5]) << 8 | Int(head[6]) << 16 | Int(head[7]) << 24
            guard nameLength <= 256, block + 8 + nameLength <= block + length else { continue }
            motionPhoto = (block + 8 + nameLength)..<(block + length)
        }
        self.start = first
        self.directory = directory
        self.motionPhoto = motionPhoto
    }
}

extension HEIFFile {
    /// The bytes of `item` (its extents joined): read from `source` (the whole
    /// file) for file offsets, from `copied` (the `ftyp` and `meta` boxes the
    /// structure was parsed from) for an `idat` item; nil when an extent lies
    /// outside the file or it is larger than `limit`.
    func bytes(of item: HEIFItem, in source: any RandomAccessBytes, copied: [UInt8], limit: Int) -> [UInt8]? {
        guard item.construction == 0 else { return try? data(of: item, in: copied, limit: limit) }
        guard !item.extents.isEmpty else { return nil }
        var data: [UInt8] = []
        for extent in item.extents {
            guard extent.length > 0, data.count + extent.length <= limit,
                let bytes = source.read(extent.offset..<(extent.offset + extent.length))
            else { return nil }
            data += bytes
        }
        return data
    }
}
