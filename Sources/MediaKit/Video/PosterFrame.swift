import CFFmpeg
import CShims
import MediaFormats

/// Extracts a video's poster frame the way Apple's image generator does with its
/// default tolerance: the keyframe nearest to the requested time (1 s by
/// default, clamped into the video), found through the demuxer's index, seeked
/// to and decoded alone — never the whole group of pictures before it. A
/// near-black keyframe (a fade-in) is passed over for a later one.
public enum PosterFrame {
    /// Mean luma (0–255) below which a frame counts as black.
    static let blackThreshold = 24.0
    /// How many keyframes are tried before settling for a dark one.
    static let maximumAttempts = 5

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
            return try poster(of: file, video: video, durationMilliseconds: durationMilliseconds, at: seconds, spec: spec, pixelLimit: pixelLimit)
        } catch let error as AVError {
            throw MediaError(error.isTimeout ? .timeLimit : .damaged, error.description)
        } catch let error as VipsError {
            throw MediaError(error.wasKilled ? .timeLimit : .damaged, error.description)
        } catch {
            throw MediaError(.damaged, "\(error)")
        }
    }

    private static func poster(
        of file: MediaFile, video: VideoStreamInfo, durationMilliseconds: Double?,
        at seconds: Double, spec: ThumbnailSpec, pixelLimit: Int?
    ) throws -> Thumbnail {
        let stream = file.stream(video.index)
        let decoder = try KeyframeDecoder(stream: stream, pixelLimit: pixelLimit)
        let timeBase = av_q2d(stream.pointee.time_base)
        let start = stream.pointee.start_time != Int64.min ? stream.pointee.start_time : 0
        // Clamped into the video: a 0.4 s clip asks for 0.4 s and gets its first keyframe.
        let duration = (durationMilliseconds ?? 0) / 1000
        let target = duration > 0 ? min(seconds, duration) : seconds
        let targetTimestamp = start + Int64(target / timeBase)

        let keyframes = Self.indexedKeyframes(of: stream)
        var candidates: [Int64]
        let indexed = !keyframes.isEmpty
        if let nearest = keyframes.min(by: { abs($0 - targetTimestamp) < abs($1 - targetTimestamp) }) {
            candidates = Array(keyframes.drop { $0 < nearest }.prefix(maximumAttempts))
        } else {
            // No index (some WebM, MPEG-TS): seek backwards from the target, then step on.
            let step = Int64(1 / timeBase)
            candidates = (0..<maximumAttempts).map { targetTimestamp + Int64($0) * step }
        }

        var darkest: (frame: RGBPicture, luma: Double)?
        for timestamp in candidates {
            guard let picture = try decoder.decodeKeyframe(
                in: file, at: timestamp, notBefore: indexed ? timestamp : nil, targetSize: spec.size, sampleAspect: video.sampleAspect)
            else { continue }
            let luma = picture.meanLuma
            if luma >= blackThreshold {
                return try encode(picture, rotation: video.rotation, spec: spec)
            }
            if darkest == nil || luma > darkest!.luma { darkest = (picture, luma) }
        }
        if darkest == nil {
            // Every candidate lay past the last keyframe: a target near the end
            // of a clip shorter than the poster time, or an index that is not one
            // of keyframes (MPEG-PS indexes the timestamps its seeks read, and
            // seeks by decoding time, so even the start time lands after the
            // first keyframe). The first keyframe of the file is the last resort:
            // seeking a second before the start reaches it.
            let beforeStart = start - Int64(1 / timeBase)
            if let picture = try decoder.decodeKeyframe(
                in: file, at: beforeStart, notBefore: nil, targetSize: spec.size, sampleAspect: video.sampleAspect)
            {
                darkest = (picture, picture.meanLuma)
            }
        }
        guard let darkest else { throw AVError("avcodec_receive_frame", message: "no decodable video frame") }
        return try encode(darkest.frame, rotation: video.rotation, spec: spec)
    }

    private static func encode(_ picture: RGBPicture, rotation: Int, spec: ThumbnailSpec) throws -> Thumbnail {
        // The poster is made with libvips: a library caller may reach here first,
        // and libvips must not be used before (or while another thread is in) vips_init.
        try Vips.start()
        let image = try picture.pixels.withUnsafeBytes { buffer in
            try VipsImageHandle.fromRGB(buffer, width: picture.width, height: picture.height)
        }
        return try Thumbnailer.thumbnail(of: image, rotation: rotation, spec: spec)
    }

    /// Keyframe timestamps from the demuxer's index (MP4 and MOV have one from the
    /// moov; Matroska once its cues are read), in order.
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

/// Packed RGB24 pixels of a decoded frame, already scaled to thumbnail size.
struct RGBPicture {
    let pixels: [UInt8]
    let width: Int
    let height: Int

    /// Mean Rec. 601 luma over a sample grid of pixels.
    var meanLuma: Double {
        let count = width * height
        guard count > 0 else { return 0 }
        let stride = max(1, count / 4096)
        var sum = 0.0
        var samples = 0
        var i = 0
        while i < count {
            let p = i * 3
            sum += 0.299 * Double(pixels[p]) + 0.587 * Double(pixels[p + 1]) + 0.114 * Double(pixels[p + 2])
            samples += 1
            i += stride
        }
        return sum / Double(samples)
    }
}

/// A decoder that only decodes keyframes (`skip_frame = AVDISCARD_NONKEY`), one
/// thread, since only one frame is wanted and two items decode in parallel.
final class KeyframeDecoder {
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let streamIndex: Int32
    /// Packets read after a seek before giving up on finding a frame.
    static let packetBudget = 600
    /// Line alignment of the RGB destination of `sws_scale` (see `scale`).
    static let destinationAlignment: Int32 = 64

    init(stream: UnsafeMutablePointer<AVStream>, pixelLimit: Int?) throws(AVError) {
        streamIndex = stream.pointee.index
        guard let parameters = stream.pointee.codecpar,
            let decoder = avcodec_find_decoder(parameters.pointee.codec_id)
        else { throw AVError("avcodec_find_decoder", message: "no decoder for this video codec") }
        codec = avcodec_alloc_context3(decoder)
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let codec, frame != nil, packet != nil else { throw AVError("avcodec_alloc_context3", message: "out of memory") }
        var status = avcodec_parameters_to_context(codec, parameters)
        guard status >= 0 else { throw AVError("avcodec_parameters_to_context", code: status) }
        codec.pointee.thread_count = 1
        codec.pointee.skip_frame = AVDISCARD_NONKEY
        if let pixelLimit { codec.pointee.max_pixels = Int64(pixelLimit) }
        status = avcodec_open2(codec, decoder, nil)
        guard status >= 0 else { throw AVError("avcodec_open2", code: status) }
    }

    deinit {
        avcodec_free_context(&codec)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    /// Seeks to the keyframe at or before `timestamp` and decodes the first frame
    /// there (or, with `notBefore`, the first keyframe from that time on: index
    /// times are decoding times, and some demuxers land one keyframe early),
    /// scaled to fit `targetSize`. Nil at end of stream.
    func decodeKeyframe(in file: MediaFile, at timestamp: Int64, notBefore: Int64?, targetSize: Int, sampleAspect: Double) throws(AVError) -> RGBPicture? {
        guard let codec, let frame, let packet else { return nil }
        let seek = av_seek_frame(file.formatContext, streamIndex, timestamp, AVSEEK_FLAG_BACKWARD)
        if seek < 0 {
            // Unseekable input: decode from where we are.
            if seek == shim_averror_exit() { throw AVError("av_seek_frame", code: seek) }
        }
        avcodec_flush_buffers(codec)
        var packetsRead = 0
        var flushing = false
        var atEnd = false
        while packetsRead < Self.packetBudget {
            let received = avcodec_receive_frame(codec, frame)
            if received == 0 {
                defer { av_frame_unref(frame) }
                let shown = frame.pointee.best_effort_timestamp
                if let notBefore, shown != Int64.min, shown < notBefore { continue }
                return try scale(frame, targetSize: targetSize, sampleAspect: sampleAspect)
            }
            if received == shim_averror_eof() {
                // Drained after a keyframe that was not the one wanted: start the
                // decoder again and read on.
                guard flushing, !atEnd else { return nil }
                avcodec_flush_buffers(codec)
                flushing = false
                continue
            }
            if received != shim_averror_eagain() { throw AVError("avcodec_receive_frame", code: received) }
            if flushing { return nil }
            let read = av_read_frame(file.formatContext, packet)
            if read < 0 {
                if read == shim_averror_exit() { throw AVError("av_read_frame", code: read) }
                avcodec_send_packet(codec, nil)
                flushing = true
                atEnd = true
                continue
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            packetsRead += 1
            let sent = avcodec_send_packet(codec, packet)
            if sent < 0, sent != shim_averror_eagain() {
                // A damaged packet: try the next one.
                continue
            }
            if packet.pointee.flags & AV_PKT_FLAG_KEY != 0 {
                // A decoder that reorders (B-frames) holds the keyframe back until
                // more packets arrive, and with non-key frames skipped those are the
                // next keyframes, all decoded in full. Draining now releases it.
                avcodec_send_packet(codec, nil)
                flushing = true
            }
        }
        return nil
    }

    /// Converts a decoded frame to RGB24 at thumbnail size in one `sws_scale`.
    private func scale(_ frame: UnsafeMutablePointer<AVFrame>, targetSize: Int, sampleAspect: Double) throws(AVError) -> RGBPicture {
        let sourceWidth = Int(frame.pointee.width)
        let sourceHeight = Int(frame.pointee.height)
        guard sourceWidth > 0, sourceHeight > 0 else { throw AVError("avcodec_receive_frame", message: "empty frame") }
        let displayWidth = Double(sourceWidth) * sampleAspect
        let scale = min(1, Double(targetSize) / max(displayWidth, Double(sourceHeight)))
        let width = max(1, Int((displayWidth * scale).rounded()))
        let height = max(1, Int((Double(sourceHeight) * scale).rounded()))
        guard let sws = sws_getContext(
            Int32(sourceWidth), Int32(sourceHeight), AVPixelFormat(rawValue: frame.pointee.format),
            Int32(width), Int32(height), AV_PIX_FMT_RGB24, Int32(SWS_AREA), nil, nil, nil)
        else { throw AVError("sws_getContext", message: "cannot convert this pixel format") }
        defer { sws_freeContext(sws) }
        // libswscale's SIMD converters (the x86 YUV→RGB ones, used when a frame is
        // converted at its own size) store whole vectors: they round each line up
        // to 8 pixels when the stride leaves room, and write past the last visible
        // byte of the last line. An exact `width × height × 3` array was overrun
        // (valgrind: 8-byte writes ending past the block; glibc: "corrupted top
        // size"). `av_image_alloc` with align 64 allocates what libswscale
        // expects: lines of the width rounded up to 8 pixels, strides and planes
        // aligned to 64 bytes, and 64 spare bytes after the last line. Only the
        // visible bytes are handed on.
        var planes: [UnsafeMutablePointer<UInt8>?] = [nil, nil, nil, nil]
        var strides: [Int32] = [0, 0, 0, 0]
        let allocated = av_image_alloc(&planes, &strides, Int32(width), Int32(height), AV_PIX_FMT_RGB24, Self.destinationAlignment)
        guard allocated >= 0, let destination = planes[0] else { throw AVError("av_image_alloc", code: allocated) }
        defer { av_free(destination) }
        // Zeroed, so that lines sws_scale did not write are black, never uninitialised bytes.
        destination.initialize(repeating: 0, count: Int(allocated))
        let stride = Int(strides[0])
        precondition(stride >= width * 3, "av_image_alloc gave a line shorter than the image")
        let lines = withUnsafePointer(to: frame.pointee.data) { data in
            withUnsafePointer(to: frame.pointee.linesize) { linesize in
                data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { sourcePlanes in
                    linesize.withMemoryRebound(to: Int32.self, capacity: 8) { sizes in
                        sws_scale(sws, sourcePlanes, sizes, 0, Int32(sourceHeight), planes, strides)
                    }
                }
            }
        }
        guard lines > 0 else { throw AVError("sws_scale", message: "conversion failed") }
        let rowBytes = width * 3
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { buffer, count in
            for row in 0..<height {
                (buffer.baseAddress! + row * rowBytes).initialize(from: destination + row * stride, count: rowBytes)
            }
            count = rowBytes * height
        }
        return RGBPicture(pixels: pixels, width: width, height: height)
    }
}
