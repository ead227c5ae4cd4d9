// A view of a file's bytes as one stream made of file ranges: a metadata
// block inside a container (an EXIF segment of a JPEG, a PNG chunk), a HEIF
// item stored in several extents, an XMP packet split over JPEG segments. The
// location scanners read through such views and say where to write in the
// view's coordinates; the view maps that back to the file.

/// A stream made of `segments` of `file`, in order.
struct SegmentedBytes: RandomAccessBytes {
    let file: any RandomAccessBytes
    /// The file ranges the stream is made of, in stream order (none empty).
    let segments: [Range<Int>]
    /// The stream's length.
    let count: Int

    /// The stream made of `segments` (clipped to the file; empty ones dropped).
    init(_ file: any RandomAccessBytes, segments: [Range<Int>]) {
        self.file = file
        self.segments = segments.map { $0.clamped(to: 0..<file.count) }.filter { !$0.isEmpty }
        count = self.segments.reduce(0) { $0 + $1.count }
    }

    /// The whole file as one stream.
    init(_ file: any RandomAccessBytes) {
        self.init(file, segments: [0..<file.count])
    }

    func read(_ range: Range<Int>) -> [UInt8]? {
        guard range.lowerBound >= 0, range.upperBound <= count else { return nil }
        if segments.count == 1 {
            return file.read((segments[0].lowerBound + range.lowerBound)..<(segments[0].lowerBound + range.upperBound))
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        for part in fileRanges(of: range) {
            guard let chunk = file.read(part) else { return nil }
            bytes += chunk
        }
        return bytes
    }

    /// The file ranges that stream range `range` covers, in order.
    func fileRanges(of range: Range<Int>) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        for segment in segments {
            let end = start + segment.count
            let low = max(range.lowerBound, start)
            let high = min(range.upperBound, end)
            if low < high { ranges.append((segment.lowerBound + low - start)..<(segment.lowerBound + high - start)) }
            start = end
            if start >= range.upperBound { break }
        }
        return ranges
    }

    /// The part `range` of this stream, as a stream of its own.
    func slice(_ range: Range<Int>) -> SegmentedBytes {
        SegmentedBytes(file, segments: fileRanges(of: range.clamped(to: 0..<count)))
    }

    /// Overwrites of stream range `range` (split where the stream's segments are).
    func edits(_ range: Range<Int>, _ fill: MetadataEdit.Fill, step: Int) -> [MetadataEdit] {
        fileRanges(of: range.clamped(to: 0..<count)).map {
            MetadataEdit(offset: $0.lowerBound, length: $0.count, fill: fill, step: step)
        }
    }

    /// Where stream offset `offset` is in the file (nil past the end).
    func fileOffset(_ offset: Int) -> Int? {
        fileRanges(of: offset..<(offset + 1)).first?.lowerBound
    }
}
