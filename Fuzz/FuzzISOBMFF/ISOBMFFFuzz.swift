import Foundation
// Fuzz target: the ISO-BMFF location scanner (MP4/MOV `©xyz`, the QuickTime
// location keys, 3GPP `loci`, `uuid`/`XMP_` packets, and HEIF's `Exif` and
// `mime` items and CR3's `CMT4`), on arbitrary bytes read as each of those
// (scripts/fuzz.sh isobmff). The overwrites are bounded (LocationChecks).
import FuzzChecks
import FuzzReplay
import MediaFormats

func check(_ data: Data) {
    let bytes = [UInt8](data)
    for format in ["mp4", "mov", "3gp", "heic", "avif", "cr3"] {
        guard let format = MediaFormat.all.first(where: { $0.id == format }) else { continue }
        LocationChecks.check(LocationScanner.scan(bytes, format: format), fileSize: bytes.count)
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
