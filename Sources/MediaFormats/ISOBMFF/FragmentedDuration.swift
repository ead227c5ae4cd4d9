// How long a fragmented MP4 is, from its own boxes: `mehd` when it states it,
// else the end of its last fragment. Live encoders (cameras, Android's muxer,
// streaming recorders) leave `mvhd`, `tkhd` and `mdhd` durations "unknown"
// (all ones) and write no `mehd`; libavformat 5.1 then reports the all-ones
// value (0xFFFFFFFF / 30000 = 39.8 hours).

/// The duration of a fragmented MP4 (ISO/IEC 14496-12 movie fragments).
package enum FragmentedDuration {
    /// Most bytes of `moof` boxes read (a 3-hour recording of 2-second fragments
    /// reads a few megabytes).
    static let maximumFragmentBytes = 64 << 20

    /// The movie's duration in seconds, when `source` is a fragmented MP4
    /// (its `moov` has an `mvex`); nil otherwise or when nothing tells it.
    package static func seconds(_ source: any RandomAccessBytes) -> Double? {
        let top = ISOBox.list(source, in: 0..<source.count)
        guard let moov = top.first(where: { $0.type == "moov" }) else { return nil }
        let movie = ISOBox.list(source, in: moov.payload, limit: 4096)
        guard let mvex = movie.first(where: { $0.type == "mvex" }) else { return nil }
        var movieTimescale = 0
        if let mvhd = movie.first(where: { $0.type == "mvhd" }),
            let bytes = source.read(
                mvhd.payload.lowerBound..<min(mvhd.payload.upperBound, mvhd.payload.lowerBound + 32))
        {
            let b = BigEndianBytes(bytes: bytes)
            movieTimescale = (bytes.first == 1 ? b.u32(20) : b.u32(12)) ?? 0
        }
        var fragmentDuration: Int?
        var defaults: [Int: Int] = [:]  // track ID → trex default sample duration
        for box in ISOBox.list(source, in: mvex.payload, limit: 4096) {
            guard
                let bytes = source.read(
                    box.payload.lowerBound..<min(box.payload.upperBound, box.payload.lowerBound + 32))
            else { continue }
            let b = BigEndianBytes(bytes: bytes)
            if box.type == "mehd" { fragmentDuration = bytes.first == 1 ? b.u64(4) : b.u32(4) }
            if box.type == "trex", let track = b.u32(4), let duration = b.u32(12) { defaults[track] = duration }
        }
        if let fragmentDuration, fragmentDuration > 0, fragmentDuration != 0xFFFF_FFFF, movieTimescale > 0 {
            return Double(fragmentDuration) / Double(movieTimescale)
        }
        // The tracks: ID → timescale, and what the moov itself holds (its stts).
        var timescales: [Int: Int] = [:]
        var ends: [Int: Int] = [:]
        for trak in movie where trak.type == "trak" {
            guard let tkhd = ISOBox.find(source, in: trak.payload, path: ["tkhd"]),
                let head = source.read(
                    tkhd.payload.lowerBound..<min(tkhd.payload.upperBound, tkhd.payload.lowerBound + 24)),
                let track = BigEndianBytes(bytes: head).u32(head.first == 1 ? 20 : 12),
                let mdhd = ISOBox.find(source, in: trak.payload, path: ["mdia", "mdhd"]),
                let media = source.read(
                    mdhd.payload.lowerBound..<min(mdhd.payload.upperBound, mdhd.payload.lowerBound + 24)),
                let timescale = BigEndianBytes(bytes: media).u32(media.first == 1 ? 20 : 12), timescale > 0
            else { continue }
            timescales[track] = timescale
            ends[track] = sampleTableDuration(source, trak: trak) ?? 0
        }
        var read = 0
        for moof in top where moof.type == "moof" {
            read += moof.payload.count
            guard read <= maximumFragmentBytes, let bytes = source.read(moof.payload) else { break }
            for traf in ISOBox.list(bytes, in: 0..<bytes.count, limit: 1024) where traf.type == "traf" {
                accumulate(bytes, traf: traf, defaults: defaults, ends: &ends)
            }
        }
        let seconds = ends.compactMap { track, end in timescales[track].map { Double(end) / Double($0) } }
        return seconds.max().flatMap { $0 > 0 ? $0 : nil }
    }

    /// The sum of a track's `stts` sample durations (what a fragmented file's
    /// `moov` holds before its first fragment; usually nothing).
    static func sampleTableDuration(_ source: any RandomAccessBytes, trak: ISOBox) -> Int? {
        guard let stts = ISOBox.find(source, in: trak.payload, path: ["mdia", "minf", "stbl", "stts"]),
            stts.payload.count <= 1 << 20,
            let bytes = source.read(stts.payload)
        else { return nil }
        let b = BigEndianBytes(bytes: bytes)
        guard let count = b.u32(4) else { return nil }
        var total = 0
        for i in 0..<min(count, (bytes.count - 8) / 8) {
            guard let samples = b.u32(8 + i * 8), let delta = b.u32(12 + i * 8) else { break }
            let (product, overflow) = samples.multipliedReportingOverflow(by: delta)
            guard !overflow else { return nil }
            total += product
        }
        return total
    }

    /// One track fragment: its track's end becomes its decode time (`tfdt`, else
    /// where the track had got to) plus its samples' durations (`trun`, else
    /// `tfhd`'s default, else `trex`'s).
    static func accumulate(_ bytes: [UInt8], traf: ISOBox, defaults: [Int: Int], ends: inout [Int: Int]) {
        var track: Int?
        var defaultDuration: Int?
        var start: Int?
        var total = 0
        for box in ISOBox.list(bytes, in: traf.payload, limit: 4096) {
            let b = BigEndianBytes(bytes: Array(bytes[box.payload]))
            guard let header = b.u32(0) else { continue }
            let version = header >> 24
            let flags = header & 0xFF_FFFF
            switch box.type {
            case "tfhd":
                track = b.u32(4)
                var at = 8
                if flags & 0x01 != 0 { at += 8 }
                if flags & 0x02 != 0 { at += 4 }
                if flags & 0x08 != 0 { defaultDuration = b.u32(at) }
            case "tfdt":
                start = version == 1 ? b.u64(4) : b.u32(4)
            case "trun":
                guard let count = b.u32(4) else { continue }
                var at = 8
                if flags & 0x01 != 0 { at += 4 }
                if flags & 0x04 != 0 { at += 4 }
                let perSample =
                    (flags & 0x100 != 0 ? 4 : 0) + (flags & 0x200 != 0 ? 4 : 0) + (flags & 0x400 != 0 ? 4 : 0)
                    + (flags & 0x800 != 0 ? 4 : 0)
                if flags & 0x100 != 0 {
                    for i in 0..<min(count, perSample > 0 ? (b.bytes.count - at) / perSample : 0) {
                        total += b.u32(at + i * perSample) ?? 0
                    }
                } else {
                    let duration = defaultDuration ?? track.flatMap { defaults[$0] } ?? 0
                    let (product, overflow) = count.multipliedReportingOverflow(by: duration)
                    if !overflow { total += product }
                }
            default: continue
            }
        }
        guard let track else { return }
        let end = (start ?? ends[track] ?? 0) + total
        ends[track] = max(ends[track] ?? 0, end)
    }
}
