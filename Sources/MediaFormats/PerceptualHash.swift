import Glibc

/// A 64-bit perceptual hash (the DCT hash of Python's `imagehash.phash`):
/// the picture in grey, scaled to 32×32 (its aspect ratio dropped), a 2-D
/// DCT-II of those pixels, and of its 8×8 lowest frequencies (the DC term
/// included) one bit each: 1 where the coefficient is above their median.
/// Near-identical pictures (recompressed, resized, re-encoded, lightly
/// cropped) have hashes a few bits apart (``distance(_:_:)``).
///
/// Deviations from the reference, measured on the tests' pictures to cost a
/// few bits at most: it hashes the thumbnail's pixels (already scaled by the
/// decoder) rather than the file's, and scales to 32×32 by area averaging
/// (``AreaAverage``) where Pillow's `ANTIALIAS` uses a Lanczos kernel. The
/// grey is Pillow's (`convert("L")`: ITU-R 601-2 luma, its fixed-point
/// rounding); alpha is ignored, as Pillow's conversion ignores it.
///
/// A picture without detail at 32×32 (a plain colour, or a gradient of less
/// than a grey level) gets no hash (``minimumDetail``): its 63 AC terms are
/// floating-point rounding noise, and the reference's bits compare that noise
/// with a median of noise, so every flat picture got the same hash
/// (``flatNoise``) and all of them matched each other.
public enum PerceptualHash {
    /// The side the picture is scaled to before the DCT.
    public static let side = 32

    /// The least detail a hashed picture has: the root of the sum of the
    /// squares of its 63 AC terms (the unnormalised DCT's, as the hash computes
    /// them). A step of one grey level across half the 32×32 picture has about
    /// 1,300; a plain colour has 0 plus rounding noise (below 1e-9). Measured on
    /// bench/similar-corpus.py's 10,000 photo tiles: 183 at 0 (flat after
    /// scaling), 29 more below 200, then a continuum of real pictures (2 %
    /// below 86, the next 1 % up to 1,200); 256 keeps every real low-contrast
    /// photo of the tests.
    public static let minimumDetail = 256.0

    /// The hash every flat picture got before ``minimumDetail``: rounding noise
    /// against its own median. A recorded hash of this value is ignored.
    public static let flatNoise: UInt64 = 0x9768_2893_28d7_9397

    /// The hash of `width`×`height` pixels, row by row, 4 bytes each (red,
    /// green, blue, alpha): bit 63 is the DC term's, then row by row as the
    /// reference flattens its 8×8 bits. Nil when a side is 0 or `rgba` has not
    /// `width * height * 4` bytes, or when the picture has less detail than
    /// ``minimumDetail``.
    public static func hash(width: Int, height: Int, rgba: [UInt8]) -> UInt64? {
        guard width > 0, height > 0, rgba.count == width * height * 4 else { return nil }
        // Pillow's "L": (r·19595 + g·38470 + b·7471 + 0x8000) >> 16.
        var grey = [Double](repeating: 0, count: width * height)
        rgba.withUnsafeBufferPointer { p in
            for i in 0..<(width * height) {
                let r = Int(p[4 * i])
                let g = Int(p[4 * i + 1])
                let b = Int(p[4 * i + 2])
                grey[i] = Double((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16)
            }
        }
        let small = scaled(grey, width: width, height: height)
        return hash(grey32: small)
    }

    /// The hash of 32×32 grey values (row by row), as the reference computes it
    /// from its resized picture; nil when their AC terms have less energy than
    /// ``minimumDetail``.
    static func hash(grey32 pixels: [Double]) -> UInt64? {
        let n = side
        // scipy.fftpack.dct (type II, unnormalised) along the columns, then the rows;
        // only the 8 lowest frequencies of each are needed.
        var columns = [Double](repeating: 0, count: 8 * n)  // [k][x]
        for k in 0..<8 {
            for x in 0..<n {
                var sum = 0.0
                for y in 0..<n { sum += pixels[y * n + x] * cosines[k * n + y] }
                columns[k * n + x] = 2 * sum
            }
        }
        var low = [Double](repeating: 0, count: 64)
        for k in 0..<8 {
            for l in 0..<8 {
                var sum = 0.0
                for x in 0..<n { sum += columns[k * n + x] * cosines[l * n + x] }
                low[k * 8 + l] = 2 * sum
            }
        }
        guard detail(low) >= minimumDetail else { return nil }
        let sorted = low.sorted()
        let median = (sorted[31] + sorted[32]) / 2
        var bits: UInt64 = 0
        for (i, value) in low.enumerated() where value > median { bits |= 1 << UInt64(63 - i) }
        return bits
    }

    /// The root of the sum of the squares of the 63 AC terms of `low` (the DC
    /// term, `low[0]`, left out).
    static func detail(_ low: [Double]) -> Double {
        low.dropFirst().reduce(0) { $0 + $1 * $1 }.squareRoot()
    }

    /// cos(π·k·(2n+1)/64) for k in 0..<8, n in 0..<32.
    private static let cosines: [Double] = (0..<8).flatMap { k in
        (0..<side).map { i in cos(Double.pi * Double(k) * Double(2 * i + 1) / Double(2 * side)) }
    }

    /// `grey` scaled to 32×32 by area averaging (enlarged by the same spans
    /// where a side is shorter), each value rounded as Pillow's 8-bit result is.
    static func scaled(_ grey: [Double], width: Int, height: Int) -> [Double] {
        let columns = AreaAverage.spans(from: width, to: side)
        let rows = AreaAverage.spans(from: height, to: side)
        var across = [Double](repeating: 0, count: side * height)
        for y in 0..<height {
            for (x, span) in columns.enumerated() {
                var sum = 0.0
                for (k, weight) in span.weights.enumerated() {
                    sum += Double(weight) * grey[y * width + min(width - 1, span.first + k)]
                }
                across[y * side + x] = sum
            }
        }
        var out = [Double](repeating: 0, count: side * side)
        for (y, span) in rows.enumerated() {
            for x in 0..<side {
                var sum = 0.0
                for (k, weight) in span.weights.enumerated() {
                    sum += Double(weight) * across[min(height - 1, span.first + k) * side + x]
                }
                out[y * side + x] = min(255, max(0, sum.rounded()))
            }
        }
        return out
    }

    /// The largest difference, in 8-bit levels of any channel of any quarter,
    /// between the quarters' mean colours of two pictures that may be
    /// near-duplicates, when either record holds quarters only (12 bytes, as
    /// records were written before the 4×4 cells, ``quarters(_:)``): the rule
    /// of those records. Measured: the tests' recompressed, resized,
    /// re-encoded and cropped copies are at most 3 levels from their original,
    /// their distinct pictures at least 65; on bench/similar-corpus.py's 10,000
    /// distinct tiles it leaves 74 of the 182 pictures the hash alone calls
    /// similar (most of them smooth walls and skies whose hashes agree).
    public static let colourTolerance = 40

    /// The side of the grid of colour cells (``colourCells(width:height:rgba:)``): 4×4.
    public static let cellGrid = 4

    /// The bytes of a picture's colour cells: 3 a cell (48).
    public static let cellBytes = 3 * cellGrid * cellGrid

    /// How far apart, in 8-bit levels of any channel, a cell of two
    /// near-duplicates may be, beyond a third of the largest step between that
    /// cell and a cell beside, above or below it in either picture
    /// (``cellsAlike(_:_:)``): a crop of a few per cent shifts each cell's
    /// content by a tenth of a cell, which moves its mean by a fraction of the
    /// steps around it, while a smooth picture's cells barely move. Measured
    /// (BENCHMARKS.md, "False near-duplicates to 0.1 %"): of 1,591 copies
    /// (recompressed, resized, re-encoded, cropped to 95 %) of 43 photos and
    /// 240 tiles of bench/similar-corpus.py within 8 bits of their original,
    /// the rule, computed in NumPy on their libvips thumbnails, keeps all (the
    /// nearest to the limit: a corner crop, 8 thirds of a level inside); on
    /// that script's 10,000 distinct tiles `share` names 5 (74 with quarters
    /// alone).
    public static let cellTolerance = 8

    /// The mean colour (red, green, blue, rounded) of each cell of a
    /// ``cellGrid``×``cellGrid`` grid over the picture, the top left first, row
    /// by row: ``cellBytes`` bytes, a coarse colour signature carried with the
    /// hash. Nil when a side is 0 or `rgba` has not `width * height * 4` bytes.
    public static func colourCells(width: Int, height: Int, rgba: [UInt8]) -> [UInt8]? {
        guard width > 0, height > 0, rgba.count == width * height * 4 else { return nil }
        let n = cellGrid
        var cells: [UInt8] = []
        for row in 0..<n {
            let (top, bottom) = (row * height / n, max(row * height / n + 1, (row + 1) * height / n))
            for column in 0..<n {
                let (left, right) = (column * width / n, max(column * width / n + 1, (column + 1) * width / n))
                var sums = [0, 0, 0]
                for y in top..<bottom {
                    for x in left..<right {
                        for c in 0..<3 { sums[c] += Int(rgba[4 * (y * width + x) + c]) }
                    }
                }
                let count = (bottom - top) * (right - left)
                cells += sums.map { UInt8((2 * $0 + count) / (2 * count)) }
            }
        }
        return cells
    }

    /// The mean colour of each quarter (12 bytes: the top left first, row by
    /// row) of ``cellBytes`` colour cells, each the rounded mean of its four
    /// cells; anything else is returned as it is.
    public static func quarters(_ cells: [UInt8]) -> [UInt8] {
        guard cells.count == cellBytes else { return cells }
        var out: [UInt8] = []
        for quarter in 0..<4 {
            let (top, left) = (quarter / 2 * 2, quarter % 2 * 2)
            for c in 0..<3 {
                var sum = 0
                for (row, column) in [(top, left), (top, left + 1), (top + 1, left), (top + 1, left + 1)] {
                    sum += Int(cells[3 * (row * cellGrid + column) + c])
                }
                out.append(UInt8((sum + 2) / 4))
            }
        }
        return out
    }

    /// True when the colour cells of two pictures agree: both of
    /// ``cellBytes``, by ``cellsAlike(_:_:)``; when either is 12 bytes of
    /// quarters (a record written before the 4×4 cells), when no channel of any
    /// quarter differs by more than ``colourTolerance``; any other length: false.
    public static func coloursAlike(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a.count == cellBytes, b.count == cellBytes { return cellsAlike(a, b) }
        let (a, b) = (quarters(a), quarters(b))
        return a.count == 12 && b.count == 12 && zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= colourTolerance }
    }

    /// True when no channel of any cell of `a` and `b` (``cellBytes`` each)
    /// differs by more than ``cellTolerance`` plus a third of the cell's
    /// largest step (``steps(_:)``) in either picture.
    static func cellsAlike(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let (stepsOfA, stepsOfB) = (steps(a), steps(b))
        for cell in 0..<(cellGrid * cellGrid) {
            var difference = 0
            for channel in 3 * cell..<3 * cell + 3 {
                difference = max(difference, abs(Int(a[channel]) - Int(b[channel])))
            }
            guard 3 * difference <= 3 * cellTolerance + max(stepsOfA[cell], stepsOfB[cell]) else { return false }
        }
        return true
    }

    /// For each of ``cellBytes`` colour cells, the largest difference in any
    /// channel between it and a cell beside, above or below it.
    static func steps(_ cells: [UInt8]) -> [Int] {
        let n = cellGrid
        return (0..<(n * n)).map { cell in
            let (row, column) = (cell / n, cell % n)
            var step = 0
            for (r, c) in [(row - 1, column), (row + 1, column), (row, column - 1), (row, column + 1)]
            where (0..<n).contains(r) && (0..<n).contains(c) {
                for channel in 0..<3 {
                    step = max(step, abs(Int(cells[3 * cell + channel]) - Int(cells[3 * (r * n + c) + channel])))
                }
            }
            return step
        }
    }

    /// How an item's record keeps a hash and its colour cells: the hash's 16
    /// digits (``hex(_:)``), then, when there are cells, `-` and their 96
    /// lowercase hexadecimal digits. A record of the hash alone (written before
    /// the cells were carried) or of the hash and 24 digits of quarters (before
    /// the 4×4 cells) stays readable (``parseRecord(_:)``).
    public static func record(_ hash: UInt64, colours: [UInt8]?) -> String {
        guard let colours else { return hex(hash) }
        return hex(hash) + "-" + hex(colours: colours)
    }

    /// `colours` as two lowercase hexadecimal digits a byte (96 for colour cells).
    public static func hex(colours: [UInt8]) -> String {
        colours.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The hash and colour cells ``record(_:colours:)`` wrote; nil for anything else.
    public static func parseRecord(_ text: String) -> (hash: UInt64, colours: [UInt8]?)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2, let hash = parse(String(parts[0])) else { return nil }
        guard parts.count == 2 else { return (hash, nil) }
        guard let colours = parseColours(String(parts[1])) ?? parseColours(String(parts[1]), bytes: 12) else {
            return nil
        }
        return (hash, colours)
    }

    /// The `bytes` colour-cell bytes (``cellBytes`` unless told) twice as many
    /// lowercase hexadecimal digits spell; nil for anything else.
    public static func parseColours(_ text: String, bytes: Int = cellBytes) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 2 * bytes, digits.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else {
            return nil
        }
        return stride(from: 0, to: 2 * bytes, by: 2).compactMap {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)
        }
    }

    /// The number of bits two hashes differ in (0 to 64).
    public static func distance(_ a: UInt64, _ b: UInt64) -> Int { (a ^ b).nonzeroBitCount }

    /// `hash` as the reference prints it: 16 lowercase hexadecimal digits.
    public static func hex(_ hash: UInt64) -> String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The hash 16 hexadecimal digits spell (either case); nil for anything else.
    public static func parse(_ text: String) -> UInt64? {
        guard text.utf8.count == 16,
            text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) })
        else { return nil }
        return UInt64(text, radix: 16)
    }
}
