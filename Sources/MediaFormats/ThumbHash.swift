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
        var averageR = 0.0, averageG = 0.0, averageB = 0.0, averageA = 0.0
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
        var l = [Double](repeating: 0, count: count), p = l, q = l, a = l
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
            Int(jsRound(63 * luminance.dc)) | Int(jsRound(31.5 + 31.5 * yellowBlue.dc)) << 6 | Int(jsRound(31.5 + 31.5 * redGreen.dc)) << 12
            | Int(jsRound(31 * luminance.scale)) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? ly : lx) | Int(jsRound(63 * yellowBlue.scale)) << 3 | Int(jsRound(63 * redGreen.scale)) << 9 | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(header24 >> 16 & 255), UInt8(header16 & 255), UInt8(header16 >> 8 & 255),
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
    private static func encodeChannel(_ channel: [Double], _ w: Int, _ h: Int, _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
        var dc = 0.0, scale = 0.0
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

    /// JavaScript's `Math.round`: the nearest integer, halves toward +∞.
    static func jsRound(_ value: Double) -> Double {
        let floor = value.rounded(.down)
        return value - floor >= 0.5 ? floor + 1 : floor
    }
}
