@_exported import DecoderIsolation
import MediaFormats
import MediaKit

extension Isolation {
    /// The decoder for this choice; `helpers` says how helpers are started (for
    /// ``Isolation/process``; by default `share-helper` next to this executable,
    /// or `$SHARE_HELPER_PATH`). Here, not in DecoderIsolation, because
    /// ``Isolation/none`` links the decoders (MediaKit's `InProcessDecoder`),
    /// which the `share` CLI does not link (issue 59).
    public func decoder(_ helpers: ProcessIsolatedDecoder.Configuration = .besideThisExecutable) -> any MediaDecoder {
        switch self {
        case .process: ProcessIsolatedDecoder(helpers)
        case .none: InProcessDecoder()
        }
    }
}
