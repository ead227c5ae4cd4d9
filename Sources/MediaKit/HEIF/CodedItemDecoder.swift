import CFFmpeg
import CShims
import MediaFormats

/// Decodes a HEIF item coded with HEVC (or, for a gain map, AV1) — one coded
/// picture, or a grid of coded tiles — with libavcodec (its HEVC decoder; dav1d
/// for AV1), straight to a reduced RGB picture: each tile
/// is converted and shrunk (`sws_scale`, area averaging) into its place on a
/// canvas 1/`reduction` of the full size as soon as it is decoded, so the full
/// 12 MP picture is never built. The tiles are independent intra pictures; they
/// go to the decoder back to back and, with frame threading, decode in parallel.
///
/// Takes 8-, 10- and 12-bit pictures whose tiles share one configuration;
/// everything else (alpha, odd grids) is left to libheif, see ``HEIFDecoding``.
/// A picture deeper than 8 bits, or whose colour is HDR or wider than sRGB, is
/// scaled to 16-bit RGB and converted to SDR sRGB at the reduced size
/// (``ToneMapper``): camera HEIFs are 10-bit 4:2:2 PQ or HLG, which libheif
/// 1.15's libde265 decodes to a black picture. Primary AV1 pictures (AVIF) go
/// to libheif: only a gain map's AV1 picture is taken here (``HEIFGainMapThumbnail``).
struct CodedItemDecoder {
    let file: HEIFFile
    let bytes: [UInt8]
    /// Decoder threads (frame threading); 1 decodes on the calling thread only.
    let threads: Int
    /// Frames larger than this many pixels are refused by the decoder itself.
    let pixelLimit: Int
    let deadline: Deadline

    /// Why this path does not take an item (it goes to libheif instead).
    struct NotTaken: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// How an item's pictures are coded: the codec and its configuration record.
    struct Coding: Equatable {
        enum Codec: String {
            case hevc = "HEVC"
            case av1 = "AV1"
        }
        let codec: Codec
        /// The configuration record (`hvcC`, `av1C`), as libavcodec takes it for extradata.
        let record: [UInt8]
        let bitDepthLuma: Int
        let bitDepthChroma: Int
        /// 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4 (HEVC's `chroma_format_idc`).
        let chromaFormat: Int

        init(_ configuration: HEVCConfiguration) {
            codec = .hevc
            record = configuration.record
            bitDepthLuma = configuration.bitDepthLuma
            bitDepthChroma = configuration.bitDepthChroma
            chromaFormat = configuration.chromaFormat
        }

        init(_ configuration: AV1Configuration) {
            codec = .av1
            record = configuration.record
            bitDepthLuma = configuration.bitDepth
            bitDepthChroma = configuration.bitDepth
            chromaFormat = configuration.chromaFormat
        }

        /// The coding of `item` (of type `hvc1` or `av01`), if it has its configuration.
        static func of(_ item: HEIFItem, in file: HEIFFile) throws(NotTaken) -> Coding {
            switch item.type {
            case "hvc1":
                guard let configuration = file.hevcConfiguration(of: item) else { throw NotTaken("no hvcC") }
                return Coding(configuration)
            case "av01":
                guard let configuration = file.av1Configuration(of: item) else { throw NotTaken("no av1C") }
                return Coding(configuration)
            default:
                throw NotTaken("item type \(item.type)")
            }
        }
    }

    /// The layout of what is decoded: tiles (one for a plain picture) of one size
    /// and coding, on a canvas cropped to the output size.
    struct Layout {
        let tiles: [HEIFItem]
        let columns: Int
        let tileWidth: Int
        let tileHeight: Int
        let outputWidth: Int
        let outputHeight: Int
        let coding: Coding
        let colour: HEIFColour?

        /// Bits per sample of the coded pictures.
        var bitDepth: Int { coding.bitDepthLuma }
    }

    /// The coded item types taken for a photo: HEVC. AV1 photos (AVIF) go to libheif.
    static let photoTypes: Set<String> = ["hvc1"]
    /// The coded item types taken for a gain map: HEVC (iPhone HEICs) and AV1 (AVIFs' `tmap` maps).
    static let gainMapTypes: Set<String> = ["hvc1", "av01"]

    /// What `item` is made of, if this decoder takes it: a coded item of one of
    /// `types`, or a `grid` of such tiles of equal size and one shared
    /// configuration that cover the output size. An `auxiliary` image (a gain map)
    /// may have an essential `auxC` property: its type is its reader's business,
    /// its pixels are decoded as any.
    static func layout(
        of item: HEIFItem, in file: HEIFFile, bytes: [UInt8], types: Set<String> = photoTypes, auxiliary: Bool = false
    ) throws(NotTaken) -> Layout {
        func tileFacts(_ tile: HEIFItem) throws(NotTaken) -> (Coding, Int, Int) {
            guard types.contains(tile.type) else { throw NotTaken("item type \(tile.type)") }
            let configuration = try Coding.of(tile, in: file)
            guard let (width, height) = file.spatialExtents(of: tile), width > 0, height > 0 else {
                throw NotTaken("no ispe")
            }
            let depth = configuration.bitDepthLuma
            guard [8, 10, 12].contains(depth), configuration.bitDepthChroma == depth else {
                throw NotTaken("\(configuration.bitDepthLuma)-bit luma, \(configuration.bitDepthChroma)-bit chroma")
            }
            for property in file.properties(of: tile) {
                if case .pixelInformation(let bits) = property, bits.contains(where: { $0 != depth }) {
                    throw NotTaken("pixi \(bits)")
                }
            }
            return (configuration, width, height)
        }
        // An alpha plane (auxl with the alpha URN) needs libheif's compositing.
        for auxiliary in file.items(referring: item.id, type: "auxl") {
            for case .auxiliaryType(let urn) in file.properties(of: auxiliary)
            where urn == "urn:mpeg:mpegB:cicp:systems:auxiliary:alpha" || urn == "urn:mpeg:hevc:2015:auxid:1" {
                throw NotTaken("alpha")
            }
        }
        // Essential properties this decoder does not know must not be ignored.
        for association in item.associations where association.essential {
            switch file.properties[association.index] {
            case .hevcConfiguration, .av1Configuration, .spatialExtents, .rotation, .mirror, .cleanAperture, .colour,
                .pixelInformation:
                continue
            case .other("lsel"): continue
            case .auxiliaryType where auxiliary: continue
            default: throw NotTaken("an essential property this decoder does not apply")
            }
        }
        let colour = file.colour(of: item)
        if case .nclx(_, _, let matrix, _) = colour, Self.swsMatrix(matrix) == nil {
            throw NotTaken("matrix coefficients \(matrix)")
        }

        if item.type != "grid" {
            let (coding, width, height) = try tileFacts(item)
            return Layout(
                tiles: [item], columns: 1, tileWidth: width, tileHeight: height, outputWidth: width,
                outputHeight: height,
                coding: coding, colour: colour)
        }
        let grid: HEIFGrid
        do { grid = try file.grid(item, in: bytes) } catch { throw NotTaken("\(error)") }
        var tiles: [HEIFItem] = []
        var first: (Coding, Int, Int)?
        for id in grid.tiles {
            guard let tile = file.items[id] else { throw NotTaken("a missing tile") }
            let facts = try tileFacts(tile)
            if let first {
                guard facts.0 == first.0, facts.1 == first.1, facts.2 == first.2 else { throw NotTaken("tiles differ") }
            } else {
                first = facts
            }
            guard file.transforms(of: tile).isEmpty else { throw NotTaken("transformed tiles") }
            tiles.append(tile)
        }
        guard let (coding, tileWidth, tileHeight) = first,
            tileWidth * grid.columns >= grid.outputWidth, tileHeight * grid.rows >= grid.outputHeight,
            tileWidth * (grid.columns - 1) < grid.outputWidth, tileHeight * (grid.rows - 1) < grid.outputHeight
        else { throw NotTaken("tiles do not cover the grid") }
        return Layout(
            tiles: tiles, columns: grid.columns, tileWidth: tileWidth, tileHeight: tileHeight,
            outputWidth: grid.outputWidth,
            outputHeight: grid.outputHeight, coding: coding, colour: colour)
    }

    /// A decoded picture at reduced size: packed RGB24 (or one grey band:
    /// `decode(_:reduction:raw:grey:)`), `width`×`height`.
    struct Picture {
        var pixels: [UInt8]
        let width: Int
        let height: Int
        /// Converted to sRGB from the colour its stream or `nclx` box states
        /// (``ToneMapper``): an ICC profile of the file no longer describes it.
        var inSRGB = false
    }

    /// The reduction from which the in-loop filters (deblocking, SAO) are
    /// skipped. They smooth block edges a few pixels wide, which a picture
    /// reduced 4× or more averages away; they are about a fifth of the decode
    /// (BENCHMARKS.md, "HEIC without the in-loop filters for thumbnails"). A
    /// HEIC picture is intra-coded: nothing is predicted from a filtered
    /// picture, so skipping them changes only the edges they would have
    /// smoothed. Previews and full-size copies (reduction 1 or 2) keep them.
    static let loopFilterSkippedFrom = 4

    /// Decodes `layout` at 1/`reduction` of its size. Throws `MediaError` for a
    /// damaged stream or the time limit. `raw`: the 8-bit samples as they are
    /// coded (Y'CbCr to R'G'B' by the stated matrix and range, no colour or HDR
    /// conversion), as a gain map's values must be read. `grey` (with `raw`,
    /// for a monochrome 4:0:0 stream, as Apple's gain maps are): one band, the
    /// luma scaled to full range, with no RGB conversion (a third of the
    /// samples to convert, scale and copy).
    func decode(_ layout: Layout, reduction: Int, raw: Bool = false, grey: Bool = false) throws(MediaError) -> Picture {
        let scaledTileWidth = (layout.tileWidth + reduction - 1) / reduction
        let scaledTileHeight = (layout.tileHeight + reduction - 1) / reduction
        let width = max(1, (layout.outputWidth + reduction - 1) / reduction)
        let height = max(1, (layout.outputHeight + reduction - 1) / reduction)
        // The item's nclx box, when it has one, says how to read its colour (as
        // libheif does); else the stream's VUI, which libavcodec puts on the frame.
        var stated: ColourDescription?
        if case .nclx(let primaries, let transfer, _, _) = layout.colour {
            stated = ColourDescription(transferCode: transfer, primariesCode: primaries)
        }
        if raw, layout.bitDepth > 8 {
            throw MediaError(.unsupported, "a \(layout.bitDepth)-bit picture read as its coded values")
        }
        if grey, !raw || layout.coding.chromaFormat != 0 {
            throw MediaError(.unsupported, "a picture with colour read as grey")
        }
        let deep = !raw && (layout.bitDepth > 8 || stated?.needsConversion == true)
        var canvas = Canvas(width: width, height: height, deep: deep, grey: grey)
        let session = try Session(
            coding: layout.coding, threads: threads, maxPixels: pixelLimit,
            loopFilter: reduction < Self.loopFilterSkippedFrom)
        var converter: TileConverter?
        var colour = stated
        var received = 0

        func place(_ frame: UnsafeMutablePointer<AVFrame>) throws(MediaError) {
            let index =
                frame.pointee.pts >= 0 && frame.pointee.pts < layout.tiles.count ? Int(frame.pointee.pts) : received
            received += 1
            guard Int(frame.pointee.width) == layout.tileWidth, Int(frame.pointee.height) == layout.tileHeight else {
                throw MediaError(
                    .damaged,
                    "tile \(index) decoded as \(frame.pointee.width)×\(frame.pointee.height), not \(layout.tileWidth)×\(layout.tileHeight)"
                )
            }
            if converter == nil {
                converter = try TileConverter(
                    frame: frame, width: scaledTileWidth, height: scaledTileHeight, colour: layout.colour, deep: deep,
                    grey: grey)
                // Mastering display and content light level (SEI), and the VUI's
                // transfer and primaries where the file has no nclx box.
                var described = ColourDescription(frame: frame, stream: .init())
                if let stated {
                    described.transfer = stated.transfer
                    described.primaries = stated.primaries
                }
                colour = described
            }
            guard let converter else { return }
            let x = (index % layout.columns) * scaledTileWidth
            let y = (index / layout.columns) * scaledTileHeight
            try converter.convert(frame, into: &canvas, x: x, y: y)
        }

        for (index, tile) in layout.tiles.enumerated() {
            if deadline.hasPassed {
                throw MediaError(.timeLimit, "time limit exceeded decoding tile \(index) of \(layout.tiles.count)")
            }
            let data: [UInt8]
            do { data = try file.data(of: tile, in: bytes, limit: 64 << 20) } catch {
                throw MediaError(.damaged, "\(error)")
            }
            try session.send(data, index: index, receive: place)
        }
        try session.finish(receive: place)
        guard received == layout.tiles.count else {
            throw MediaError(
                .damaged, "\(received) of \(layout.tiles.count) \(layout.coding.codec.rawValue) tiles decoded")
        }
        guard deep else { return Picture(pixels: canvas.bytes, width: width, height: height) }
        let shown = colour ?? .standard
        let pixels = canvas.words.withUnsafeBufferPointer {
            ToneMapper(shown).convert($0, width: width, height: height, stride: width * 3)
        }
        return Picture(pixels: pixels, width: width, height: height, inSRGB: shown.needsConversion)
    }

    /// The reduced picture being assembled: RGB24, one grey band, or 16-bit RGB for a deep one.
    struct Canvas {
        let width: Int
        let height: Int
        let deep: Bool
        var bytes: [UInt8]
        var words: [UInt16]

        init(width: Int, height: Int, deep: Bool, grey: Bool = false) {
            self.width = width
            self.height = height
            self.deep = deep
            bytes = deep ? [] : [UInt8](repeating: 0, count: width * height * (grey ? 1 : 3))
            words = deep ? [UInt16](repeating: 0, count: width * height * 3) : []
        }
    }

    /// libswscale's colour matrix for an ISO/IEC 23091-2 `matrix_coefficients`
    /// value, nil for what it has none for (identity/GBR, chroma-derived, ICtCp).
    static func swsMatrix(_ matrix: Int) -> Int32? {
        switch matrix {
        case 1: SWS_CS_ITU709
        case 2, 5, 6: SWS_CS_ITU601  // 2 is unspecified: libheif takes BT.601 too
        case 4: SWS_CS_FCC
        case 7: SWS_CS_SMPTE240M
        case 9, 10: SWS_CS_BT2020
        default: nil
        }
    }
}

/// One libavcodec decoder (HEVC, or dav1d for AV1), fed the tiles of one
/// configuration: HEVC's length-prefixed NAL units, AV1's OBUs, as the items hold them.
private final class Session {
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?

    private let name: String

    init(coding: CodedItemDecoder.Coding, threads: Int, maxPixels: Int, loopFilter: Bool) throws(MediaError) {
        LibAV.start()
        name = coding.codec.rawValue
        // AV1: the first AV1 decoder libavcodec has, which in Debian's build is dav1d (its own
        // `av1` decoder only drives hardware, and is registered after it).
        let id = coding.codec == .hevc ? AV_CODEC_ID_HEVC : AV_CODEC_ID_AV1
        guard let decoder = avcodec_find_decoder(id) else {
            throw MediaError(.unsupported, "libavcodec has no \(name) decoder")
        }
        codec = avcodec_alloc_context3(decoder)
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let codec, frame != nil, packet != nil else { throw MediaError(.memoryLimit, "out of memory") }
        // The hvcC (av1C) record as extradata: the decoder reads its parameter sets and the
        // NAL length size (the sequence header) from it. Padded, as libavcodec reads past the end.
        let record = coding.record
        guard let extradata = av_mallocz(record.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
            throw MediaError(.memoryLimit, "out of memory")
        }
        record.withUnsafeBytes { extradata.copyMemory(from: $0.baseAddress!, byteCount: record.count) }
        codec.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
        codec.pointee.extradata_size = Int32(record.count)
        codec.pointee.thread_count = Int32(max(1, threads))
        codec.pointee.thread_type = threads > 1 ? FF_THREAD_FRAME : 0
        codec.pointee.max_pixels = Int64(maxPixels)
        if !loopFilter { codec.pointee.skip_loop_filter = AVDISCARD_ALL }
        let status = avcodec_open2(codec, decoder, nil)
        guard status >= 0 else {
            throw MediaError(.damaged, "\(name) configuration: \(AVError("avcodec_open2", code: status))")
        }
    }

    deinit {
        avcodec_free_context(&codec)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    /// Sends one tile's coded bytes, tagged with its index, and hands every frame
    /// that comes out to `receive`.
    func send(_ data: [UInt8], index: Int, receive: (UnsafeMutablePointer<AVFrame>) throws(MediaError) -> Void)
        throws(MediaError)
    {
        guard let codec, let packet else { return }
        guard av_new_packet(packet, Int32(data.count)) >= 0 else { throw MediaError(.memoryLimit, "out of memory") }
        defer { av_packet_unref(packet) }
        data.withUnsafeBytes {
            packet.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: data.count)
        }
        packet.pointee.pts = Int64(index)
        packet.pointee.dts = Int64(index)
        packet.pointee.flags |= AV_PKT_FLAG_KEY
        while true {
            let sent = avcodec_send_packet(codec, packet)
            if sent == shim_averror_eagain() {
                // The decoder's queue is full: take frames out, then send again.
                try drain(receive: receive, untilEmpty: false)
                continue
            }
            guard sent >= 0 else {
                throw MediaError(.damaged, "\(name) tile \(index): \(AVError("avcodec_send_packet", code: sent))")
            }
            break
        }
        try drain(receive: receive, untilEmpty: false)
    }

    /// Flushes the decoder and hands out the frames it still holds.
    func finish(receive: (UnsafeMutablePointer<AVFrame>) throws(MediaError) -> Void) throws(MediaError) {
        guard let codec else { return }
        avcodec_send_packet(codec, nil)
        try drain(receive: receive, untilEmpty: true)
    }

    private func drain(receive: (UnsafeMutablePointer<AVFrame>) throws(MediaError) -> Void, untilEmpty: Bool)
        throws(MediaError)
    {
        guard let codec, let frame else { return }
        while true {
            let status = avcodec_receive_frame(codec, frame)
            if status == shim_averror_eagain() || status == shim_averror_eof() { return }
            guard status >= 0 else {
                throw MediaError(.damaged, "\(name): \(AVError("avcodec_receive_frame", code: status))")
            }
            defer { av_frame_unref(frame) }
            if frame.pointee.decode_error_flags != 0 || frame.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 {
                throw MediaError(.damaged, "\(name): a tile decoded with errors")
            }
            try receive(frame)
        }
    }
}

/// Converts decoded tiles (any 8-bit YUV layout libavcodec gives) to RGB24 at the
/// reduced tile size, with the file's colour matrix and range, and copies them
/// into the canvas. libswscale writes whole SIMD vectors, so it writes into an
/// `av_image_alloc` buffer (aligned, padded lines) and rows are copied from there.
private final class TileConverter {
    private let context: OpaquePointer
    private var buffer: [UnsafeMutablePointer<UInt8>?] = [nil, nil, nil, nil]
    private var lineSizes: [Int32] = [0, 0, 0, 0]
    let width: Int
    let height: Int
    private let sourceFormat: Int32
    private let sourceWidth: Int32
    private let sourceHeight: Int32

    /// 16-bit RGB (`AV_PIX_FMT_RGB48LE`) rather than RGB24.
    let deep: Bool
    /// One full-range grey band (`AV_PIX_FMT_GRAY8`) rather than RGB24.
    let grey: Bool

    init(
        frame: UnsafeMutablePointer<AVFrame>, width: Int, height: Int, colour: HEIFColour?, deep: Bool,
        grey: Bool = false
    ) throws(MediaError) {
        self.width = width
        self.height = height
        self.deep = deep
        self.grey = grey
        let output = deep ? AV_PIX_FMT_RGB48LE : grey ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGB24
        sourceFormat = frame.pointee.format
        sourceWidth = frame.pointee.width
        sourceHeight = frame.pointee.height
        // The "J" (full-range) formats are the same planes; the range is set below.
        var format = AVPixelFormat(rawValue: sourceFormat)
        switch format {
        case AV_PIX_FMT_YUVJ420P: format = AV_PIX_FMT_YUV420P
        case AV_PIX_FMT_YUVJ422P: format = AV_PIX_FMT_YUV422P
        case AV_PIX_FMT_YUVJ444P: format = AV_PIX_FMT_YUV444P
        default: break
        }
        guard
            let context = sws_getContext(
                sourceWidth, sourceHeight, format, Int32(width), Int32(height), output, Int32(SWS_AREA), nil, nil, nil)
        else { throw MediaError(.unsupported, "libswscale cannot convert this pixel format") }
        self.context = context
        // The matrix and range: the item's nclx colour box when it has one (libheif
        // does the same), else the stream's VUI, which libavcodec puts on the frame.
        var matrix: Int32 = SWS_CS_ITU601
        var fullRange: Int32 = 0
        if case .nclx(_, _, let nclxMatrix, let full) = colour {
            matrix = CodedItemDecoder.swsMatrix(nclxMatrix) ?? SWS_CS_ITU601
            fullRange = full ? 1 : 0
        } else {
            matrix = CodedItemDecoder.swsMatrix(Int(frame.pointee.colorspace.rawValue)) ?? SWS_CS_ITU601
            fullRange = frame.pointee.color_range == AVCOL_RANGE_JPEG ? 1 : 0
        }
        // Full range out: RGB, and a grey band as R'G'B' would have it (R = G = B = the luma, expanded from video range).
        sws_setColorspaceDetails(
            context, sws_getCoefficients(matrix), fullRange, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16
        )
        let allocated = av_image_alloc(&buffer, &lineSizes, Int32(width), Int32(height), output, 64)
        guard allocated >= 0 else {
            sws_freeContext(context)
            throw MediaError(.memoryLimit, "out of memory")
        }
    }

    deinit {
        av_freep(&buffer[0])
        sws_freeContext(context)
    }

    /// Converts `frame` and copies it to (`x`, `y`) of `canvas`, clipped to the canvas.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>, into canvas: inout CodedItemDecoder.Canvas, x: Int, y: Int)
        throws(MediaError)
    {
        guard frame.pointee.format == sourceFormat, frame.pointee.width == sourceWidth,
            frame.pointee.height == sourceHeight
        else {
            throw MediaError(.damaged, "tiles of different formats")
        }
        let lines = withUnsafePointer(to: frame.pointee.data) { data in
            withUnsafePointer(to: frame.pointee.linesize) { linesize in
                data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { planes in
                    linesize.withMemoryRebound(to: Int32.self, capacity: 8) { sizes in
                        sws_scale(context, planes, sizes, 0, sourceHeight, &buffer, &lineSizes)
                    }
                }
            }
        }
        guard lines > 0, let source = buffer[0] else { throw MediaError(.damaged, "sws_scale failed") }
        let columns = min(width, canvas.width - x)
        let rows = min(height, canvas.height - y)
        guard columns > 0, rows > 0 else { return }
        let stride = Int(lineSizes[0])
        let bytesPerPixel = deep ? 6 : grey ? 1 : 3
        let canvasStride = canvas.width * bytesPerPixel
        func copy(_ out: UnsafeMutableRawBufferPointer) {
            for row in 0..<rows {
                (out.baseAddress! + (y + row) * canvasStride + x * bytesPerPixel).copyMemory(
                    from: source + row * stride, byteCount: columns * bytesPerPixel)
            }
        }
        if deep { canvas.words.withUnsafeMutableBytes(copy) } else { canvas.bytes.withUnsafeMutableBytes(copy) }
    }
}
