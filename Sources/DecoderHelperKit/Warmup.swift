import MediaFormats
import MediaKit

/// Tiny samples the helper decodes before it locks itself down, so the code
/// the sandbox-only loaders need later is loaded while files may still be
/// opened freely: ImageMagick's start-up (libvips has it load every coder module)
/// for PSD, and librsvg with fontconfig and Pango (for SVG text).
enum Warmup {
    /// An 8×8 SVG with a red square and one letter of text.
    static let svg = Array(
        #"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="red"/><text x="0" y="7" font-size="6">a</text></svg>"#
            .utf8)

    /// A 1×1 8-bit RGB Photoshop file, uncompressed.
    static let psd: [UInt8] = [
        0x38, 0x42, 0x50, 0x53, 0, 1, 0, 0, 0, 0, 0, 0,  // "8BPS", version 1, reserved
        0, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 8, 0, 3,  // 3 channels, 1×1, 8 bits, RGB
        0, 0, 0, 0,  // colour mode data
        0, 0, 0, 0,  // image resources
        0, 0, 0, 0,  // layers and masks
        0, 0, 255, 0, 0,  // raw image data: R, G, B planes
    ]

    /// Decodes each sample once (results are ignored: a sample that fails only
    /// means its loader will be loaded on first real use).
    static func run() {
        let spec = ThumbnailSpec(size: 8, timeLimit: 10)
        for sample in [svg, psd] {
            _ = try? Thumbnailer.thumbnail(.memory(sample), spec: spec)
        }
    }
}
