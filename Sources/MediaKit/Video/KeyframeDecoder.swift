import CFFmpeg
import CShims

/// Packed RGB24 pixels of a decoded frame, already scaled to thumbnail size
/// (alpha flattened over white), and how the frame asks to be displayed.
struct RGBPicture {
    let pixels: [UInt8]
    let width: Int
    let height: Int
    /// Clockwise degrees to rotate for display, from the frame's own display
    /// matrix (a JPEG's EXIF orientation, as libavcodec's mjpeg decoder exports
    /// it); 0 when the frame has none.
    var rotation = 0
    /// Mirrored left to right after the rotation (EXIF orientations 2, 4, 5, 7).
    var mirrored = false
    /// How the decoded frame described its colour (the pixels are already SDR sRGB).
    var colour = ColourDescription.standard

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

/// A reference to a decoded frame (`av_frame_clone`), freed with it.
final class FrameReference {
    let frame: UnsafeMutablePointer<AVFrame>
    init?(_ source: UnsafeMutablePointer<AVFrame>) {
        guard let clone = av_frame_clone(source) else { return nil }
        frame = clone
    }
    deinit {
        var freeing: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&freeing)
    }
}

/// A copy of one key packet of the stream (its own reference to the data), and
/// when it is shown.
final class KeyPacket {
    let packet: UnsafeMutablePointer<AVPacket>
    /// Presentation time in the stream's time base (the decoding time when the
    /// packet has none).
    let time: Int64

    init?(copying source: UnsafeMutablePointer<AVPacket>) {
        guard let copy = av_packet_alloc() else { return nil }
        guard av_packet_ref(copy, source) >= 0 else {
            var freeing: UnsafeMutablePointer<AVPacket>? = copy
            av_packet_free(&freeing)
            return nil
        }
        packet = copy
        time = source.pointee.pts != Int64.min ? source.pointee.pts : source.pointee.dts
    }

    deinit {
        var freeing: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&freeing)
    }
}

/// Reads one stream's key packets and decodes each alone, with a decoder that
/// skips everything else (`skip_frame = AVDISCARD_NONKEY`) on one thread: only
/// single frames are wanted, and two items decode in parallel.
///
/// Reading and decoding are separate so that a caller can walk a stream without
/// an index forward, key packet by key packet, and decode only the ones it
/// chooses, never seeking back to a keyframe it has passed.
final class KeyframeDecoder {
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    let streamIndex: Int32
    private let targetSize: Int
    private let sampleAspect: Double
    /// What the stream's container says about its colour (frames may say more).
    private let streamColour: ColourDescription.StreamHints
    /// Packets of the stream read while looking for the next key packet before
    /// giving up (a group of pictures of 8 s at 120 fps fits).
    static let packetBudget = 1000
    /// Line alignment of the RGB destination of `sws_scale` (see `scale`).
    static let destinationAlignment: Int32 = 64
    /// Seeks made, and the times of the key packets decoded, for tests of the search.
    private(set) var seeks = 0
    private(set) var decodedTimes: [Int64] = []

    /// A decoder for `stream`; frames larger than `pixelLimit` pixels are refused
    /// by libavcodec (`max_pixels`); decoded frames are scaled to fit `targetSize`.
    /// `strict`: any error in the data fails the frame (`AV_EF_EXPLODE`), so a
    /// truncated still image is an error rather than a partial picture.
    init(
        stream: UnsafeMutablePointer<AVStream>, pixelLimit: Int?, targetSize: Int, sampleAspect: Double = 1,
        strict: Bool = false
    ) throws(AVError) {
        streamIndex = stream.pointee.index
        self.targetSize = targetSize
        self.sampleAspect = sampleAspect
        streamColour = ColourDescription.StreamHints(stream)
        guard let parameters = stream.pointee.codecpar,
            let decoder = avcodec_find_decoder(parameters.pointee.codec_id)
        else { throw AVError("avcodec_find_decoder", message: "no decoder for this video codec") }
        codec = avcodec_alloc_context3(decoder)
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let codec, frame != nil, packet != nil else {
            throw AVError("avcodec_alloc_context3", message: "out of memory")
        }
        var status = avcodec_parameters_to_context(codec, parameters)
        guard status >= 0 else { throw AVError("avcodec_parameters_to_context", code: status) }
        codec.pointee.thread_count = 1
        codec.pointee.skip_frame = AVDISCARD_NONKEY
        if let pixelLimit { codec.pointee.max_pixels = Int64(pixelLimit) }
        if strict { codec.pointee.err_recognition |= AV_EF_EXPLODE }
        status = avcodec_open2(codec, decoder, nil)
        guard status >= 0 else { throw AVError("avcodec_open2", code: status) }
    }

    deinit {
        avcodec_free_context(&codec)
        avcodec_free_context(&forwardCodec)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    /// Seeks to the keyframe at or before `timestamp` (what the demuxer can: MP4
    /// and Matroska with cues land on one; MPEG-PS/TS search by timestamp and land
    /// near it). False when the demuxer cannot seek: reading goes on from where it is.
    @discardableResult
    func seek(in file: MediaFile, to timestamp: Int64) throws(AVError) -> Bool {
        seeks += 1
        file.atStart = false
        let status = av_seek_frame(file.formatContext, streamIndex, timestamp, AVSEEK_FLAG_BACKWARD)
        if status == shim_averror_exit() { throw AVError("av_seek_frame", code: status) }
        return status >= 0
    }

    /// Back to the file's first byte (a stream without timestamps, such as an
    /// MPEG-1 system stream whose packs carry none, cannot be searched by time).
    @discardableResult
    func seekToFirstByte(in file: MediaFile) throws(AVError) -> Bool {
        seeks += 1
        file.atStart = false
        let status = av_seek_frame(file.formatContext, -1, 0, AVSEEK_FLAG_BYTE)
        if status == shim_averror_exit() { throw AVError("av_seek_frame", code: status) }
        return status >= 0
    }

    /// Reads on to the next key packet of the stream (shown at `notBefore` or
    /// later, when given: index times are decoding times, and some demuxers land
    /// one keyframe early). Nil at the end of the file or of the packet budget.
    /// `anyPacket`: the stream is a still picture (image demuxers such as ICO do
    /// not flag their packets as key): its first packet is taken.
    func nextKeyPacket(in file: MediaFile, notBefore: Int64? = nil, anyPacket: Bool = false) throws(AVError)
        -> KeyPacket?
    {
        guard let packet else { return nil }
        file.atStart = false
        var packetsRead = 0
        while packetsRead < Self.packetBudget {
            let read = av_read_frame(file.formatContext, packet)
            if read < 0 {
                if read == shim_averror_exit() { throw AVError("av_read_frame", code: read) }
                return nil
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            packetsRead += 1
            guard anyPacket || packet.pointee.flags & AV_PKT_FLAG_KEY != 0 else { continue }
            let key = KeyPacket(copying: packet)
            if let key, let notBefore, key.time != Int64.min, key.time < notBefore { continue }
            return key
        }
        return nil
    }

    /// Decodes `key` alone (the decoder is flushed first and drained after it, so a
    /// decoder that reorders frames gives it up at once), scaled to fit the target
    /// size. Nil when the packet gives no frame (damaged, or needs what came before).
    func decode(_ key: KeyPacket) throws(AVError) -> RGBPicture? {
        guard let codec, let frame else { return nil }
        decodedTimes.append(key.time)
        avcodec_flush_buffers(codec)
        let sent = avcodec_send_packet(codec, key.packet)
        if sent < 0 { return nil }
        avcodec_send_packet(codec, nil)
        while true {
            let received = avcodec_receive_frame(codec, frame)
            if received == 0 {
                defer { av_frame_unref(frame) }
                return try scale(frame)
            }
            if received == shim_averror_eof() || received == shim_averror_eagain() { return nil }
            throw AVError("avcodec_receive_frame", code: received)
        }
    }

    /// The frames decoded by ``decodeForward(in:target:horizon:threshold:maximumFrames:)``.
    private(set) var framesDecodedForward = 0
    private var forwardCodec: UnsafeMutablePointer<AVCodecContext>?

    /// Decodes the stream as a player does, every frame in order, from where the
    /// file is read next (just after a seek to a keyframe, or its start): for
    /// when no keyframe decoded alone gives a picture that is not black (a clip
    /// whose only keyframe is black; an edit list that starts after its only
    /// keyframe, whose frames before the start the decoder drops; open GOPs that
    /// show nothing until they recover; fields in separate packets). The poster
    /// is the first frame shown at or after `target` that is not black, else
    /// the last one before it that is not; failing both, the brightest. Stops
    /// past `horizon`, after `maximumFrames` frames, or at the end of the file.
    /// Luma is read from the frame's own luma plane, so only the chosen frame is
    /// scaled.
    func decodeForward(in file: MediaFile, target: Int64, horizon: Int64, threshold: Double, maximumFrames: Int)
        throws(AVError) -> (picture: RGBPicture, time: Int64, luma: Double)?
    {
        guard let packet else { return nil }
        let codec = try openForwardCodec(file)
        avcodec_flush_buffers(codec)
        file.atStart = false
        var search = ForwardSearch(target: target, horizon: horizon, threshold: threshold)
        var ended = false
        var draining = false
        guard let frame = av_frame_alloc() else { throw AVError("av_frame_alloc", message: "out of memory") }
        var frameOwner: UnsafeMutablePointer<AVFrame>? = frame
        defer { av_frame_free(&frameOwner) }

        /// Takes every frame the decoder has; true when the poster is chosen or the search is over.
        func receive() throws(AVError) -> Bool {
            while true {
                let received = avcodec_receive_frame(codec, frame)
                if received == shim_averror_eagain() { return false }
                if received == shim_averror_eof() {
                    ended = true
                    return true
                }
                guard received >= 0 else {
                    if received == shim_averror_exit() { throw AVError("avcodec_receive_frame", code: received) }
                    return false  // a damaged frame: go on to the next
                }
                defer { av_frame_unref(frame) }
                framesDecodedForward += 1
                let time =
                    frame.pointee.best_effort_timestamp != Int64.min
                    ? frame.pointee.best_effort_timestamp : frame.pointee.pts
                let luma: Double
                if let planeLuma = Self.lumaOfPlane(frame) {
                    luma = planeLuma
                } else {
                    luma = try scale(frame).meanLuma
                }
                guard let reference = FrameReference(frame) else {
                    throw AVError("av_frame_clone", message: "out of memory")
                }
                if search.offer(reference, time: time, luma: luma) { return true }
                if framesDecodedForward >= maximumFrames { return true }
            }
        }

        reading: while true {
            if draining {
                _ = try receive()
                break
            }
            let read = av_read_frame(file.formatContext, packet)
            if read < 0 {
                if read == shim_averror_exit() { throw AVError("av_read_frame", code: read) }
                avcodec_send_packet(codec, nil)
                draining = true
                continue
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            while true {
                let sent = avcodec_send_packet(codec, packet)
                if sent == shim_averror_eagain() {
                    if try receive() { break reading }
                    continue
                }
                break  // sent, or a packet the decoder refuses: go on
            }
            if try receive() { break }
        }
        _ = ended
        guard let pick = search.pick else { return nil }
        return (try scale(pick.frame.frame), pick.time, pick.luma)
    }

    private func openForwardCodec(_ file: MediaFile) throws(AVError) -> UnsafeMutablePointer<AVCodecContext> {
        if let forwardCodec { return forwardCodec }
        let stream = file.stream(Int(streamIndex))
        guard let parameters = stream.pointee.codecpar, let decoder = avcodec_find_decoder(parameters.pointee.codec_id),
            let context = avcodec_alloc_context3(decoder)
        else { throw AVError("avcodec_alloc_context3", message: "no decoder") }
        forwardCodec = context
        var status = avcodec_parameters_to_context(context, parameters)
        guard status >= 0 else { throw AVError("avcodec_parameters_to_context", code: status) }
        context.pointee.thread_count = 1
        context.pointee.max_pixels = codec?.pointee.max_pixels ?? 0
        context.pointee.pkt_timebase = stream.pointee.time_base
        status = avcodec_open2(context, decoder, nil)
        guard status >= 0 else { throw AVError("avcodec_open2", code: status) }
        return context
    }

    /// The mean luma (0–255, Rec. 601 scale) of a Y'CbCr frame, from its luma
    /// plane on a grid of at most 64×64 samples; nil for other layouts.
    static func lumaOfPlane(_ frame: UnsafeMutablePointer<AVFrame>) -> Double? {
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(rawValue: frame.pointee.format)),
            descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0,
            descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_PAL) == 0,
            descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_BE) == 0,
            descriptor.pointee.comp.0.plane == 0, descriptor.pointee.comp.0.offset == 0,
            descriptor.pointee.comp.0.shift == 0,
            let base = frame.pointee.data.0
        else { return nil }
        let depth = Int(descriptor.pointee.comp.0.depth)
        let step = Int(descriptor.pointee.comp.0.step)
        let width = Int(frame.pointee.width)
        let height = Int(frame.pointee.height)
        let stride = Int(frame.pointee.linesize.0)
        guard width > 0, height > 0, stride > 0, (1...16).contains(depth), step == (depth > 8 ? 2 : 1) else {
            return nil
        }
        let name = av_get_pix_fmt_name(AVPixelFormat(rawValue: frame.pointee.format)).map { String(cString: $0) } ?? ""
        let full = frame.pointee.color_range == AVCOL_RANGE_JPEG || name.hasPrefix("yuvj") || name.hasPrefix("gray")
        let unit = Double(1 << (depth - 8 > 0 ? depth - 8 : 0))
        let xs = max(1, width / 64)
        let ys = max(1, height / 64)
        var sum = 0.0
        var count = 0
        var y = ys / 2
        while y < height {
            let row = base + y * stride
            var x = xs / 2
            while x < width {
                let value =
                    depth > 8 ? Double(UnsafeRawPointer(row + x * 2).loadUnaligned(as: UInt16.self)) : Double(row[x])
                sum += value / unit
                count += 1
                x += xs
            }
            y += ys
        }
        let mean = sum / Double(max(1, count))
        return full ? mean : min(255, max(0, (mean - 16) * 255 / 219))
    }

    /// Converts a decoded frame to RGB24 at thumbnail size in one `sws_scale`
    /// (through RGBA, flattened over white, when the frame has alpha), reading
    /// Y'CbCr with the frame's own matrix and range. A frame that is HDR or
    /// wider than sRGB (``ColourDescription/needsConversion``) is scaled to
    /// 16-bit RGB instead and converted to SDR sRGB at that size (``ToneMapper``).
    private func scale(_ frame: UnsafeMutablePointer<AVFrame>) throws(AVError) -> RGBPicture {
        let sourceWidth = Int(frame.pointee.width)
        let sourceHeight = Int(frame.pointee.height)
        guard sourceWidth > 0, sourceHeight > 0 else { throw AVError("avcodec_receive_frame", message: "empty frame") }
        guard let pixelDescriptor = av_pix_fmt_desc_get(AVPixelFormat(rawValue: frame.pointee.format)) else {
            throw AVError("av_pix_fmt_desc_get", message: "unknown pixel format")
        }
        let flags = pixelDescriptor.pointee.flags
        let hasAlpha = flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0
        let isRGB = flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0
        let colour = ColourDescription(frame: frame, stream: streamColour)
        let converted = colour.needsConversion && !hasAlpha
        let sourceFormat = Self.sourceFormat(frame, pixelDescriptor, colour: colour, isRGB: isRGB, converted: converted)
        let destinationFormat = hasAlpha ? AV_PIX_FMT_RGBA : converted ? AV_PIX_FMT_RGB48LE : AV_PIX_FMT_RGB24
        let displayWidth = Double(sourceWidth) * sampleAspect
        let scale = min(1, Double(targetSize) / max(displayWidth, Double(sourceHeight)))
        let width = max(1, Int((displayWidth * scale).rounded()))
        let height = max(1, Int((Double(sourceHeight) * scale).rounded()))
        guard
            let sws = sws_getContext(
                Int32(sourceWidth), Int32(sourceHeight), sourceFormat,
                Int32(width), Int32(height), destinationFormat, Int32(SWS_AREA), nil, nil, nil)
        else { throw AVError("sws_getContext", message: "cannot convert this pixel format") }
        defer { sws_freeContext(sws) }
        if !isRGB { Self.describeYCbCr(of: frame, colour: colour, height: sourceHeight, to: sws) }
        let pixels = try Self.convert(
            frame, with: sws, width: width, height: height, format: destinationFormat,
            lineBytes: width * (hasAlpha ? 4 : 3) * (converted ? 2 : 1)
        ) { destination, stride, allocated in
            guard converted else {
                return Self.rgb24(destination, stride: stride, width: width, height: height, overWhite: hasAlpha)
            }
            return UnsafeRawPointer(destination).withMemoryRebound(to: UInt16.self, capacity: allocated / 2) {
                samples in
                ToneMapper(colour).convert(
                    UnsafeBufferPointer(start: samples, count: allocated / 2), width: width, height: height,
                    stride: stride / 2)
            }
        }
        let orientation = Self.orientation(of: frame)
        return RGBPicture(
            pixels: pixels, width: width, height: height, rotation: orientation.rotation,
            mirrored: orientation.mirrored, colour: colour)
    }

    /// The pixel format ``scale(_:)`` reads `frame` as: its own, but for
    /// Dolby Vision with no compatible base layer (profile 5), which codes
    /// IPTPQc2, not Y'CbCr: read as Y'CbCr it is green and purple. Without
    /// applying its reshaping metadata, its intensity plane alone is the
    /// picture's light (PQ): shown in grey.
    private static func sourceFormat(
        _ frame: UnsafeMutablePointer<AVFrame>, _ pixelDescriptor: UnsafePointer<AVPixFmtDescriptor>,
        colour: ColourDescription, isRGB: Bool, converted: Bool
    ) -> AVPixelFormat {
        let intensityOnly = colour.dolbyVision?.hasNoCompatibleBase == true && !isRGB && converted
        guard intensityOnly else { return AVPixelFormat(rawValue: frame.pointee.format) }
        let depth = Int(pixelDescriptor.pointee.comp.0.depth)
        return depth <= 8
            ? AV_PIX_FMT_GRAY8
            : depth <= 10 ? AV_PIX_FMT_GRAY10LE : depth <= 12 ? AV_PIX_FMT_GRAY12LE : AV_PIX_FMT_GRAY16LE
    }

    /// Tells `sws` how to read a Y'CbCr frame: libswscale assumes BT.601
    /// limited range unless told, so the frame's matrix (or, unstated, BT.2020
    /// for HDR, BT.709 for HD, BT.601 below) and its range.
    private static func describeYCbCr(
        of frame: UnsafeMutablePointer<AVFrame>, colour: ColourDescription, height: Int, to sws: OpaquePointer
    ) {
        let matrix = Self.matrix(frame, colour: colour, height: height)
        let name = av_get_pix_fmt_name(AVPixelFormat(rawValue: frame.pointee.format)).map { String(cString: $0) } ?? ""
        let fullRange = frame.pointee.color_range == AVCOL_RANGE_JPEG || name.hasPrefix("yuvj")
        let coefficients = sws_getCoefficients(Int32(matrix))
        sws_setColorspaceDetails(
            sws, coefficients, fullRange ? 1 : 0, sws_getCoefficients(Int32(SWS_CS_ITU709)), 1, 0, 1 << 16, 1 << 16)
    }

    /// Converts `frame` with `sws` into a buffer of `width × height` in
    /// `format`, and hands it (its first plane, its stride, its size in bytes)
    /// to `pixels`, which takes the visible bytes out of it.
    ///
    /// libswscale's SIMD converters (the x86 YUV→RGB ones, used when a frame is
    /// converted at its own size) store whole vectors: they round each line up
    /// to 8 pixels when the stride leaves room, and write past the last visible
    /// byte of the last line. An exact `width × height × 3` array was overrun
    /// (valgrind: 8-byte writes ending past the block; glibc: "corrupted top
    /// size"). `av_image_alloc` with align 64 allocates what libswscale
    /// expects: lines of the width rounded up to 8 pixels, strides and planes
    /// aligned to 64 bytes, and 64 spare bytes after the last line. Only the
    /// visible bytes are handed on.
    private static func convert(
        _ frame: UnsafeMutablePointer<AVFrame>, with sws: OpaquePointer, width: Int, height: Int,
        format: AVPixelFormat, lineBytes: Int,
        pixels: (_ destination: UnsafeMutablePointer<UInt8>, _ stride: Int, _ allocated: Int) -> [UInt8]
    ) throws(AVError) -> [UInt8] {
        var planes: [UnsafeMutablePointer<UInt8>?] = [nil, nil, nil, nil]
        var strides: [Int32] = [0, 0, 0, 0]
        let allocated = av_image_alloc(
            &planes, &strides, Int32(width), Int32(height), format, Self.destinationAlignment)
        guard allocated >= 0, let destination = planes[0] else { throw AVError("av_image_alloc", code: allocated) }
        defer { av_free(destination) }
        // Zeroed, so that lines sws_scale did not write are black, never uninitialised bytes.
        destination.initialize(repeating: 0, count: Int(allocated))
        let stride = Int(strides[0])
        precondition(stride >= lineBytes, "av_image_alloc gave a line shorter than the image")
        let lines = withUnsafePointer(to: frame.pointee.data) { data in
            withUnsafePointer(to: frame.pointee.linesize) { linesize in
                data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { sourcePlanes in
                    linesize.withMemoryRebound(to: Int32.self, capacity: 8) { sizes in
                        sws_scale(sws, sourcePlanes, sizes, 0, frame.pointee.height, planes, strides)
                    }
                }
            }
        }
        guard lines > 0 else { throw AVError("sws_scale", message: "conversion failed") }
        return pixels(destination, stride, Int(allocated))
    }

    /// The visible RGB24 bytes of a converted frame's lines (RGBA flattened
    /// over white with `overWhite`, as libvips flattens images with alpha).
    private static func rgb24(
        _ destination: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int, overWhite: Bool
    ) -> [UInt8] {
        let rowBytes = width * 3
        return [UInt8](unsafeUninitializedCapacity: rowBytes * height) { buffer, count in
            for row in 0..<height {
                let source = destination + row * stride
                let target = buffer.baseAddress! + row * rowBytes
                if overWhite {
                    for x in 0..<width {
                        let alpha = Int(source[x * 4 + 3])
                        for c in 0..<3 {
                            (target + x * 3 + c).initialize(
                                to: UInt8((Int(source[x * 4 + c]) * alpha + 255 * (255 - alpha) + 127) / 255))
                        }
                    }
                } else {
                    target.initialize(from: source, count: rowBytes)
                }
            }
            count = rowBytes * height
        }
    }

    /// The Y'CbCr matrix to read `frame` with, as libswscale numbers them (the
    /// same numbers as H.273's MatrixCoefficients for the ones it has).
    static func matrix(_ frame: UnsafeMutablePointer<AVFrame>, colour: ColourDescription, height: Int) -> Int {
        let stated = Int(frame.pointee.colorspace.rawValue)
        switch stated {
        case 1, 4, 5, 6, 7, 9: return stated
        case 10: return 9  // BT.2020 constant luminance: read as non-constant
        default: return colour.primaries == .bt2020 ? 9 : height >= 720 ? 1 : 5
        }
    }

    /// The frame's display matrix (libavcodec's mjpeg decoder turns EXIF
    /// orientation into one) as a clockwise rotation and a left–right mirror applied
    /// after it. A mirrored matrix has a negative determinant; negating its first
    /// column (which is how `av_display_matrix_flip` mirrors) leaves the rotation.
    static func orientation(of frame: UnsafeMutablePointer<AVFrame>) -> (rotation: Int, mirrored: Bool) {
        guard let side = av_frame_get_side_data(frame, AV_FRAME_DATA_DISPLAYMATRIX), side.pointee.size >= 36,
            let data = side.pointee.data
        else { return (0, false) }
        var matrix = [Int32](repeating: 0, count: 9)
        for i in 0..<9 { matrix[i] = UnsafeRawPointer(data).loadUnaligned(fromByteOffset: i * 4, as: Int32.self) }
        let determinant = Int64(matrix[0]) * Int64(matrix[4]) - Int64(matrix[1]) * Int64(matrix[3])
        let mirrored = determinant < 0
        if mirrored {
            matrix[0] = -matrix[0]
            matrix[3] = -matrix[3]
            matrix[6] = -matrix[6]
        }
        let degrees = matrix.withUnsafeBufferPointer { av_display_rotation_get($0.baseAddress!) }
        guard degrees.isFinite else { return (0, mirrored) }
        let clockwise = Int((-degrees / 90).rounded()) * 90
        return (((clockwise % 360) + 360) % 360, mirrored)
    }
}

/// The frames ``KeyframeDecoder/decodeForward(in:target:horizon:threshold:maximumFrames:)``
/// has met: the first not black at or after `target`, the last not black
/// before it, the brightest.
private struct ForwardSearch {
    let target: Int64
    let horizon: Int64
    let threshold: Double
    var before: (frame: FrameReference, time: Int64, luma: Double)?
    var brightest: (frame: FrameReference, time: Int64, luma: Double)?
    var chosen: (frame: FrameReference, time: Int64, luma: Double)?

    /// Notes a frame shown at `time`; true when the search is over (a frame
    /// chosen, or `horizon` passed).
    mutating func offer(_ reference: FrameReference, time: Int64, luma: Double) -> Bool {
        if brightest == nil || luma > brightest!.luma { brightest = (reference, time, luma) }
        if time == Int64.min || time >= target {
            if luma >= threshold {
                chosen = (reference, time, luma)
                return true
            }
            if time != Int64.min, time > horizon { return true }
        } else if luma >= threshold {
            before = (reference, time, luma)
        }
        return false
    }

    /// The poster: the chosen frame, else the last not black before the target, else the brightest.
    var pick: (frame: FrameReference, time: Int64, luma: Double)? { chosen ?? before ?? brightest }
}
