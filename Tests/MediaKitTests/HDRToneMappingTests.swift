import Foundation
import MediaFormats
import TestSupport
import Testing

@testable import MediaKit

/// Issue 23, item 1: HDR to SDR. An SDR colour chart (`testdata/hdr-chart.py`: the
/// 24 ColorChecker patches) was encoded as HDR10, HLG, PQ-in-the-VUI-only, AV1 PQ,
/// Dolby Vision 8.4 and 10.1, PQ AVIF and a 16-bit PQ JPEG XL by real encoders
/// (`testdata/make-modern.sh`), and as the HDR base of an AVIF with a gain map (a
/// green and magenta picture that must never be shown). Each thumbnail's patches
/// must match the chart's.
///
/// The bound: mean CIEDE2000 ≤ 3 over the 24 patches, and no patch over 8. A
/// ΔE00 of 1 is about a just-noticeable difference side by side; the round
/// trip adds codec loss (4:2:0, 10 bits, CRF 16), the thumbnail's JPEG at
/// quality 80, and, by design, BT.2390's highlight roll-off: with a source peak
/// of 1000 cd/m² (HLG, or PQ without metadata) the chart's white, at the 203
/// cd/m² of HDR reference white, is compressed to about 92 % (ΔE00 ≈ 4 on that
/// one patch). Measured: 0.35–0.9 mean. The naive conversion the issue
/// describes (the 10-bit frame squeezed to 8 bits, BT.2020 shown as BT.709:
/// libswscale's defaults, which `ffmpeg` itself applies) fails the bound: 15
/// for PQ (mean; patches up to 26), 7 for HLG, which was designed to degrade
/// gracefully on SDR displays but still loses its BT.2020 saturation.
@Suite struct HDRToneMappingTests {
    static let meanBound = 3.0
    static let patchBound = 8.0

    struct Patch: Decodable {
        let name: String
        let srgb: [Double]
        let x: Double, y: Double, w: Double, h: Double
    }

    static let patches: [Patch] = {
        let url = Fixtures.packageRoot.appendingPathComponent("testdata/modern/hdr/chart-patches.json")
        return (try? JSONDecoder().decode([Patch].self, from: Data(contentsOf: url))) ?? []
    }()

    static func modern(_ path: String) -> String {
        Fixtures.packageRoot.appendingPathComponent("testdata/modern/\(path)").path
    }

    /// Decodes `path` as the pipeline does (format from the content).
    static func decode(_ path: String) throws -> DecodedMedia {
        let prefix = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(ContentSniffer.prefixLength)
        let format = ContentSniffer.sniff(prefix, fileName: path).format
        InProcessDecoder().prepare()
        return try InProcessDecoder().decode(
            DecodeRequest(
                path: path, label: (path as NSString).lastPathComponent, format: format, thumbnail: ThumbnailSpec()))
    }

    /// Packed RGB of an image: the mean colour of the middle half of each patch,
    /// and ΔE00 against the chart.
    static func deltaE(_ pixels: [UInt8], width: Int, height: Int) -> [Double] {
        patches.map { patch in
            let cx = patch.x * Double(width)
            let cy = patch.y * Double(height)
            let hw = patch.w * Double(width) / 4
            let hh = patch.h * Double(height) / 4
            var sum = [0.0, 0.0, 0.0]
            var n = 0.0
            for y in Int(cy - hh)..<Int(cy + hh) {
                for x in Int(cx - hw)..<Int(cx + hw) {
                    let i = (y * width + x) * 3
                    for c in 0..<3 { sum[c] += Double(pixels[i + c]) }
                    n += 1
                }
            }
            return CIEDE2000.difference(Lab(srgb: patch.srgb), Lab(srgb: sum.map { $0 / n }))
        }
    }

    /// What `ffmpeg` makes of the file with no colour handling: libswscale's
    /// defaults, the 10-bit frame at 1 s cut to 8 bits (the issue's "naive").
    static func naive(_ path: String) throws -> (pixels: [UInt8], width: Int, height: Int)? {
        let directory = TemporaryDirectory()
        let output = directory.file("naive.ppm")
        func run(_ seek: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
            process.arguments =
                ["-v", "error", "-y"] + seek + [
                    "-i", path, "-frames:v", "1", "-vf", "scale=360:-2", "-pix_fmt", "rgb24", output,
                ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
        }
        try run(["-ss", "1"])
        // A still has no frame at 1 s: its only picture.
        if !FileManager.default.fileExists(atPath: output) { try run([]) }
        guard FileManager.default.fileExists(atPath: output) else { return nil }
        // P6 <width> <height> 255 <pixels>
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
        var fields: [Int] = []
        var position = 2
        while fields.count < 3, position < bytes.count {
            while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x0A { position += 1 }
            var value = 0
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) {
                value = value * 10 + Int(bytes[position] - 0x30)
                position += 1
            }
            fields.append(value)
        }
        return (Array(bytes[(position + 1)...]), fields[0], fields[1])
    }

    static let fixtures = [
        "hdr/hdr10-pq.mp4", "hdr/hlg.mp4", "hdr/pq-vui-only.mp4", "hdr/av1-pq-mastering.mp4",
        "hdr/dolby-vision-8.4-hlg.mp4",
        "hdr/dolby-vision-10.1-av1.mp4", "hdr/pq.avif", "hdr/pq-p3.avif", "hdr/pq-p3-16bit.jxl",
        "hdr/hdr-base-gain-map.avif",
    ]

    @Test(arguments: fixtures)
    func theThumbnailHasTheChartsColoursAndTheNaiveConversionDoesNot(_ path: String) throws {
        try #require(Self.patches.count == 24)
        let decoded = try Self.decode(Self.modern(path))
        guard case .made(let thumbnail)? = decoded.thumbnail else {
            Issue.record("no thumbnail: \(String(describing: decoded.thumbnail))")
            return
        }
        let ours = Self.deltaE(
            try HEIFDecodingTests.pixels(thumbnail), width: thumbnail.width, height: thumbnail.height)
        let mean = ours.reduce(0, +) / Double(ours.count)
        #expect(mean <= Self.meanBound, "mean ΔE00 \(mean)")
        #expect(ours.max()! <= Self.patchBound, "worst patch ΔE00 \(ours.max()!)")
        // ffmpeg 5.1 cannot decode Dolby Vision 10's `dav1` entry at all (the same
        // AV1 stream is av1-pq-mastering.mp4).
        guard let naive = try Self.naive(Self.modern(path)) else {
            print(
                String(
                    format: "HDR round trip %@: mean ΔE00 %.2f (max %.2f); ffmpeg cannot decode it", path, mean,
                    ours.max()!))
            #expect(path.contains("dolby-vision-10"))
            return
        }
        let theirs = Self.deltaE(naive.pixels, width: naive.width, height: naive.height)
        let naiveMean = theirs.reduce(0, +) / Double(theirs.count)
        print(
            String(
                format: "HDR round trip %@: mean ΔE00 %.2f (max %.2f); naive %.2f (max %.2f)", path, mean, ours.max()!,
                naiveMean, theirs.max()!))
        #expect(naiveMean > Self.meanBound, "the naive conversion passes: \(naiveMean)")
    }

    /// Dolby Vision profile 5 (no compatible base layer): a warning, and a grey
    /// poster with the picture's light, never green and purple.
    @Test func dolbyVisionProfile5IsGreyWithAWarning() throws {
        let decoded = try Self.decode(Self.modern("hdr/dolby-vision-5.mp4"))
        #expect(decoded.facts.warnings.contains { $0.contains("Dolby Vision profile 5") })
        guard case .made(let thumbnail)? = decoded.thumbnail else {
            Issue.record("no poster")
            return
        }
        let pixels = try HEIFDecodingTests.pixels(thumbnail)
        var chroma = 0.0
        for i in stride(from: 0, to: pixels.count, by: 3) {
            chroma += Double(abs(Int(pixels[i]) - Int(pixels[i + 1])) + abs(Int(pixels[i + 1]) - Int(pixels[i + 2])))
        }
        #expect(chroma / Double(pixels.count / 3) < 6, "not grey: \(chroma / Double(pixels.count / 3))")
        #expect(HEIFDecodingTests.meanLuma(pixels) > 60)
    }

    /// A real PQ AVIF (Display P3, MaxCLL 712; Immich's test assets): its thumbnail
    /// is at least twice as colourful (Hasler and Süsstrunk's measure) as what
    /// libvips 8.14 makes of it (`vips thumbnail`: libheif's 8-bit cut), which the
    /// issue saw as "washed out".
    @Test func aRealPQAVIFIsNotWashedOut() throws {
        let path = Self.modern("hdr/immich-10bit-HDR-P3-nclx.avif")
        let decoded = try Self.decode(path)
        guard case .made(let thumbnail)? = decoded.thumbnail else {
            Issue.record("no thumbnail")
            return
        }
        let directory = TemporaryDirectory()
        let naive = directory.file("naive.jpg")
        try ImageInspector.vips(["thumbnail", path, naive, "360"])
        let (width, height) = try ImageInspector.size(naive)
        let naivePixels = try HEIFDecodingTests.pixels(
            Thumbnail(jpeg: [UInt8](try Data(contentsOf: URL(fileURLWithPath: naive))), width: width, height: height))
        let ours = Self.colourfulness(try HEIFDecodingTests.pixels(thumbnail))
        let theirs = Self.colourfulness(naivePixels)
        print(String(format: "colourfulness of the real PQ AVIF: %.1f tone-mapped, %.1f through libvips", ours, theirs))
        #expect(ours >= 2 * theirs, "\(ours) vs \(theirs)")
    }

    static func colourfulness(_ pixels: [UInt8]) -> Double {
        var rg: [Double] = []
        var yb: [Double] = []
        for i in stride(from: 0, to: pixels.count - 2, by: 3) {
            let r = Double(pixels[i])
            let g = Double(pixels[i + 1])
            let b = Double(pixels[i + 2])
            rg.append(r - g)
            yb.append((r + g) / 2 - b)
        }
        func stats(_ v: [Double]) -> (mean: Double, deviation: Double) {
            let mean = v.reduce(0, +) / Double(v.count)
            return (mean, (v.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(v.count)).squareRoot())
        }
        let a = stats(rg)
        let b = stats(yb)
        return (a.deviation * a.deviation + b.deviation * b.deviation).squareRoot() + 0.3
            * (a.mean * a.mean + b.mean * b.mean).squareRoot()
    }

    /// The EETF itself: identity below the knee, continuous, monotonic, the source
    /// peak to the target, nothing compressed when the source fits.
    @Test func bt2390EETF() {
        #expect(abs(ToneMapper.eetf(50, sourcePeak: 1000, targetPeak: 203) - 50) < 0.01)
        #expect(abs(ToneMapper.eetf(1000, sourcePeak: 1000, targetPeak: 203) - 203) < 0.5)
        #expect(abs(ToneMapper.eetf(150, sourcePeak: 203, targetPeak: 203) - 150) < 0.01)
        var previous = 0.0
        for step in 1...1000 {
            let value = ToneMapper.eetf(Double(step), sourcePeak: 1000, targetPeak: 203)
            #expect(value >= previous && value <= 203.5)
            previous = value
        }
        // PQ and HLG round trips of the transfer functions.
        for v in [0.0, 0.1, 0.5, 0.75, 1.0] {
            #expect(abs(ToneMapper.pqInverseEOTF(ToneMapper.pqEOTF(v)) - v) < 1e-5)
            #expect(abs(ToneMapper.hlgOETF(ToneMapper.hlgInverseOETF(v)) - v) < 1e-9)
        }
    }
}

/// CIE L*a*b* (D65) of an sRGB colour.
struct Lab {
    let l: Double, a: Double, b: Double

    init(srgb: [Double]) {
        let linear = srgb.map { v -> Double in
            let c = v / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let x = 0.4124 * linear[0] + 0.3576 * linear[1] + 0.1805 * linear[2]
        let y = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
        let z = 0.0193 * linear[0] + 0.1192 * linear[1] + 0.9505 * linear[2]
        func f(_ t: Double) -> Double { t > pow(6.0 / 29, 3) ? cbrt(t) : t / (3 * pow(6.0 / 29, 2)) + 4.0 / 29 }
        let fx = f(x / 0.95047)
        let fy = f(y)
        let fz = f(z / 1.08883)
        l = 116 * fy - 16
        a = 500 * (fx - fy)
        b = 200 * (fy - fz)
    }
}

/// The CIEDE2000 colour difference (Sharma, Wu and Dalal's formulation).
enum CIEDE2000 {
    static func difference(_ first: Lab, _ second: Lab) -> Double {
        func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
        func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
        let c1 = (first.a * first.a + first.b * first.b).squareRoot()
        let c2 = (second.a * second.a + second.b * second.b).squareRoot()
        let cMean = (c1 + c2) / 2
        let g = 0.5 * (1 - (pow(cMean, 7) / (pow(cMean, 7) + pow(25, 7))).squareRoot())
        let a1 = (1 + g) * first.a
        let a2 = (1 + g) * second.a
        let c1p = (a1 * a1 + first.b * first.b).squareRoot()
        let c2p = (a2 * a2 + second.b * second.b).squareRoot()
        var h1 = degrees(atan2(first.b, a1))
        var h2 = degrees(atan2(second.b, a2))
        if h1 < 0 { h1 += 360 }
        if h2 < 0 { h2 += 360 }
        let dL = second.l - first.l
        let dC = c2p - c1p
        var dh = h2 - h1
        if c1p * c2p == 0 { dh = 0 } else if dh > 180 { dh -= 360 } else if dh < -180 { dh += 360 }
        let dH = 2 * (c1p * c2p).squareRoot() * sin(radians(dh / 2))
        let lMean = (first.l + second.l) / 2
        let cpMean = (c1p + c2p) / 2
        var hMean = h1 + h2
        if c1p * c2p != 0 {
            hMean = abs(h1 - h2) <= 180 ? (h1 + h2) / 2 : (h1 + h2 < 360 ? (h1 + h2 + 360) / 2 : (h1 + h2 - 360) / 2)
        }
        let t =
            1 - 0.17 * cos(radians(hMean - 30)) + 0.24 * cos(radians(2 * hMean)) + 0.32 * cos(radians(3 * hMean + 6))
            - 0.2 * cos(radians(4 * hMean - 63))
        let dTheta = 30 * exp(-pow((hMean - 275) / 25, 2))
        let rc = 2 * (pow(cpMean, 7) / (pow(cpMean, 7) + pow(25, 7))).squareRoot()
        let sl = 1 + 0.015 * pow(lMean - 50, 2) / (20 + pow(lMean - 50, 2)).squareRoot()
        let sc = 1 + 0.045 * cpMean
        let sh = 1 + 0.015 * cpMean * t
        let rt = -sin(radians(2 * dTheta)) * rc
        return (pow(dL / sl, 2) + pow(dC / sc, 2) + pow(dH / sh, 2) + rt * (dC / sc) * (dH / sh)).squareRoot()
    }
}
