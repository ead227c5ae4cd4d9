import Foundation
import MediaKit

/// Probe: opens the copy to confirm what it is. An image must load in libvips
/// (header only, pixel limit checked before any decoding); a video must have a
/// decodable video stream (audio-only media is a file with a duration). Reads
/// display dimensions and duration. A video stays open for the thumbnail stage.
struct ProbeStage: ItemStage {
    let settings: PipelineDefinition.ProbeSettings
    /// Whether the thumbnail stage will want the open file (videos, libav-read images).
    let keepMediaOpen: Bool
    var name: StageName { .probe }

    /// Formats libvips reads fully here: failing to read one means the file is damaged.
    static let strictImageFormats: Set<String> = ["jpeg", "png", "gif", "webp", "tiff"]
    /// Still-image formats read through libav (libvips here has no loader for them
    /// once ImageMagick is blocked).
    static let libavImageFormats: Set<String> = ["bmp"]
    /// The libvips loader each image format must be read by: a fallback loader
    /// never decides a file's type.
    static let expectedLoaders: [String: String] = [
        "jpeg": "VipsForeignLoadJpeg", "png": "VipsForeignLoadPng", "gif": "VipsForeignLoadNsgif",
        "webp": "VipsForeignLoadWebp", "heic": "VipsForeignLoadHeif", "heif": "VipsForeignLoadHeif",
        "avif": "VipsForeignLoadHeif", "tiff": "VipsForeignLoadTiff", "jxl": "VipsForeignLoadJxl",
        "jp2": "VipsForeignLoadJp2k", "pdf": "VipsForeignLoadPdf",
    ]

    func process(_ item: ItemWork, in batch: BatchContext) throws(ItemFailure) {
        guard let sniffed = item.sniffed, let path = item.copyPath else { return }
        let label = item.source.label
        switch sniffed.kind {
        case .image where Self.libavImageFormats.contains(sniffed.format.id):
            try probeStillWithLibAV(item, path: path, format: sniffed.format, label: label)
        case .image:
            try probeImage(item, path: path, format: sniffed.format, label: label)
        case .video, .audio:
            try probeMedia(item, path: path, format: sniffed.format, label: label)
        default:
            return
        }
    }

    private func probeImage(_ item: ItemWork, path: String, format: MediaFormat, label: String) throws(ItemFailure) {
        let header: ImageHeader
        do {
            header = try ImageHeader.read(path: path)
        } catch {
            if Self.strictImageFormats.contains(format.id) || Self.isDamage(error) {
                throw ItemFailure(.probe, .undecodable, "\(label): not a readable \(format.name) image: \(error)")
            }
            item.type = .file
            item.warnings.append("delivered as a file: libvips \(Vips.version) cannot read this \(format.name) image (\(error))")
            return
        }
        if let expected = Self.expectedLoaders[format.id], !header.loader.hasPrefix(expected) {
            throw ItemFailure(.probe, .contentMismatch, "\(label): looks like \(format.name) but libvips would read it with \(header.loader); refused")
        }
        try checkPixels(header.storedWidth, header.storedHeight, label: label)
        item.type = .image
        item.imageHeader = header
        item.width = header.width
        item.height = header.height
    }

    /// libheif tells damage ("Invalid input": a truncated or corrupt file) from what
    /// libvips 8.14 merely cannot read ("Unsupported feature", sequences): a damaged
    /// HEIC/AVIF is a failure, not a file to deliver.
    static func isDamage(_ error: VipsError) -> Bool {
        error.message.contains("heif: Invalid input")
    }

    private func probeStillWithLibAV(_ item: ItemWork, path: String, format: MediaFormat, label: String) throws(ItemFailure) {
        do {
            let media = try MediaFile(path: path, timeLimit: settings.timeLimit)
            let probe = try media.probe()
            guard let video = probe.video else {
                throw ItemFailure(.probe, .undecodable, "\(label): not a readable \(format.name) image")
            }
            try checkPixels(video.storedWidth, video.storedHeight, label: label)
            item.type = .image
            item.width = video.width
            item.height = video.height
            if keepMediaOpen { item.media = media }
            item.video = video
        } catch let error as ItemFailure {
            throw error
        } catch {
            throw ItemFailure(.probe, .undecodable, "\(label): not a readable \(format.name) image: \(error)")
        }
    }

    private func probeMedia(_ item: ItemWork, path: String, format: MediaFormat, label: String) throws(ItemFailure) {
        let media: MediaFile
        let probe: MediaProbe
        do {
            media = try MediaFile(path: path, timeLimit: settings.timeLimit)
            probe = try media.probe()
        } catch {
            let reason: ItemFailure.Reason = error.isTimeout ? .timeLimit : .undecodable
            throw ItemFailure(.probe, reason, "\(label): not a readable \(format.name) file: \(error)")
        }
        item.durationMilliseconds = probe.durationMilliseconds
        if let video = probe.video {
            try checkPixels(video.storedWidth, video.storedHeight, label: label)
            item.type = .video
            item.width = video.width
            item.height = video.height
            item.video = video
            if keepMediaOpen { item.media = media }
        } else if probe.hasAudio {
            item.type = .file
            if format.kind == .video { item.mimeType = Self.audioMIMEType(for: format) }
        } else {
            throw ItemFailure(.probe, .undecodable, "\(label): \(format.name) file has no decodable video or audio stream")
        }
    }

    private func checkPixels(_ width: Int, _ height: Int, label: String) throws(ItemFailure) {
        let pixels = width * height
        if pixels > settings.pixelLimit {
            throw ItemFailure(
                .probe, .tooManyPixels,
                "\(label): \(width)×\(height) is \(Self.megapixels(pixels)) MP, over the limit of \(Self.megapixels(settings.pixelLimit)) MP; not decoded")
        }
    }

    static func megapixels(_ pixels: Int) -> String { String(format: "%.1f", Double(pixels) / 1e6) }

    /// An audio-only file in a video container gets the audio MIME type.
    static func audioMIMEType(for format: MediaFormat) -> String {
        switch format.id {
        case "mp4", "m4v", "mov": "audio/mp4"
        case "webm": "audio/webm"
        case "mkv": "audio/x-matroska"
        case "ogv": "audio/ogg"
        case "3gp": "audio/3gpp"
        default: format.mimeType
        }
    }
}
