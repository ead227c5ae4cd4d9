import Foundation
import MediaKit

/// Thumbnail: a JPEG whose longest side is the pipeline's size, made from the
/// copy (already in the page cache). Images through libvips' shrink-on-load;
/// videos from the poster keyframe of the file the probe opened; PDFs from
/// their first page. An image that cannot be decoded fails; a video or PDF
/// without a thumbnail is still delivered, with a warning.
struct ThumbnailStage: ItemStage {
    let settings: PipelineDefinition.ThumbnailSettings
    var name: StageName { .thumbnail }

    func process(_ item: ItemWork, in batch: BatchContext) throws(ItemFailure) {
        defer { item.media = nil }  // closes the video opened by the probe
        guard let path = item.copyPath, let sniffed = item.sniffed else { return }
        let label = item.source.label
        // A resumed batch, or a remote worker, starts here without the probe's open
        // file: open it again for what needs libav (videos, libav-read images).
        if item.media == nil, item.type == .video || (item.type == .image && ProbeStage.libavImageFormats.contains(sniffed.format.id)) {
            item.media = try? MediaFile(path: path, timeLimit: settings.timeLimit)
            item.video = try? item.media?.probe().video
        }
        let thumbnail: Thumbnail
        switch item.type {
        case .image where settings.kinds.contains(.image):
            do {
                if let media = item.media, let video = item.video {
                    media.restartClock(seconds: settings.timeLimit)
                    thumbnail = try PosterFrame.thumbnail(of: media, video: video, durationMilliseconds: nil, at: 0, spec: settings.spec, pixelLimit: batch.pipeline.probe?.pixelLimit)
                } else {
                    thumbnail = try Thumbnailer.thumbnail(path: path, spec: settings.spec)
                }
            } catch {
                throw ItemFailure(.thumbnail, Self.isTimeout(error) ? .timeLimit : .undecodable, "\(label): cannot decode \(sniffed.format.name) image: \(error)")
            }
        case .video where settings.kinds.contains(.video):
            guard let media = item.media, let video = item.video else {
                item.warnings.append("no poster frame: the video could not be reopened")
                return
            }
            do {
                media.restartClock(seconds: settings.timeLimit)
                thumbnail = try PosterFrame.thumbnail(
                    of: media, video: video, durationMilliseconds: item.durationMilliseconds,
                    at: settings.posterTime, spec: settings.spec, pixelLimit: batch.pipeline.probe?.pixelLimit)
            } catch {
                item.warnings.append("no poster frame: \(error)")
                return
            }
        case .file where settings.kinds.contains(.document) && sniffed.format == .pdf:
            do {
                thumbnail = try Thumbnailer.thumbnail(path: path, spec: settings.spec)
            } catch {
                item.warnings.append("no thumbnail of the first page: \(error)")
                return
            }
        default:
            return
        }
        let destination = batch.container.thumbnailPath(id: item.id)
        // A thumbnail left by a run that died before journaling it is this item's
        // own (named by its UUID): replace it.
        FileSystem.remove(destination)
        do {
            try AtomicFile.create(destination, bytes: thumbnail.jpeg, syncDirectory: false)
        } catch {
            throw ItemFailure(.thumbnail, error.isDiskFull ? .diskFull : .io, "\(label): cannot write thumbnail: \(error)")
        }
        item.thumbnailPath = destination
    }

    static func isTimeout(_ error: Error) -> Bool {
        if let error = error as? AVError { return error.isTimeout }
        if let error = error as? VipsError { return error.message.contains("killed") }
        return false
    }
}
