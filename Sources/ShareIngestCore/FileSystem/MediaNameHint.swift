import MediaFormats
import SystemCalls

/// Whether a batch's inputs are named like media, read before the batch is
/// planned, so that the decoder may start its slow part while the journal is
/// written and the first item copied (``MediaDecoder/mayDecode()``: the helper
/// template loading libvips and libav, about a tenth of a second). A hint from
/// names alone, never a decision: what is decoded, the sniff of each item's
/// content decides, and a wrong hint costs one template start (or, a drop of
/// unnamed media, a start no sooner than before).
enum MediaNameHint {
    /// Names read of a folder given as an input (its first entries, in the
    /// order the file system lists them; not its subfolders): a folder of a
    /// million files is not listed twice.
    static let namesReadPerFolder = 64

    /// True when an input's name, or one of the first names in a folder
    /// given, ends in a media format's extension (``ContentSniffer/nameSaysMedia(_:)``).
    static func namesMedia(_ inputs: [ShareInput]) -> Bool {
        inputs.contains { input in
            switch input {
            case .data(_, let name): ContentSniffer.nameSaysMedia(Array(name.utf8))
            case .text, .url: false
            case .path(let path): namesMedia(path)
            }
        }
    }

    private static func namesMedia(_ path: SourcePath) -> Bool {
        if ContentSniffer.nameSaysMedia(path.bytes) { return true }
        var found = false
        var read = 0
        // Not a folder, gone, or unreadable: no hint (the plan says what is wrong).
        try? DirectoryEntries.scan(
            pathBytes: path.bytes, display: path.description,
            while: { name in
                read += 1
                found = ContentSniffer.nameSaysMedia(name)
                return !found && read < namesReadPerFolder
            })
        return found
    }
}
