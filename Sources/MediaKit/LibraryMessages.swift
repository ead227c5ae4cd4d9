import CShims
import Glibc
import MediaFormats

/// The one table that turns what a decoding library said into a ``MediaError``
/// kind (issue 21): libvips (and libjpeg, libtiff, libheif, libjxl under it)
/// reports failures as text in its error buffer, libav as an `AVERROR` code.
/// Nothing else in the project looks at a library's message text; messages are
/// only carried to people. Like imgproxy's `vips/errors.go`: one rule per line,
/// each with the library that says it and why it means what it means.
///
/// A message that no rule names is not typed here: the caller decides from
/// where it failed (a strict loader's failure is damage, a loader that reads
/// only some variants of its format passes the file on).
enum LibraryMessages {
    /// One message fragment and the kind of failure it names.
    struct Rule: Sendable {
        /// The library whose words these are.
        let library: String
        /// A fragment of the message, matched case-insensitively.
        let fragment: String
        /// What the failure is.
        let kind: MediaError.Kind
        /// Why: the variant or damage the words stand for.
        let reason: String
    }

    /// libvips and the libraries it loads through.
    static let vipsRules: [Rule] = [
        Rule(
            library: "libjpeg-turbo", fragment: "Unsupported JPEG data precision", kind: .unsupported,
            reason: "12-bit JPEG (libavcodec's mjpeg reads it)"),
        Rule(
            library: "libjpeg-turbo", fragment: "Unsupported JPEG process", kind: .unsupported,
            reason: "lossless or hierarchical JPEG"),
        Rule(
            library: "tiff2vips", fragment: "samples out of range", kind: .unsupported,
            reason: "64-bit float samples (libtiff reads them)"),
        Rule(
            library: "tiff2vips", fragment: "unsupported tiff image type", kind: .unsupported,
            reason: "16-bit float samples"),
        Rule(
            library: "tiff2vips", fragment: "unsupported sample format", kind: .unsupported,
            reason: "a sample format tiff2vips lacks"),
        Rule(
            library: "tiff2vips", fragment: "unsupported bits per sample", kind: .unsupported,
            reason: "a sample size tiff2vips lacks"),
        Rule(
            library: "libheif", fragment: "heif: Invalid input", kind: .damaged,
            reason: "truncated or corrupt HEIF (not a variant libvips 8.14 lacks)"),
    ]

    /// The kind `error`'s message names, if a rule names it (the first that matches).
    static func kind(of error: VipsError) -> MediaError.Kind? {
        if error.wasKilled { return .timeLimit }
        return vipsRules.first { error.message.localizedCaseInsensitiveContains($0.fragment) }?.kind
    }

    /// True when libvips' words name a variant it cannot read (the next decoder may).
    static func namesVariant(_ error: VipsError) -> Bool { kind(of: error) == .unsupported }

    /// True when libvips' words name damage.
    static func namesDamage(_ error: VipsError) -> Bool { kind(of: error) == .damaged }

    /// libav's failure by its code: its time budget (`AVERROR_EXIT` from the
    /// interrupt callback), memory (`AVERROR(ENOMEM)`: in a helper, its
    /// address-space limit), a codec or feature this build lacks
    /// (`AVERROR_DECODER_NOT_FOUND`, `AVERROR_PATCHWELCOME`, `AVERROR(ENOSYS)`),
    /// else damage (`AVERROR_INVALIDDATA`, `AVERROR_EOF` inside a header, ...).
    static func kind(of error: AVError) -> MediaError.Kind {
        switch error.code {
        case shim_averror_exit(): .timeLimit
        case -ENOMEM: .memoryLimit
        case shim_averror_decoder_not_found(), shim_averror_patchwelcome(), -ENOSYS: .unsupported
        default: .damaged
        }
    }
}
