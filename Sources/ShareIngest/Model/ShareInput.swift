import Foundation

/// One thing a person shares, as handed to the pipeline.
public enum ShareInput: Sendable, Hashable {
    /// A file, or a folder (a drop) that is walked: hidden entries skipped, symbolic
    /// links never followed out of it.
    case path(String)
    /// In-memory bytes with the name they would have had (the type comes from the content).
    case data(Data, name: String)
    /// Shared text.
    case text(String)
    /// A shared link.
    case url(String)
}
