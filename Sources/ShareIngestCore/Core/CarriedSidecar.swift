import Dispatch
import Foundation
import MediaFormats
import ShareManifest
import Synchronization
import SystemCalls

/// An export sidecar carried by the photo or video it describes
/// (``ItemState/carriedSidecars``), found beside it when the batch was planned
/// (``FolderSidecars``), instead of being an item of its own: still an input
/// of the batch, with its own index and report.
///
/// Its media's probe has the decoder read a Takeout JSON together with the
/// media, and gives what it says to the media (``ProbeStage``); the fan-in
/// delivers it (``SidecarDelivery``):
/// its head read (a sidecar by content, or not one), copied under the media's
/// UUID (`<UUID>.<n>.<ext>`, numbered in input order), attached to the media
/// when the media is delivered as a photo or video, else released and
/// delivered as a file of its own, with a warning saying why.
///
/// It is recorded with its media at every step, so it holds only what cannot
/// be derived from the media: usually its index, its name and its size. Its
/// file is its name in its media's folder, and reports name it so (unless the
/// plan found otherwise: a symbolic link, a file named on its own, data); its
/// UUID is the media's (its copy, the `n`-th, is named by it, and collected
/// with it); it is attached to the media until released. As an item (its
/// report; its entry when delivered as a file) it is ``item(carriedBy:n:)``.
struct CarriedSidecar: Sendable, Hashable {
    /// Its place among the batch's inputs.
    let index: Int
    /// The name of its file, as people know it.
    let name: String
    /// Its file and how reports name it when they are not its name in its
    /// media's folder (``path(carriedBy:)``, ``label(carriedBy:)``): nil in a
    /// folder's usual case.
    let ownPath: SourcePath?
    let ownLabel: String?
    /// With `ownPath`: how many of its leading bytes are its root's path (nil:
    /// its media's root, or its own folder).
    var ownRootLength: Int?
    /// What the plan saw of its file: anything else found there is not read.
    var expected: FileVersion?
    /// True once its content shows it is no sidecar (its kind is then none).
    var isFile = false
    /// True on an edited copy's share of its original's Takeout JSON
    /// (`X-edited.jpg` of `X.jpg.json`): a copy under the edited copy's UUID
    /// and the same facts; the original reports the sidecar, and delivers it
    /// as a file of its own when it cannot be attached.
    var borrowed = false
    /// True once it is released, to be delivered as a file of its own.
    var released = false
    /// Its size: when the drop was listed, then as copied.
    var size: Int64?
    /// What its head says, for a file whose content is no sidecar's (how it is delivered).
    var sniffed: SniffedContent?
    /// Its copy, once the fan-in knows it (recorded for a released one: an
    /// attached one's is derived, ``copyPath(carriedBy:n:root:)``).
    var copyPath: String?
    /// Its copy's SHA-256, when it is delivered as a file.
    var sha256: String?
    /// What location privacy removed from its copy.
    var locationRemoved: [String]?
    var warnings: [String] = []
    /// Why it was not delivered (its own failure: it could not be read or copied).
    var failure: ItemFailure?

    /// A sidecar met by the plan, named `name`; its file and label kept when
    /// they are not `name` in its media's folder.
    init(index: Int, name: String, ownPath: SourcePath?, ownLabel: String?, size: Int64?) {
        (self.index, self.name, self.ownPath, self.ownLabel, self.size) = (index, name, ownPath, ownLabel, size)
    }

    /// It as the plan met it, for its media's run from the start
    /// (``ItemState/restarted()``): nothing read, copied or decided since is kept.
    func restarted() -> CarriedSidecar {
        var sidecar = CarriedSidecar(index: index, name: name, ownPath: ownPath, ownLabel: ownLabel, size: size)
        sidecar.ownRootLength = ownRootLength
        sidecar.expected = expected
        sidecar.borrowed = borrowed
        return sidecar
    }

    /// Its kind: what its name claims, unless its content shows it is none.
    var kind: SharedMediaFile.Sidecar.Kind? { isFile ? nil : ExportSidecars.kind(byName: name) }

    /// True while it is attached to its media: not released, not failed.
    var isAttached: Bool { failure == nil && !released }

    /// True when nothing more is done with it here: it failed, or it is an
    /// edited copy's share of a sidecar released (its original's business).
    var isSettled: Bool { failure != nil || (borrowed && released) }

    /// Releases it, to be delivered as a file of its own, saying why when `warning` does.
    mutating func release(warning: String? = nil) {
        released = true
        if let warning, !warnings.contains(warning) { warnings.append(warning) }
    }

    /// Its file: its name in `media`'s folder, unless the plan found otherwise.
    func path(carriedBy media: ItemState) -> SourcePath { source(carriedBy: media).path }

    /// Its file, as it is opened: its name in `media`'s folder beneath the
    /// media's root, unless the plan found otherwise; and what the plan saw of it.
    func source(carriedBy media: ItemState) -> SourceFile {
        if let ownPath { return SourceFile(path: ownPath, name: name, rootLength: ownRootLength, expected: expected) }
        guard case .file(let file) = media.source else {
            return SourceFile(path: SourcePath(name), name: name, expected: expected)
        }
        return SourceFile(
            path: file.path.sibling(named: Array(name.utf8)), name: name, rootLength: file.rootLength,
            expected: expected)
    }

    /// How reports name it: its name in `media`'s folder as reports name it, unless the plan found otherwise.
    func label(carriedBy media: ItemState) -> String {
        ownLabel ?? Self.label(of: name, besideMediaLabeled: media.label)
    }

    /// How reports name the file `name` beside the media labelled `media`.
    static func label(of name: String, besideMediaLabeled media: String) -> String {
        media.contains("/") ? media.parentPath + "/" + name : name
    }

    /// Its copy: recorded, else `<root>/<media UUID>.<n>.<ext>` (its kind's
    /// extension, or its content's), where `root` is the container.
    func copyPath(carriedBy media: ItemState, n: Int, root: String?) -> String? {
        if let copyPath { return copyPath }
        let ext = kind.map(ExportSidecars.fileExtension(of:)) ?? sniffed?.fileExtension ?? "bin"
        return root.map { "\($0)/\(media.id.uuidString).\(n).\(ext)" }
    }

    /// What of it is recorded: an attached one's copy is derived, not recorded.
    var recorded: CarriedSidecar {
        var recorded = self
        if !released { recorded.copyPath = nil }
        return recorded
    }

    /// The sidecar as an item of the batch, the `n`-th carried by `media`: its
    /// own index, source and label, the media's UUID, attached to the media
    /// (its label) until released. What its report is made of, and its entry
    /// when it is delivered as a file.
    func item(carriedBy media: ItemState, n: Int) -> ItemState {
        var item = ItemState(
            index: index, id: media.id, source: .file(source(carriedBy: media)), label: label(carriedBy: media),
            failure: failure)
        item.sidecarKind = kind
        item.attachedTo = released ? nil : media.label
        item.size = size
        item.sniffed = sniffed
        item.mimeType = kind.map(ExportSidecars.mimeType(of:)) ?? sniffed?.mimeType
        item.copyPath = failure == nil ? copyPath(carriedBy: media, n: n, root: media.copyPath?.parentPath) : nil
        item.sha256 = sha256
        item.locationRemoved = locationRemoved
        item.warnings = warnings
        return item
    }

    /// The warning of a sidecar released because its media, `media`, is not delivered (as `reason` says).
    static func mediaNotDelivered(_ kind: SharedMediaFile.Sidecar.Kind?, media: String, reason: String) -> String {
        "\(describe(kind)) whose photo or video (\(media.lastPathComponentOfPath)) \(reason): delivered as a file"
    }

    /// A sidecar of `kind` in words.
    static func describe(_ kind: SharedMediaFile.Sidecar.Kind?) -> String {
        switch kind {
        case .takeout: "a Google Takeout JSON sidecar"
        case .xmp: "an XMP sidecar"
        case .aae: "an Apple .AAE adjustment file"
        case nil: "a sidecar"
        }
    }
}

extension CarriedSidecar: Codable {
    /// One flat object, only what is set: every record of its media carries it.
    private enum CodingKeys: String, CodingKey {
        case index, name, path, label, root, version, file, borrowed, released, size, sniffed
        case copyPath = "copy"
        case sha256, locationRemoved, warnings, failure
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        index = try c.decode(Int.self, forKey: .index)
        name = try c.decode(String.self, forKey: .name)
        var (ownPath, ownLabel): (SourcePath?, String?) = (nil, nil)
        // Only the keys it holds are read (usually none but its index, name and size).
        for key in c.allKeys {
            switch key {
            case .index, .name: break
            case .path: ownPath = SourcePath(bytes: Array(try c.decode(Data.self, forKey: .path)))
            case .label: ownLabel = try c.decode(String.self, forKey: .label)
            case .root: ownRootLength = try c.decode(Int.self, forKey: .root)
            case .version: expected = try c.decode(FileVersion.self, forKey: .version)
            case .file: isFile = try c.decode(Bool.self, forKey: .file)
            case .borrowed: borrowed = try c.decode(Bool.self, forKey: .borrowed)
            case .released: released = try c.decode(Bool.self, forKey: .released)
            case .size: size = try c.decode(Int64.self, forKey: .size)
            case .sniffed: sniffed = try c.decode(SniffedContent.self, forKey: .sniffed)
            case .copyPath: copyPath = try c.decode(String.self, forKey: .copyPath)
            case .sha256: sha256 = try c.decode(String.self, forKey: .sha256)
            case .locationRemoved: locationRemoved = try c.decode([String].self, forKey: .locationRemoved)
            case .warnings: warnings = try c.decode([String].self, forKey: .warnings)
            case .failure: failure = try c.decode(ItemFailure.self, forKey: .failure)
            }
        }
        (self.ownPath, self.ownLabel) = (ownPath, ownLabel)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(index, forKey: .index)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(ownPath.map { Data($0.bytes) }, forKey: .path)
        try c.encodeIfPresent(ownLabel, forKey: .label)
        try c.encodeIfPresent(ownRootLength, forKey: .root)
        try c.encodeIfPresent(expected, forKey: .version)
        if isFile { try c.encode(true, forKey: .file) }
        if borrowed { try c.encode(true, forKey: .borrowed) }
        if released { try c.encode(true, forKey: .released) }
        try c.encodeIfPresent(size, forKey: .size)
        try c.encodeIfPresent(sniffed, forKey: .sniffed)
        if released { try c.encodeIfPresent(copyPath, forKey: .copyPath) }
        try c.encodeIfPresent(sha256, forKey: .sha256)
        try c.encodeIfPresent(locationRemoved, forKey: .locationRemoved)
        if !warnings.isEmpty { try c.encode(warnings, forKey: .warnings) }
        try c.encodeIfPresent(failure, forKey: .failure)
    }
}

extension ItemState {
    /// What its entry lists in `sidecars`: the sidecars it carries that are
    /// attached to it, with their copies (beside its own, in the container).
    var attachedSidecars: [SidecarRecord] {
        let root = copyPath?.parentPath
        return carriedSidecars.enumerated().compactMap { position, sidecar in
            guard sidecar.isAttached, let kind = sidecar.kind,
                let path = sidecar.copyPath(carriedBy: self, n: position + 1, root: root)
            else { return nil }
            return SidecarRecord(
                path: path, kind: kind, mimeType: ExportSidecars.mimeType(of: kind), size: sidecar.size)
        }
    }

    /// The sidecars it carries that are inputs of their own to report, as
    /// items: all but those it borrows (an edited copy's share of its
    /// original's JSON).
    var reportedSidecars: [ItemState] {
        carriedSidecars.enumerated().compactMap { position, sidecar in
            sidecar.borrowed ? nil : sidecar.item(carriedBy: self, n: position + 1)
        }
    }
}
