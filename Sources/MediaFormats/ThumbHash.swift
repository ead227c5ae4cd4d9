import Glibc

/// ThumbHash (Evan Wallace's placeholder format, `rgbaToThumbHash` of the
/// reference implementation): a few DCT coefficients of an image's luminance,
/// two colour-difference channels and, where the image has any transparency,
/// its alpha, packed in 5 to about 30 bytes.
///
/// Bit-exact with the reference: the same floating-point operations in the same
/// order (each sum accumulated left to right, `cos` from the C library, which
/// the Python port uses too), and the reference's rounding (JavaScript's
/// `Math.round`: halves go up).
public enum ThumbHash {
    /// The largest side the reference accepts.
    public static let maximumSide = 100

    /// The hash of `width`×`height` pixels, row by row, 4 bytes each (red,
    /// green, blue, alpha; not premultiplied). Nil when a side is 0 or over
    /// ``maximumSide``, or `rgba` has not `width * height * 4` bytes.
    public static func encode(width w: Int, height h: Int, rgba: [UInt8]) -> [UInt8]? {
        guard (1...maximumSide).contains(w), (1...maximumSide).contains(h), rgba.count == w * h * 4 else { return nil }
        let count = w * h

        // The average colour, weighted by alpha.
        var averageR = 0.0
        var averageG = 0.0
        var averageB = 0.0
        var averageA = 0.0
        for i in 0..<count {
            let alpha = Double(rgba[4 * i + 3]) / 255
            averageR += alpha / 255 * Double(rgba[4 * i])
            averageG += alpha / 255 * Double(rgba[4 * i + 1])
            averageB += alpha / 255 * Double(rgba[4 * i + 2])
            averageA += alpha
        }
        if averageA != 0 {
            averageR /= averageA
            averageG /= averageA
            averageB /= averageA
        }

        let hasAlpha = averageA < Double(count)
        let luminanceLimit = hasAlpha ? 5 : 7
        let longest = Double(max(w, h))
        let lx = max(1, Int(jsRound(Double(luminanceLimit * w) / longest)))
        let ly = max(1, Int(jsRound(Double(luminanceLimit * h) / longest)))

        // LPQA channels, each pixel composited over the average colour.
        var l = [Double](repeating: 0, count: count)
        var p = l
        var q = l
        var a = l
        for i in 0..<count {
            let alpha = Double(rgba[4 * i + 3]) / 255
            let r = averageR * (1 - alpha) + alpha / 255 * Double(rgba[4 * i])
            let g = averageG * (1 - alpha) + alpha / 255 * Double(rgba[4 * i + 1])
            let b = averageB * (1 - alpha) + alpha / 255 * Double(rgba[4 * i + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }

        let luminance = encodeChannel(l, w, h, max(3, lx), max(3, ly))
        let yellowBlue = encodeChannel(p, w, h, 3, 3)
        let redGreen = encodeChannel(q, w, h, 3, 3)
        let alphaChannel = hasAlpha ? encodeChannel(a, w, h, 5, 5) : nil

        // The constants.
        let isLandscape = w > h
        let header24 =
            Int(jsRound(63 * luminance.dc)) | Int(jsRound(31.5 + 31.5 * yellowBlue.dc)) << 6 | Int(
                jsRound(31.5 + 31.5 * redGreen.dc)) << 12
            | Int(jsRound(31 * luminance.scale)) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? ly : lx) | Int(jsRound(63 * yellowBlue.scale)) << 3 | Int(jsRound(63 * redGreen.scale)) << 9
            | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(header24 >> 16 & 255), UInt8(header16 & 255),
            UInt8(header16 >> 8 & 255),
        ]
        if let alphaChannel {
            hash.append(UInt8(Int(jsRound(15 * alphaChannel.dc)) | Int(jsRound(15 * alphaChannel.scale)) << 4))
        }

        // The varying factors, two 4-bit values a byte, low half first.
        let factors = luminance.ac + yellowBlue.ac + redGreen.ac + (alphaChannel?.ac ?? [])
        for (index, factor) in factors.enumerated() {
            let nibble = UInt8(Int(jsRound(15 * factor)) & 15)
            if index & 1 == 0 { hash.append(nibble) } else { hash[hash.count - 1] |= nibble << 4 }
        }
        return hash
    }

    /// The DC term, the AC terms (normalised to 0...1 by their largest
    /// magnitude, `scale`) of the `nx`×`ny` triangle of DCT coefficients the
    /// reference keeps.
    private static func encodeChannel(_ channel: [Double], _ w: Int, _ h: Int, _ nx: Int, _ ny: Int) -> (
        dc: Double, ac: [Double], scale: Double
    ) {
        var dc = 0.0
        var scale = 0.0
        var ac: [Double] = []
        var fx = [Double](repeating: 0, count: w)
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                var f = 0.0
                for y in 0..<h {
                    let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                    for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                }
                f /= Double(w * h)
                if cx > 0 || cy > 0 {
                    ac.append(f)
                    scale = max(scale, abs(f))
                } else {
                    dc = f
                }
                cx += 1
            }
        }
        if scale != 0 {
            for i in ac.indices { ac[i] = 0.5 + 0.5 / scale * ac[i] }
        }
        return (dc, ac, scale)
    }

    /// Adds a channel's varying factors `ac` (`nx` × `ny`, the triangle the
    /// encoder keeps) at a pixel whose cosines are `fx` and `fy` to `value`,
    /// term by term.
    private static func add(_ ac: [Double], nx: Int, ny: Int, fx: [Double], fy: [Double], to value: inout Double) {
        var j = 0
        for cy in 0..<ny {
            var cx = cy > 0 ? 0 : 1
            let fy2 = fy[cy] * 2
            while cx * ny < nx * (ny - cy) {
                value += ac[j] * fx[cx] * fy2
                cx += 1
                j += 1
            }
        }
    }

    /// The placeholder a hash stands for (`thumbHashToRGBA` of the reference):
    /// at most 32×32 pixels in the hash's aspect ratio, row by row, 4 bytes each
    /// (red, green, blue, alpha; not premultiplied). Nil when `hash` is shorter
    /// than its header says.
    public static func decode(_ hash: [UInt8]) -> (width: Int, height: Int, rgba: [UInt8])? {
        guard hash.count >= 5 else { return nil }
        let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
        let header16 = Int(hash[3]) | Int(hash[4]) << 8
        let lDC = Double(header24 & 63) / 63
        let pDC = Double(header24 >> 6 & 63) / 31.5 - 1
        let qDC = Double(header24 >> 12 & 63) / 31.5 - 1
        let lScale = Double(header24 >> 18 & 31) / 31
        let hasAlpha = header24 >> 23 != 0
        let pScale = Double(header16 >> 3 & 63) / 63
        let qScale = Double(header16 >> 9 & 63) / 63
        let isLandscape = header16 >> 15 != 0
        let lx = max(3, isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7)
        let ly = max(3, isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7))
        guard !hasAlpha || hash.count >= 6 else { return nil }
        let aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
        let aScale = hasAlpha ? Double(hash[5] >> 4) / 15 : 0

        // The varying factors, saturation boosted by 1.25 against quantisation.
        var factors = FactorReader(hash: hash, start: hasAlpha ? 6 : 5)
        let lAC = factors.channel(lx, ly, lScale)
        let pAC = factors.channel(3, 3, pScale * 1.25)
        let qAC = factors.channel(3, 3, qScale * 1.25)
        let aAC = hasAlpha ? factors.channel(5, 5, aScale) : []
        guard !factors.short else { return nil }

        // The reference's approximate aspect ratio, from the header's unclamped counts.
        let ratioX = isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7
        let ratioY = isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7)
        guard ratioX > 0, ratioY > 0 else { return nil }
        let ratio = Double(ratioX) / Double(ratioY)
        let w = Int(jsRound(ratio > 1 ? 32 : 32 * ratio))
        let h = Int(jsRound(ratio > 1 ? 32 / ratio : 32))
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        var fx = [Double](repeating: 0, count: max(lx, hasAlpha ? 5 : 3))
        var fy = [Double](repeating: 0, count: max(ly, hasAlpha ? 5 : 3))
        func byte(_ value: Double) -> UInt8 { UInt8(max(0, 255 * min(1, value))) }
        for y in 0..<h {
            for x in 0..<w {
                var l = lDC
                var p = pDC
                var q = qDC
                var a = aDC
                for cx in fx.indices { fx[cx] = cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double(cx)) }
                for cy in fy.indices { fy[cy] = cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double(cy)) }
                add(lAC, nx: lx, ny: ly, fx: fx, fy: fy, to: &l)
                var j = 0
                for cy in 0..<3 {
                    var cx = cy > 0 ? 0 : 1
                    let fy2 = fy[cy] * 2
                    while cx < 3 - cy {
                        let f = fx[cx] * fy2
                        p += pAC[j] * f
                        q += qAC[j] * f
                        cx += 1
                        j += 1
                    }
                }
                if hasAlpha { add(aAC, nx: 5, ny: 5, fx: fx, fy: fy, to: &a) }
                let b = l - 2 / 3 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                let i = (y * w + x) * 4
                rgba[i] = byte(r)
                rgba[i + 1] = byte(g)
                rgba[i + 2] = byte(b)
                rgba[i + 3] = byte(a)
            }
        }
        return (w, h, rgba)
    }

    /// JavaScript's `Math.round`: the nearest integer, halves toward +∞.
    static func jsRound(_ value: Double) -> Double {
        let floor = value.rounded(.down)
        return value - floor >= 0.5 ? floor + 1 : floor
    }
}

/// Reads a hash's varying factors, a nibble each, channel after channel, for
/// ``ThumbHash/decode(_:)``; `short` once the hash ended before them.
private struct FactorReader {
    let hash: [UInt8]
    /// The byte of the first factor (after the header).
    let start: Int
    /// The next nibble's index.
    var index = 0
    var short = false

    /// A channel's factors (`nx` × `ny`, the triangle the encoder keeps), each
    /// scaled by `scale`.
    mutating func channel(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double] {
        var ac: [Double] = []
        for cy in 0..<ny {
            var cx = cy > 0 ? 0 : 1
            while cx * ny < nx * (ny - cy) {
                let byte = start + index >> 1
                guard byte < hash.count else {
                    short = true
                    return ac
                }
                let nibble = Int(hash[byte]) >> ((index & 1) << 2) & 15
                ac.append((Double(nibble) / 7.5 - 1) * scale)
                index += 1
                cx += 1
            }
        }
        return ac
    }
}
