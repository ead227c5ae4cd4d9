import MediaFormats
import MediaKit

/// Where shared media is decoded: the choice `share --isolation` offers, for a
/// host app or tool to make the same way.
///
/// ```swift
/// let decoder = Isolation.process.decoder(.init(helperExecutable: "/usr/local/bin/share"))
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

    /// The decoder for this choice; `helpers` says how helpers are started (for
    /// ``process``; by default from this executable, which must then be `share`).
    public func decoder(_ helpers: ProcessIsolatedDecoder.Configuration = .thisExecutable) -> any MediaDecoder {
        switch self {
        case .process: ProcessIsolatedDecoder(helpers)
        case .none: InProcessDecoder()
        }
    }
}
