import Foundation
import MediaFormats

/// A motion photo's video, copied out of the photo's copy.
struct MotionVideo: Sendable, Hashable, Codable {
    /// The video in the container: `<motionVideoID>.mp4` (or `.mov`).
    var path: String
    /// Its poster: `thumbnails/<motionVideoID>.jpg`.
    var thumbnailPath: String?
    /// Bytes.
    var size: Int64
    var mimeType: String
    var durationMilliseconds: Double?
    var width: Int?
    var height: Int?
    /// Where in the photo it was found.
    var layout: EmbeddedVideo.Layout

    /// The extensions an extracted video may have.
    static let extensions = ["mp4", "mov"]

    /// The extension for an embedded video of `format` (MP4 or QuickTime), nil for any other.
    static func fileExtension(of format: MediaFormat) -> String? {
        switch format.id {
        case "mp4", "m4v", "3gp": "mp4"
        case "mov": "mov"
        default: nil
        }
    }
}
