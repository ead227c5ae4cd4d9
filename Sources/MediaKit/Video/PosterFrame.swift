import CFFmpeg
import CShims
import MediaFormats

/// Extracts a video's poster frame the way Apple's image generator does with its
/// default tolerance: the keyframe nearest to the requested time (1 s by
/// default, clamped into the video), decoded alone — never the whole group of
/// pictures before it. A near-black keyframe (a fade-in, a black first shot) is
/// passed over for the next keyframe that is not, within ``searchSeconds`` and
/// ``maximumAttempts`` keyframes.
///
/// How the keyframe is found depends on the container:
/// - MP4/MOV and AVI carry a complete index (the `moov`, `idx1`): the nearest
///   indexed keyframe is seeked to, then the ones after it.
/// - Everything else (Matroska/WebM, whose cues are read only on a seek and whose
///   index holds only what was read; MPEG-PS/TS, which have none) is walked
///   forward key packet by key packet — from the start when the target is near
///   it, else from a timestamp seek — and only the chosen packets are decoded.
///   The walk never seeks back, so a black keyframe is never decoded twice.
public enum PosterFrame {
    /// Mean luma (0–255) below which a frame counts as black.
    static let blackThreshold = 24.0
    /// Keyframes decoded at most while looking for one that is not black.
    static let maximumAttempts = 6
    /// How far past the target (seconds) a keyframe that is not black is looked for.
    static let searchSeconds = 10.0
    /// Frames decoded at most, in order, when no keyframe alone gives a picture
    /// that is not black (``KeyframeDecoder/decodeForward(in:target:horizon:threshold:maximumFrames:)``).
    static let maximumForwardFrames = 300
    /// Targets at most this far into a stream without an index are reached by
    /// reading from the start rather than by a timestamp search.
    static let readFromStartSeconds = 10.0

    /// Decodes the poster of `video` in `file` and returns it as a thumbnail.
    /// `pixelLimit` bounds every decoded frame (libav's `max_pixels`), so a stream
    /// whose frames grow past what its header said cannot allocate a bomb.
    /// Failures are typed here: `timeLimit` when the read was interrupted by the
    /// file's deadline, `damaged` otherwise; the message is libav's or libvips'.
    public static func thumbnail(
        of file: MediaFile, video: VideoStreamInfo, durationMilliseconds: Double?,
        at seconds: Double = 1, spec: ThumbnailSpec, pixelLimit: Int? = nil
    ) throws(MediaError) -> Thumbnail {
        do {
            let choice = try choose(
                of: file, video: video, durationMilliseconds: durationMilliseconds, at: seconds, size: spec.decodeSize,
                pixelLimit: pixelLimit)
            return try encode(choice.picture, rotation: video.rotation, spec: spec)
        } catch {
            throw MediaError(typing: error)
        }
    }

    /// The frame shown at `seconds` (a QuickTime still-image time): the stream is
    /// decoded forward from the keyframe before it to the first frame at or
    /// after it, as a player shows it.
    public static func exactFrame(
        of file: MediaFile, video: VideoStreamInfo, at seconds: Double, spec: ThumbnailSpec, pixelLimit: Int? = nil
    ) throws(MediaError) -> Thumbnail {
        do {
            let stream = file.stream(video.index)
            let decoder = try KeyframeDecoder(
                stream: stream, pixelLimit: pixelLimit, targetSize: spec.decodeSize, sampleAspect: video.sampleAspect)
            let timeBase = av_q2d(stream.pointee.time_base)
            let start = stream.pointee.start_time != Int64.min ? stream.pointee.start_time : 0
            let target = start + Int64(seconds / timeBase)
            if try !decoder.seek(in: file, to: target) { try rewind(file, decoder, start: start, timeBase: timeBase) }
            guard
                let frame = try decoder.decodeForward(
                    in: file, target: target, horizon: target + Int64(1 / timeBase), threshold: 0,
                    maximumFrames: maximumForwardFrames)
            else { throw AVError("avcodec_receive_frame", message: "no frame at \(seconds) s") }
            return try encode(frame.picture, rotation: video.rotation, spec: spec)
        } catch {
            throw MediaError(typing: error)
        }
    }

    /// The keyframe chosen as the poster, and what finding it cost.
    struct Choice {
        let picture: RGBPicture
        /// When it is shown, in the stream's time base.
        let time: Int64
        /// Seeks made, and when the key packets decoded are shown (a black one is decoded once).
        let seeks: Int
        let decodedTimes: [Int64]
    }

    /// Finds and decodes the poster keyframe (see the type's description).
    static func choose(
        of file: MediaFile, video: VideoStreamInfo, durationMilliseconds: Double?, at seconds: Double, size: Int,
        pixelLimit: Int?
    ) throws -> Choice {
        let stream = file.stream(video.index)
        let decoder = try KeyframeDecoder(
            stream: stream, pixelLimit: pixelLimit, targetSize: size, sampleAspect: video.sampleAspect)
        let timeBase = av_q2d(stream.pointee.time_base)
        let start = stream.pointee.start_time != Int64.min ? stream.pointee.start_time : 0
        // Clamped into the video: a 0.4 s clip asks for 0.4 s and gets its first keyframe.
        let duration = (durationMilliseconds ?? 0) / 1000
        let target = start + Int64((duration > 0 ? min(seconds, duration) : seconds) / timeBase)
        let horizon = target + Int64(searchSeconds / timeBase)

        var best: (picture: RGBPicture, time: Int64, luma: Double)?
        var attempts = 0
        /// Decodes `key`; true when it is the poster (not black).
        func offer(_ key: KeyPacket) throws -> Bool {
            attempts += 1
            guard let picture = try decoder.decode(key) else { return false }
            let luma = picture.meanLuma
            if best == nil || luma > best!.luma { best = (picture, key.time, luma) }
            return luma >= blackThreshold
        }
        func choice() -> Choice? {
            best.map {
                Choice(picture: $0.picture, time: $0.time, seeks: decoder.seeks, decodedTimes: decoder.decodedTimes)
            }
        }

        let keyframes = file.hasCompleteIndex ? indexedKeyframes(of: stream) : []
        if let nearest = keyframes.indices.min(by: { abs(keyframes[$0] - target) < abs(keyframes[$1] - target) }) {
            for (n, timestamp) in keyframes[nearest...].enumerated() where attempts < maximumAttempts {
                if n > 0, timestamp > horizon { break }
                guard try decoder.seek(in: file, to: timestamp),
                    let key = try decoder.nextKeyPacket(in: file, notBefore: timestamp)
                else { continue }
                if try offer(key) { return choice()! }
            }
        } else {
            // Walk forward: the last key packet before the target and the first at or
            // after it are compared, the nearer decoded first, then the ones after.
            var queue = try keyPacketsNear(target, in: file, decoder, start: start, timeBase: timeBase)
            while attempts < maximumAttempts {
                let key: KeyPacket
                if !queue.isEmpty {
                    key = queue.removeFirst()
                } else {
                    guard let next = try decoder.nextKeyPacket(in: file), next.time <= horizon else { break }
                    key = next
                }
                if try offer(key) { return choice()! }
            }
        }
        if best == nil || best!.luma < blackThreshold {
            // No keyframe decoded alone gives a picture that is not black (the
            // only keyframe is black, or before an edit list's start, or an open
            // GOP shows nothing until it recovers): decode forward from the
            // keyframe before the target as a player does (the decoder drops what
            // an edit list cuts), or from the start where there is no index.
            if let forward = try decodeForward(
                in: file, decoder, target: target, horizon: horizon, start: start, timeBase: timeBase),
                best == nil || forward.luma > best!.luma
            {
                best = (forward.picture, forward.time, forward.luma)
            }
        }
        if best == nil {
            // Nothing decoded where it was looked for (a target past the last
            // keyframe, an index of timestamps that are not keyframes): the first
            // keyframe of the file is the last resort; a second before the start
            // reaches it.
            try rewind(file, decoder, start: start, timeBase: timeBase)
            if let key = try decoder.nextKeyPacket(in: file) { _ = try offer(key) }
        }
        guard let chosen = choice() else { throw AVError("avcodec_receive_frame", message: "no decodable video frame") }
        return chosen
    }

    /// The key packets to decode first when there is no index: read forward
    /// from the target (or from the start, when it is near it), the last one
    /// before the target and the first at or after it, the nearer first.
    private static func keyPacketsNear(
        _ target: Int64, in file: MediaFile, _ decoder: KeyframeDecoder, start: Int64, timeBase: Double
    ) throws -> [KeyPacket] {
        if target - start > Int64(readFromStartSeconds / timeBase) {
            if try !decoder.seek(in: file, to: target) {
                try rewind(file, decoder, start: start, timeBase: timeBase)
            }
        } else if !file.atStart {
            try rewind(file, decoder, start: start, timeBase: timeBase)
        }
        var previous: KeyPacket?
        var queue: [KeyPacket] = []
        while let key = try decoder.nextKeyPacket(in: file) {
            if key.time == Int64.min {
                queue = [key]  // no timestamp to compare: take it
                break
            }
            if key.time >= target {
                if let previous, target - previous.time <= key.time - target {
                    queue = [previous, key]
                } else {
                    queue = [key]
                }
                break
            }
            previous = key
        }
        if queue.isEmpty, let previous { queue = [previous] }  // the clip ends before the target
        return queue
    }

    /// Decodes forward from the keyframe before the target (from the start
    /// where there is no index), as a player does.
    private static func decodeForward(
        in file: MediaFile, _ decoder: KeyframeDecoder, target: Int64, horizon: Int64, start: Int64, timeBase: Double
    ) throws -> (picture: RGBPicture, time: Int64, luma: Double)? {
        if file.hasCompleteIndex {
            if try !decoder.seek(in: file, to: target) {
                try rewind(file, decoder, start: start, timeBase: timeBase)
            }
        } else {
            try rewind(file, decoder, start: start, timeBase: timeBase)
        }
        return try decoder.decodeForward(
            in: file, target: target, horizon: horizon, threshold: blackThreshold, maximumFrames: maximumForwardFrames)
    }

    /// Back to the first keyframe, as near as the demuxer can: MPEG-PS/TS search
    /// by decoding time and land after the packet they find, so a second before
    /// the start is asked for.
    private static func rewind(_ file: MediaFile, _ decoder: KeyframeDecoder, start: Int64, timeBase: Double) throws {
        // A stream without a start time has no timestamps to search by: back to its first byte.
        let timed = file.stream(Int(decoder.streamIndex)).pointee.start_time != Int64.min
        if timed, try decoder.seek(in: file, to: start - Int64(1 / timeBase)) { return }
        try decoder.seekToFirstByte(in: file)
    }

    static func encode(_ picture: RGBPicture, rotation: Int, mirrored: Bool = false, spec: ThumbnailSpec) throws
        -> Thumbnail
    {
        // The poster is made with libvips: a library caller may reach here first,
        // and libvips must not be used before (or while another thread is in) vips_init.
        try Vips.start()
        let image = try picture.pixels.withUnsafeBytes { buffer in
            try VipsImageHandle.fromRGB(buffer, width: picture.width, height: picture.height)
        }
        return try Thumbnailer.thumbnail(of: image, rotation: rotation, mirrored: mirrored, spec: spec)
    }

    /// Keyframe timestamps from the demuxer's index, in order.
    static func indexedKeyframes(of stream: UnsafeMutablePointer<AVStream>) -> [Int64] {
        let count = avformat_index_get_entries_count(stream)
        var keyframes: [Int64] = []
        keyframes.reserveCapacity(Int(count) / 8)
        for i in 0..<count {
            guard let entry = avformat_index_get_entry(stream, i) else { continue }
            if entry.pointee.flags & AVINDEX_KEYFRAME != 0 { keyframes.append(entry.pointee.timestamp) }
        }
        return keyframes.sorted()
    }
}

extension MediaError {
    /// A libav or libvips failure, typed: `timeLimit` when the file's deadline
    /// stopped it, `damaged` otherwise.
    init(typing error: any Error) {
        switch error {
        case let error as AVError: self.init(LibraryMessages.kind(of: error), error.description)
        case let error as VipsError: self.init(LibraryMessages.kind(of: error) ?? .damaged, error.description)
        case let error as MediaError: self = error
        default: self.init(.damaged, "\(error)")
        }
    }
}
