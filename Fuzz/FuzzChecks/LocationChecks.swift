import MediaFormats

/// What every location scan must answer, whatever the bytes (the fuzz targets
/// of the location scanners check it on each input): at most 256 places and
/// 4096 overwrites; each overwrite a non-empty range inside the file, in
/// steps 0 to 3, a `free` box at least a box header long and a PNG chunk at
/// least a chunk's frame; and, as the parent's check of a helper's reply
/// (DecoderIsolation's ReplyCheck) demands, in each step no two overwrites
/// that write their whole range overlapping, and those writing at most the
/// file's size in all. An answer that breaks one would crash here, or be
/// refused from an honest helper.
public enum LocationChecks {
    public static func check(_ metadata: LocationMetadata, fileSize: Int) {
        precondition(metadata.found.count <= 256, "\(metadata.found.count) places")
        let edits = metadata.found.flatMap(\.edits)
        precondition(edits.count <= 4096, "\(edits.count) overwrites")
        var written = 0
        for edit in edits {
            precondition(
                edit.offset >= 0 && edit.length > 0 && edit.offset <= fileSize - edit.length,
                "an overwrite of \(edit.length) bytes at \(edit.offset) of \(fileSize)")
            precondition((0...3).contains(edit.step), "step \(edit.step)")
            switch edit.fill {
            case .freeBox: precondition(edit.length >= 8, "a free box of \(edit.length) bytes")
            case .pngCRC: precondition(edit.length >= 12, "a PNG chunk of \(edit.length) bytes")
            case .zeros, .spaces: written += edit.length
            }
        }
        precondition(written <= fileSize, "\(written) bytes overwritten in a \(fileSize)-byte file")
        let groups = Dictionary(grouping: Set(edits)) { "\($0.step)-\($0.fill == .zeros || $0.fill == .spaces)" }
        for group in groups.values {
            let sorted = group.sorted { $0.offset < $1.offset }
            for (earlier, later) in zip(sorted, sorted.dropFirst()) {
                precondition(
                    later.offset >= earlier.offset + earlier.length,
                    "overlapping overwrites at \(earlier.offset) and \(later.offset)")
            }
        }
        for record in metadata.found { precondition(!record.name.isEmpty && record.name.utf8.count <= 4096) }
    }

    /// `bytes` with every zeros and spaces overwrite of `metadata` made (the
    /// others, a box type or a CRC, are left as they were).
    public static func blanked(_ bytes: [UInt8], _ metadata: LocationMetadata) -> [UInt8] {
        var copy = bytes
        for edit in metadata.found.flatMap(\.edits) where edit.fill == .zeros || edit.fill == .spaces {
            for index in edit.offset..<(edit.offset + edit.length) { copy[index] = edit.fill == .zeros ? 0 : 0x20 }
        }
        return copy
    }
}
