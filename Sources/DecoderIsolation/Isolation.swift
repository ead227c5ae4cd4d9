import MediaFormats

/// Where shared media is decoded: the choice `share --isolation` offers, for a
/// host app or tool to make the same way.
///
/// ```swift
/// import DecoderHelperKit  // Isolation.decoder: `none` links the decoders
/// let decoder = Isolation.process.decoder(.init(helperExecutable: "/usr/local/bin/share-helper"))
/// let ingestor = ShareIngestor(container: container, decoder: decoder)
/// ```
public enum Isolation: String, Sendable, CaseIterable {
    /// In a pool of sandboxed helper processes (``ProcessIsolatedDecoder``): a
    /// crash or an exploit in a decoding library cannot reach this process.
    case process
    /// In this process (MediaKit's `InProcessDecoder`): for valgrind, for
    /// debugging, and for library users who do not ship the `share` binary.
    /// ImageMagick and SVG (librsvg) stay blocked: those formats get no thumbnail.
    case none
}
