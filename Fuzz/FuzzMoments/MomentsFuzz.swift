// Fuzz target: the moment-facts reader (MomentReader: JPEG segments and EOI,
// Google's motion-photo XMP, Samsung's SEF trailer, HEIF boxes and items,
// EXIF and Apple's maker note, QuickTime keys and timed metadata) and the
// spatial facts reader (SpatialMetadata: GPano/hdrgm XMP, MPF, grpl, vexu) on arbitrary
// bytes, read as each format the decoder asks it to read (scripts/fuzz.sh
// moments). What the parent would refuse is refused here too.
import Foundation
import FuzzReplay
import MediaFormats

func check(_ data: Data) {
    let bytes = [UInt8](data)
    _ = MotionPhotoXMP(bytes[...])
    for format in [MediaFormat.jpeg, .heic, .avif, .mov, .mp4] {
        let spatial = SpatialMetadata.read(bytes, format: format)
        if let projection = spatial.projection(width: 4000, height: 2000) { _ = projection.problem }
        guard let facts = MomentReader.read(bytes, format: format) else { continue }
        if let video = facts.embeddedVideo {
            precondition(video.offset >= 0 && video.length > 0 && video.offset + video.length <= bytes.count)
        }
        if let identifier = facts.contentIdentifier { precondition(MomentFacts.isValidIdentifier(identifier)) }
        for value in [facts.captureTime?.local, facts.captureTime?.utc, facts.stillImageTime].compactMap({ $0 }) {
            precondition(value.isFinite)
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    check(Data(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if !FUZZING
    @main struct Replay { static func main() { FuzzReplay.run(check) } }
#endif
