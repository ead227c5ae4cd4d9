import Foundation
import Glibc
import MediaFormats
import ShareManifest
import SystemCalls

/// A sidecar attached to a media item: its copy in the container, named by the
/// item's UUID (`<UUID>.<n>.json`, `.xmp`, `.aae`).
struct SidecarRecord: Sendable, Hashable, Codable {
    var path: String
    var kind: SharedMediaFile.Sidecar.Kind
    var mimeType: String
    var size: Int64?
}

/// Export sidecars: which media item each describes (by name, when the batch
/// is planned: ``FolderSidecars``) and what they are (by content, when their
/// media is sniffed: ``kind(name:head:)``).
package enum ExportSidecars {
    /// The sidecar kind of a file named `name` whose first bytes are `head`, or
    /// nil. The name says which kind to look for; the content must be that kind:
    /// Takeout's JSON is an object with a `title` and a photo's keys
    /// (`photoTakenTime`, `imageViews` or `googlePhotosOrigin`), so an album's
    /// `metadata.json` or any other JSON is left alone; an XMP sidecar is an XMP
    /// packet (`<?xpacket`, `x:xmpmeta`); an `.AAE` is a property list with
    /// Apple's `adjustment…` keys. Only the head already read is looked at (a
    /// match of bytes, as magic numbers are, not a parse; keys are matched as
    /// written, as the decoder's JSON reader reads them).
    package static func kind(name: String, head: [UInt8]) -> SharedMediaFile.Sidecar.Kind? {
        guard let kind = kind(byName: name) else { return nil }
        return head.withUnsafeBufferPointer { all in
            var text = UnsafeBufferPointer(rebasing: all.prefix(4096))
            // The text after a byte-order mark and leading whitespace.
            if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = UnsafeBufferPointer(rebasing: text.dropFirst(3)) }
            while let first = text.first, first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D {
                text = UnsafeBufferPointer(rebasing: text.dropFirst())
            }
            return content(of: kind, text)
        }
    }

    /// `kind` when `text` (a sidecar's head, from its first character) is that kind's.
    private static func content(of kind: SharedMediaFile.Sidecar.Kind, _ text: UnsafeBufferPointer<UInt8>)
        -> SharedMediaFile.Sidecar.Kind?
    {
        func opens(_ word: StaticString) -> Bool {
            word.withUTF8Buffer { text.count >= $0.count && memcmp(text.baseAddress!, $0.baseAddress!, $0.count) == 0 }
        }
        func has(_ word: StaticString) -> Bool {
            word.withUTF8Buffer { needle in
                guard let base = text.baseAddress, let first = needle.first, text.count >= needle.count else {
                    return false
                }
                // Each place its first byte is (memchr), compared whole (memcmp).
                var at = base
                let last = base + (text.count - needle.count)
                while at <= last, let found = memchr(at, Int32(first), last - at + 1) {
                    let candidate = UnsafePointer(found.assumingMemoryBound(to: UInt8.self))
                    if memcmp(candidate, needle.baseAddress!, needle.count) == 0 { return true }
                    at = candidate + 1
                }
                return false
            }
        }
        switch kind {
        case .takeout:
            return opens("{") && has("\"title\"")
                && (has("\"photoTakenTime\"") || has("\"imageViews\"") || has("\"googlePhotosOrigin\""))
                ? .takeout : nil
        case .xmp:
            return opens("<?xpacket") || opens("<x:xmpmeta") || (opens("<?xml") && has("x:xmpmeta")) ? .xmp : nil
        case .aae:
            let plist = opens("<?xml") || opens("<!DOCTYPE plist") || opens("<!doctype plist") || opens("<plist")
            return plist && has("adjustment") ? .aae : nil
        }
    }

    /// The kind a sidecar named `name` would be (its extension: `.json`,
    /// `.xmp`, `.aae`, in any case); its content decides (``kind(name:head:)``).
    package static func kind(byName name: String) -> SharedMediaFile.Sidecar.Kind? {
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else { return nil }
        return kind(byExtension: String(name[name.index(after: dot)...]))
    }

    /// The kind a sidecar with the extension `ext` would be.
    static func kind(byExtension ext: String) -> SharedMediaFile.Sidecar.Kind? {
        guard ext.utf8.count <= 4 else { return nil }
        switch ext.lowercased() {
        case "json": return .takeout
        case "xmp": return .xmp
        case "aae": return .aae
        default: return nil
        }
    }

    /// The largest sidecar attached (bytes): a larger one is no export's
    /// sidecar, and is delivered as a file.
    static let maximumSize: Int64 = 4 << 20

    /// The container path of the `n`-th sidecar (from 1) carried by the item
    /// `id`, with the extension `ext`: `<UUID>.<n>.<ext>`.
    static func copyPath(in container: ContainerDirectory, id: UUID, n: Int, fileExtension ext: String) -> String {
        container.mediaPath(id: id, fileExtension: "\(n).\(ext)")
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
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else { return nil }
        name = String(name[..<dot])
        // Takeout's `(n)` behind the extension: `X.jpg(1)` names `X(1).jpg`.
        var number = ""
        if name.hasSuffix(")"), let open = name.utf8.lastIndex(of: UInt8(ascii: "(")),
            name[name.index(after: open)..<name.index(before: name.endIndex)].allSatisfy(\.isNumber)
        {
            number = String(name[open...])
            name = String(name[..<open])
        }
        let lower = name.lowercased()
        if let suffixDot = lower.utf8.lastIndex(of: UInt8(ascii: ".")), suffixDot != lower.startIndex {
            let suffix = lower[lower.index(after: suffixDot)...]
            if !suffix.isEmpty, "supplemental-metadata".hasPrefix(suffix), suffix.first == "s",
                !isMediaExtension(String(suffix))
            {
                name = String(
                    name[
                        ..<name.index(name.startIndex, offsetBy: lower.distance(from: lower.startIndex, to: suffixDot))]
                )
            }
        }
        var mediaExtension: String?
        var shownExtension = "*"
        if let extDot = name.utf8.lastIndex(of: UInt8(ascii: ".")), extDot != name.startIndex {
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
            stem: folder + shotStem(exact), mediaExtension: mediaExtension,
            shownName: name + number + "." + shownExtension, exact: folder + exact)
    }

    /// A media item's own reference: its stem and extension. Takeout's edited
    /// copies (`X-edited.jpg`, and the suffix in the languages Takeout writes)
    /// share their original's sidecar: their stem is the original's.
    static func reference(mediaLabel label: String) -> Reference? {
        let (folder, file) = split(label)
        guard let dot = file.utf8.lastIndex(of: UInt8(ascii: ".")), dot != file.startIndex else { return nil }
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
        if let range = lastRange(of: "_burst", in: base) {
            var rest = base[range.upperBound...]
            let digits = rest.prefix { $0.isNumber }
            guard !digits.isEmpty, range.lowerBound != base.startIndex else { return nil }
            rest = rest.dropFirst(digits.count)
            let cover = rest == "_cover"
            guard rest.isEmpty || cover else { return nil }
            return (String(base[..<range.upperBound]), cover)
        }
        if base.hasPrefix("pxl_"), let range = lastRange(of: ".raw-", in: base) {
            let rest = base[range.upperBound...]
            let digits = rest.prefix { $0.isNumber }
            guard !digits.isEmpty, rest.dropFirst(digits.count).first == "." else { return nil }
            return (String(base[..<range.lowerBound]) + ".raw", rest.contains("cover"))
        }
        return nil
    }

    /// The last place the ASCII `needle` is in `text`, searched among its bytes.
    private static func lastRange(of needle: StaticString, in text: String) -> Range<String.Index>? {
        let bytes = text.utf8
        let count = needle.utf8CodeUnitCount
        guard bytes.count >= count else { return nil }
        var lower = bytes.index(bytes.endIndex, offsetBy: -count)
        while true {
            let upper = bytes.index(lower, offsetBy: count)
            if needle.withUTF8Buffer({ bytes[lower..<upper].elementsEqual($0) }) { return lower..<upper }
            guard lower > bytes.startIndex else { return nil }
            lower = bytes.index(before: lower)
        }
    }

    /// Apple's name for an edited render: `IMG_E1234` (of `IMG_1234`), lower case.
    static func isAppleEdit<S: StringProtocol>(_ base: S) -> Bool {
        guard base.hasPrefix("img_e"), base.count > 5 else { return false }
        return base.dropFirst(5).allSatisfy(\.isNumber)
    }

    /// True for an edited render: Takeout's `X-edited.jpg` (and its
    /// translations) or Apple's `IMG_E1234.JPG`.
    static func isEditedRender(_ label: String) -> Bool {
        let file = label.lastPathComponentOfPath.lowercased()
        guard let dot = file.utf8.lastIndex(of: UInt8(ascii: ".")), dot != file.startIndex else { return false }
        let base = file[..<dot]
        return isAppleEdit(base) || editedSuffixes.contains { base.hasSuffix($0) && base.count > $0.count }
    }

    /// Takeout's suffix for an edited copy, in the languages it is written in.
    static let editedSuffixes = [
        "-edited", "-bearbeitet", "-modifié", "-editado", "-modificato", "-bewerkt", "-redigerad", "-muokattu",
        "-edytowane",
    ]

    /// True for an extension a photo or video has (so `IMG_1234.CR2` keeps
    /// `.CR2` as the media's and `X.supplemental-metadata` is not one).
    static func isMediaExtension(_ ext: String) -> Bool {
        extensionsOfMedia.contains(ext)
    }

    private static let extensionsOfMedia: Set<String> = Set(
        MediaFormat.all.filter { $0.kind == .image || $0.kind == .video }.flatMap(\.extensions))

    /// The MIME types of camera RAW formats (DNG, NEF, CR2, CR3, ARW, RAF,
    /// ORF, RW2 and their kin).
    static let rawMIMETypes: Set<String> = [
        "image/x-adobe-dng", "image/x-nikon-nef", "image/x-canon-cr2", "image/x-canon-cr3", "image/x-sony-arw",
        "image/x-fuji-raf",
        "image/x-olympus-orf", "image/x-panasonic-rw2",
    ]

    /// True for the extension of a camera RAW format (`cr2`, `dng`, …).
    static func isRAWExtension(_ ext: String) -> Bool { extensionsOfRAW.contains(ext) }

    private static let extensionsOfRAW: Set<String> = Set(
        MediaFormat.all.filter { rawMIMETypes.contains($0.mimeType) }.flatMap(\.extensions))

    /// `IMG_1234.JPG` → `jpg`; nil without an extension.
    static func fileExtension(of name: String) -> String? {
        let file = name.lastPathComponentOfPath
        guard let dot = file.utf8.lastIndex(of: UInt8(ascii: ".")), dot != file.startIndex else { return nil }
        return file[file.index(after: dot)...].lowercased()
    }

    /// Takeout's edited copy (`X-edited.jpg`, and the translated suffixes).
    static func isEditedCopy(_ name: String) -> Bool {
        let file = name.lastPathComponentOfPath.lowercased()
        guard let dot = file.utf8.lastIndex(of: UInt8(ascii: ".")) else { return false }
        let base = file[..<dot]
        return editedSuffixes.contains { base.hasSuffix($0) }
    }

    private static func split(_ label: String) -> (folder: String, file: String) {
        let slash = label.utf8.lastIndex(of: UInt8(ascii: "/"))
        return (
            slash.map { String(label[...$0]) } ?? "", slash.map { String(label[label.index(after: $0)...]) } ?? label
        )
    }
}

extension ItemState {
    /// What the stores index so the fan-in finds the photos and videos that
    /// may form a group without reading every item: a photo's or video's stem
    /// (``ExportSidecars/reference(mediaLabel:)``).
    var exportStem: String? {
        guard failure == nil, isFileLike, type == .image || type == .video else { return nil }
        return ExportSidecars.reference(mediaLabel: label)?.stem
    }

    /// What the stores index so the fan-in finds the frames of an Apple burst
    /// without reading every item: a photo's `BurstUUID` (its Apple maker
    /// note, read by the decoder helper and checked by the parent).
    var burstKey: String? {
        guard failure == nil, type == .image else { return nil }
        return moments?.burstIdentifier
    }
}

/// The export sidecars among the files of one folder of a drop (or among a
/// batch's files named one by one, by label), and the photos and videos each
/// describes, matched by name alone when the batch is planned, before any byte
/// is read: a sidecar's name points at its media (``ExportSidecars/reference(sidecarLabel:)``),
/// and both are in the same folder. What their contents say is checked later,
/// by their media's stages (``CarriedSidecar``).
///
/// A sidecar naming the media's extension (`X.jpg.json`, `IMG_1234.CR2.xmp`)
/// goes to the file of that stem and extension; one without (`IMG_1234.xmp`,
/// `IMG_1234.AAE`) to the file of that stem, a RAW first (XMP sidecars are a
/// RAW developer's), else an original (an `.AAE` is the original's, not its
/// edited render's), else the first. A Takeout JSON also goes to the edited
/// copies of its photo (`X-edited.jpg`), which borrow it. A sidecar whose
/// media is not among the names is an item of its own (delivered as a file,
/// with a warning saying so).
struct FolderSidecars: Sendable {
    /// Each matched sidecar's media, by the sidecar's name: the first reports
    /// it, the others (edited copies) borrow it.
    private(set) var media: [String: [String]] = [:]
    /// Each media file's sidecars, by the media's name, in the order of the names given.
    private(set) var sidecars: [String: [String]] = [:]

    /// No sidecar (a pipeline whose manifest does not list them).
    init() {}

    /// Matches a folder's names (``DropWalker``): nothing to do, without a
    /// name a sidecar could have (a look at each name's last bytes).
    init(listing names: SortedNames) {
        let sidecarName = names.contains { name in
            guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0, name.count - dot <= 5 else { return false }
            return ExportSidecars.kind(byExtension: String(decoding: name[(dot + 1)...], as: UTF8.self)) != nil
        }
        guard sidecarName else {
            self.init()
            return
        }
        self.init(names: names.lazy.map(SourcePath.displayName))
    }

    /// Matches `names`, in their order (a folder's in name order; named files in input order).
    init(names: some Sequence<String>) {
        var found: [(name: String, kind: SharedMediaFile.Sidecar.Kind, reference: ExportSidecars.Reference)] = []
        var mediaNames: [String] = []
        for name in names {
            if let kind = ExportSidecars.kind(byName: name) {
                if let reference = ExportSidecars.reference(sidecarLabel: name) {
                    found.append((name, kind, reference))
                }
            } else if let ext = ExportSidecars.fileExtension(of: name), ExportSidecars.isMediaExtension(ext) {
                mediaNames.append(name)
            }
        }
        guard !found.isEmpty else { return }
        let stems = Set(found.map(\.reference.stem))
        var mediaByStem: [String: [(name: String, reference: ExportSidecars.Reference)]] = [:]
        for name in mediaNames {
            guard let reference = ExportSidecars.reference(mediaLabel: name), stems.contains(reference.stem) else {
                continue
            }
            mediaByStem[reference.stem, default: []].append((name, reference))
        }
        for (name, kind, reference) in found where media[name] == nil {
            let sameStem = mediaByStem[reference.stem] ?? []
            // The files of that exact name (of a burst's or an edit's stem), if there are any.
            let exact = sameStem.filter { $0.reference.exact == reference.exact }
            let candidates = (exact.isEmpty && reference.mediaExtension == nil ? sameStem : exact).map(\.name)
            var chosen: [String] = []
            if let ext = reference.mediaExtension {
                // The photo of that name first; Takeout's JSON describes the
                // edited copies of its photo too (whatever their extension).
                chosen = Array(
                    candidates.filter {
                        !ExportSidecars.isEditedRender($0) && ExportSidecars.fileExtension(of: $0) == ext
                    }.prefix(1))
                if kind == .takeout { chosen += candidates.filter(ExportSidecars.isEditedCopy) }
            } else {
                let raw = candidates.first {
                    ExportSidecars.fileExtension(of: $0).map(ExportSidecars.isRAWExtension) ?? false
                }
                if let one = raw ?? candidates.first(where: { !ExportSidecars.isEditedRender($0) }) ?? candidates.first
                {
                    chosen = [one]
                }
            }
            guard !chosen.isEmpty else { continue }
            media[name] = chosen
            for file in chosen { sidecars[file, default: []].append(name) }
        }
    }

    /// True when there is nothing to match.
    var isEmpty: Bool { media.isEmpty }
}
