/// Sizes past which files are not copied: one file (``item``), or the files
/// of a drop (or of a batch's inputs) together (``drop``); nil: no limit.
/// Checked when the batch is planned, before anything is copied: a file over
/// its limit fails alone with `tooLarge`, and every file of a drop over its
/// limit fails with it (so a watched drop goes to `.failed/` whole). Sizes are
/// the files' lengths, holes included (a sparse file is refused for what it
/// could cost a reader of the copy, not for the blocks it takes).
public struct SizeLimits: Sendable, Hashable {
    /// Bytes one file may have.
    public var item: Int64?
    /// Bytes the files of a drop (or of a batch's inputs) may have together.
    public var drop: Int64?

    /// Limits of `item` bytes a file and `drop` bytes a drop (nil: none).
    public init(item: Int64? = nil, drop: Int64? = nil) {
        (self.item, self.drop) = (item, drop)
    }

    /// No limit (`share ingest`'s default and the library's).
    public static let none = SizeLimits()
    /// `share watch`'s default: 8 GiB a file, 32 GiB a drop (any dropper can
    /// otherwise fill the container's disk).
    public static let watchDefaults = SizeLimits(item: 8 << 30, drop: 32 << 30)

    /// Why the file `label` of `size` bytes is not copied, if it is over the limit.
    func refusal(ofFile size: Int64?, label: String) -> ItemFailure? {
        guard let limit = item, let size, size > limit else { return nil }
        return ItemFailure(
            .copy, .tooLarge,
            "\(label): \(ReadableUnits.binaryBytes(size)), more than the limit of \(ReadableUnits.binaryBytes(limit)) a file (--max-item-size); not copied"
        )
    }

    /// Why no file of a drop whose files hold `size` bytes is copied, if that is over the limit.
    func refusal(ofDrop size: Int64) -> ItemFailure? {
        guard let limit = drop, size > limit else { return nil }
        return ItemFailure(
            .copy, .tooLarge,
            "the drop holds \(ReadableUnits.binaryBytes(size)), more than the limit of \(ReadableUnits.binaryBytes(limit)) (--max-drop-size); none of its files is copied"
        )
    }

    /// The bytes the files of `inputs` hold (folders walked beneath their
    /// open descriptor, as the watcher's signature is: ``DropSignature``).
    static func bytes(of inputs: [ShareInput]) -> Int64 {
        inputs.reduce(0) { total, input in
            switch input {
            case .path(let path): total + (DropSignature.read(path.display)?.bytes ?? 0)
            case .data(let data, _): total + Int64(data.count)
            case .text, .url: total
            }
        }
    }
}
