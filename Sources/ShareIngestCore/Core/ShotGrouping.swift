import Foundation
import Glibc
import MediaFormats
import ShareManifest
import SystemCalls

/// Groups of shots, formed in the fan-in (both modes) like Live Photos, over
/// the candidates the store's index gives, one stem at a time
/// (``ItemStore/forEachExportStem(of:pageSize:_:)``: photos sharing a folder and stem). `rawJpeg`: a camera RAW and a JPEG of
/// the same folder and stem (`IMG_0100.CR2`, `IMG_0100.JPG`), their capture
/// times within 1 s when both have one; the first RAW with the first JPEG.
/// The group's id is the RAW's UUID.
struct ShotGrouping {
    /// Each grouped item's membership, by index.
    private(set) var groups: [Int: SharedMediaFile.Group] = [:]

    /// The largest gap between a RAW's and its JPEG's capture times, seconds.
    static let rawJpegMaximumGap = 1.0

    init() {}

    init(candidates: [ItemState], final: (ItemState) -> ItemState?) {
        add(candidates, final: final)
    }

    /// Groups the frames of one Apple burst: `frames`, the photos sharing a
    /// `BurstUUID` (``ItemStore/forEachBurst(of:pageSize:_:)``), two or more as
    /// they will be delivered. Apple's maker note does not reliably say which
    /// frame Photos picked, so the cover is the earliest taken (the instant,
    /// else the wall clock; a frame without a time after those with one), the
    /// lowest name among equals. The group's id is the cover's UUID. Run before
    /// ``add(_:final:)``: a frame in a burst so is in no group by name.
    mutating func addBurst(_ frames: [ItemState], final: (ItemState) -> ItemState?) {
        let members = frames.filter { $0.burstKey != nil }.compactMap(final)
            .filter { $0.failure == nil && $0.copyPath != nil && $0.type == .image }
            .sorted { a, b in
                let (x, y) = (Self.instant(a), Self.instant(b))
                if x != y { return (x ?? .infinity) < (y ?? .infinity) }
                let (m, n) = (a.label.lastPathComponentOfPath, b.label.lastPathComponentOfPath)
                return m != n ? m < n : a.index < b.index
            }
        guard members.count >= 2, let cover = members.first else { return }
        for member in members {
            groups[member.index] = SharedMediaFile.Group(
                id: cover.id.uuidString, kind: .burst, role: member.index == cover.index ? .cover : .frame)
        }
    }

    /// When a frame was taken, comparable across frames of one burst (the
    /// instant when known, else the wall clock).
    private static func instant(_ item: ItemState) -> Double? {
        CaptureDate.comparableTime(of: item).flatMap { $0.utc ?? $0.local }
    }

    /// Groups `candidates`: every item of each stem among them.
    mutating func add(_ candidates: [ItemState], final: (ItemState) -> ItemState?) {
        let media = candidates.compactMap(final)
            .filter { $0.failure == nil && $0.copyPath != nil && ($0.type == .image || $0.type == .video) }.sorted {
                $0.index < $1.index
            }
        let items = media.filter { $0.type == .image }
        var byStem: [String: [ItemState]] = [:]
        for item in items {
            // The exact stem: an edited copy (`X-edited.jpg`) is not the shot's JPEG.
            guard let stem = Self.exactStem(item.label) else { continue }
            byStem[stem, default: []].append(item)
        }
        for stem in byStem.keys.sorted() {
            let members = byStem[stem] ?? []
            var jpegs = members.filter { $0.sniffed?.format.id == "jpeg" && groups[$0.index] == nil }
            for raw in members where Self.isRAW(raw) && groups[raw.index] == nil {
                guard let match = jpegs.firstIndex(where: { Self.sameShot(raw, $0) }) else { continue }
                let jpeg = jpegs.remove(at: match)
                let id = raw.id.uuidString
                groups[raw.index] = SharedMediaFile.Group(id: id, kind: .rawJpeg, role: .raw)
                groups[jpeg.index] = SharedMediaFile.Group(id: id, kind: .rawJpeg, role: .jpeg)
            }
        }
        // `burst`: the frames of one burst (``ExportSidecars/burstFrame(_:)``),
        // two or more, their capture times within a minute of the cover's when
        // both have one; the cover the frame named so, else the first. The
        // group's id is the cover's UUID.
        var bursts: [String: [ItemState]] = [:]
        // Never by name alone when the frames carry Apple's `BurstUUID` (``addBurst(_:final:)``).
        for item in media where groups[item.index] == nil && item.burstKey == nil {
            let file = item.label.lastPathComponentOfPath.lowercased()
            guard let dot = file.utf8.lastIndex(of: UInt8(ascii: ".")),
                ExportSidecars.burstFrame(String(file[..<dot])) != nil,
                let stem = ExportSidecars.reference(mediaLabel: item.label)?.stem
            else { continue }
            bursts[stem, default: []].append(item)
        }
        for stem in bursts.keys.sorted() {
            let frames = bursts[stem] ?? []
            func isCover(_ item: ItemState) -> Bool {
                let file = item.label.lastPathComponentOfPath.lowercased()
                guard let dot = file.utf8.lastIndex(of: UInt8(ascii: ".")) else { return false }
                return ExportSidecars.burstFrame(String(file[..<dot]))?.cover ?? false
            }
            guard let cover = frames.first(where: isCover) ?? frames.first else { continue }
            let members = frames.filter { $0.index == cover.index || Self.sameBurst(cover, $0) }
            guard members.count >= 2 else { continue }
            let id = cover.id.uuidString
            for member in members {
                groups[member.index] = SharedMediaFile.Group(
                    id: id, kind: .burst, role: member.index == cover.index ? .cover : .frame)
            }
        }
        // `edit`: each edited render (`IMG_E1234.JPG`, `X-edited.jpg`) with the
        // original of its stem (`IMG_1234.HEIC`, `X.jpg`) of the same kind
        // (photo or video), their capture times within 1 s when both have one
        // (a render keeps its original's); the first such original, unless it
        // is in a group already. The group's id is the original's UUID.
        var byExportStem: [String: [ItemState]] = [:]
        for item in media {
            guard let stem = ExportSidecars.reference(mediaLabel: item.label)?.stem else { continue }
            byExportStem[stem, default: []].append(item)
        }
        for stem in byExportStem.keys.sorted() {
            let members = byExportStem[stem] ?? []
            let originals = members.filter { !ExportSidecars.isEditedRender($0.label) }
            for edited in members where ExportSidecars.isEditedRender(edited.label) && groups[edited.index] == nil {
                guard let original = originals.first(where: { $0.type == edited.type && Self.sameShot($0, edited) })
                else { continue }
                if let existing = groups[original.index], existing.kind != .edit { continue }
                let id = original.id.uuidString
                groups[original.index] = SharedMediaFile.Group(id: id, kind: .edit, role: .original)
                groups[edited.index] = SharedMediaFile.Group(id: id, kind: .edit, role: .edited)
            }
        }
    }

    /// The largest gap between a burst's cover's and a frame's capture times, seconds.
    static let burstMaximumGap = 60.0

    /// Capture times within ``burstMaximumGap`` when both have one.
    static func sameBurst(_ cover: ItemState, _ frame: ItemState) -> Bool {
        guard let a = CaptureDate.comparableTime(of: cover), let b = CaptureDate.comparableTime(of: frame),
            let gap = a.distance(to: b)
        else { return true }
        return gap <= burstMaximumGap
    }

    /// Capture times within 1 s when both have one (the metadata decides, not the name alone).
    static func sameShot(_ raw: ItemState, _ jpeg: ItemState) -> Bool {
        guard let a = CaptureDate.comparableTime(of: raw), let b = CaptureDate.comparableTime(of: jpeg),
            let gap = a.distance(to: b)
        else { return true }
        return gap <= rawJpegMaximumGap
    }

    /// A camera RAW the probe delivered as an image (its MIME type `image/x-…`
    /// of a RAW format: DNG, NEF, CR2, CR3, ARW, RAF, ORF, RW2 and their kin).
    static func isRAW(_ item: ItemState) -> Bool {
        item.sniffed.map { ExportSidecars.rawMIMETypes.contains($0.mimeType) } ?? false
    }

    /// `holiday/IMG_0100.JPG` → `holiday/img_0100`.
    static func exactStem(_ label: String) -> String? {
        let slash = label.utf8.lastIndex(of: UInt8(ascii: "/"))
        let folder = slash.map { String(label[...$0]) } ?? ""
        let file = slash.map { String(label[label.index(after: $0)...]) } ?? label
        guard let dot = file.utf8.lastIndex(of: UInt8(ascii: ".")), dot != file.startIndex else { return nil }
        return folder + file[..<dot].lowercased()
    }
}
