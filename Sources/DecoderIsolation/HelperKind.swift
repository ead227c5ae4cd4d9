import MediaFormats

/// What a helper can decode, from least to most code loaded:
///
/// - ``base``: every format whose decoders are in the libraries `share` links
///   (JPEG, PNG, WebP, GIF, TIFF, HEIF and AVIF, video, audio …): most helpers;
/// - ``modules``: also the formats of libvips' modules, which a template loads
///   only when the first of them arrives (PDF through poppler, JPEG XL: ~23 ms
///   of the dynamic loader's time that a drop without them never pays);
/// - ``sandboxOnly``: also SVG (librsvg) and PSD (ImageMagick), in a helper
///   started on its own with them (see `InProcessDecoder`).
///
/// A helper serves its kind and every kind below it. Nothing is loaded once a
/// helper is sandboxed (its policy forbids mapping code), so a format must go
/// to a helper of its kind: a PDF in a ``base`` helper could not be read.
/// scripts/record-helper-syscalls.sh fails if a helper maps code after its
/// sandbox is up (a format whose module ``moduleFormats`` does not name).
package enum HelperKind: Int, Comparable, Sendable {
    case base, modules, sandboxOnly

    /// The libvips modules each format's route needs (MediaKit's `DecoderRoute`:
    /// `VipsDocumentStep` for PDF, the JPEG XL loader).
    package static let moduleFormats: [String: String] = ["pdf": "poppler", "jxl": "jxl"]

    /// The formats only the sandbox-only loaders decode (MediaKit's
    /// `InProcessDecoder.needsSandboxOnlyLoaders`, which this module cannot
    /// link: a test checks the two agree).
    package static let sandboxOnlyFormats: Set<String> = ["svg", "psd"]

    /// True for the formats only the sandbox-only loaders decode (SVG, PSD).
    package static func needsSandboxOnlyLoaders(_ format: MediaFormat) -> Bool {
        sandboxOnlyFormats.contains(format.id)
    }

    /// The kind of helper that can decode `format`.
    package static func needed(for format: MediaFormat) -> HelperKind {
        if needsSandboxOnlyLoaders(format) { return .sandboxOnly }
        return moduleFormats[format.id] != nil ? .modules : .base
    }

    /// True when a helper of this kind can decode what needs `kind`.
    package func serves(_ kind: HelperKind) -> Bool { self >= kind }

    package static func < (lhs: HelperKind, rhs: HelperKind) -> Bool { lhs.rawValue < rhs.rawValue }
}
