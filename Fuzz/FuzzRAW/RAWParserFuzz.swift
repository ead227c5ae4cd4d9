// Fuzz target: the camera RAW preview parser (RAWFile: TIFF IFDs, maker notes,
// CR3 and RAF), the fragmented-MP4 duration reader (FragmentedDuration) and the
// sniffer's maker-structure test (TIFFMaker) on arbitrary bytes
// (scripts/fuzz.sh raw). Everything the decoder asks of them is asked here too.
import Foundation
import FuzzReplay
import MediaFormats

func check(_ data: Data) {
    let bytes = [UInt8](data)
    _ = TIFFMaker.rawFormat(Array(bytes.prefix(ContentSniffer.prefixLength)))
    _ = ContentSniffer.ebmlDocType(Array(bytes.prefix(ContentSniffer.prefixLength)))
    if let seconds = FragmentedDuration.seconds(bytes) { precondition(seconds > 0 && seconds.isFinite) }
    for format in MediaFormat.cameraRAW {
        guard let description = try? RAWFile.describe(bytes, format: format) else { continue }
        precondition((1...8).contains(description.orientation))
        for preview in description.previews {
            for range in preview.ranges {
                precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count && !range.isEmpty)
            }
            if case .jpeg = preview.encoding, let range = preview.ranges.first {
                _ = JPEGFrameHeader(bytes[range.lowerBound..<min(range.upperBound, range.lowerBound + (128 << 10))])
            }
        }
        for size in description.sizes { precondition(size.width > 0 && size.height > 0) }
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
