/// Scaling RGBA pixels down by area averaging: each output pixel is the mean
/// of the source area it covers, partly covered source pixels weighted by how
/// much of them it covers (a box filter with fractional edges).
///
/// This is what a ThumbHash's input needs: the hash keeps only a few cosine
/// coefficients of a picture at most 100 px wide, so a lanczos kernel's
/// sharpness is lost on it, and averaging a 360 px thumbnail is a few hundred
/// microseconds where `vips_resize` took about as long as the thumbnail's own
/// reduce.
package enum AreaAverage {
    /// `width`×`height` RGBA pixels (row by row, 4 bytes each) scaled so that
    /// the longest side is at most `longestSide` (never enlarged; the other side
    /// rounded, at least 1). Returned unchanged when already small enough; nil
    /// when a side is not positive or `rgba` has not `width * height * 4` bytes.
    package static func fitting(width: Int, height: Int, rgba: [UInt8], longestSide: Int) -> (
        width: Int, height: Int, rgba: [UInt8]
    )? {
        guard width > 0, height > 0, longestSide > 0, rgba.count == width * height * 4 else { return nil }
        let longest = max(width, height)
        guard longest > longestSide else { return (width, height, rgba) }
        let scale = Double(longestSide) / Double(longest)
        let outWidth = width == longest ? longestSide : max(1, Int((Double(width) * scale).rounded()))
        let outHeight = height == longest ? longestSide : max(1, Int((Double(height) * scale).rounded()))
        return (outWidth, outHeight, scaled(width: width, height: height, rgba: rgba, to: outWidth, outHeight))
    }

    /// One output position's source pixels and their weights (summing to 1).
    struct Span {
        var first: Int
        var weights: [Float]
    }

    /// The spans of `outCount` output positions over `inCount` source positions.
    static func spans(from inCount: Int, to outCount: Int) -> [Span] {
        let step = Double(inCount) / Double(outCount)
        return (0..<outCount).map { o in
            let start = Double(o) * step
            let end = min(Double(inCount), Double(o + 1) * step)
            let first = Int(start)
            let last = min(inCount - 1, Int(end.rounded(.up)) - 1)
            let weights = (first...max(first, last)).map { i in
                Float((min(end, Double(i + 1)) - max(start, Double(i))) / step)
            }
            return Span(first: first, weights: weights)
        }
    }

    static func scaled(width: Int, height: Int, rgba: [UInt8], to outWidth: Int, _ outHeight: Int) -> [UInt8] {
        let columns = spans(from: width, to: outWidth)
        let rows = spans(from: height, to: outHeight)
        // Across first: height rows of outWidth pixels, in floating point.
        var across = [Float](repeating: 0, count: outWidth * height * 4)
        rgba.withUnsafeBufferPointer { source in
            across.withUnsafeMutableBufferPointer { target in
                for y in 0..<height {
                    let sourceRow = y * width * 4
                    let targetRow = y * outWidth * 4
                    for (x, span) in columns.enumerated() {
                        var r: Float = 0
                        var g: Float = 0
                        var b: Float = 0
                        var a: Float = 0
                        for (k, weight) in span.weights.enumerated() {
                            let p = sourceRow + (span.first + k) * 4
                            r += weight * Float(source[p])
                            g += weight * Float(source[p + 1])
                            b += weight * Float(source[p + 2])
                            a += weight * Float(source[p + 3])
                        }
                        let q = targetRow + x * 4
                        target[q] = r
                        target[q + 1] = g
                        target[q + 2] = b
                        target[q + 3] = a
                    }
                }
            }
        }
        // Then down, rounding to the nearest 8-bit value.
        var out = [UInt8](repeating: 0, count: outWidth * outHeight * 4)
        across.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for (y, span) in rows.enumerated() {
                    for i in 0..<(outWidth * 4) {
                        var sum: Float = 0
                        for (k, weight) in span.weights.enumerated() {
                            sum += weight * source[(span.first + k) * outWidth * 4 + i]
                        }
                        target[y * outWidth * 4 + i] = UInt8(min(255, max(0, sum.rounded())))
                    }
                }
            }
        }
        return out
    }
}
