/// How to read a picture's samples as colours: its transfer function and
/// primaries (coding-independent code points, ITU-T H.273, as `colr`/`nclx`
/// boxes, a codec's VUI and libav's `AVColorTransferCharacteristic` /
/// `AVColorPrimaries` number them), and what HDR pictures say about their
/// brightness (mastering display and content light level) and Dolby Vision.
///
/// A thumbnail is SDR sRGB: a picture whose description is not (PQ or HLG, or
/// BT.2020 or P3 primaries) is converted by ``ToneMapper``.
struct ColourDescription: Sendable, Hashable, CustomStringConvertible {
    /// The transfer function (how code values become light).
    enum Transfer: Sendable, Hashable {
        /// An SDR curve: BT.709/BT.601/BT.2020 camera curves, sRGB, gamma 2.2.
        case sdr
        /// SMPTE ST 2084 (PQ): absolute luminance up to 10 000 cd/m² (HDR10, Dolby Vision).
        case pq
        /// ARIB STD-B67 (HLG): relative scene light, BT.2100.
        case hlg
        /// Linear light.
        case linear
    }

    /// The colour primaries.
    enum Primaries: Sendable, Hashable {
        /// BT.709 / sRGB (and the BT.601 sets, whose gamut differs by little).
        case bt709
        /// BT.2020 / BT.2100.
        case bt2020
        /// Display P3 (SMPTE EG 432-1, D65 white).
        case displayP3
        /// DCI-P3 (SMPTE RP 431-2, the cinema white point).
        case dciP3
    }

    var transfer: Transfer
    var primaries: Primaries
    /// The mastering display's peak luminance (cd/m²), from SMPTE ST 2086 metadata.
    var masteringPeak: Double?
    /// The brightest pixel of the content (MaxCLL, cd/m²), from CTA-861.3 metadata.
    var maxContentLight: Double?
    /// Dolby Vision profile and base-layer compatibility id, from its configuration record.
    var dolbyVision: DolbyVision?

    /// A Dolby Vision configuration record's profile and compatibility.
    struct DolbyVision: Sendable, Hashable {
        let profile: Int
        /// `dv_bl_signal_compatibility_id`: 0 none (IPTPQc2: not viewable as is),
        /// 1 HDR10, 2 SDR, 4 HLG, 6 BT.2100 PQ.
        let compatibility: Int

        /// True when the base layer is not a picture without Dolby Vision's own
        /// processing: profile 5 (and profile 10 with no compatible base), whose
        /// samples are IPTPQc2, not Y'CbCr.
        var hasNoCompatibleBase: Bool { (profile == 5 || profile == 10) && compatibility == 0 }
    }

    /// SDR BT.709 / sRGB: nothing to convert.
    static let standard = ColourDescription(transfer: .sdr, primaries: .bt709)

    init(
        transfer: Transfer, primaries: Primaries, masteringPeak: Double? = nil, maxContentLight: Double? = nil,
        dolbyVision: DolbyVision? = nil
    ) {
        self.transfer = transfer
        self.primaries = primaries
        self.masteringPeak = masteringPeak
        self.maxContentLight = maxContentLight
        self.dolbyVision = dolbyVision
    }

    /// From H.273 code points; unspecified or unknown ones default to what the
    /// transfer implies (BT.2020 for PQ and HLG, else BT.709).
    init(transferCode: Int, primariesCode: Int) {
        transfer = Self.transfer(code: transferCode) ?? .sdr
        primaries = Self.primaries(code: primariesCode) ?? (transfer == .pq || transfer == .hlg ? .bt2020 : .bt709)
    }

    /// H.273 TransferCharacteristics; nil for unspecified (2) and reserved.
    static func transfer(code: Int) -> Transfer? {
        switch code {
        case 16: .pq
        case 18: .hlg
        case 8: .linear
        case 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 17: .sdr
        default: nil
        }
    }

    /// H.273 ColourPrimaries; nil for unspecified (2) and the rarely met others.
    static func primaries(code: Int) -> Primaries? {
        switch code {
        case 1, 5, 6, 7: .bt709
        case 9: .bt2020
        case 11: .dciP3
        case 12: .displayP3
        default: nil
        }
    }

    /// True for PQ and HLG.
    var isHDR: Bool { transfer == .pq || transfer == .hlg }

    /// True when a thumbnail needs more than an 8-bit Y'CbCr → R'G'B' conversion:
    /// HDR, linear light, or primaries wider than sRGB's.
    var needsConversion: Bool { transfer != .sdr || primaries != .bt709 }

    /// The peak luminance (cd/m²) the picture was graded for, which tone mapping
    /// compresses into SDR: MaxCLL when it is given (what the content reaches),
    /// else the mastering display's peak, else 1000 (the usual HDR10 grade, and
    /// HLG's nominal display). Clamped to 100–10 000.
    var sourcePeak: Double {
        let stated = [maxContentLight, masteringPeak].compactMap { $0 }.first { $0 >= 1 }
        let peak = transfer == .hlg ? 1000 : (stated ?? 1000)
        return min(10_000, max(100, peak))
    }

    var description: String {
        var parts = ["\(transfer)", "\(primaries)"]
        if let masteringPeak { parts.append("mastering \(Int(masteringPeak)) cd/m²") }
        if let maxContentLight { parts.append("MaxCLL \(Int(maxContentLight))") }
        if let dolbyVision { parts.append("Dolby Vision \(dolbyVision.profile).\(dolbyVision.compatibility)") }
        return parts.joined(separator: ", ")
    }
}
