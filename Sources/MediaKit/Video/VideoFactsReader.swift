import CFFmpeg
import CShims
import MediaFormats

// A video's ``VideoFacts`` from libavformat, in the helper: the codec, the frame
// rate and whether it varies (from the presentation times of the first
// `window` packets of the stream, not the container's claim), the capture rate
// and slow motion from Apple's and Android's tags, HDR from the stream's
// transfer and Dolby Vision configuration, the rotation, the audio codec.

enum VideoFactsReader {
    /// Packets whose presentation times are compared.
    static let window = 120
    /// Spacings more than this far (relative) from the typical one make the rate variable.
    static let tolerance = 0.15

    static func read(_ file: MediaFile, video: VideoStreamInfo) -> VideoFacts {
        let stream = file.stream(video.index)
        var facts = VideoFacts(codec: video.codec, rotation: video.rotation)
        let context = file.formatContext
        for i in 0..<Int(context.pointee.nb_streams)
        where file.stream(i).pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO {
            if let name = avcodec_get_name(file.stream(i).pointee.codecpar.pointee.codec_id) {
                facts.audio = String(cString: name)
            }
            break
        }
        let hints = ColourDescription.StreamHints(stream)
        if let dolbyVision = hints.dolbyVision {
            facts.hdr = "dolbyVision"
            facts.dolbyVisionProfile = dolbyVision.profile
        } else if hints.transferCode == Int(AVCOL_TRC_SMPTE2084.rawValue) {
            facts.hdr = "pq"
        } else if hints.transferCode == Int(AVCOL_TRC_ARIB_STD_B67.rawValue) {
            facts.hdr = "hlg"
        }
        let (rate, variable) = frameRate(file, stream: video.index)
        facts.frameRate = rate.map { ($0 * 1000).rounded() / 1000 }
        facts.variableFrameRate = variable
        // Tags: the container's and the stream's (libavformat puts QuickTime `mdta` keys in the container's).
        func tag(_ key: String) -> String? {
            for dictionary in [context.pointee.metadata, stream.pointee.metadata] {
                if let entry = av_dict_get(dictionary, key, nil, 0), let value = entry.pointee.value {
                    return String(cString: value)
                }
            }
            return nil
        }
        if let capture = tag("com.android.capture.fps").flatMap({ Double($0.filter { $0 != " " }) }), capture.isFinite,
            capture > 0, capture <= 10_000
        {
            facts.captureFrameRate = capture
            if let rate { facts.slowMotion = capture > rate * 1.5 }
        }
        if let intent = tag("com.apple.quicktime.full-frame-rate-playback-intent").flatMap({
            Int($0.filter { $0 != " " })
        }) {
            // 0: the movie is meant to play slowed down (a slow-motion capture at its own rate).
            facts.slowMotion = intent == 0
            if intent == 0, facts.captureFrameRate == nil { facts.captureFrameRate = facts.frameRate }
        }
        return facts
    }

    /// The frame rate from the presentation times of the first packets (sorted:
    /// B-frames arrive out of order), and whether their spacing varies. Rewinds.
    static func frameRate(_ file: MediaFile, stream index: Int) -> (Double?, Bool?) {
        guard let packet = av_packet_alloc() else { return (nil, nil) }
        var pointer: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&pointer) }
        let context = file.formatContext
        if !file.atStart, av_seek_frame(context, -1, 0, AVSEEK_FLAG_BACKWARD) < 0 {
            av_seek_frame(context, -1, 0, AVSEEK_FLAG_BYTE)
        }
        file.atStart = false
        var times: [Int64] = []
        var read = 0
        while times.count < window, read < window * 20, av_read_frame(context, packet) >= 0 {
            read += 1
            if Int(packet.pointee.stream_index) == index {
                let time = packet.pointee.pts != Int64.min ? packet.pointee.pts : packet.pointee.dts
                if time != Int64.min { times.append(time) }
            }
            av_packet_unref(packet)
        }
        av_seek_frame(context, -1, 0, AVSEEK_FLAG_BACKWARD)
        let timeBase = av_q2d(file.stream(index).pointee.time_base)
        let sorted = Array(Set(times)).sorted()
        guard sorted.count >= 3, timeBase > 0 else {
            let claimed = av_q2d(file.stream(index).pointee.avg_frame_rate)
            return (claimed.isFinite && claimed > 0 && claimed <= 10_000 ? claimed : nil, nil)
        }
        let spacings = zip(sorted.dropFirst(), sorted).map { Double($0 - $1) * timeBase }
        let typical = spacings.sorted()[spacings.count / 2]
        guard typical > 0 else { return (nil, nil) }
        let variable = spacings.contains { abs($0 - typical) > typical * tolerance }
        // Variable: the average rate over the window; constant: the typical spacing's.
        let rate = variable ? Double(spacings.count) / spacings.reduce(0, +) : 1 / typical
        return (rate.isFinite && rate > 0 && rate <= 10_000 ? rate : nil, variable)
    }
}
