import Foundation

/// Turns a small picture in any ``ColourDescription`` into SDR sRGB, in linear
/// light: what a thumbnail of an HDR or wide-gamut photo or video needs. It
/// runs on the thumbnail-sized picture (≈360 px), so it costs little: a few
/// table lookups and a 3×3 matrix per pixel.
///
/// Per pixel:
/// 1. The transfer function's EOTF (tables of 4096 entries): PQ (SMPTE ST 2084)
///    gives absolute luminance; HLG's inverse OETF gives scene light, which
///    BT.2100's OOTF turns into display light for a 1000 cd/m² display (system
///    gamma 1.2, on the luminance of the source primaries); an SDR curve (read
///    as sRGB) gives relative light.
/// 2. HDR only: tone mapping by ITU-R BT.2390's EETF (report BT.2390-10, §5.4),
///    computed in the PQ domain on the pixel's largest component (which keeps
///    its hue and saturation), from the source's peak (``ColourDescription/sourcePeak``:
///    MaxCLL, else the mastering display, else 1000 cd/m²) to 203 cd/m², the
///    HDR reference white of BT.2408, which becomes SDR white. Below a knee
///    (≈95 cd/m² for a 1000 cd/m² source) light is kept as it is; above it, the
///    highlights are rolled off by BT.2390's Hermite spline. A source whose
///    peak is not above 203 cd/m² is not compressed at all.
/// 3. The source primaries (BT.2020, Display P3, DCI-P3) to BT.709/sRGB, by a
///    3×3 matrix built from the chromaticities (Bradford adaptation where the
///    white points differ). A colour outside sRGB is desaturated towards its
///    own luminance until it fits, rather than clipped channel by channel.
/// 4. The sRGB OETF (a table of 8192 entries) to 8 bits.
struct ToneMapper {
    let description: ColourDescription
    /// Code value (16 bits, top 12 used) → linear light (cd/m² for PQ; for HLG,
    /// scene light 0–1; for SDR, relative light 0–1).
    private let input: [Float]
    /// Linear source RGB → linear BT.709 RGB, row-major.
    private let gamut: [Float]
    /// Luminance weights of the source primaries (HLG's OOTF).
    private let luma: (Float, Float, Float)
    /// HDR: light above which everything maps to SDR white (the source peak), and
    /// the factor (table over 0…peak) that takes a pixel's largest component m,
    /// in cd/m², to SDR-relative light: EETF(m) / m / 203.
    private let peak: Float
    private let scale: [Float]
    /// Linear 0…1 → sRGB-encoded 8-bit.
    private let output: [UInt8]

    /// HDR reference white (BT.2408): the luminance that SDR white stands for.
    static let referenceWhite = 203.0
    /// HLG's nominal display peak and its system gamma (BT.2100 for 1000 cd/m²).
    static let hlgPeak = 1000.0
    static let hlgGamma = 1.2

    init(_ description: ColourDescription) {
        self.description = description
        let transfer = description.transfer
        input = (0..<4096).map { index in
            let v = Double(index) / 4095
            switch transfer {
            case .pq: return Float(Self.pqEOTF(v))
            case .hlg: return Float(Self.hlgInverseOETF(v))
            case .sdr: return Float(Self.srgbEOTF(v))
            case .linear: return Float(v)
            }
        }
        let toXYZ = Self.rgbToXYZ(description.primaries)
        luma = (Float(toXYZ[3]), Float(toXYZ[4]), Float(toXYZ[5]))
        gamut = Self.conversion(from: description.primaries, to: .bt709).map(Float.init)
        if description.isHDR {
            let sourcePeak = description.sourcePeak
            peak = Float(sourcePeak)
            scale = (0...4096).map { index in
                let m = sourcePeak * Double(index) / 4096
                guard m > 0 else { return Float(1 / Self.referenceWhite) }
                return Float(
                    Self.eetf(m, sourcePeak: sourcePeak, targetPeak: Self.referenceWhite) / m / Self.referenceWhite)
            }
        } else {
            peak = 1
            scale = []
        }
        output = (0..<8192).map { index in UInt8((Self.srgbOETF(Double(index) / 8191) * 255).rounded()) }
    }

    /// Converts `width`×`height` pixels of interleaved 16-bit R'G'B' (`stride`
    /// elements from one row to the next) to packed 8-bit sRGB.
    func convert(_ pixels: UnsafeBufferPointer<UInt16>, width: Int, height: Int, stride: Int) -> [UInt8] {
        let hdr = description.isHDR
        let hlg = description.transfer == .hlg
        let hlgScale = Float(Self.hlgPeak)
        let hlgExponent = Float(Self.hlgGamma - 1)
        return input.withUnsafeBufferPointer { input in
            scale.withUnsafeBufferPointer { scale in
                output.withUnsafeBufferPointer { output in
                    gamut.withUnsafeBufferPointer { m in
                        [UInt8](unsafeUninitializedCapacity: width * height * 3) { out, filled in
                            var o = 0
                            for y in 0..<height {
                                var i = y * stride
                                for _ in 0..<width {
                                    var r = input[Int(pixels[i] >> 4)]
                                    var g = input[Int(pixels[i + 1] >> 4)]
                                    var b = input[Int(pixels[i + 2] >> 4)]
                                    i += 3
                                    if hdr {
                                        if hlg {
                                            // BT.2100 OOTF: scene light to display light (cd/m²).
                                            let ys = max(0, luma.0 * r + luma.1 * g + luma.2 * b)
                                            let gain = hlgScale * (ys > 0 ? powf(ys, hlgExponent) : 0)
                                            r *= gain
                                            g *= gain
                                            b *= gain
                                        }
                                        let largest = max(r, g, b)
                                        var factor = scale[0]
                                        if largest > 0 {
                                            if largest >= peak {
                                                factor = scale[4096] * peak / largest
                                            } else {
                                                let position = largest / peak * 4096
                                                let k = Int(position)
                                                let t = position - Float(k)
                                                factor = scale[k] + (scale[k + 1] - scale[k]) * t
                                            }
                                        }
                                        r *= factor
                                        g *= factor
                                        b *= factor
                                    }
                                    var rr = m[0] * r + m[1] * g + m[2] * b
                                    var gg = m[3] * r + m[4] * g + m[5] * b
                                    var bb = m[6] * r + m[7] * g + m[8] * b
                                    // Out of sRGB's gamut: towards the colour's own luminance until it fits.
                                    let low = min(rr, gg, bb)
                                    let high = max(rr, gg, bb)
                                    if low < 0 || high > 1 {
                                        let luminance = min(1, max(0, 0.2126 * rr + 0.7152 * gg + 0.0722 * bb))
                                        var t: Float = 1
                                        if low < 0 { t = min(t, luminance / (luminance - low)) }
                                        if high > 1 { t = min(t, (1 - luminance) / (high - luminance)) }
                                        rr = luminance + (rr - luminance) * t
                                        gg = luminance + (gg - luminance) * t
                                        bb = luminance + (bb - luminance) * t
                                    }
                                    out[o] = output[Int(min(1, max(0, rr)) * 8191 + 0.5)]
                                    out[o + 1] = output[Int(min(1, max(0, gg)) * 8191 + 0.5)]
                                    out[o + 2] = output[Int(min(1, max(0, bb)) * 8191 + 0.5)]
                                    o += 3
                                }
                            }
                            filled = o
                        }
                    }
                }
            }
        }
    }

    // MARK: - Transfer functions (BT.2100, IEC 61966-2-1)

    static let pqM1 = 2610.0 / 16384, pqM2 = 2523.0 / 4096 * 128
    static let pqC1 = 3424.0 / 4096, pqC2 = 2413.0 / 4096 * 32, pqC3 = 2392.0 / 4096 * 32

    /// PQ code value (0–1) → cd/m².
    static func pqEOTF(_ e: Double) -> Double {
        let p = pow(max(0, e), 1 / pqM2)
        return 10_000 * pow(max(p - pqC1, 0) / (pqC2 - pqC3 * p), 1 / pqM1)
    }

    /// cd/m² → PQ code value (0–1).
    static func pqInverseEOTF(_ luminance: Double) -> Double {
        let y = pow(max(0, luminance) / 10_000, pqM1)
        return pow((pqC1 + pqC2 * y) / (1 + pqC3 * y), pqM2)
    }

    static let hlgA = 0.17883277, hlgB = 1 - 4 * 0.17883277
    static let hlgC = 0.5 - 0.17883277 * log(4 * 0.17883277)

    /// HLG code value (0–1) → scene light (0–1).
    static func hlgInverseOETF(_ e: Double) -> Double {
        e <= 0.5 ? e * e / 3 : (exp((e - hlgC) / hlgA) + hlgB) / 12
    }

    /// Scene light (0–1) → HLG code value.
    static func hlgOETF(_ light: Double) -> Double {
        light <= 1.0 / 12 ? (3 * max(0, light)).squareRoot() : hlgA * log(12 * light - hlgB) + hlgC
    }

    static func srgbEOTF(_ e: Double) -> Double { e <= 0.04045 ? e / 12.92 : pow((e + 0.055) / 1.055, 2.4) }
    static func srgbOETF(_ light: Double) -> Double {
        light <= 0.0031308 ? 12.92 * light : 1.055 * pow(light, 1 / 2.4) - 0.055
    }

    /// BT.2390's EETF: `luminance` of a source graded up to `sourcePeak` cd/m², for
    /// a display whose peak is `targetPeak` (black at 0 for both), in cd/m².
    static func eetf(_ luminance: Double, sourcePeak: Double, targetPeak: Double) -> Double {
        guard sourcePeak > targetPeak else { return min(luminance, targetPeak) }
        let sourceTop = pqInverseEOTF(sourcePeak)
        let e1 = min(1, pqInverseEOTF(luminance) / sourceTop)
        let maxLuminance = pqInverseEOTF(targetPeak) / sourceTop
        let kneeStart = max(0, 1.5 * maxLuminance - 0.5)
        var e2 = e1
        if e1 >= kneeStart {
            // The Hermite spline from the knee to (1, maxLuminance).
            let t = (e1 - kneeStart) / (1 - kneeStart)
            let t2 = t * t
            let t3 = t2 * t
            e2 =
                (2 * t3 - 3 * t2 + 1) * kneeStart + (t3 - 2 * t2 + t) * (1 - kneeStart) + (-2 * t3 + 3 * t2)
                * maxLuminance
        }
        return pqEOTF(e2 * sourceTop)
    }

    // MARK: - Primaries

    /// CIE xy chromaticities of red, green, blue and white.
    static func chromaticities(_ primaries: ColourDescription.Primaries) -> [(Double, Double)] {
        let d65 = (0.3127, 0.3290)
        switch primaries {
        case .bt709: return [(0.640, 0.330), (0.300, 0.600), (0.150, 0.060), d65]
        case .bt2020: return [(0.708, 0.292), (0.170, 0.797), (0.131, 0.046), d65]
        case .displayP3: return [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060), d65]
        case .dciP3: return [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060), (0.314, 0.351)]
        }
    }

    /// Linear RGB → CIE XYZ for `primaries` (row-major 3×3; its second row is the
    /// luminance weights).
    static func rgbToXYZ(_ primaries: ColourDescription.Primaries) -> [Double] {
        let c = chromaticities(primaries)
        func xyz(_ xy: (Double, Double)) -> [Double] { [xy.0 / xy.1, 1, (1 - xy.0 - xy.1) / xy.1] }
        let r = xyz(c[0])
        let g = xyz(c[1])
        let b = xyz(c[2])
        let w = xyz(c[3])
        let p = [r[0], g[0], b[0], r[1], g[1], b[1], r[2], g[2], b[2]]
        let s = multiply(invert(p), w)
        return [
            p[0] * s[0], p[1] * s[1], p[2] * s[2], p[3] * s[0], p[4] * s[1], p[5] * s[2], p[6] * s[0], p[7] * s[1],
            p[8] * s[2],
        ]
    }

    /// Linear RGB in `source` primaries → linear RGB in `target` primaries, with
    /// Bradford chromatic adaptation when their white points differ.
    static func conversion(from source: ColourDescription.Primaries, to target: ColourDescription.Primaries) -> [Double]
    {
        guard source != target else { return [1, 0, 0, 0, 1, 0, 0, 0, 1] }
        var toXYZ = rgbToXYZ(source)
        let sourceWhite = chromaticities(source)[3]
        let targetWhite = chromaticities(target)[3]
        if sourceWhite != targetWhite {
            let bradford = [0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296]
            func xyz(_ xy: (Double, Double)) -> [Double] { [xy.0 / xy.1, 1, (1 - xy.0 - xy.1) / xy.1] }
            let from = multiply(bradford, xyz(sourceWhite))
            let to = multiply(bradford, xyz(targetWhite))
            let diagonal = [to[0] / from[0], 0, 0, 0, to[1] / from[1], 0, 0, 0, to[2] / from[2]]
            toXYZ = product(product(invert(bradford), product(diagonal, bradford)), toXYZ)
        }
        return product(invert(rgbToXYZ(target)), toXYZ)
    }

    static func multiply(_ m: [Double], _ v: [Double]) -> [Double] {
        [
            m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2],
        ]
    }

    static func product(_ a: [Double], _ b: [Double]) -> [Double] {
        (0..<9).map { i in
            let row = i / 3
            let column = i % 3
            return a[row * 3] * b[column] + a[row * 3 + 1] * b[3 + column] + a[row * 3 + 2] * b[6 + column]
        }
    }

    static func invert(_ m: [Double]) -> [Double] {
        let a = m[4] * m[8] - m[5] * m[7]
        let b = m[5] * m[6] - m[3] * m[8]
        let c = m[3] * m[7] - m[4] * m[6]
        let determinant = m[0] * a + m[1] * b + m[2] * c
        return [
            a / determinant, (m[2] * m[7] - m[1] * m[8]) / determinant, (m[1] * m[5] - m[2] * m[4]) / determinant,
            b / determinant, (m[0] * m[8] - m[2] * m[6]) / determinant, (m[2] * m[3] - m[0] * m[5]) / determinant,
            c / determinant, (m[1] * m[6] - m[0] * m[7]) / determinant, (m[0] * m[4] - m[1] * m[3]) / determinant,
        ]
    }
}
