import Foundation

/// One thing a person shares, as handed to the pipeline.
public enum ShareInput: Sendable, Hashable {
    /// A file, or a folder (a drop) that is walked: hidden entries skipped, symbolic
    /// links never followed out of it. Its bytes are kept exactly (Linux names need
    /// not be UTF-8).
    case path(SourcePath)
    /// In-memory bytes with the name they would have had (the type comes from the content).
    case data(Data, name: String)
    /// Shared text.
    case text(String)
    /// A shared link.
    case url(String)

    /// A file or folder named by a string (its UTF-8 bytes).
    public static func path(_ path: String) -> ShareInput { .path(SourcePath(path)) }
}
