import CFFmpeg
import CShims
import Glibc
import MediaFormats
import SystemCalls

/// A video stream's facts, as displayed.
public struct VideoStreamInfo: Sendable, Hashable {
    public let index: Int
    /// The decoder's short name, e.g. `h264`, `hevc`, `vp9`.
    public let codec: String
    /// Coded picture size.
    public let storedWidth: Int
    public let storedHeight: Int
    /// Clockwise rotation to apply for display (0, 90, 180, 270), from the display matrix.
    public let rotation: Int
    /// Sample (pixel) aspect ratio; 1 for square pixels.
    public let sampleAspect: Double

    /// Display size: square pixels, then rotation.
    public var width: Int { rotation % 180 == 0 ? squareWidth : storedHeight }
    public var height: Int { rotation % 180 == 0 ? storedHeight : squareWidth }
    var squareWidth: Int { max(1, Int((Double(storedWidth) * sampleAspect).rounded())) }
}

/// What opening a media file found.
public struct MediaProbe: Sendable, Hashable {
    /// The demuxer's name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`.
    public let container: String
    /// Duration in milliseconds, `round(seconds * 1000)`; nil when nothing tells it.
    public let durationMilliseconds: Double?
    /// The first decodable video stream that is not cover art.
    public let video: VideoStreamInfo?
    public let hasAudio: Bool
    public let streamCount: Int
    /// Every decodable picture stream that is not cover art (an ICO file has one per icon).
    public let pictures: [VideoStreamInfo]
    /// The first decodable attached picture (an audio file's cover art: ID3 APIC,
    /// MP4 `covr`, FLAC PICTURE, Vorbis METADATA_BLOCK_PICTURE).
    public let coverArt: VideoStreamInfo?
}

/// One opened media file (owns an `AVFormatContext`, closed with
/// `avformat_close_input`). Probing and poster extraction share the one open.
///
/// Every blocking read is bounded by the time limit given at open, through
/// `AVFormatContext.interrupt_callback`. Use from one thread at a time.
public final class MediaFile {
    var context: UnsafeMutablePointer<AVFormatContext>?
    /// The custom I/O over the descriptor (freed after the context is closed).
    private var io: UnsafeMutablePointer<AVIOContext>?
    /// The file this opened by path, kept open as long as the context reads it.
    private let file: OpenedFile?
    /// The descriptor libav reads (our own box reader reads it too: `pread`).
    private let descriptor: Int32
    private let deadline: Deadline
    /// The path (or name) given at open; libav uses its extension only as a hint when probing.
    public let path: String

    /// Opens `path` and reads its stream information. `pixelLimit` bounds the
    /// frames `avformat_find_stream_info` decodes to learn what the header does
    /// not say (libav's `max_pixels`), so opening a file cannot allocate a bomb.
    public convenience init(path: String, timeLimit: Double? = nil, pixelLimit: Int? = nil) throws(AVError) {
        let file = try OpenedFile.forAV(path)
        try self.init(
            descriptor: file.descriptor, name: path, timeLimit: timeLimit, pixelLimit: pixelLimit, keeping: file)
    }

    /// Reads the file behind `descriptor` (open, read from its start when seekable;
    /// not closed here, and it must stay open while this object lives) and its
    /// stream information. `name` is only a hint for probing and messages:
    /// nothing is opened by name, and a file that refers to other files (a
    /// playlist, an external reference) cannot make libav open them.
    public convenience init(descriptor: Int32, name: String, timeLimit: Double? = nil, pixelLimit: Int? = nil)
        throws(AVError)
    {
        try self.init(descriptor: descriptor, name: name, timeLimit: timeLimit, pixelLimit: pixelLimit, keeping: nil)
    }

    private init(descriptor: Int32, name: String, timeLimit: Double?, pixelLimit: Int?, keeping file: OpenedFile?)
        throws(AVError)
    {
        LibAV.start()
        self.path = name
        self.file = file
        self.descriptor = descriptor
        self.deadline = Deadline(seconds: timeLimit)
        let opaque = Unmanaged.passUnretained(deadline).toOpaque()
        guard let io = shim_avio_open_descriptor(descriptor, Self.interrupted, opaque) else {
            throw AVError("avio_alloc_context", message: "out of memory")
        }
        self.io = io
        guard let context = avformat_alloc_context() else {
            throw AVError("avformat_alloc_context", message: "out of memory")
        }
        context.pointee.interrupt_callback.callback = Self.interrupted
        context.pointee.interrupt_callback.opaque = opaque
        shim_avformat_use_descriptor_io(context, io)
        var opened: UnsafeMutablePointer<AVFormatContext>? = context
        let status = avformat_open_input(&opened, name, nil, nil)
        guard status >= 0, let opened else {
            // avformat_open_input frees the context on failure (not the custom I/O: deinit does).
            throw AVError("avformat_open_input", code: status)
        }
        self.context = opened
        Self.recogniseDolbyVisionAV1(opened)
        // MP4/MOV headers (the moov) already give every stream's codec, size and
        // duration; avformat_find_stream_info would decode a frame of each just to
        // learn the pixel format, which the poster's own decode finds anyway.
        guard !Self.headerIsComplete(opened) else { return }
        let info: Int32
        if let pixelLimit {
            let count = Int(opened.pointee.nb_streams)
            var options = [OpaquePointer?](repeating: nil, count: max(1, count))
            for i in 0..<count { av_dict_set(&options[i], "max_pixels", String(pixelLimit), 0) }
            info = options.withUnsafeMutableBufferPointer { avformat_find_stream_info(opened, $0.baseAddress) }
            for i in 0..<count { av_dict_free(&options[i]) }
        } else {
            info = avformat_find_stream_info(opened, nil)
        }
        guard info >= 0 else { throw AVError("avformat_find_stream_info", code: info) }
    }

    /// libav's interrupt callback (and the descriptor reader's): true once the deadline has passed.
    private static let interrupted: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { opaque in
        guard let opaque else { return 0 }
        return Unmanaged<Deadline>.fromOpaque(opaque).takeUnretainedValue().hasPassed ? 1 : 0
    }

    /// Dolby Vision profile 10 is AV1 under the `dav1` sample entry (with an
    /// `av1C` and a `dvvC`), which libavformat 5.1 does not map to a codec: its
    /// frames are AV1, so the stream is decoded as AV1. (`dvh1`/`dvhe` for HEVC
    /// and `dva1`/`dvav` for H.264 are mapped already.)
    static func recogniseDolbyVisionAV1(_ context: UnsafeMutablePointer<AVFormatContext>) {
        let dav1 = UInt32(0x64) | UInt32(0x61) << 8 | UInt32(0x76) << 16 | UInt32(0x31) << 24  // MKTAG('d','a','v','1')
        for i in 0..<Int(context.pointee.nb_streams) {
            guard let parameters = context.pointee.streams[i]?.pointee.codecpar,
                parameters.pointee.codec_id == AV_CODEC_ID_NONE, parameters.pointee.codec_tag == dav1
            else { continue }
            parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
            parameters.pointee.codec_id = AV_CODEC_ID_AV1
        }
    }

    /// True for an ISO-BMFF file whose header describes every stream fully.
    static func headerIsComplete(_ context: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard let name = context.pointee.iformat?.pointee.name, String(cString: name).hasPrefix("mov,mp4"),
            context.pointee.nb_streams > 0, context.pointee.duration != Int64.min
        else { return false }
        for i in 0..<Int(context.pointee.nb_streams) {
            guard let parameters = context.pointee.streams[i]?.pointee.codecpar?.pointee,
                parameters.codec_id != AV_CODEC_ID_NONE
            else { return false }
            switch parameters.codec_type {
            case AVMEDIA_TYPE_VIDEO: if parameters.width <= 0 || parameters.height <= 0 { return false }
            case AVMEDIA_TYPE_AUDIO: if parameters.sample_rate <= 0 { return false }
            default: continue
            }
        }
        return true
    }

    deinit {
        avformat_close_input(&context)
        shim_avio_close_descriptor(&io)
    }

    /// True until something reads packets or seeks: the next packet read is then
    /// the file's first (what `avformat_find_stream_info` read is buffered and
    /// returned again), so a walk from the start needs no seek — seeking to the
    /// start is not exact everywhere (MPEG-PS/TS land after their first keyframe;
    /// FLV without an index consumes it).
    var atStart = true

    /// True when the demuxer's index lists every keyframe from the moment the file
    /// is open: MP4/MOV (the `moov`'s sample tables) and AVI (`idx1`). Matroska
    /// reads its cues only when asked to seek, and MPEG-PS/TS have none.
    var hasCompleteIndex: Bool {
        guard let name = formatContext.pointee.iformat?.pointee.name else { return false }
        let demuxer = String(cString: name)
        return demuxer.hasPrefix("mov,mp4") || demuxer == "avi"
    }

    var formatContext: UnsafeMutablePointer<AVFormatContext> { context! }

    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { formatContext.pointee.streams[index]! }

    /// Extends the time budget by `seconds` from now (for a second phase of work).
    public func restartClock(seconds: Double?) { deadline.reset(seconds: seconds) }

    /// Reads duration, streams and rotation. Falls back, when the header has no
    /// duration, to the streams' durations and then to the last packet's timestamp
    /// (unless `duration` is false: a still image has none, and reading to its end
    /// would leave an unseekable image demuxer there).
    public func probe(duration: Bool = true) throws(AVError) -> MediaProbe {
        let ctx = formatContext.pointee
        var pictures: [VideoStreamInfo] = []
        var coverArt: VideoStreamInfo?
        var hasAudio = false
        for i in 0..<Int(ctx.nb_streams) {
            let st = stream(i).pointee
            guard let par = st.codecpar?.pointee else { continue }
            if par.codec_type == AVMEDIA_TYPE_AUDIO { hasAudio = true }
            guard par.codec_type == AVMEDIA_TYPE_VIDEO, par.width > 0, par.height > 0,
                avcodec_find_decoder(par.codec_id) != nil
            else { continue }
            let sar = par.sample_aspect_ratio
            let info = VideoStreamInfo(
                index: i, codec: String(cString: avcodec_get_name(par.codec_id)),
                storedWidth: Int(par.width), storedHeight: Int(par.height),
                rotation: Self.rotation(of: stream(i)),
                sampleAspect: sar.num > 0 && sar.den > 0 ? av_q2d(sar) : 1)
            if st.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 {
                if coverArt == nil { coverArt = info }
            } else {
                pictures.append(info)
            }
        }
        let container = ctx.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
        return MediaProbe(
            container: container,
            durationMilliseconds: duration ? try durationSeconds().map { ($0 * 1000).rounded() } : nil,
            video: pictures.first, hasAudio: hasAudio, streamCount: Int(ctx.nb_streams), pictures: pictures,
            coverArt: coverArt)
    }

    private func durationSeconds() throws(AVError) -> Double? {
        let ctx = formatContext.pointee
        // A fragmented MP4's duration is its `mehd`'s or its last fragment's end:
        // libavformat 5.1 takes the "unknown" all-ones durations live encoders
        // leave in `mvhd`/`mdhd` at face value (39.8 hours at 30000 per second).
        if let name = ctx.iformat?.pointee.name, String(cString: name).hasPrefix("mov,mp4"),
            let fragmented = FragmentedDuration.seconds(DescriptorBytes(descriptor))
        {
            return fragmented
        }
        if ctx.duration != Int64.min, ctx.duration > 0 { return Double(ctx.duration) / Double(AV_TIME_BASE) }
        var longest: Double?
        for i in 0..<Int(ctx.nb_streams) {
            let st = stream(i).pointee
            if st.duration != Int64.min, st.duration > 0 {
                longest = max(longest ?? 0, Double(st.duration) * av_q2d(st.time_base))
            }
        }
        if let longest { return longest }
        return try lastTimestampSeconds()
    }

    /// The largest end timestamp of any packet; only for files whose header gives
    /// no duration (Matroska/WebM recorded live, headerless or cut streams).
    /// Like libavformat's own estimate for MPEG, it reads from the end: the last
    /// 1 MB, a window grown eightfold up to 64 MB while it holds no timestamp. A
    /// file no larger than the window, or whose demuxer cannot seek by bytes, is
    /// read whole. Rewinds afterwards.
    private func lastTimestampSeconds() throws(AVError) -> Double? {
        let wasAtStart = atStart
        atStart = false
        let context = formatContext
        let size = context.pointee.pb.map { avio_size($0) } ?? -1
        // Raw streams (an MPEG video elementary stream) have no timestamps of their
        // own: the parser counts frames from where reading starts, so only a read
        // from the start gives the end.
        let flags = context.pointee.iformat.pointee.flags
        let byteSeekable = flags & AVFMT_NO_BYTE_SEEK == 0 && flags & AVFMT_NOTIMESTAMPS == 0
        var window: Int64 = 1 << 20
        var end: Double?
        while byteSeekable, size > window, end == nil, window <= 64 << 20 {
            guard av_seek_frame(context, -1, size - window, AVSEEK_FLAG_BYTE) >= 0 else { break }
            end = try readToEnd()
            window *= 8
        }
        if end == nil {
            if !wasAtStart || size > 1 << 20 {
                // A stream without timestamps cannot be searched by time: back to its first byte.
                if av_seek_frame(context, -1, 0, AVSEEK_FLAG_BACKWARD) < 0 || byteSeekable {
                    av_seek_frame(context, -1, 0, AVSEEK_FLAG_BYTE)
                }
            }
            var frames = 0
            end = try readToEnd(countingFramesOf: firstVideoStream(), frames: &frames)
            // No packet had a timestamp (an MPEG-1 system stream whose packs carry
            // none): the video's frames, as its parser splits them, at its frame rate.
            if end == nil, frames > 0, let index = firstVideoStream() {
                let rate = av_q2d(stream(index).pointee.r_frame_rate)
                if rate > 0, rate.isFinite { end = Double(frames) / rate }
            }
        }
        av_seek_frame(context, -1, 0, AVSEEK_FLAG_BACKWARD)
        return end
    }

    /// Reads packets (no decoding) to the end of the file: the largest end
    /// timestamp seen, in seconds from each stream's start.
    private func readToEnd() throws(AVError) -> Double? {
        var frames = 0
        return try readToEnd(countingFramesOf: nil, frames: &frames)
    }

    /// The first video stream that is not cover art.
    private func firstVideoStream() -> Int? {
        (0..<Int(formatContext.pointee.nb_streams)).first {
            let st = stream($0).pointee
            return st.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
                && st.disposition & AV_DISPOSITION_ATTACHED_PIC == 0
        }
    }

    /// ``readToEnd()``, counting the packets of stream `counted` in `frames`.
    private func readToEnd(countingFramesOf counted: Int?, frames: inout Int) throws(AVError) -> Double? {
        guard let packet = av_packet_alloc() else { return nil }
        var packetPointer: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&packetPointer) }
        var end: Double?
        while true {
            let status = av_read_frame(formatContext, packet)
            if status < 0 {
                if deadline.hasPassed { throw AVError("av_read_frame", code: shim_averror_exit()) }
                break
            }
            let st = stream(Int(packet.pointee.stream_index)).pointee
            if Int(packet.pointee.stream_index) == counted { frames += 1 }
            let ts = packet.pointee.pts != Int64.min ? packet.pointee.pts : packet.pointee.dts
            if ts != Int64.min {
                let start = st.start_time != Int64.min ? st.start_time : 0
                let seconds = Double(ts - start + max(0, packet.pointee.duration)) * av_q2d(st.time_base)
                end = max(end ?? 0, seconds)
            }
            av_packet_unref(packet)
        }
        return end
    }

    /// Clockwise degrees to rotate for display, from the display-matrix side data
    /// (`av_display_rotation_get` gives counter-clockwise degrees).
    static func rotation(of stream: UnsafeMutablePointer<AVStream>) -> Int {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else { return 0 }
        let degrees = data.withMemoryRebound(to: Int32.self, capacity: 9) { av_display_rotation_get($0) }
        guard degrees.isFinite else { return 0 }
        let clockwise = Int((-degrees / 90).rounded()) * 90
        return ((clockwise % 360) + 360) % 360
    }
}

/// A monotonic-clock deadline read by libav's interrupt callback.
final class Deadline: @unchecked Sendable {
    private var limit: Double?

    init(seconds: Double?) { reset(seconds: seconds) }

    func reset(seconds: Double?) { limit = seconds.map { Self.now() + $0 } }

    var hasPassed: Bool {
        guard let limit else { return false }
        return Self.now() > limit
    }

    static func now() -> Double { MonotonicClock.now() }
}
