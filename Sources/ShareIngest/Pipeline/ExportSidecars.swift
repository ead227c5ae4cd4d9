import Foundation
import MediaFormats
import ShareManifest

/// A sidecar attached to a media item: its copy in the container, named by the
/// item's UUID (`<UUID>.<n>.json`, `.xmp`, `.aae`).
struct SidecarRecord: Sendable, Hashable, Codable {
    var path: String
    var kind: SharedMediaFile.Sidecar.Kind
    var mimeType: String
    var size: Int64?
}

/// Export sidecars: what they are (recognised by content and by name, when an
/// item is sniffed) and which media item each describes (in the fan-in, both
/// modes, like Live Photos: a pass over the names and the kinds already known,
/// over the candidates the store's index gives).
enum ExportSidecars {
    /// The sidecar kind of a file named `name` whose first bytes are `head`, or
    /// nil. The name says which kind to look for; the content must be that kind:
    /// Takeout's JSON is an object with a photo's keys (`photoTakenTime`,
    /// `imageViews` or `googlePhotosOrigin`), so an album's `metadata.json`
    /// or any other JSON is left alone; an XMP sidecar is an XMP packet
    /// (`<?xpacket`, `x:xmpmeta`); an `.AAE` is a property list with Apple's
    /// `adjustment…` keys. Only the head already read by the sniffer is looked
    /// at (a match of bytes, as magic numbers are, not a parse).
    static func kind(name: String, head: [UInt8]) -> SharedMediaFile.Sidecar.Kind? {
        let lower = name.lowercased()
        guard let dot = lower.lastIndex(of: "."), dot != lower.startIndex else { return nil }
        // The text after a byte-order mark and leading whitespace, lower-cased.
        let text = String(decoding: head.prefix(4096), as: UTF8.self).drop { $0.isWhitespace || $0 == "\u{FEFF}" }.lowercased()
        switch lower[lower.index(after: dot)...] {
        case "json":
            guard text.hasPrefix("{") else { return nil }
            let photoKeys = ["\"phototakentime\"", "\"imageviews\"", "\"googlephotosorigin\""]
            return text.contains("\"title\"") && photoKeys.contains(where: text.contains) ? .takeout : nil
        case "xmp":
            return text.hasPrefix("<?xpacket") || text.hasPrefix("<x:xmpmeta") || (text.hasPrefix("<?xml") && text.contains("x:xmpmeta")) ? .xmp : nil
        case "aae":
            let plist = text.hasPrefix("<?xml") || text.hasPrefix("<!doctype plist") || text.hasPrefix("<plist")
            return plist && text.contains("adjustment") ? .aae : nil
        default:
            return nil
        }
    }

    /// The MIME type a sidecar of `kind` is listed with.
    static func mimeType(of kind: SharedMediaFile.Sidecar.Kind) -> String {
        switch kind {
        case .takeout: "application/json"
        case .xmp: "application/rdf+xml"
        case .aae: "application/xml"
        }
    }

    /// The extension of a sidecar's copy.
    static func fileExtension(of kind: SharedMediaFile.Sidecar.Kind) -> String {
        switch kind {
        case .takeout: "json"
        case .xmp: "xmp"
        case .aae: "aae"
        }
    }

    /// What a sidecar names: the media file's stem (folder and base name, lower
    /// case, no extension), the media's extension when the sidecar's name carries
    /// it (`IMG_1234.CR2.xmp`, `X.jpg.json`), and the duplicate number Takeout
    /// moves behind the extension (`X.jpg(1).json` names `X(1).jpg`).
    struct Reference: Hashable {
        var stem: String
        var mediaExtension: String?
        /// The media's name as the sidecar spells it (`X(1).jpg`, `IMG_1234.*`), for messages.
        var shownName = ""
        /// The exact stem, before an Apple edit's or a burst frame's name is
        /// taken back to its shot's (``ExportSidecars/shotStem(_:)``): which
        /// file of the stem a sidecar names.
        var exact = ""
    }

    /// The media a sidecar called `label` describes. Takeout's suffixes are
    /// dropped: `.supplemental-metadata` and every cut of it Takeout's name
    /// length limit makes (`.supplemental-metad`, `.suppl`, `.s`).
    static func reference(sidecarLabel label: String) -> Reference? {
        let (folder, file) = split(label)
        var name = file
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        name = String(name[..<dot])
        // Takeout's `(n)` behind the extension: `X.jpg(1)` names `X(1).jpg`.
        var number = ""
        if name.hasSuffix(")"), let open = name.lastIndex(of: "("), name[name.index(after: open)..<name.index(before: name.endIndex)].allSatisfy(\.isNumber) {
            number = String(name[open...])
            name = String(name[..<open])
        }
        let lower = name.lowercased()
        if let suffixDot = lower.lastIndex(of: "."), suffixDot != lower.startIndex {
            let suffix = lower[lower.index(after: suffixDot)...]
            if !suffix.isEmpty, "supplemental-metadata".hasPrefix(suffix), suffix.first == "s", !isMediaExtension(String(suffix)) {
                name = String(name[..<name.index(name.startIndex, offsetBy: lower.distance(from: lower.startIndex, to: suffixDot))])
            }
        }
        var mediaExtension: String?
        var shownExtension = "*"
        if let extDot = name.lastIndex(of: "."), extDot != name.startIndex {
            let ext = name[name.index(after: extDot)...].lowercased()
            if isMediaExtension(ext) {
                mediaExtension = ext
                shownExtension = String(name[name.index(after: extDot)...])
                name = String(name[..<extDot])
            }
        }
        guard !name.isEmpty else { return nil }
        let exact = (name + number).lowercased()
        return Reference(
            stem: folder + shotStem(exact), mediaExtension: mediaExtension, shownName: name + number + "." + shownExtension, exact: folder + exact)
    }

    /// A media item's own reference: its stem and extension. Takeout's edited
    /// copies (`X-edited.jpg`, and the suffix in the languages Takeout writes)
    /// share their original's sidecar: their stem is the original's.
    static func reference(mediaLabel label: String) -> Reference? {
        let (folder, file) = split(label)
        guard let dot = file.lastIndex(of: "."), dot != file.startIndex else { return nil }
        var base = file[..<dot].lowercased()
        let ext = file[file.index(after: dot)...].lowercased()
        for suffix in editedSuffixes where base.hasSuffix(suffix) && base.count > suffix.count {
            base.removeLast(suffix.count)
            break
        }
        return Reference(stem: folder + shotStem(base), mediaExtension: ext, exact: folder + base)
    }

    /// The stem of the shot a (lower-case) base name belongs to: Apple's edited
    /// render `img_e1234` is `img_1234`'s; a burst frame is its burst's
    /// (``burstFrame(_:)``).
    static func shotStem(_ base: String) -> String {
        if let burst = burstFrame(base) { return burst.burst }
        if isAppleEdit(base) {
            var stem = base
            stem.remove(at: stem.index(stem.startIndex, offsetBy: 4))
            return stem
        }
        return base
    }

    /// A burst frame's burst and whether it is the cover, from its (lower-case)
    /// base name: Samsung's `20190701_165320_burst001_cover` and
    /// `…_burst002` (burst `20190701_165320_burst`), Google's
    /// `pxl_20190701_165320123.raw-01.cover` and `….raw-02.original` (burst
    /// `pxl_20190701_165320123.raw`). Nil for any other name.
    static func burstFrame(_ base: String) -> (burst: String, cover: Bool)? {
        if let range = base.range(of: "_burst", options: .backwards) {
            var rest = base[range.upperBound...]
            let digits = rest.prefix { $0.isNumber }
            guard !digits.isEmpty, range.lowerBound != base.startIndex else { return nil }
            rest = rest.dropFirst(digits.count)
            let cover = rest == "_cover"
            guard rest.isEmpty || cover else { return nil }
            return (String(base[..<range.upperBound]), cover)
        }
        if base.hasPrefix("pxl_"), let range = base.range(of: ".raw-", options: .backwards) {
            let rest = base[range.upperBound...]
            let digits = rest.prefix { $0.isNumber }
            guard !digits.isEmpty, rest.dropFirst(digits.count).first == "." else { return nil }
            return (String(base[..<range.lowerBound]) + ".raw", rest.contains("cover"))
        }
        return nil
    }

    /// Apple's name for an edited render: `IMG_E1234` (of `IMG_1234`), lower case.
    static func isAppleEdit<S: StringProtocol>(_ base: S) -> Bool {
        guard base.hasPrefix("img_e"), base.count > 5 else { return false }
        return base.dropFirst(5).allSatisfy(\.isNumber)
    }

    /// True for an edited render: Takeout's `X-edited.jpg` (and its
    /// translations) or Apple's `IMG_E1234.JPG`.
    static func isEditedRender(_ label: String) -> Bool {
        let file = (label.split(separator: "/").last.map(String.init) ?? label).lowercased()
        guard let dot = file.lastIndex(of: "."), dot != file.startIndex else { return false }
        let base = file[..<dot]
        return isAppleEdit(base) || editedSuffixes.contains { base.hasSuffix($0) && base.count > $0.count }
    }

    /// Takeout's suffix for an edited copy, in the languages it is written in.
    static let editedSuffixes = ["-edited", "-bearbeitet", "-modifié", "-editado", "-modificato", "-bewerkt", "-redigerad", "-muokattu", "-edytowane"]

    /// True for an extension a photo or video has (so `IMG_1234.CR2` keeps
    /// `.CR2` as the media's and `X.supplemental-metadata` is not one).
    static func isMediaExtension(_ ext: String) -> Bool {
        extensionsOfMedia.contains(ext)
    }

    private static let extensionsOfMedia: Set<String> = Set(
        MediaFormat.all.filter { $0.kind == .image || $0.kind == .video }.flatMap(\.extensions))

    private static func split(_ label: String) -> (folder: String, file: String) {
        let slash = label.lastIndex(of: "/")
        return (slash.map { String(label[...$0]) } ?? "", slash.map { String(label[label.index(after: $0)...]) } ?? label)
    }
}

extension ItemState {
    /// What the stores index so the fan-in finds a batch's sidecars and the
    /// media they may describe without reading every item: a sidecar's kind
    /// and the stem it names; a photo's or video's own stem.
    var sidecarKeys: (kind: String?, stem: String?) {
        guard failure == nil, isFileLike else { return (nil, nil) }
        if let kind = sidecarKind { return (kind.rawValue, ExportSidecars.reference(sidecarLabel: label)?.stem) }
        guard type == .image || type == .video else { return (nil, nil) }
        return (nil, ExportSidecars.reference(mediaLabel: label)?.stem)
    }

    /// What the stores index so the fan-in finds the frames of an Apple burst
    /// without reading every item: a photo's `BurstUUID` (its Apple maker
    /// note, read by the decoder helper and checked by the parent).
    var burstKey: String? {
        guard failure == nil, type == .image else { return nil }
        return moments?.burstIdentifier
    }
}

/// Which media item each sidecar of a batch describes, worked out in the fan-in
/// from the store's candidates, one stem at a time
/// (``ItemStore/forEachExportStem(of:pageSize:_:)``).
/// A sidecar naming the media's extension (`X.jpg.json`, `IMG_1234.CR2.xmp`)
/// goes to the item of that stem and extension; one without (`IMG_1234.xmp`,
/// `IMG_1234.AAE`) to the item of that stem, a RAW first (XMP sidecars are a RAW
/// developer's), else the first. A Takeout JSON also goes to the edited copies
/// of its photo (`X-edited.jpg`). A sidecar whose media is not in the drop is
/// an orphan: delivered as a file, with a warning.
struct SidecarMatching {
    /// What the matching keeps of an attached sidecar (not the whole item).
    struct Attached: Sendable, Hashable {
        var index: Int
        var kind: SharedMediaFile.Sidecar.Kind
        var copyPath: String?
        var takeout: TakeoutFacts?
        var locationRemoved: [String]?
    }

    /// The sidecars of each media item, by index: in the order they are numbered.
    private(set) var attached: [Int: [Attached]] = [:]
    /// Each attached sidecar's media item (its label), by the sidecar's index.
    private(set) var attachedTo: [Int: String] = [:]
    /// Sidecars whose media is not in the drop, by index, with the warning.
    private(set) var orphans: [Int: String] = [:]
    /// The UUID of each media item that has sidecars, by index.
    private(set) var mediaIDs: [Int: UUID] = [:]

    /// The largest sidecar attached (bytes): a larger one is no export's
    /// sidecar, and is delivered as a file.
    static let maximumSize: Int64 = 4 << 20


    init(candidates: [ItemState], final: (ItemState) -> ItemState?) {
        add(candidates, final: final)
    }

    /// Matches `candidates`: the items of one stem or more, every item of each
    /// stem among them (``ItemStore/forEachExportStem(of:pageSize:_:)``).
    mutating func add(_ candidates: [ItemState], final: (ItemState) -> ItemState?) {
        let items = candidates.compactMap(final).filter { $0.failure == nil && $0.copyPath != nil }.sorted { $0.index < $1.index }
        var mediaByStem: [String: [ItemState]] = [:]
        for item in items where item.sidecarKind == nil && (item.type == .image || item.type == .video) {
            if let stem = ExportSidecars.reference(mediaLabel: item.label)?.stem { mediaByStem[stem, default: []].append(item) }
        }
        for sidecar in items {
            guard let kind = sidecar.sidecarKind, (sidecar.size ?? 0) <= Self.maximumSize else { continue }
            let reference = ExportSidecars.reference(sidecarLabel: sidecar.label)
            let sameStem = reference.flatMap { mediaByStem[$0.stem] } ?? []
            // The file of that exact name (of a burst or an edit's stem), if there is one.
            let exact = sameStem.filter { ExportSidecars.reference(mediaLabel: $0.label)?.exact == reference?.exact }
            let media = exact.isEmpty && reference?.mediaExtension == nil ? sameStem : exact
            var chosen: [ItemState] = []
            if let ext = reference?.mediaExtension {
                // The photo of that name first; Takeout's JSON describes the
                // edited copies of its photo too (whatever their extension).
                let named = media.filter { !ExportSidecars.isEditedRender($0.label) && Self.fileExtension($0.label) == ext }
                chosen = Array(named.prefix(1))
                if kind == .takeout { chosen += media.filter { Self.isEditedCopy($0.label) } }
            } else {
                // A RAW first (an XMP is a RAW developer's), then an original
                // (an `.AAE` is the original's, not its edited render's).
                let raw = media.first { $0.sniffed.map(Self.isRAW) ?? false }
                if let one = raw ?? media.first(where: { !ExportSidecars.isEditedRender($0.label) }) ?? media.first { chosen = [one] }
            }
            guard !chosen.isEmpty else {
                orphans[sidecar.index] =
                    "\(Self.describe(kind)) whose \(reference.map { Self.expected($0) } ?? "media") is not in this drop: delivered as a file"
                continue
            }
            let kept = Attached(index: sidecar.index, kind: kind, copyPath: sidecar.copyPath, takeout: sidecar.takeout, locationRemoved: sidecar.locationRemoved)
            for item in chosen {
                attached[item.index, default: []].append(kept)
                mediaIDs[item.index] = item.id
            }
            attachedTo[sidecar.index] = chosen[0].label
        }
    }

    /// What its first Takeout JSON says, given to `item`: `photoTakenTime` as
    /// `capturedAt` (source `takeout`: the JSON wins, as Takeout strips dates
    /// from some files), `description`, `geoData` (gone when location privacy
    /// removed it from the JSON; the JSON's `locationRemoved` then joins the item's).
    static func takeFacts(of sidecars: [Attached], into item: inout ItemState) {
        for sidecar in sidecars where sidecar.kind == .takeout {
            if let removed = sidecar.locationRemoved {
                item.locationRemoved = (item.locationRemoved ?? []) + removed.filter { !(item.locationRemoved ?? []).contains($0) }
            }
        }
        guard let facts = sidecars.lazy.compactMap(\.takeout).first else { return }
        if let taken = facts.takenAt, let text = TakeoutMetadata.rfc3339(taken) {
            item.capturedAt = text
            item.capturedAtSource = "takeout"
        }
        item.exportDescription = facts.description
        item.exportLocation = facts.location
    }

    /// The container path of the `n`-th sidecar (from 1) of the item `id`.
    static func copyPath(in container: ContainerDirectory, id: UUID, n: Int, kind: SharedMediaFile.Sidecar.Kind) -> String {
        container.mediaPath(id: id, fileExtension: "\(n).\(ExportSidecars.fileExtension(of: kind))")
    }

    private static func fileExtension(_ label: String) -> String? {
        let file = label.split(separator: "/").last.map(String.init) ?? label
        guard let dot = file.lastIndex(of: "."), dot != file.startIndex else { return nil }
        return file[file.index(after: dot)...].lowercased()
    }

    private static func isEditedCopy(_ label: String) -> Bool {
        let file = (label.split(separator: "/").last.map(String.init) ?? label).lowercased()
        guard let dot = file.lastIndex(of: ".") else { return false }
        let base = file[..<dot]
        return ExportSidecars.editedSuffixes.contains { base.hasSuffix($0) }
    }

    private static func isRAW(_ sniffed: SniffedContent) -> Bool {
        sniffed.mimeType.hasPrefix("image/x-") && !["image/x-icon", "image/x-portable-pixmap", "image/x-xbitmap"].contains(sniffed.mimeType)
    }

    private static func describe(_ kind: SharedMediaFile.Sidecar.Kind) -> String {
        switch kind {
        case .takeout: "a Google Takeout JSON sidecar"
        case .xmp: "an XMP sidecar"
        case .aae: "an Apple .AAE adjustment file"
        }
    }

    private static func expected(_ reference: ExportSidecars.Reference) -> String {
        "photo or video (\(reference.shownName))"
    }
}

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
        let members = frames.filter { $0.sidecarKind == nil && $0.burstKey != nil }.compactMap(final)
            .filter { $0.failure == nil && $0.copyPath != nil && $0.type == .image }
            .sorted { a, b in
                let (x, y) = (Self.instant(a), Self.instant(b))
                if x != y { return (x ?? .infinity) < (y ?? .infinity) }
                let (m, n) = (a.label.lastPathComponentOfPath, b.label.lastPathComponentOfPath)
                return m != n ? m < n : a.index < b.index
            }
        guard members.count >= 2, let cover = members.first else { return }
        for member in members {
            groups[member.index] = SharedMediaFile.Group(id: cover.id.uuidString, kind: .burst, role: member.index == cover.index ? .cover : .frame)
        }
    }

    /// When a frame was taken, comparable across frames of one burst (the
    /// instant when known, else the wall clock).
    private static func instant(_ item: ItemState) -> Double? {
        item.moments?.captureTime.flatMap { $0.utc ?? $0.local }
    }

    /// Groups `candidates`: every item of each stem among them.
    mutating func add(_ candidates: [ItemState], final: (ItemState) -> ItemState?) {
        let media = candidates.filter { $0.sidecarKind == nil }.compactMap(final)
            .filter { $0.failure == nil && $0.copyPath != nil && ($0.type == .image || $0.type == .video) }.sorted { $0.index < $1.index }
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
            let file = (item.label.split(separator: "/").last.map(String.init) ?? item.label).lowercased()
            guard let dot = file.lastIndex(of: "."), ExportSidecars.burstFrame(String(file[..<dot])) != nil,
                let stem = ExportSidecars.reference(mediaLabel: item.label)?.stem
            else { continue }
            bursts[stem, default: []].append(item)
        }
        for stem in bursts.keys.sorted() {
            let frames = bursts[stem] ?? []
            func isCover(_ item: ItemState) -> Bool {
                let file = (item.label.split(separator: "/").last.map(String.init) ?? item.label).lowercased()
                guard let dot = file.lastIndex(of: ".") else { return false }
                return ExportSidecars.burstFrame(String(file[..<dot]))?.cover ?? false
            }
            guard let cover = frames.first(where: isCover) ?? frames.first else { continue }
            let members = frames.filter { $0.index == cover.index || Self.sameBurst(cover, $0) }
            guard members.count >= 2 else { continue }
            let id = cover.id.uuidString
            for member in members {
                groups[member.index] = SharedMediaFile.Group(id: id, kind: .burst, role: member.index == cover.index ? .cover : .frame)
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
                guard let original = originals.first(where: { $0.type == edited.type && Self.sameShot($0, edited) }) else { continue }
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
        guard let a = cover.moments?.captureTime, let b = frame.moments?.captureTime, let gap = a.distance(to: b) else { return true }
        return gap <= burstMaximumGap
    }

    /// Capture times within 1 s when both have one (the metadata decides, not the name alone).
    static func sameShot(_ raw: ItemState, _ jpeg: ItemState) -> Bool {
        guard let a = raw.moments?.captureTime, let b = jpeg.moments?.captureTime, let gap = a.distance(to: b) else { return true }
        return gap <= rawJpegMaximumGap
    }

    /// A camera RAW the probe delivered as an image (its MIME type `image/x-…`
    /// of a RAW format: DNG, NEF, CR2, CR3, ARW, RAF, ORF, RW2 and their kin).
    static func isRAW(_ item: ItemState) -> Bool {
        guard let mime = item.sniffed?.mimeType else { return false }
        return ["image/x-adobe-dng", "image/x-nikon-nef", "image/x-canon-cr2", "image/x-canon-cr3", "image/x-sony-arw", "image/x-fuji-raf",
            "image/x-olympus-orf", "image/x-panasonic-rw2"].contains(mime)
    }

    /// `holiday/IMG_0100.JPG` → `holiday/img_0100`.
    static func exactStem(_ label: String) -> String? {
        let slash = label.lastIndex(of: "/")
        let folder = slash.map { String(label[...$0]) } ?? ""
        let file = slash.map { String(label[label.index(after: $0)...]) } ?? label
        guard let dot = file.lastIndex(of: "."), dot != file.startIndex else { return nil }
        return folder + file[..<dot].lowercased()
    }
}
