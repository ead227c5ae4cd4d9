import CFFmpeg

extension ColourDescription {
    /// What a stream's container says about its colour (`colr`/`nclx`, `mdcv`,
    /// `clli`, `dvcC`/`dvvC`, Matroska's Colour element): libav exports it in
    /// `codecpar` and as stream side data. A decoded frame's own description
    /// (the codec's VUI and SEI) takes precedence (``init(frame:stream:)``).
    struct StreamHints: Sendable, Hashable {
        var transferCode = 2
        var primariesCode = 2
        var masteringPeak: Double?
        var maxContentLight: Double?
        var dolbyVision: DolbyVision?

        init() {}

        init(_ stream: UnsafeMutablePointer<AVStream>) {
            if let parameters = stream.pointee.codecpar?.pointee {
                transferCode = Int(parameters.color_trc.rawValue)
                primariesCode = Int(parameters.color_primaries.rawValue)
            }
            var size = 0
            if let data = av_stream_get_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size),
                size >= MemoryLayout<AVMasteringDisplayMetadata>.size
            {
                masteringPeak = ColourDescription.peak(
                    of: UnsafeRawPointer(data).loadUnaligned(as: AVMasteringDisplayMetadata.self))
            }
            if let data = av_stream_get_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size),
                size >= MemoryLayout<AVContentLightMetadata>.size
            {
                let light = UnsafeRawPointer(data).loadUnaligned(as: AVContentLightMetadata.self)
                if light.MaxCLL > 0 { maxContentLight = Double(light.MaxCLL) }
            }
            if let data = av_stream_get_side_data(stream, AV_PKT_DATA_DOVI_CONF, &size),
                size >= MemoryLayout<AVDOVIDecoderConfigurationRecord>.size
            {
                let record = UnsafeRawPointer(data).loadUnaligned(as: AVDOVIDecoderConfigurationRecord.self)
                dolbyVision = DolbyVision(
                    profile: Int(record.dv_profile), compatibility: Int(record.dv_bl_signal_compatibility_id))
            }
        }

        /// The description the container alone gives.
        var description: ColourDescription {
            var colour = ColourDescription(transferCode: transferCode, primariesCode: primariesCode)
            colour.masteringPeak = masteringPeak
            colour.maxContentLight = maxContentLight
            colour.dolbyVision = dolbyVision
            // Dolby Vision without a compatible base layer is PQ whatever the VUI says.
            if dolbyVision?.hasNoCompatibleBase == true {
                colour.transfer = .pq
                colour.primaries = .bt2020
            }
            return colour
        }
    }

    /// A decoded frame's description: its own transfer and primaries (the VUI or
    /// an image's colour information) where it states them, else the stream's;
    /// its mastering display and content light level (HEVC/AV1 SEI and OBUs),
    /// else the stream's; the stream's Dolby Vision configuration.
    init(frame: UnsafeMutablePointer<AVFrame>, stream: StreamHints) {
        let transfer = Int(frame.pointee.color_trc.rawValue)
        let primaries = Int(frame.pointee.color_primaries.rawValue)
        self.init(
            transferCode: ColourDescription.transfer(code: transfer) != nil ? transfer : stream.transferCode,
            primariesCode: ColourDescription.primaries(code: primaries) != nil ? primaries : stream.primariesCode)
        if let side = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA),
            side.pointee.size >= MemoryLayout<AVMasteringDisplayMetadata>.size
        {
            masteringPeak = Self.peak(
                of: UnsafeRawPointer(side.pointee.data).loadUnaligned(as: AVMasteringDisplayMetadata.self))
        }
        if let side = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL),
            side.pointee.size >= MemoryLayout<AVContentLightMetadata>.size
        {
            let light = UnsafeRawPointer(side.pointee.data).loadUnaligned(as: AVContentLightMetadata.self)
            if light.MaxCLL > 0 { maxContentLight = Double(light.MaxCLL) }
        }
        masteringPeak = masteringPeak ?? stream.masteringPeak
        maxContentLight = maxContentLight ?? stream.maxContentLight
        dolbyVision = stream.dolbyVision
        if dolbyVision?.hasNoCompatibleBase == true {
            self.transfer = .pq
            self.primaries = .bt2020
        }
    }

    /// A mastering display's peak luminance, when it states one.
    static func peak(of metadata: AVMasteringDisplayMetadata) -> Double? {
        guard metadata.has_luminance != 0, metadata.max_luminance.den > 0 else { return nil }
        let peak = av_q2d(metadata.max_luminance)
        return peak > 0 ? peak : nil
    }
}
