import Foundation
import ShareManifest

/// What a batch would be, worked out as ``BatchPlan`` plans one but with
/// nothing written, copied or decoded (`share ingest --dry-run`): each input
/// in order, the sidecars each photo or video would carry, what would be
/// skipped and why, and the items whose names say they may form a group.
public struct PlannedBatch: Sendable {
    /// One input as the batch would hold it.
    public struct Item: Sendable {
        /// Its place among the inputs (a carried sidecar's index is its own).
        public let index: Int
        /// How reports would name it: its path as given, or `text:…`, `url:…`.
        public let label: String
        /// `file`, `text` or `url`.
        public let kind: String
        /// Its size in bytes, when listed.
        public let size: Int64?
        /// The sidecars it would carry (their labels), in input order.
        public let sidecars: [String]
        /// Why it would be skipped, already known from names and the walk alone.
        public let skipped: ItemFailure?
    }

    /// Every item the batch would hold, in input order (a carried sidecar is listed with its media).
    public let items: [Item]
    /// Items (their indices) whose names make them candidates for one group
    /// (a RAW and its JPEG, an edit and its original, a burst, a Live Photo's
    /// halves): their contents decide, when the batch runs.
    public let possibleGroups: [[Int]]
    /// The inputs: items and the sidecars they carry.
    public var inputCount: Int { items.count + items.reduce(0) { $0 + $1.sidecars.count } }
}

extension ShareIngestor {
    /// The plan `inputs` would make with `pipeline`: walked as a batch's are
    /// (folders depth-first, hidden entries, links and special files as a batch
    /// treats them), sidecars matched to their media by name; nothing is
    /// written, copied or decoded, and no container is needed. In-memory
    /// inputs (`.data`) are refused: they exist only once written down. The
    /// files `selection` leaves out are planned as skipped (`filtered`).
    public static func plan(_ inputs: [ShareInput], pipeline: PipelineDefinition, selection: DropSelection = .all)
        throws(ShareIngestError) -> PlannedBatch
    {
        do { try pipeline.validate() } catch { throw .pipeline(error) }
        try BatchPlan.check(inputs)
        for case .data(_, let name) in inputs {
            throw .inputMissing(
                path: "data:" + name, reason: "an in-memory input cannot be planned without being written")
        }
        var planned: [ItemState] = []
        // No in-memory input: the walk writes nothing, and the container is never touched.
        try BatchPlan.walk(
            BatchPlan.absolute(inputs), batch: UUID(), container: ContainerDirectory(unopened: "/nonexistent"),
            identifiers: .random,
            carriesSidecars: pipeline.manifest.schema == .v2, selection: selection
        ) { planned.append($0) }
        planned.sort { $0.index < $1.index }
        // The legacy manifest cannot carry text next to files (``ManifestStage/unsupportedBySchema(_:batchHasFiles:)``).
        let stage = ManifestStage(settings: pipeline.manifest)
        // What the walk refused (a FIFO, a link leading out, …) is failed by its first stage when the batch
        // runs (``SourceFile/refused``): the plan says so already.
        func walkRefusal(_ item: ItemState) -> ItemFailure? {
            if case .file(let file) = item.source { return file.refused }
            return nil
        }
        let hasFiles = planned.contains { $0.failure == nil && walkRefusal($0) == nil && $0.isFileLike }
        var items: [PlannedBatch.Item] = []
        var stems: [String: [Int]] = [:]
        for item in planned {
            let kind: String
            switch item.source {
            case .file: kind = "file"
            case .text: kind = "text"
            case .url: kind = "url"
            }
            let skipped = item.failure ?? walkRefusal(item) ?? stage.unsupportedBySchema(item, batchHasFiles: hasFiles)
            items.append(
                PlannedBatch.Item(
                    index: item.index, label: item.label, kind: kind, size: item.size,
                    sidecars: item.reportedSidecars.map(\.label), skipped: skipped))
            if skipped == nil, item.isFileLike, let stem = ExportSidecars.reference(mediaLabel: item.label)?.stem {
                stems[stem, default: []].append(item.index)
            }
        }
        let groups = stems.values.filter { $0.count > 1 }.sorted { $0[0] < $1[0] }
        return PlannedBatch(items: items, possibleGroups: groups)
    }
}
