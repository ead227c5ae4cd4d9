import Foundation
import ShareManifest

/// What a report shows about one item, worked out once for the HTML page and
/// the contact sheet: its name, type, extension, measurements and thumbnail.
struct ReportedItem {
    let item: ItemReport
    /// The original file name; "Shared text" or "Shared link" for those; the source
    /// label for anything else without a name.
    let name: String
    /// The extension of the copy in the container (chosen from the content), without a dot.
    let fileExtension: String?
    /// The extension the original name had, when it differs from `fileExtension`.
    let originalExtension: String?
    /// The thumbnail file, if the entry has one that is a regular file inside the container.
    let thumbnailPath: String?
    /// The delivered copy, if the entry names one that is a regular file inside the container.
    let copyPath: String?
    /// The larger previews (v2 `previews`), smallest first: what each is, and its
    /// file when that is a regular file inside the container (nil: not there).
    let previews: [(label: String, path: String?)]

    init(_ item: ItemReport, container: ContainerDirectory) {
        self.item = item
        let entry = item.entry
        switch entry?.type {
        case .text: name = "Shared text"
        case .url: name = "Shared link"
        default:
            name =
                entry?.fileName
                ?? (item.source.hasPrefix("/") ? (item.source as NSString).lastPathComponent : item.source)
        }
        let copyExtension = entry?.fileURL.map(\.pathExtension).flatMap { $0.isEmpty ? nil : $0.lowercased() }
        fileExtension = copyExtension
        let named = (name as NSString).pathExtension.lowercased()
        originalExtension =
            entry?.fileURL != nil && !named.isEmpty && named != copyExtension && !Self.sameFormat(named, copyExtension)
            ? named : nil
        thumbnailPath = Self.file(entry?.thumbnail, in: container)
        copyPath = entry?.fileURL != nil ? Self.file(entry?.path, in: container) : nil
        previews = (entry?.previews ?? []).map { preview in
            let format =
                preview.mimeType == "image/webp" ? "WebP" : preview.mimeType == "image/jpeg" ? "JPEG" : preview.mimeType
            let label =
                ReadableUnits.dimensions(width: preview.width, height: preview.height) + " " + format
                + (preview.size.map { ", " + ReadableUnits.bytes($0) } ?? "")
            return (label, Self.file(preview.path, in: container))
        }
    }

    /// The file a manifest's `file://` URL names, when it is a regular file inside the container.
    private static func file(_ url: String?, in container: ContainerDirectory) -> String? {
        guard let url, let path = ManifestCoder.filePath(fromURLString: url),
            case .success(let checked) = container.checkedFile(path)
        else { return nil }
        return checked
    }

    /// `jpeg` and `jpg` (and the like) name the same format; a rename between them is not worth showing.
    private static func sameFormat(_ a: String, _ b: String?) -> Bool {
        let aliases: [Set<String>] = [["jpg", "jpeg", "jpe"], ["tif", "tiff"], ["htm", "html"], ["mpg", "mpeg"]]
        guard let b else { return false }
        return aliases.contains { $0.contains(a) && $0.contains(b) }
    }

    var type: SharedMediaType? { item.entry?.type }

    /// `image`, `video`, … for delivered items; `failed` or `skipped` otherwise.
    var kind: String { item.entry?.type.rawValue ?? item.status.rawValue }

    var size: String? { item.entry?.size.map(ReadableUnits.bytes) }

    var dimensions: String? {
        guard let width = item.entry?.width, let height = item.entry?.height else { return nil }
        return ReadableUnits.dimensions(width: width, height: height)
    }

    var duration: String? { item.entry?.duration.map { ReadableUnits.duration(milliseconds: $0) } }

    /// How the picture is meant to be seen: `360° panorama (equirectangular 8000×4000)`,
    /// `cylindrical panorama (…, crop 7000×1500 at 10,20)`, `stereo pair`, `HDR gain map`; nil for a plain one.
    var view: String? {
        guard let entry = item.entry else { return nil }
        var parts: [String] = []
        if let p = entry.projection {
            let full =
                p.cropLeft == 0 && p.cropTop == 0 && p.croppedWidth == p.fullWidth && p.croppedHeight == p.fullHeight
            let crop = full ? "" : ", crop \(p.croppedWidth)×\(p.croppedHeight) at \(p.cropLeft),\(p.cropTop)"
            parts.append(
                "\(p.isFullSphere ? "360° panorama" : "panorama") (\(p.type) \(p.fullWidth)×\(p.fullHeight)\(crop))")
        }
        if entry.stereo == true { parts.append("stereo pair") }
        if entry.hdr == "gainMap" {
            parts.append(entry.thumbnailHdr == "gainMap" ? "HDR gain map (in its thumbnail too)" : "HDR gain map")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// When it was taken, and how that is known: `2019-07-01T16:53:20+02:00 (exif)`,
    /// `2024-05-01T12:00:00 (fileName, offset unknown)`.
    var taken: String? {
        guard let entry = item.entry, let capturedAt = entry.capturedAt else { return nil }
        let notes = [
            entry.capturedAtSource, entry.capturedAtOffsetKnown == false ? "offset unknown" : nil,
            entry.capturedAtOffsetSource.map { "offset from \($0)" },
        ].compactMap { $0 }
        return notes.isEmpty ? capturedAt : "\(capturedAt) (\(notes.joined(separator: ", ")))"
    }

    /// What took it: `Apple iPhone 15 Pro (iPhone 15 Pro back triple camera 6.765mm f/1.78)`,
    /// the maker left out where the model already starts with it (`Canon Canon EOS R5`).
    var camera: String? {
        guard let camera = item.entry?.camera else { return nil }
        var name = [camera.make, camera.model].compactMap { $0 }
        if let make = camera.make, let model = camera.model, model.lowercased().hasPrefix(make.lowercased()) {
            name = [model]
        }
        let text = name.joined(separator: " ")
        guard let lens = camera.lens else { return text.isEmpty ? nil : text }
        return text.isEmpty ? lens : "\(text) (\(lens))"
    }

    /// How a video plays: `hevc, 29.97 fps, HDR HLG, rotated 90°, audio aac`;
    /// `h264, 30 fps, variable frame rate, slow motion (captured at 240 fps), no audio`.
    var playback: String? {
        guard let video = item.entry?.video else { return nil }
        var parts = [video.codec]
        if let rate = video.frameRate { parts.append(ReadableUnits.frameRate(rate)) }
        if video.variableFrameRate == true { parts.append("variable frame rate") }
        let captured = video.captureFrameRate.map { "captured at " + ReadableUnits.frameRate($0) }
        if video.slowMotion == true {
            parts.append("slow motion" + (captured.map { " (\($0))" } ?? ""))
        } else if let captured {
            parts.append(captured)
        }
        switch video.hdr {
        case nil: break
        case "dolbyVision"?: parts.append("Dolby Vision" + (video.dolbyVisionProfile.map { " profile \($0)" } ?? ""))
        case let hdr?: parts.append("HDR " + hdr.uppercased())
        }
        if video.rotation != 0 { parts.append("rotated \(video.rotation)°") }
        parts.append(video.audio.map { "audio " + $0 } ?? "no audio")
        return parts.joined(separator: ", ")
    }

    /// A short label for a tile without a picture: the extension (`PDF`, `TXT`) or the type.
    var placeholderLabel: String {
        if let fileExtension { return fileExtension.uppercased() }
        switch item.entry?.type {
        case .url: return "LINK"
        case .text: return "TEXT"
        default: return kind.uppercased()
        }
    }

    /// The shared text or link itself (at most `limit` characters), for text and URL items.
    func excerpt(limit: Int) -> String? {
        guard let entry = item.entry, entry.type == .text || entry.type == .url else { return nil }
        return entry.path.count > limit ? String(entry.path.prefix(limit)) + "…" : entry.path
    }

    /// The failure in a few words: `empty (sniff)`.
    var reasonSummary: String? {
        guard let failure = item.failure else { return nil }
        return "\(failure.reason.rawValue) (\(failure.stage.rawValue))"
    }
}
