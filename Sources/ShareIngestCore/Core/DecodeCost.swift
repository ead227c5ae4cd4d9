import Foundation
import MediaFormats

/// What decoding an item is expected to cost, from its sniffed format, its size
/// in bytes and the pixel size its header announces (``HeaderDimensions``):
/// CPU time, to give the costliest items their decode slot first (so a batch
/// does not end with one core busy on a 12 MP HEIC and the other idle), and
/// memory, to bound what decodes at once.
///
/// Rough on purpose: the order matters, not the numbers. Measured on this
/// machine (BENCHMARKS.md): a 12 MP JPEG ~25 ms per MB (entropy decoding at
/// 1/8 scale), a 12 MP grid HEIC ~120 ms per MB (libavcodec), a PNG ~15 ms per
/// megapixel (no shrink-on-load), a video poster ~20 ms per megapixel of frame.
struct DecodeCost: Sendable, Hashable, Comparable {
    /// Expected CPU milliseconds of the decode.
    let milliseconds: Double
    /// Expected peak bytes of decoder memory (decoded frames, canvases).
    let bytes: Int

    static let zero = DecodeCost(milliseconds: 0, bytes: 0)

    static func < (a: DecodeCost, b: DecodeCost) -> Bool { a.milliseconds < b.milliseconds }

    /// The estimate for a file of `format`, `size` bytes, whose header announces
    /// `pixels` (nil when the first bytes do not say).
    static func estimate(format: MediaFormat, size: Int64, pixels: Int?) -> DecodeCost {
        guard format.isDecodable else { return .zero }
        let megabytes = Double(max(0, size)) / 1_048_576
        let megapixels = pixels.map { Double($0) / 1_000_000 }
        switch format.id {
        case "jpeg":
            // Shrink-on-load: entropy decoding, proportional to the bytes; a small
            // canvas at 1/8 scale.
            return DecodeCost(
                milliseconds: 25 * megabytes + 5, bytes: (pixels ?? Int(megabytes * 3_000_000)) / 16 + (8 << 20))
        case "heic", "heif", "heics", "heifs":
            // HEVC tiles, decoded in parallel with frame threading and shrunk one
            // by one (the libheif fallback holds the full picture).
            return DecodeCost(
                milliseconds: 120 * megabytes + 20, bytes: (pixels ?? Int(megabytes * 5_000_000)) * 3 / 2 + (16 << 20))
        case "avif", "avifs":
            return DecodeCost(
                milliseconds: 200 * megabytes + 20, bytes: (pixels ?? Int(megabytes * 8_000_000)) * 4 + (16 << 20))
        case "pdf":
            return DecodeCost(milliseconds: 60, bytes: 32 << 20)
        default:
            switch format.kind {
            case .video:
                // One keyframe (a few reference frames held), at the track's size
                // (read from the `moov`, wherever it is) or, unknown, as if 1080p.
                let mp = megapixels ?? 2.1
                return DecodeCost(milliseconds: 20 * mp + 30, bytes: Int(mp * 1_500_000 * 6) + (16 << 20))
            case .audio:
                return DecodeCost(milliseconds: 5, bytes: 4 << 20)
            default:
                // PNG, TIFF, GIF, WebP, BMP…: a full decode, proportional to the pixels.
                let mp = megapixels ?? megabytes * 2
                return DecodeCost(milliseconds: 15 * mp + 5, bytes: Int(mp * 4_000_000) + (8 << 20))
            }
        }
    }
}

/// A budget of decoder memory shared by a batch's decoding workers: a decode
/// takes its estimated bytes before it starts and gives them back when it ends.
/// One that does not fit waits for others to finish, unless nothing is being
/// decoded (an item larger than the whole budget still runs, alone).
final class DecodeBudget: @unchecked Sendable {
    private let condition = NSCondition()
    private var inUse = 0
    private var running = 0
    private var waiting = 0
    /// Bytes that may be decoding at once.
    let limit: Int

    init(limit: Int) { self.limit = max(1, limit) }

    /// Waits until `bytes` fit (or nothing else runs), then takes them.
    func acquire(_ bytes: Int) {
        condition.lock()
        if running > 0 && inUse + bytes > limit {
            waiting += 1
            condition.broadcast()  // for ``waitForWaiters(_:)``
            while running > 0 && inUse + bytes > limit { condition.wait() }
            waiting -= 1
        }
        inUse += bytes
        running += 1
        condition.unlock()
    }

    /// How many decodes are waiting for room (for tests: observed, never timed).
    var waiters: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting
    }

    /// Blocks until at least `count` decodes wait (tests).
    func waitForWaiters(_ count: Int) {
        condition.lock()
        while waiting < count { condition.wait() }
        condition.unlock()
    }

    /// Gives back what ``acquire(_:)`` took.
    func release(_ bytes: Int) {
        condition.lock()
        inUse -= bytes
        running -= 1
        condition.broadcast()
        condition.unlock()
    }
}
