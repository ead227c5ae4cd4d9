import Foundation
// Fuzz target: the EXIF location scanner (a TIFF structure's GPS IFD, and the
// EXIF blocks of the containers that carry one), on arbitrary bytes read as a
// TIFF (an EXIF block is one, and its IPTC and Photoshop tags), a JPEG
// (APP1, Photoshop's APP13 with its IPTC IIM, MPF secondary images), a PSD
// (its image resources) and a WebP (scripts/fuzz.sh exif), for the
// coordinates alone and with the place names. The overwrites are bounded (LocationChecks).
import FuzzChecks
import FuzzReplay
import MediaFormats

func check(_ data: Data) {
    let bytes = [UInt8](data)
    for format in ["tiff", "jpeg", "webp", "dng", "psd"] {
        guard let format = MediaFormat.all.first(where: { $0.id == format }) else { continue }
        for placeNames in [false, true] {
            LocationChecks.check(
                LocationScanner.scan(bytes, format: format, placeNames: placeNames), fileSize: bytes.count)
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
